"""Malformed and hostile frames from the kernel side (raw frames on the peer veth): each is
dropped under its own named counter and only that one, the stack still answers pings, and no
mbuf stays held."""

import random
import struct

import pytest
from scapy.layers.inet import ICMP, IP, IPOption_LSRR, IPOption_SSRR, TCP
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

import topo

COPIES = 5  # frames of each kind: the counter must move by exactly this much


def _csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def raw_ip(s, payload, proto=1, options=b"", ihl=None, total_len=None, flags_frag=0,
           ident=0x4242, ttl=64, src=None, dst=None, version=4, csum=None):
    """An IPv4 header built by hand, so every field can be wrong on purpose, then payload."""
    hdr_len = 20 + len(options)
    if ihl is None:
        ihl = hdr_len // 4
    if total_len is None:
        total_len = hdr_len + len(payload)
    src = [int(x) for x in (src or s.peer_ip).split(".")]
    dst = [int(x) for x in (dst or s.stack_ip).split(".")]
    hdr = struct.pack("!BBHHHBBH4B4B", version << 4 | ihl, 0, total_len, ident, flags_frag,
                      ttl, proto, 0, *src, *dst) + options
    if csum is None:
        csum = _csum(hdr)
    hdr = hdr[:10] + struct.pack("!H", csum) + hdr[12:]
    return s.eth(type=0x0800) / Raw(hdr + bytes(payload))


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
     lambda s, i: [raw_ip(s, echo(), version=6)]),
    ("ip_ihl_below_5", "ip.bad_hdr_len", 1,
     lambda s, i: [raw_ip(s, echo(), ihl=4)]),
    ("ip_ihl_past_frame", "ip.bad_hdr_len", 1,
     lambda s, i: [raw_ip(s, b"\x08\x00\xf7\xff\x00\x00\x00\x00", ihl=15)]),
    ("ip_total_length_past_frame", "ip.bad_length", 1,
     lambda s, i: [raw_ip(s, echo(), total_len=1000)]),
    ("ip_total_length_below_header", "ip.bad_length", 1,
     lambda s, i: [raw_ip(s, echo(), total_len=12)]),
    ("ip_bad_header_checksum", "ip.bad_checksum", 1,
     lambda s, i: [corrupt_ip_checksum(s)]),
    ("ip_reserved_flag_set", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, echo(), flags_frag=0x8000)]),
    ("ip_source_loopback", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, echo(), src="127.0.0.1")]),
    ("ip_source_multicast", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, echo(), src="224.0.0.5")]),
    ("ip_source_broadcast", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, echo(), src="255.255.255.255")]),
    ("ip_fragment_not_multiple_of_8", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, b"\x00" * 13, flags_frag=0x2000, ident=0x1000 + i)]),
    ("ip_fragment_past_65535", "ip.bad_field", 1,
     lambda s, i: [raw_ip(s, b"\x00" * 64, flags_frag=8189, ident=0x1100 + i)]),
    ("ip_option_lsrr", "ip.source_route", 1,
     lambda s, i: [s.eth() / s.ip(options=[IPOption_LSRR(routers=["10.0.0.9"])]) / ICMP()]),
    ("ip_option_ssrr", "ip.source_route", 1,
     lambda s, i: [s.eth() / s.ip(options=[IPOption_SSRR(routers=["10.0.0.9"])]) / ICMP()]),
    ("ip_option_length_1", "ip.bad_option", 1,
     lambda s, i: [raw_ip(s, echo(), options=b"\x07\x01\x00\x00")]),
    ("ip_option_length_past_header", "ip.bad_option", 1,
     lambda s, i: [raw_ip(s, echo(), options=b"\x01\x44\x20\x05")]),
    ("ip_destination_multicast", "ip.bad_dst", 1,
     lambda s, i: [s.eth(dst="01:00:5e:00:00:fb") / s.ip(dst="224.0.0.251") / ICMP()]),
    ("ip_unknown_protocol", "ip.unknown_proto", 1,
     lambda s, i: [raw_ip(s, b"\x00" * 16, proto=253)]),
    ("icmp_header_truncated", "icmp.truncated", 1,
     lambda s, i: [raw_ip(s, b"\x08\x00\xf7\xff")]),
    ("icmp_bad_checksum", "icmp.bad_checksum", 1,
     lambda s, i: [corrupt_icmp_checksum(s)]),
    ("icmp_unknown_type", "icmp.unhandled", 1,
     lambda s, i: [s.eth() / s.ip() / ICMP(type=42)]),
    ("icmp_echo_to_subnet_broadcast", "icmp.broadcast_echo", 1,
     lambda s, i: [s.eth(dst="ff:ff:ff:ff:ff:ff") / s.ip(dst="10.0.0.255") / ICMP()]),
    ("frag_overlapping", "ip.reass_overlap", 1,
     lambda s, i: [raw_ip(s, b"\x08" + b"\x00" * 15, flags_frag=0x2000, ident=0x2000 + i),
                   raw_ip(s, b"\x11" * 16, flags_frag=1, ident=0x2000 + i)]),
    ("frag_empty_with_more_fragments", "ip.reass_tiny", 1,
     lambda s, i: [raw_ip(s, b"", flags_frag=0x2000, ident=0x2100 + i)]),
    ("frag_tcp_at_offset_8", "ip.reass_tiny", 1,
     lambda s, i: [raw_ip(s, b"\x00" * 16, proto=6, flags_frag=1, ident=0x2200 + i)]),
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


