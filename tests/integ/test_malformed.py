"""Malformed and hostile frames from the kernel side (raw frames on the peer veth): each is
dropped under its own named counter and only that one, the stack still answers pings, and no
mbuf stays held."""

import random

import pytest
from scapy.layers.inet import ICMP, IP, TCP, IPOption_LSRR, IPOption_SSRR
from scapy.layers.l2 import ARP, Dot1Q
from scapy.packet import Raw

import topo

COPIES = 5  # frames of each kind: the counter must move by exactly this much


def echo(payload=b"dpstack-integ-payload"):
    return bytes(ICMP(type=8, id=0x77, seq=1) / Raw(payload))


def corrupt_ip_checksum(s):
    frame = bytearray(bytes(s.eth() / s.ip() / ICMP() / Raw(b"x" * 16)))
    frame[14 + 10] ^= 0x5a
    return bytes(frame)


def corrupt_icmp_checksum(s):
    frame = bytearray(bytes(s.eth() / s.ip() / ICMP() / Raw(b"x" * 16)))
    frame[14 + 20 + 2] ^= 0x5a
    return bytes(frame)


def arp_body(s, **kw):
    kw.setdefault("op", 1)
    kw.setdefault("hwsrc", s.peer_mac)
    kw.setdefault("psrc", s.peer_ip)
    kw.setdefault("pdst", s.stack_ip)
    return ARP(**kw)


