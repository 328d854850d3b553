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
    sock6_probe.py options
        IPV6_V6ONLY, IPV6_UNICAST_HOPS and IPV6_TCLASS set and read back; IPV6_V6ONLY after
        bind; a v4-mapped bind and connect of an IPv6-only socket; a bind to a link-local
        address without a scope: each result or errno name."""

import errno
import json
import socket
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


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "udp":
        udp(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "connect":
        connect(sys.argv[2], int(sys.argv[3]))
    else:
        options()


main()
