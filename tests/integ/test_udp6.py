"""UDP over IPv6 against the Linux kernel (issue 17): the built-in UDP services, bound to ::
and so answering both families, reached from Python sockets in the kernel's namespace;
datagrams larger than the MTU fragmented by the source both ways (RFC 8200 §4.5); a
datagram without a checksum dropped and counted (RFC 8200 §8.1); a closed port answered with
ICMPv6 port unreachable, which the kernel's connected socket reports as ECONNREFUSED; and one
service reached over both families at once."""

import os
import socket
import threading

import pytest
from scapy.layers.inet import UDP
from scapy.packet import Raw

import topo
from test_ipv6 import PEER6, STACK6, v6_port

ECHO_PORT = 7
DISCARD_PORT = 9
CLOSED_PORT = 4444


@pytest.fixture(scope="module")
def v6():
    with v6_port("udp6", [("service", "add", "echo", "udp", ECHO_PORT),
                          ("service", "add", "discard", "udp", DISCARD_PORT)]) as setup:
        yield setup


def udp6_socket(s, timeout=5.0, family=socket.AF_INET6):
    """A UDP socket in the kernel's namespace, bound to the peer's address of family."""
    def make():
        u = socket.socket(family, socket.SOCK_DGRAM)
        u.bind((PEER6 if family == socket.AF_INET6 else s.peer_ip, 0))
        u.settimeout(timeout)
        return u
    return topo.in_netns(s.peer.ns, make)


def echo_round_trip(s, u, dst, data):
    u.sendto(data, (dst, ECHO_PORT))
    got, src = u.recvfrom(1 << 16)
    assert src[0] == dst and src[1] == ECHO_PORT, src
    return got


def echo_once_counted(s, size, counters):
    """Echoes size random bytes over IPv6; returns how much each counter grew."""
    d = s.daemon
    before = {k: d.counter(k) for k in counters}
    u = udp6_socket(s)
    try:
        u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        data = os.urandom(size)
        assert echo_round_trip(s, u, STACK6, data) == data
    finally:
        u.close()
    return {k: d.counter(k) - before[k] for k in counters}


@pytest.mark.parametrize("size", [0, 1, 100, 1452])
def test_echo_over_ipv6_returns_the_datagram(v6, size):
    assert echo_once_counted(v6, size, ("udp6.in_datagrams", "udp6.out_datagrams")) == {
        "udp6.in_datagrams": 1, "udp6.out_datagrams": 1}


@pytest.mark.parametrize("size", [3000, 20000, 65527])
def test_large_datagram_fragmented_both_ways(v6, size):
    """The kernel fragments the datagram to the stack, which reassembles it; the echo,
    larger than the MTU, is fragmented by the stack as its source and reassembled by the
    kernel."""
    assert echo_once_counted(v6, size, ("ip6.reassembled", "ip6.fragmented")) == {
        "ip6.reassembled": 1, "ip6.fragmented": 1}
    assert v6.daemon.stats()["reassembly6"]["datagrams"] == 0


def test_echo_to_link_local_address(v6):
    """A link-local peer's answer leaves by the port the datagram came in on."""
    ifindex = int(v6.peer.run("cat", "/sys/class/net/%s/ifindex" % v6.peer.ifname).stdout)
    u = topo.in_netns(v6.peer.ns, lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
    u.settimeout(5.0)
    try:
        u.sendto(b"link-local", (v6.stack_ll, ECHO_PORT, 0, ifindex))
        got, src = u.recvfrom(100)
    finally:
        u.close()
    assert got == b"link-local"
    assert src[0].split("%")[0] == v6.stack_ll and src[1] == ECHO_PORT


def test_zero_checksum_dropped_and_counted(v6):
    d = v6.daemon
    before = {k: d.counter(k) for k in ("udp6.zero_checksum", "udp6.in_datagrams")}
    frame = v6.frame(v6.ip6() / UDP(sport=5555, dport=ECHO_PORT, chksum=0) / Raw(b"nocsum"))
    assert frame[14 + 40 + 6:14 + 40 + 8] == b"\0\0"
    with topo.PacketSocket(v6.peer.ns, v6.peer.ifname) as ps:
        for _ in range(3):
            ps.send(frame)
    topo.wait_until(lambda: d.counter("udp6.zero_checksum") - before["udp6.zero_checksum"]
                    >= 3, timeout=5, what="zero checksums counted")
    assert d.counter("udp6.zero_checksum") - before["udp6.zero_checksum"] == 3
    assert d.counter("udp6.in_datagrams") == before["udp6.in_datagrams"]
    # The port still answers datagrams that carry a checksum.
    u = udp6_socket(v6)
    try:
        assert echo_round_trip(v6, u, STACK6, b"summed") == b"summed"
    finally:
        u.close()


def test_closed_port_refused_over_ipv6(v6):
    """ICMPv6 port unreachable (RFC 4443 §3.1) reaches the kernel's connected socket."""
    d = v6.daemon
    before = {k: d.counter(k) for k in ("udp6.no_port", "icmp6.tx_error")}
    u = udp6_socket(v6)
    try:
        u.connect((STACK6, CLOSED_PORT))
        u.send(b"anyone?")
        with pytest.raises(ConnectionRefusedError):
            u.recv(100)
    finally:
        u.close()
    assert d.counter("udp6.no_port") - before["udp6.no_port"] == 1
    assert d.counter("icmp6.tx_error") - before["icmp6.tx_error"] == 1


def test_discard_counts_ipv6_datagrams_and_answers_nothing(v6):
    d = v6.daemon
    before = d.counter("udp6.in_datagrams")
    u = udp6_socket(v6, timeout=0.5)
    try:
        for _ in range(10):
            u.sendto(b"d" * 64, (STACK6, DISCARD_PORT))
        topo.wait_until(lambda: d.counter("udp6.in_datagrams") - before >= 10, timeout=5,
                        what="10 datagrams delivered")
        with pytest.raises(socket.timeout):
            u.recv(100)
    finally:
        u.close()


def test_dual_stack_echo_serves_both_families_at_once(v6):
    """The echo service is bound to ::, which hears IPv4 too (RFC 3493 §3.7): two threads,
    one per family, each get their own datagrams back."""
    results = {}

    def run(family, dst):
        u = udp6_socket(v6, family=family)
        try:
            ok = 0
            for i in range(200):
                data = b"%d-%d" % (family, i) + os.urandom(i % 300)
                if echo_round_trip(v6, u, dst, data) == data:
                    ok += 1
            results[family] = ok
        finally:
            u.close()

    threads = [threading.Thread(target=run, args=(socket.AF_INET, v6.stack_ip)),
               threading.Thread(target=run, args=(socket.AF_INET6, STACK6))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {socket.AF_INET: 200, socket.AF_INET6: 200}


def test_sock_show_lists_the_dual_stack_socket(v6):
    rows = [r for r in v6.daemon.ctl("sock", "show", "udp", json=True)
            if r["local"] == "[::]:%d" % ECHO_PORT]
    assert len(rows) == 1, rows
    assert rows[0]["state"] == "UNCONN" and rows[0]["peer"] == "[::]:*", rows
