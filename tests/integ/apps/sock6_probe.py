"""AF_INET6 stream sockets as a program sees them, run through the preload shim (or on the
kernel, to compare): one JSON line per step on stdout, so that a test can check names,
options and errors as Linux gives them.

    sock6_probe.py serve ADDR PORT V6ONLY COUNT
        an AF_INET6 listener on [ADDR]:PORT with IPV6_V6ONLY set to V6ONLY (0 or 1): prints
        {"listening": getsockname, "v6only": getsockopt}, then for each of COUNT
        connections {"peer": getpeername, "name": getsockname, "line": what it sent},
        answering each line with itself.
    sock6_probe.py connect ADDR PORT
        an AF_INET6 connection to [ADDR]:PORT (an IPv4 peer as ::ffff:a.b.c.d): sends
        "probe", prints {"name", "peer", "echo"} or {"error": errno name}.
    sock6_probe.py udp ADDR PORT COUNT
        an AF_INET6 datagram socket bound to [ADDR]:PORT (dual-stack): prints
        {"bound": getsockname}, then for each of COUNT datagrams {"from": its source,
        "data": it}, sending it back to its source.
    sock6_probe.py pktinfo PORT COUNT HOPS TCLASS
        an AF_INET6 datagram socket on [::]:PORT with IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT,
        IPV6_RECVTCLASS and IP_PKTINFO (RFC 3542 §6): prints {"bound"}, then for each of
        COUNT datagrams {"from", "data", "cmsgs": [[level, type, hex of the data], ...]},
        answering it with sendmsg from the address it came to (IPV6_PKTINFO, as DNS
        servers answer) with IPV6_HOPLIMIT HOPS and IPV6_TCLASS TCLASS.
    sock6_probe.py options
        IPV6_V6ONLY, IPV6_UNICAST_HOPS and IPV6_TCLASS set and read back; IPV6_V6ONLY after
        bind; a v4-mapped bind and connect of an IPv6-only socket; a bind to a link-local
        address without a scope; the RFC 3542 receive options and the sticky IPV6_PKTINFO;
        sendmsg's control messages that Linux refuses: each result or errno name."""

import errno
import json
import socket
import struct
import sys


def out(**kw):
    print(json.dumps(kw), flush=True)


def err(call):
    try:
        r = call()
        return r if r is not None else 0
    except OSError as e:
        return errno.errorcode[e.errno]


def serve(addr, port, v6only, count):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)
    s.bind((addr, port))
    s.listen(16)
    out(listening=list(s.getsockname()),
        v6only=s.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY))
    for _ in range(count):
        c, _ = s.accept()
        line = c.makefile("rb").readline()
        out(peer=list(c.getpeername()), name=list(c.getsockname()),
            line=line.decode().strip())
        c.sendall(line)
        c.close()
    s.close()