def test_reassembly_of_valid_fragments_with_duplicate(one_port):
    """An exact duplicate is dropped alone; the datagram still completes and is answered."""
    s = one_port
    baseline = s.settled_mempool()
    before = s.daemon.stats()
    payload = bytes(ICMP(type=8, id=0x99, seq=1) / Raw(b"z" * 40))  # 48 bytes
    first = raw_ip(s, payload[:24], flags_frag=0x2000, ident=0x3000)
    last = raw_ip(s, payload[24:], flags_frag=3, ident=0x3000)
    with s.packet_socket() as ps:
        ps.send(first)
        ps.send(first)
        ps.send(last)
        reply = ps.recv_until(lambda f: f.haslayer(ICMP) and f[ICMP].type == 0 and
                              f[ICMP].id == 0x99, timeout=3)
    assert reply is not None, "no echo reply to the reassembled datagram"
    assert bytes(reply[ICMP].payload)[:40] == b"z" * 40
    after = s.daemon.stats()
    assert topo.drops_delta(before, after) == {"ip.reass_duplicate": 1}
    assert s.daemon.counter("ip.reassembled", after) - \
        s.daemon.counter("ip.reassembled", before) == 1
    s.wait_mempool_back(baseline)


FLOOD = 3000


@pytest.mark.slow
def test_fragment_flood_bounded_counted_and_released(fresh_one_port):
    """Thousands of incomplete datagrams (one non-first fragment each, distinct random ids):
    the daemon keeps answering, holds a bounded number of mbufs, accounts for every
    fragment as a drop (evicted, or timed out), and gets every mbuf back after the
    reassembly timeout (30 s: the one long wait of the suite)."""
    s = fresh_one_port
    d = s.daemon
    baseline = s.settled_mempool()
    before = d.stats()
    ids = random.sample(range(1, 65536), FLOOD)
    frames = [raw_ip(s, b"\xab" * 8, flags_frag=0x2000 | 1, ident=i) for i in ids]
    with s.packet_socket() as ps:
        ps.send_many(frames)
    s.ping_ok()
    mid = d.stats()
    assert d.counter("ip.frags_rx", mid) - d.counter("ip.frags_rx", before) == FLOOD
    held = mid["mempool"]["in_use"] - baseline
    assert held <= 1100, "%d mbufs held by %d incomplete datagrams" % (held, FLOOD)
    # Every mbuf comes back once the held datagrams time out.
    topo.wait_until(lambda: s.settled_mempool() <= baseline, timeout=45, interval=1,
                    what="mempool back to %d after the reassembly timeout" % baseline)
    after = d.stats()
    drops = topo.drops_delta(before, after)
    accounted = drops.get("ip.reass_timeout", 0) + drops.get("ip.reass_no_memory", 0)
    assert accounted == FLOOD, \
        "%d fragments sent, %d counted as dropped: %r" % (FLOOD, accounted, drops)
    s.ping_ok()
