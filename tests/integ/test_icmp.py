"""ICMP echo between the kernel and the stack, both directions, small to 65507-byte
datagrams (fragmented and reassembled on both sides)."""

import os

import pytest

import topo


def test_ping_1000_paced_all_answered(one_port):
    r = one_port.peer.ping(one_port.stack_ip, count=1000, interval=0.002, wait=2,
                           timeout=60)
    assert r.transmitted == 1000 and r.received == 1000, r
    assert r.clean, r


def test_ping_flood_all_answered(one_port):
    d = one_port.daemon
    before = d.counter("icmp.tx_echo_reply")
    r = one_port.peer.ping(one_port.stack_ip, count=1000, flood=True, wait=2, timeout=60)
    assert r.transmitted == 1000 and r.received == 1000, r
    assert r.clean, r
    assert d.counter("icmp.tx_echo_reply") - before == 1000


@pytest.mark.parametrize("size", [1472, 1473, 8000, 65507])
def test_ping_large_from_kernel_reassembled_and_answered(one_port, size):
    d = one_port.daemon
    before = d.stats()
    r = one_port.peer.ping(one_port.stack_ip, count=3, size=size, interval=0.2, wait=3)
    assert r.received == 3, r
    assert "%d bytes from %s" % (size + 8, one_port.stack_ip) in r.output, r
    assert r.clean, r
    after = d.stats()
    fragmented = size + 28 > 1500
    reassembled = d.counter("ip.reassembled", after) - d.counter("ip.reassembled", before)
    frag_out = d.counter("ip.fragmented", after) - d.counter("ip.fragmented", before)
    assert reassembled == (3 if fragmented else 0)
    assert frag_out == (3 if fragmented else 0)


def test_fragments_in_reverse_order_reassembled_and_answered(one_port):
    from scapy.layers.inet import ICMP, fragment
    from scapy.packet import Raw
    s = one_port
    d = s.daemon
    before = d.stats()
    frags = fragment(s.eth() / s.ip(id=0x5151) / ICMP(type=8, id=0x51) / Raw(os.urandom(3000)),
                     fragsize=1000)
    with s.packet_socket() as ps:
        for f in reversed(frags):
            ps.send(f)
        reply = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 0 and
                              f[ICMP].id == 0x51, timeout=3)
    assert reply is not None, "no reply to a datagram sent last fragment first"
    after = d.stats()
    assert topo.drops_delta(before, after) == {}
    assert d.counter("ip.reassembled", after) - d.counter("ip.reassembled", before) == 1


@pytest.mark.parametrize("option", [["-R"], ["-T", "tsonly"]], ids=["record_route", "timestamp"])
def test_ping_with_ip_option_answered(one_port, option):
    d = one_port.daemon
    before = d.counter("ip.options")
    r = one_port.peer.ping(one_port.stack_ip, count=3, interval=0.05, wait=2, extra=option)
    assert r.received == 3, r
    assert d.counter("ip.options") - before == 3


def test_ping_flood_65507_all_answered_no_mbufs_held(one_port):
    baseline = one_port.settled_mempool()
    r = one_port.peer.ping(one_port.stack_ip, count=100, size=65507, flood=True, wait=3,
                           timeout=60)
    assert r.received == 100 and r.clean, r
    assert one_port.daemon.stats()["reassembly"]["datagrams"] == 0
    one_port.wait_mempool_back(baseline)


def test_ping_8000_from_kernel_leaves_no_mbufs_held(one_port):
    baseline = one_port.settled_mempool()
    r = one_port.peer.ping(one_port.stack_ip, count=20, size=8000, interval=0.01, wait=3)
    assert r.received == 20, r
    one_port.wait_mempool_back(baseline)