def connect(addr, port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(20)
    try:
        s.connect((addr, port))
    except OSError as e:
        out(error=errno.errorcode.get(e.errno, str(e)))
        return
    s.sendall(b"probe\n")
    echo = s.makefile("rb").readline().decode().strip()
    out(name=list(s.getsockname()), peer=list(s.getpeername()), echo=echo)
    s.close()


def udp(addr, port, count):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind((addr, port))
    out(bound=list(s.getsockname()))
    for _ in range(count):
        data, src = s.recvfrom(2048)
        out(**{"from": list(src), "data": data.decode()})
        s.sendto(data, src)
    s.close()


def pktinfo(port, count, hops, tclass):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    v6 = socket.IPPROTO_IPV6
    for opt in (socket.IPV6_RECVPKTINFO, socket.IPV6_RECVHOPLIMIT, socket.IPV6_RECVTCLASS):
        s.setsockopt(v6, opt, 1)
    s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    s.bind(("::", port))
    out(bound=list(s.getsockname()))
    for _ in range(count):
        data, cmsgs, flags, src = s.recvmsg(2048, 256)
        out(**{"from": list(src), "data": data.decode(), "flags": flags,
               "cmsgs": [[lv, ty, d.hex()] for lv, ty, d in cmsgs]})
        info = [d for lv, ty, d in cmsgs if (lv, ty) == (v6, socket.IPV6_PKTINFO)][0]
        s.sendmsg([data], [(v6, socket.IPV6_PKTINFO, info),
                           (v6, socket.IPV6_HOPLIMIT, struct.pack("i", hops)),
                           (v6, socket.IPV6_TCLASS, struct.pack("i", tclass))], 0, src)
    s.close()


IP_PKTINFO = 8  # <linux/in.h>; Python's socket module does not name it
IPV6_2292PKTINFO, IPV6_2292HOPLIMIT = 2, 8


def pktinfo6(addr, ifindex=0):
    return socket.inet_pton(socket.AF_INET6, addr) + struct.pack("I", ifindex)


def sendmsg_errors():
    """sendmsg's control messages that Linux refuses before routing, so that the answers
    do not depend on the addresses of the host."""
    v6 = socket.IPPROTO_IPV6
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    to6, to4 = ("2001:db8::77", 9), ("::ffff:192.0.2.7", 9)
    cases = {
        "pktinfo_short": (to6, [(v6, socket.IPV6_PKTINFO, bytes(16))]),
        "pktinfo_not_ours": (to6, [(v6, socket.IPV6_PKTINFO, pktinfo6("2001:db8::99"))]),
        "pktinfo_no_such_if": (to6, [(v6, socket.IPV6_PKTINFO, pktinfo6("::", 9999))]),
        "pktinfo_link_local_no_if": (to6, [(v6, socket.IPV6_PKTINFO, pktinfo6("fe80::1"))]),
        "pktinfo2292_not_ours": (to6, [(v6, IPV6_2292PKTINFO, pktinfo6("2001:db8::99"))]),
        "hoplimit_256": (to6, [(v6, socket.IPV6_HOPLIMIT, struct.pack("i", 256))]),
        "hoplimit_short": (to6, [(v6, socket.IPV6_HOPLIMIT, b"\1")]),
        "hoplimit2292_minus2": (to6, [(v6, IPV6_2292HOPLIMIT, struct.pack("i", -2))]),
        "tclass_minus2": (to6, [(v6, socket.IPV6_TCLASS, struct.pack("i", -2))]),
        "unknown_type": (to6, [(v6, 99, struct.pack("i", 1))]),
        "mapped_pktinfo_v6_source": (to4, [(v6, socket.IPV6_PKTINFO, pktinfo6("2001:db8::9"))]),
        "mapped_pktinfo_any": (to4, [(v6, socket.IPV6_PKTINFO, pktinfo6("::"))]),
        "mapped_pktinfo_short": (to4, [(v6, socket.IPV6_PKTINFO, bytes(12))]),
    }
    out(**{k: err(lambda: s.sendmsg([b"x"], c, 0, to)) for k, (to, c) in cases.items()})
    s.close()


def recv_options():
    v6 = socket.IPPROTO_IPV6
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    names = {"recvpktinfo": socket.IPV6_RECVPKTINFO, "recvhoplimit": socket.IPV6_RECVHOPLIMIT,
             "recvtclass": socket.IPV6_RECVTCLASS, "pktinfo2292": IPV6_2292PKTINFO,
             "hoplimit2292": IPV6_2292HOPLIMIT}
    out(**{k + "_default": s.getsockopt(v6, o) for k, o in names.items()})
    out(**{k + "_set": err(lambda: s.setsockopt(v6, o, 5)) for k, o in names.items()})
    out(**{k: s.getsockopt(v6, o) for k, o in names.items()})
    out(**{k + "_short": err(lambda: s.setsockopt(v6, o, b"\1")) for k, o in names.items()})
    out(sticky_pktinfo=err(lambda: s.setsockopt(v6, socket.IPV6_PKTINFO, pktinfo6("::1", 7))),
        sticky_pktinfo_short=err(lambda: s.setsockopt(v6, socket.IPV6_PKTINFO, bytes(16))),
        sticky_pktinfo_get=err(lambda: s.getsockopt(v6, socket.IPV6_PKTINFO, 20)),
        hoplimit_get=err(lambda: s.getsockopt(v6, socket.IPV6_HOPLIMIT)),
        recvpktinfo_off=err(lambda: s.setsockopt(v6, socket.IPV6_RECVPKTINFO, 0)),
        recvpktinfo_after_off=s.getsockopt(v6, socket.IPV6_RECVPKTINFO))
    s.close()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out(ipv4_socket_recvpktinfo=err(lambda: s.setsockopt(v6, socket.IPV6_RECVPKTINFO, 1)))
    s.close()


def options():
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    v6 = socket.IPPROTO_IPV6
    out(default_v6only=s.getsockopt(v6, socket.IPV6_V6ONLY),
        default_hops=s.getsockopt(v6, socket.IPV6_UNICAST_HOPS),
        domain=s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN))
    out(hops_300=err(lambda: s.setsockopt(v6, socket.IPV6_UNICAST_HOPS, 300)),
        hops_7=err(lambda: s.setsockopt(v6, socket.IPV6_UNICAST_HOPS, 7)),
        hops=s.getsockopt(v6, socket.IPV6_UNICAST_HOPS),
        tclass_set=err(lambda: s.setsockopt(v6, socket.IPV6_TCLASS, 0x2b)),
        tclass=s.getsockopt(v6, socket.IPV6_TCLASS))
    s.setsockopt(v6, socket.IPV6_V6ONLY, 1)
    out(mapped_bind=err(lambda: s.bind(("::ffff:10.0.0.2", 0))),
        mapped_connect=err(lambda: s.connect(("::ffff:10.0.0.1", 9))))
    s.close()
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    out(link_local_unscoped=err(lambda: s.bind(("fe80::1", 0))))
    s.bind(("::", 0))
    out(v6only_after_bind=err(lambda: s.setsockopt(v6, socket.IPV6_V6ONLY, 1)))
    s.close()
    recv_options()
    sendmsg_errors()


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "udp":
        udp(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "pktinfo":
        pktinfo(*(int(a, 0) for a in sys.argv[2:6]))
    elif cmd == "connect":
        connect(sys.argv[2], int(sys.argv[3]))
    else:
        options()


main()