# (name, counter, expected increase per copy, builder(setup, i) -> list of frames)
CASES = [
    ("eth_vlan_header_truncated", "eth.truncated", 1,
     lambda s, i: [s.eth(type=0x8100) / Raw(b"\x00\x07")]),
    ("eth_8023_length_field", "eth.bad_type", 1,
     lambda s, i: [s.eth(type=0x0040) / Raw(b"\xaa" * 46)]),
    ("eth_stacked_vlan_tags", "eth.bad_type", 1,
     lambda s, i: [s.eth() / Dot1Q(vlan=3) / Dot1Q(vlan=4) / s.ip() / ICMP()]),
    ("eth_8021q_tagged", "eth.vlan", 1,
     lambda s, i: [s.eth() / Dot1Q(vlan=7) / s.ip() / ICMP()]),
    ("eth_multicast_source_mac", "eth.bad_src", 1,
     lambda s, i: [s.eth(src="01:00:5e:00:00:01") / s.ip() / ICMP()]),
    ("eth_other_hosts_unicast_mac", "eth.not_ours", 1,
     lambda s, i: [s.eth(dst="02:00:00:00:00:99") / s.ip() / ICMP()]),
    ("eth_unknown_ethertype", "eth.unknown_type", 1,
     lambda s, i: [s.eth(type=0x88b5) / Raw(b"\x00" * 46)]),
    ("arp_truncated", "arp.malformed", 1,
     lambda s, i: [s.eth(type=0x0806) / Raw(bytes(arp_body(s))[:20])]),
    ("arp_unknown_opcode", "arp.malformed", 1,
     lambda s, i: [s.eth(type=0x0806) / arp_body(s, op=3)]),
    ("arp_multicast_sender_ip", "arp.bad_sender", 1,
     lambda s, i: [s.eth(type=0x0806) / arp_body(s, psrc="224.0.0.9")]),
    ("ip_header_truncated", "ip.truncated", 1,
     lambda s, i: [s.eth(type=0x0800) / Raw(b"\x45\x00\x00\x1c\x00\x01\x00\x00\x40\x01")]),
    ("ip_version_6_in_ipv4_frame", "ip.bad_version", 1,
     lambda s, i: [s.raw_ip(echo(), version=6)]),
    ("ip_ihl_below_5", "ip.bad_hdr_len", 1,
     lambda s, i: [s.raw_ip(echo(), ihl=4)]),
    ("ip_ihl_past_frame", "ip.bad_hdr_len", 1,
     lambda s, i: [s.raw_ip(b"\x08\x00\xf7\xff\x00\x00\x00\x00", ihl=15)]),
    ("ip_total_length_past_frame", "ip.bad_length", 1,
     lambda s, i: [s.raw_ip(echo(), total_len=1000)]),
    ("ip_total_length_below_header", "ip.bad_length", 1,
     lambda s, i: [s.raw_ip(echo(), total_len=12)]),
    ("ip_bad_header_checksum", "ip.bad_checksum", 1,
     lambda s, i: [corrupt_ip_checksum(s)]),
    ("ip_reserved_flag_set", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), flags_frag=0x8000)]),
    ("ip_source_loopback", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="127.0.0.1")]),
    ("ip_source_multicast", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="224.0.0.5")]),
    ("ip_source_broadcast", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="255.255.255.255")]),
    ("ip_source_subnet_broadcast", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="10.0.0.255")]),
    ("ip_source_our_own_address", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src=s.stack_ip)]),
    # RFC 1122 §3.2.1.3: 0.0.0.0 only to the limited broadcast (a DHCP client): an echo
    # request from it is not answered, a SYN from it opens nothing.
    ("ip_source_this_host", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="0.0.0.0")]),
    ("ip_source_this_host_syn", "ip.bad_field", 1,
     lambda s, i: [s.eth() / s.ip(src="0.0.0.0") / TCP(sport=40000 + i, dport=80, flags="S")]),
    ("ip_source_network_zero", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(echo(), src="0.1.2.3")]),
    ("ip_fragment_not_multiple_of_8", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 13, flags_frag=0x2000, ident=0x1000 + i)]),
    ("ip_fragment_past_65535", "ip.bad_field", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 64, flags_frag=8189, ident=0x1100 + i)]),
    ("ip_option_lsrr", "ip.source_route", 1,
     lambda s, i: [s.eth() / s.ip(options=[IPOption_LSRR(routers=["10.0.0.9"])]) / ICMP()]),
    ("ip_option_ssrr", "ip.source_route", 1,
     lambda s, i: [s.eth() / s.ip(options=[IPOption_SSRR(routers=["10.0.0.9"])]) / ICMP()]),
    ("ip_option_length_1", "ip.bad_option", 1,
     lambda s, i: [s.raw_ip(echo(), options=b"\x07\x01\x00\x00")]),
    ("ip_option_length_past_header", "ip.bad_option", 1,
     lambda s, i: [s.raw_ip(echo(), options=b"\x01\x44\x20\x05")]),
    ("ip_destination_multicast", "ip.bad_dst", 1,
     lambda s, i: [s.eth(dst="01:00:5e:00:00:fb") / s.ip(dst="224.0.0.251") / ICMP()]),
    ("ip_unknown_protocol", "ip.unknown_proto", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 16, proto=253)]),
    ("icmp_header_truncated", "icmp.truncated", 1,
     lambda s, i: [s.raw_ip(b"\x08\x00\xf7\xff")]),
    ("icmp_bad_checksum", "icmp.bad_checksum", 1,
     lambda s, i: [corrupt_icmp_checksum(s)]),
    ("icmp_unknown_type", "icmp.unhandled", 1,
     lambda s, i: [s.eth() / s.ip() / ICMP(type=42)]),
    ("icmp_echo_to_subnet_broadcast", "icmp.broadcast_echo", 1,
     lambda s, i: [s.eth(dst="ff:ff:ff:ff:ff:ff") / s.ip(dst="10.0.0.255") / ICMP()]),
    ("frag_overlapping", "ip.reass_overlap", 1,
     lambda s, i: [s.raw_ip(b"\x08" + b"\x00" * 15, flags_frag=0x2000, ident=0x2000 + i),
                   s.raw_ip(b"\x11" * 16, flags_frag=1, ident=0x2000 + i)]),
    ("frag_data_past_last_fragment", "ip.reass_bad_last", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 8, flags_frag=1, ident=0x2300 + i),
                   s.raw_ip(b"\x00" * 8, flags_frag=0x2000 | 2, ident=0x2300 + i)]),
    ("frag_65_in_one_datagram", "ip.reass_too_many", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 8, flags_frag=0x2000 | k, ident=0x2400 + i)
                   for k in range(65)]),
    ("frag_past_65535_with_first_header_options", "ip.reass_too_big", 1,
     lambda s, i: [s.raw_ip(b"\x08" + b"\x00" * 7, options=b"\x01" * 40, flags_frag=0x2000,
                            ident=0x2500 + i),
                   s.raw_ip(b"\x00" * 24, flags_frag=65464 // 8, ident=0x2500 + i)]),
    ("frag_empty_with_more_fragments", "ip.reass_tiny", 1,
     lambda s, i: [s.raw_ip(b"", flags_frag=0x2000, ident=0x2100 + i)]),
    ("frag_tcp_at_offset_8", "ip.reass_tiny", 1,
     lambda s, i: [s.raw_ip(b"\x00" * 16, proto=6, flags_frag=1, ident=0x2200 + i)]),
]


@pytest.mark.parametrize("name,counter,per_copy,build", CASES,
                         ids=["%s-%s" % (c[0], c[1]) for c in CASES])
def test_malformed_frame_dropped_under_its_counter(one_port, name, counter, per_copy, build):
    s = one_port
    baseline = s.settled_mempool()
    before = s.daemon.stats()
    with s.packet_socket() as ps:
        for i in range(COPIES):
            for frame in build(s, i):
                ps.send(frame)
    s.ping_ok()
    after = s.daemon.stats()
    drops = topo.drops_delta(before, after)
    assert drops.get(counter, 0) == COPIES * per_copy, \
        "%s: expected %s +%d, drops moved: %r" % (name, counter, COPIES * per_copy, drops)
    others = {k: v for k, v in drops.items() if k != counter}
    assert not others, "%s: other drop counters moved too: %r" % (name, others)
    s.wait_mempool_back(baseline)


def test_duplicate_fragment_dropped_alone_datagram_still_answered(one_port):
    """An exact duplicate is dropped by itself; the datagram completes and gets its reply."""
    s = one_port
    baseline = s.settled_mempool()
    before = s.daemon.stats()
    payload = bytes(ICMP(type=8, id=0x99, seq=1) / Raw(b"z" * 1600))  # over the MTU
    first = s.raw_ip(payload[:1480], flags_frag=0x2000, ident=0x3000)
    last = s.raw_ip(payload[1480:], flags_frag=1480 // 8, ident=0x3000)
    with s.packet_socket() as ps:
        ps.send(first)
        ps.send(first)
        ps.send(last)
        reply = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 0 and
                              f[ICMP].id == 0x99, timeout=3)
    assert reply is not None, "no echo reply to the reassembled datagram"
    after = s.daemon.stats()
    assert topo.drops_delta(before, after) == {"ip.reass_duplicate": 1}
    assert s.daemon.counter("ip.reassembled", after) - \
        s.daemon.counter("ip.reassembled", before) == 1
    s.wait_mempool_back(baseline)


FLOOD = 3000


def _flood(s):
    """FLOOD incomplete datagrams: one non-first fragment each (so no ICMP error is due when
    they time out), distinct random ids. Returns the stats before."""
    ids = random.sample(range(1, 65536), FLOOD)
    frames = [s.raw_ip(b"\xab" * 8, flags_frag=0x2000 | 1, ident=i) for i in ids]
    before = s.daemon.stats()
    with s.packet_socket() as ps:
        ps.send_many(frames)
    s.ping_ok()
    return before


def test_fragment_flood_bounded_and_released_after_reassembly_timeout(fresh_one_port):
    """Thousands of incomplete datagrams: the daemon keeps answering and holds a bounded
    number of mbufs; when the reassembly timeout (30 s by default, set to 3 s here with
    `ip reassembly timeout-ms`) expires, every mbuf comes back, each datagram is counted as
    timed out, and the one whose first fragment arrived is answered with time exceeded
    (RFC 792 code 1)."""
    s = fresh_one_port
    d = s.daemon
    assert d.ctl("ip", "reassembly", json=True) == {"timeout-ms": 30000}
    d.ctl("ip", "reassembly", "timeout-ms", "3000")
    assert d.ctl("ip", "reassembly", json=True) == {"timeout-ms": 3000}
    baseline = s.settled_mempool()
    before = _flood(s)
    first = s.raw_ip(bytes(ICMP(type=8, id=0x7e, seq=1) / Raw(b"q" * 16)),
                     flags_frag=0x2000, ident=0)  # ids of the flood start at 1
    with s.packet_socket() as ps:
        ps.send(first)
        s.ping_ok()
        mid = d.stats()
        assert d.counter("ip.frags_rx", mid) - d.counter("ip.frags_rx", before) == FLOOD + 1
        held = mid["reassembly"]["datagrams"]
        assert 0 < held <= 1100, "%d incomplete datagrams held" % held
        assert held <= mid["mempool"]["in_use"] - baseline <= held + 64, mid["mempool"]
        topo.wait_until(lambda: d.stats()["reassembly"]["datagrams"] == 0, timeout=15,
                        interval=0.5, what="reassembly table empty after the timeout")
        te = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 11, timeout=3)
    assert te is not None, "no time exceeded for the datagram whose first fragment came"
    assert te[ICMP].code == 1 and te[IP].src == s.stack_ip
    assert te[ICMP].payload.id == 0, "time exceeded quotes another datagram"
    s.wait_mempool_back(baseline)
    after = d.stats()
    assert topo.drops_delta(mid, after) == {"ip.reass_timeout": held}
    assert d.counter("icmp.tx_time_exceeded", after) - \
        d.counter("icmp.tx_time_exceeded", mid) == 1
    s.ping_ok()


def test_fragment_flood_evictions_counted_as_drops(fresh_one_port):
    s = fresh_one_port
    d = s.daemon
    before = _flood(s)
    after = d.stats()
    held = after["reassembly"]["datagrams"]
    assert held > 0
    evicted = FLOOD - held  # each datagram is one fragment, dropped when evicted
    reass_view = after["reassembly"]["verdicts"]["no_memory"] - \
        before["reassembly"]["verdicts"]["no_memory"]
    assert reass_view == evicted, (reass_view, evicted)
    assert topo.drops_delta(before, after) == {"ip.reass_no_memory": evicted}