@pytest.mark.parametrize("size", [40, 1400])
def test_echo_reply_to_fragmented_request_under_mtu_carries_whole_payload(one_port, size):
    """A request that arrives in fragments but whose reply fits one frame (the sender had a
    smaller path MTU): the reply must carry the request's payload, byte for byte."""
    from scapy.layers.inet import ICMP
    from scapy.packet import Raw
    s = one_port
    data = os.urandom(size)  # unlike anything an earlier frame left in a buffer
    payload = bytes(ICMP(type=8, id=0x5a5a, seq=size) / Raw(data[:size]))
    cut = len(payload) // 2 // 8 * 8
    with s.packet_socket() as ps:
        ps.send(s.raw_ip(payload[:cut], flags_frag=0x2000, ident=0x4000 + size))
        ps.send(s.raw_ip(payload[cut:], flags_frag=cut // 8, ident=0x4000 + size))
        reply = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 0 and
                              f[ICMP].id == 0x5a5a and f[ICMP].seq == size, timeout=3)
    assert reply is not None, "no echo reply"
    assert bytes(reply[ICMP].payload)[:size] == data, "reply payload differs"


@pytest.mark.parametrize("payload", [b"", b"\0" * 32], ids=["empty", "zeros"])
def test_echo_reply_to_all_zero_request_has_valid_checksum(one_port, payload):
    """id 0, seq 0, zero data: the reply's words are all zero and only 0xffff verifies
    (RFC 1624's incremental update gives 0x0000 there)."""
    from scapy.layers.inet import ICMP, IP
    s = one_port
    with s.packet_socket() as ps:
        ps.send(s.eth() / s.ip() / ICMP(type=8, id=0, seq=0) / payload)
        reply = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 0 and
                              f[ICMP].id == 0 and f[ICMP].seq == 0, timeout=3)
    assert reply is not None, "no echo reply"
    msg = bytes(reply[IP])[reply[IP].ihl * 4:reply[IP].len]
    assert topo.inet_csum(msg) == 0, "reply checksum %#06x is wrong" % reply[ICMP].chksum


def _stack_ping(setup, *args, timeout=30):
    return setup.daemon.ctl_result("ping", setup.peer_ip, *args, json=True, timeout=timeout)


@pytest.mark.parametrize("size", [0, 56, 1472, 1473, 8000, 65507])
def test_stack_ping_kernel_answers(one_port, size):
    """dpstackctl ping: the stack's own output path (route, ARP, fragmentation)."""
    r = _stack_ping(one_port, "count", 3, "size", size, "timeout-ms", 2000)
    assert r.rc == 0, r
    res = topo.jsonlib.loads(r.out)
    assert res["transmitted"] == 3 and res["received"] == 3, res


@pytest.mark.parametrize("size", [56, 3000, 65507])
def test_stack_ping_own_address_answered_without_fragmenting(one_port, size):
    """Ping to one of our own addresses turns around inside the stack, chained mbufs and
    all: nothing is fragmented, nothing leaves the port, nothing is dropped."""
    d = one_port.daemon
    before = d.stats()
    r = d.ctl_result("ping", one_port.stack_ip, "count", 2, "size", size, "timeout-ms", 2000,
                     json=True, timeout=30)
    assert r.rc == 0, r
    res = topo.jsonlib.loads(r.out)
    assert res["received"] == 2 and all(x["bytes"] == size + 8 for x in res["replies"]), res
    after = d.stats()
    assert topo.drops_delta(before, after) == {}
    assert d.counter("ip.fragmented", after) == d.counter("ip.fragmented", before)


def test_stack_ping_text_output_one_line_per_reply(one_port):
    r = one_port.daemon.ctl_result("ping", one_port.peer_ip, "count", 2, "size", 8000,
                                   timeout=30)
    assert r.rc == 0, r
    replies = [line for line in r.out.splitlines() if "bytes from %s" % one_port.peer_ip in line]
    assert len(replies) == 2, r


def test_stack_ping_unanswered_exits_1(one_port):
    """10.0.0.1 is up but a firewall in the peer drops echo requests: no reply, exit 1."""
    peer = one_port.peer
    peer.run("nft", "add table ip dpi_drop")
    try:
        peer.run("nft", "add chain ip dpi_drop in { type filter hook input priority 0 ; }")
        peer.run("nft", "add rule ip dpi_drop in icmp type echo-request drop")
        r = one_port.daemon.ctl_result("ping", one_port.peer_ip, "count", 2, "timeout-ms",
                                       300, json=True, timeout=30)
        assert r.rc == 1, r
    finally:
        peer.run("nft", "delete table ip dpi_drop", check=False)
    r = one_port.daemon.ctl_result("ping", one_port.peer_ip, "count", 1, "timeout-ms", 2000)
    assert r.rc == 0, r


def test_af_packet_port_answers_pings(lab):
    """DESIGN.md's embedded default device, net_af_packet, for unfragmented traffic."""
    setup = topo.SinglePort(lab, driver="net_af_packet")
    setup.warm_up()
    r = setup.peer.ping(setup.stack_ip, count=100, interval=0.005, wait=2)
    assert r.received == 100, r
