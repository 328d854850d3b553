"""IPv6 ancillary data through the preload shim against the Linux kernel (issue 17, RFC
3542): a program's AF_INET6 datagram socket on :: with IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT
and IPV6_RECVTCLASS learns which of the stack's two IPv6 addresses a kernel peer sent to,
with the hop limit and traffic class the peer's kernel put on the wire; it answers from that
address with sendmsg's IPV6_PKTINFO, and the peer's kernel sees the source, hop limit and
traffic class sendmsg asked for. An IPv4 datagram on the same socket comes with the mapped
IPV6_PKTINFO and, as IP_PKTINFO is set too, IPv4's own message (Linux's order). The option
and sendmsg error checks are compared with the same program on kernel sockets."""

import ipaddress
import json
import socket
import struct
import sys

import pytest

import topo
from test_ipv6 import PEER6, STACK6, v6_port
from test_preload import program, programs, stack_env, work  # noqa: F401 (fixtures)
from test_preload6 import PROBE, lines

STACK6_B = "2001:db8::3"        # the stack's second address on the port
PEER_HOPS, PEER_TCLASS = 17, 0x20
REPLY_HOPS, REPLY_TCLASS = 33, 0x48
V6 = socket.IPPROTO_IPV6
IP_PKTINFO, IP_TTL, IP_RECVTTL = 8, 2, 12  # <linux/in.h>; not all in Python's module


@pytest.fixture(scope="module")
def st():
    with v6_port("pki6", [("ip", "addr", "add", STACK6_B + "/64", "dev", "port0")]) as s:
        yield s


def kernel_exchange(st, dst, port, data):
    """From the peer's kernel: data to dst:port with hop limit PEER_HOPS and traffic class
    PEER_TCLASS (IPv6), and the answer's (data, source, hop limit, traffic class) as the
    peer's kernel received it (RFC 3542 §6.3, §6.5)."""
    def go():
        six = ":" in dst
        s = socket.socket(socket.AF_INET6 if six else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(10)
        try:
            if six:
                s.setsockopt(V6, socket.IPV6_UNICAST_HOPS, PEER_HOPS)
                s.setsockopt(V6, socket.IPV6_TCLASS, PEER_TCLASS)
                s.setsockopt(V6, socket.IPV6_RECVHOPLIMIT, 1)
                s.setsockopt(V6, socket.IPV6_RECVTCLASS, 1)
            else:
                s.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
            s.sendto(data, (dst, port))
            got, cmsgs, _flags, src = s.recvmsg(2048, 256)
            ints = {ty: struct.unpack("i", d[:4])[0] for _lv, ty, d in cmsgs}
            return got, src[0], ints
        finally:
            s.close()
    return topo.in_netns(st.peer.ns, go, timeout=30)


def cmsgs_of(line):
    return [(lv, ty, bytes.fromhex(h)) for lv, ty, h in line["cmsgs"]]


def pktinfo6(addr, ifindex):
    return ipaddress.IPv6Address(addr).packed + struct.pack("I", ifindex)


def test_recvmsg_reports_the_address_hop_limit_and_tclass_and_the_answer_leaves_from_it(
        st, work):
    args = ["pktinfo", "7010", "3", str(REPLY_HOPS), str(REPLY_TCLASS)]
    with program([sys.executable, PROBE, *args], env=stack_env(st),
                 log=str(work / "p.out")) as p:
        assert lines(p, 1)[0]["bound"][:2] == ["::", 7010]
        # Two of the stack's addresses on one port: each answer comes from the one asked.
        for dst, data in ((STACK6, b"to-a"), (STACK6_B, b"to-b")):
            got, src, ints = kernel_exchange(st, dst, 7010, data)
            assert (got, src) == (data, dst), (got, src)
            assert ints == {socket.IPV6_HOPLIMIT: REPLY_HOPS,
                            socket.IPV6_TCLASS: REPLY_TCLASS}, ints
        got, src, ints = kernel_exchange(st, st.stack_ip, 7010, b"four")
        assert (got, src) == (b"four", st.stack_ip)
        # IPv6's hop limit and traffic class do not apply to an IPv4 peer (Linux ignores
        # them there): the default TTL.
        assert ints == {IP_TTL: 64}, ints
        a, b, four = lines(p, 4)[1:]
    port0 = 1  # the stack's ifindex of port0 (netcfg_ifindex)
    for line, dst in ((a, STACK6), (b, STACK6_B)):
        assert line["from"][0] == PEER6 and line["flags"] == 0, line
        assert cmsgs_of(line) == [
            (V6, socket.IPV6_PKTINFO, pktinfo6(dst, port0)),
            (V6, socket.IPV6_HOPLIMIT, struct.pack("i", PEER_HOPS)),
            (V6, socket.IPV6_TCLASS, struct.pack("i", PEER_TCLASS))], line
    # The IPv4 datagram: IPV6_PKTINFO with the mapped address, then IP_PKTINFO (ifindex,
    # spec_dst, addr); no hop limit or traffic class (ip6_datagram_recv_specific_ctl is
    # IPv6's only).
    v4 = socket.inet_aton(st.stack_ip)
    assert four["from"][0] == "::ffff:" + st.peer_ip, four
    assert cmsgs_of(four) == [
        (V6, socket.IPV6_PKTINFO, pktinfo6("::ffff:" + st.stack_ip, port0)),
        (socket.IPPROTO_IP, IP_PKTINFO, struct.pack("i", port0) + v4 + v4)], four


def test_options_and_sendmsg_errors_match_the_kernel(st, work):
    kernel = topo.run([sys.executable, PROBE, "options"], timeout=30).stdout
    stack = topo.run([sys.executable, PROBE, "options"], env=stack_env(st), timeout=30).stdout
    assert [json.loads(x) for x in stack.splitlines()] == \
        [json.loads(x) for x in kernel.splitlines()]


def test_multicast_options_refused_as_for_ipv4(st, work):
    """The stack delivers no multicast to applications: joining a group is refused with
    ENOPROTOOPT in both families, rather than taken and never honoured."""
    code = (
        "import socket, struct, errno\n"
        "def e(f):\n"
        "    try:\n"
        "        f(); return 0\n"
        "    except OSError as x:\n"
        "        return errno.errorcode[x.errno]\n"
        "s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
        "g6 = socket.inet_pton(socket.AF_INET6, 'ff02::1:3') + struct.pack('I', 1)\n"
        "s4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "g4 = socket.inet_aton('224.0.0.252') + socket.inet_aton('0.0.0.0')\n"
        "print(e(lambda: s6.setsockopt(41, socket.IPV6_JOIN_GROUP, g6)),"
        " e(lambda: s6.setsockopt(41, socket.IPV6_MULTICAST_HOPS, 1)),"
        " e(lambda: s4.setsockopt(0, socket.IP_ADD_MEMBERSHIP, g4)))\n")
    out = topo.run([sys.executable, "-c", code], env=stack_env(st), timeout=30).stdout
    assert out.split() == ["ENOPROTOOPT"] * 3, out
