#!/usr/bin/env python3
"""Writes the seed corpus of the fuzzers: tests/fuzz/corpus/<target>/<seed>.

The packets are the golden captures of the unit tests (tcpdump of the Linux kernel: ping,
ARP, record route, timestamp, fragments, host unreachable; TCP from curl on lo), plus a few
variants made from them (VLAN tag, options with routable addresses, address strings, TCP
options). The seeds of fuzz_stack are record sequences (see tests/fuzz/fuzz_stack.c) built
from the same packets readdressed to its topology: ping in and out, fragments, ARP,
forwarding, configuration changes. Those of fuzz_chan are what an application does on the
channel (see tests/fuzz/fuzz_chan.c): calls and commands that open, accept, connect, send
and close, forks and exits, limits, and a few scribbles on its segment.
Standard library only; the output is deterministic, so re-running it changes nothing.
Usage: make_corpus.py [DIR]
"""
import os
import struct
import sys

# tcpdump of `ping -c 1 192.0.2.1` from 192.0.2.2 (02:fc:00:00:00:01) via 02:fc:00:00:00:05.
ECHO_REQUEST_FRAME = bytes.fromhex(
    "02fc0000000502fc00000001080045000054d83e40004001de66c0000202c0000201"
    "080067941b3500016985026b000000004572050000000000"
    "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637")
ECHO_REPLY_FRAME = bytes.fromhex(
    "02fc0000000102fc000000050800450000543cc200004001b9e3c0000201c0000202"
    "00006f941b3500016985026b000000004572050000000000"
    "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637")
# ARP request "who-has 192.0.2.77 tell 192.0.2.2" and reply "192.0.2.2 is-at 02:fc:00:00:00:01".
ARP_REQUEST_FRAME = bytes.fromhex(
    "ffffffffffff02fc000000010806000108000604000102fc00000001c0000202000000000000c000024d")
ARP_REPLY_FRAME = bytes.fromhex(
    "02fc0000000502fc000000010806000108000604000202fc00000001c000020202fc00000005c0000201")
# `ping -R 127.0.0.1`: IHL 15, NOP + record route (the IPv4 packet, without Ethernet).
RR_PACKET = bytes.fromhex(
    "4f00007c7ff6400040010b787f0000017f000001" "010727087f000001" + "00" * 32 +
    "0800008a1b3600016985026b00000000ac7b050000000000"
    "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637")
# `ping -T tsonly 127.0.0.1`: IHL 15, one timestamp option.
TS_PACKET = bytes.fromhex(
    "4f00007c7ff840004001b4827f0000017f000001" "44280900014baf90" + "00" * 32 +
    "080064831b3700016985026b000000004881050000000000"
    "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637")
# `ping -s 1500 192.0.2.1` over MTU 1400: the last fragment (offset 1376, 152 bytes).
LAST_FRAGMENT = bytes.fromhex(
    "45000098d9dc00ac40011bd9c0000202c0000201") + bytes(range(0x58, 0xdc))
# The kernel's ICMP host unreachable for 192.0.2.77 (IPv4 packet).
HOST_UNREACH = bytes.fromhex(
    "45c00070c237000040013391c0000202c0000202" "0301fcfe00000000"
    "450000540d7440004001a8e5c0000202c000024d" "080030a11b3400016785026b000000007e66050000000000"
    "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637")


def csum(data):
    """RFC 1071 Internet checksum."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def with_addrs(pkt, src, dst):
    """The IPv4 packet with new addresses and a fixed header checksum."""
    ihl = (pkt[0] & 0x0F) * 4
    hdr = bytearray(pkt[:ihl])
    hdr[12:16] = bytes(src)
    hdr[16:20] = bytes(dst)
    hdr[10:12] = b"\0\0"
    hdr[10:12] = struct.pack("!H", csum(bytes(hdr)))
    return bytes(hdr) + pkt[ihl:]


def first_fragment():
    """The first fragment (MF, 1396 bytes) with the ping payload rebuilt."""
    hdr = bytes.fromhex("45000574d9dc20004001f7a8c0000202c0000201")
    icmp = bytes.fromhex("08007c671b8800017785026b0000000056ad010000000000")
    data = bytes((0x10 + i) & 0xFF for i in range(1396 - 20 - len(icmp)))
    return hdr + icmp + data


def vlan(frame, tci):
    return frame[:12] + struct.pack("!HH", 0x8100, tci) + frame[12:]


ROUTABLE = ([192, 0, 2, 2], [192, 0, 2, 1])


# IPv6, captured with tcpdump on a veth (MTU 1280) between 2001:db8::2 (02:fc:00:00:00:01) and
# 2001:db8::1 (02:fc:00:00:00:05), without Ethernet: `ping -6`, the MLDv2 report (Hop-by-Hop
# with Router Alert), the neighbour solicitation and advertisement, a router solicitation,
# and the two fragments of `ping -6 -s 1400`, whose payload counts up from 0x10.
IP6_ECHO_REQUEST = bytes.fromhex(
    "60099d8000403a4020010db800000000000000000000000220010db8000000000000000000000001"
    "8000908041d00001a629086b00000000d7560d0000000000101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f3031323334353637")
IP6_MLD_REPORT = bytes.fromhex(
    "6000000000380001fe8000000000000000fc00fffe000001ff020000000000000000000000000016"
    "3a000502000001008f006eef0000000204000000ff0200000000000000000001ff00000204000000"
    "ff0200000000000000000001ff000001")
IP6_NEIGHBOR_SOLICIT = bytes.fromhex(
    "6000000000203aff20010db8000000000000000000000002ff0200000000000000000001ff000001"
    "87001b2c0000000020010db8000000000000000000000001010102fc00000001")
IP6_NEIGHBOR_ADVERT = bytes.fromhex(
    "6000000000203aff20010db800000000000000000000000120010db8000000000000000000000002"
    "880089736000000020010db8000000000000000000000001020102fc00000005")
IP6_ROUTER_SOLICIT = bytes.fromhex(
    "6000000000103afffe8000000000000000fc00fffe000005ff020000000000000000000000000002"
    "8500792c00000000010102fc00000005")
IP6_FIRST_FRAGMENT = bytes.fromhex(
    "60099d8004d82c4020010db800000000000000000000000220010db8000000000000000000000001"
    "3a0000010fbd10238000fdd841d20001a629086b00000000b8720d0000000000") + bytes(
        (0x10 + i) & 0xff for i in range(1208))
IP6_LAST_FRAGMENT = bytes.fromhex(
    "60099d8000b82c4020010db800000000000000000000000220010db8000000000000000000000001"
    "3a0004d00fbd1023") + bytes((0xc8 + i) & 0xff for i in range(176))


def ip6_with_ext(nh, ext, upper=bytes.fromhex("8000000000010001")):
    """The echo request's header with extension bytes ext before an 8-byte echo."""
    payload = ext + upper
    return (IP6_ECHO_REQUEST[:4] + struct.pack("!HB", len(payload), nh) +
            IP6_ECHO_REQUEST[7:40] + payload)


def ipv6_seeds():
    return {
        "echo_request": IP6_ECHO_REQUEST,
        "mld_report_hop_by_hop": IP6_MLD_REPORT,
        "neighbor_solicit": IP6_NEIGHBOR_SOLICIT,
        "first_fragment": IP6_FIRST_FRAGMENT,
        "last_fragment": IP6_LAST_FRAGMENT,
        "routing_type0": ip6_with_ext(43, bytes([58, 2, 0, 1]) + bytes(20)),
        "dstopts_unknown": ip6_with_ext(60, bytes([58, 0, 0x9e, 4, 0, 0, 0, 0])),
        "atomic_fragment": ip6_with_ext(44, bytes([58, 0, 0, 0, 0, 0, 0, 7])),
        "addr_text": b"2001:db8::1",
        "mapped_text": b"::ffff:192.0.2.1",
        "prefix_text": b"fe80::/10",
    }


def icmp6_seeds():
    ra = bytearray(IP6_ROUTER_SOLICIT[:40])
    ra[8:24] = bytes.fromhex("fe800000000000000000000000000001")
    body = (bytes([134, 0, 0, 0, 64, 0x40]) + struct.pack("!HII", 1800, 30000, 1000) +
            bytes([5, 1, 0, 0]) + struct.pack("!I", 1400) +
            bytes([1, 1]) + bytes.fromhex("02fc00000009") +
            bytes([3, 4, 64, 0xc0]) + struct.pack("!II", 86400, 14400) + bytes(4) +
            bytes.fromhex("20010db8000100000000000000000000"))
    ra[4:6] = struct.pack("!H", len(body))
    # A Redirect (RFC 4861 §4.5) from the router fe80::1: target fe80::5 for
    # 2001:db8:99::1, with a Target Link-Layer Address option and a Redirected Header option
    # quoting the start of the datagram that prompted it.
    redirect = bytearray(ra[:40])
    rbody = (bytes([137, 0, 0, 0]) + bytes(4) + v6("fe80::5") + v6("2001:db8:99::1") +
             bytes([2, 1]) + bytes.fromhex("020000000055") +
             bytes([4, 6]) + bytes(6) + IP6_ECHO_REQUEST[:40])
    redirect[4:6] = struct.pack("!H", len(rbody))
    # The advertisement with the high default router preference (RFC 4191 §2.2).
    ra_high = body[:5] + bytes([0x48]) + body[6:]
    return {
        "redirect": bytes(redirect) + rbody,
        "router_advert_pref_high": bytes(ra) + ra_high,
        "echo_request": IP6_ECHO_REQUEST,
        "neighbor_solicit": IP6_NEIGHBOR_SOLICIT,
        "neighbor_advert": IP6_NEIGHBOR_ADVERT,
        "router_solicit": IP6_ROUTER_SOLICIT,
        "router_advert": bytes(ra) + body,
        "mld_report": IP6_MLD_REPORT[:40] + IP6_MLD_REPORT[48:],
        # MLD queries (fuzz_icmp6 feeds type 130 to mld_query_parse): v1 general, v2
        # general, v2 group-specific with one source.
        "mld_query_v1": mld_query_seed(False, bytes(16), 0),
        "mld_query_v2": mld_query_seed(True, bytes(16), 0),
        "mld_query_v2_group": mld_query_seed(True, v6("ff02::1:ff00:2"), 1),
    }


def mld_query_seed(v2, group, nb_sources):
    """An IPv6 header from fe80::1 to all-nodes (hop limit 1) and an MLD query."""
    body = bytes([130, 0, 0, 0]) + struct.pack("!HH", 10000, 0) + group
    if v2:
        body += bytes([2, 125]) + struct.pack("!H", nb_sources) + v6("fe80::5") * nb_sources
    hdr = bytearray(IP6_ROUTER_SOLICIT[:40])
    hdr[4:6] = struct.pack("!H", len(body))
    hdr[7] = 1
    hdr[8:24] = v6("fe80::1")
    hdr[24:40] = v6("ff02::1")
    return bytes(hdr) + body


def seeds():
    eth = {
        "arp_request": ARP_REQUEST_FRAME,
        "arp_reply": ARP_REPLY_FRAME,
        "echo_request": ECHO_REQUEST_FRAME,
        "echo_request_padded": ECHO_REQUEST_FRAME + bytes(6),
        "vlan10_arp_request": vlan(ARP_REQUEST_FRAME, 0x600A),
        "qinq_outer_only": ARP_REQUEST_FRAME[:12] + struct.pack("!HH", 0x88A8, 0x0064)
        + ARP_REQUEST_FRAME[12:],
        "mac_text": b"02:fc:00:00:00:01",
    }
    arp = {
        "request": ARP_REQUEST_FRAME[14:],
        "reply": ARP_REPLY_FRAME[14:],
        "request_padded": ARP_REQUEST_FRAME[14:] + bytes(18),
    }
    ipv4 = {
        "echo_request": ECHO_REQUEST_FRAME[14:],
        "echo_reply": ECHO_REPLY_FRAME[14:],
        "first_fragment": first_fragment(),
        "last_fragment": LAST_FRAGMENT,
        "host_unreach": HOST_UNREACH,
        "record_route_loopback": RR_PACKET,
        "record_route": with_addrs(RR_PACKET, *ROUTABLE),
        "timestamp": with_addrs(TS_PACKET, *ROUTABLE),
        "addr_text": b"192.0.2.1",
        "prefix_text": b"10.0.0.2/24",
    }
    icmp4 = {
        "echo_request": ECHO_REQUEST_FRAME[34:],
        "echo_reply": ECHO_REPLY_FRAME[34:],
        "host_unreach": HOST_UNREACH[20:],
    }
    return {"eth": eth, "arp": arp, "ipv4": ipv4, "icmp4": icmp4, "ipv6": ipv6_seeds(),
            "icmp6": icmp6_seeds(), "udp": udp_seeds(),
            "tcp": tcp_seeds(), "stack": {**stack_seeds(), **stack6_seeds()}, "tcp_conn": tcp_conn_seeds(),
            "chan": chan_seeds(), "dhcp": dhcp_seeds()}


# --- fuzz_dhcp: UDP payloads of DHCP servers ---
# dnsmasq 2.90's OFFER and NAK to 02:00:00:00:00:0a (tests/unit/test_wire_dhcp.c has the
# command line): 192.0.2.72 for 2 minutes, T1 20 s, T2 35 s, router, DNS, MTU 1400.
DHCP_FIXED = bytes.fromhex(
    "020106001234abcd0000800000000000c0000248c00002010000000002000000000a") + bytes(202)
DHCP_COOKIE = bytes.fromhex("63825363")
DHCP_OFFER_OPTS = bytes.fromhex(
    "3501023604c00002013304000000783a04000000143b04000000230104ffffff001c04c00002ff"
    "0604c00002351a0205780304c0000201ff00000000")
DHCP_NAK_OPTS = bytes.fromhex("3501063604c0000201380d77726f6e672061646472657373ff")


def dhcp_seeds():
    ack_opts = DHCP_OFFER_OPTS[:2] + b"\x05" + DHCP_OFFER_OPTS[3:]
    overloaded = bytearray(DHCP_FIXED + DHCP_COOKIE + bytes.fromhex("350105340103ff"))
    overloaded[108:115] = bytes.fromhex("3304000000b4ff")     # file: lease time
    overloaded[44:51] = bytes.fromhex("0304c0000201ff")       # sname: router
    return {
        "offer": DHCP_FIXED + DHCP_COOKIE + DHCP_OFFER_OPTS,
        "ack": DHCP_FIXED + DHCP_COOKIE + ack_opts,
        "nak": DHCP_FIXED + DHCP_COOKIE + DHCP_NAK_OPTS,
        "overload_both": bytes(overloaded),
        "split_routers": DHCP_FIXED + DHCP_COOKIE + bytes.fromhex(
            "3501050304c00002010304c00002fe3302000000330200780100ff"),
    }


# --- fuzz_udp: IP payloads from 127.0.0.1 to 127.0.0.1 (the addresses fuzz_udp.c assumes) ---

# tcpdump on lo of Python sockets corked with MSG_MORE (so the kernel computed the checksum
# instead of leaving an offload's partial sum): a DNS query for example.com from port 40123
# to 5300, its answer, "hello dpstack\n"; and "no checksum\n" from a socket with SO_NO_CHECK.
UDP_DNS_QUERY = bytes.fromhex(
    "9cbb14b400256699" "1a2b01000001000000000000076578616d706c6503636f6d0000010001")
UDP_DNS_ANSWER = bytes.fromhex(
    "14b49cbb00359c74" "1a2b81800001000100000000076578616d706c6503636f6d0000010001"
    "c00c000100010000012c0004c000020a")
UDP_HELLO = bytes.fromhex("9cbb14b40016680b" "68656c6c6f206470737461636b0a")
UDP_NO_CHECKSUM = bytes.fromhex("9cbc14b400140000" "6e6f20636865636b73756d0a")
UDP_LOOPBACK = bytes([127, 0, 0, 1])


def udp_datagram(sport, dport, payload, src=UDP_LOOPBACK, dst=UDP_LOOPBACK):
    """A UDP datagram with its RFC 768 checksum (a computed 0 sent as 0xffff)."""
    hdr = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, len(hdr) + len(payload))
    c = csum(pseudo + hdr + payload) or 0xFFFF
    return hdr[:6] + struct.pack("!H", c) + payload


def udp_seeds():
    # A two-byte payload that brings the one's-complement sum to 0xffff: checksum 0 → 0xffff.
    pseudo_hdr = csum(UDP_LOOPBACK * 2 + struct.pack("!BBHHHHH", 0, 17, 10, 1234, 5678, 10, 0))
    csum_zero = udp_datagram(1234, 5678, struct.pack("!H", pseudo_hdr))
    return {
        "dns_query": UDP_DNS_QUERY,
        "dns_answer": UDP_DNS_ANSWER,
        "hello": UDP_HELLO,
        "no_checksum": UDP_NO_CHECKSUM,
        "dns_query_padded": UDP_DNS_QUERY + bytes(3),
        "csum_ffff": csum_zero,
        "header_only": udp_datagram(7, 9, b""),
        "src_port_zero": udp_datagram(0, 53, b"x"),
        "dst_port_zero": UDP_HELLO[:2] + b"\0\0" + UDP_HELLO[4:],
        "length_short": UDP_HELLO[:4] + struct.pack("!H", 4) + UDP_HELLO[6:],
        "length_long": UDP_HELLO[:4] + struct.pack("!H", len(UDP_HELLO) + 1) + UDP_HELLO[6:],
    }


# --- fuzz_tcp: TCP segments (IP payloads) ---------------------------------------------------

# tcpdump -w on a private network namespace's lo: curl --http1.0 http://127.0.0.1:8080/ to a
# Python listener that answers and closes. Checksums as captured (lo leaves the partial sum).
TCP_SYN = bytes.fromhex(
    "ee3a1f90298a248e00000000a002ffd7fe3000000204ffd70402080a85169216000000000103030a")
TCP_SYN_ACK = bytes.fromhex(
    "1f90ee3aefd84c86298a248fa012ffcbfe3000000204ffd70402080ad2a4b2de851692160103030a")
TCP_ACK_TS = bytes.fromhex(
    "ee3a1f90298a248fefd84c8780100040fe2800000101080a85169216d2a4b2de")
TCP_DATA = bytes.fromhex(
    "ee3a1f90298a248fefd84c8780180040fe7600000101080a85169216d2a4b2de") + (
    b"GET / HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\n"
    b"Accept: */*\r\n\r\n")
TCP_SERVER_DATA = bytes.fromhex(
    "1f90ee3aefd84c87298a24dd80180040fe5400000101080ad2a4b2de85169216") + (
    b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
TCP_FIN = bytes.fromhex(
    "ee3a1f90298a24ddefd84cb480110040fe2800000101080a85169217d2a4b2df")
TCP_NOP_NOP_TS = bytes.fromhex("0101080a85169217d2a4b2df")

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def tcp_segment(flags, opts=b"", payload=b"", sport=40000, dport=80, seq=1000, ack=2000,
                win=512):
    """A TCP segment with options padded to 4 bytes with EOL; checksum left 0."""
    opts += bytes(-len(opts) % 4)
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (20 + len(opts)) // 4 << 4, flags,
                       win, 0, 0) + opts + payload


def sack_opt(n):
    return struct.pack("!BB", 5, 2 + 8 * n) + b"".join(
        struct.pack("!II", 3000 + 1000 * i, 3500 + 1000 * i) for i in range(n))


def tcp_seeds():
    return {
        "syn": TCP_SYN,
        "syn_ack": TCP_SYN_ACK,
        "ack_ts": TCP_ACK_TS,
        "data": TCP_DATA,
        "server_data": TCP_SERVER_DATA,
        "fin": TCP_FIN,
        "rst": tcp_segment(RST | ACK),
        # SACK blocks after NOP NOP TS as Linux sends them (3 fit), and 4 without TS.
        "sack_1": tcp_segment(ACK, TCP_NOP_NOP_TS + b"\x01\x01" + sack_opt(1)),
        "sack_2": tcp_segment(ACK, TCP_NOP_NOP_TS + b"\x01\x01" + sack_opt(2)),
        "sack_3": tcp_segment(ACK, TCP_NOP_NOP_TS + b"\x01\x01" + sack_opt(3)),
        "sack_4": tcp_segment(ACK, b"\x01\x01" + sack_opt(4), b"x"),
        # A window scale of 15 (read as 14), a repeated MSS (the last wins), an unknown kind
        # skipped by its length, MSS then EOL and padding.
        "wscale_15": tcp_segment(SYN, bytes.fromhex("020405b4" "01030f"), seq=7, ack=0),
        "mss_twice": tcp_segment(SYN, bytes.fromhex("020405b4" "02040218"), ack=0),
        "unknown_option": tcp_segment(SYN | ACK, bytes.fromhex("1e06100102030204ffd7")),
        "mss_eol": tcp_segment(SYN, bytes.fromhex("020405b4" "00") + b"\xff" * 3),
        # Refused ones: SYN with FIN, a malformed MSS.
        "syn_fin": tcp_segment(SYN | FIN),
        "bad_mss_len": tcp_segment(SYN, bytes.fromhex("020305")),
    }


# --- fuzz_stack: records "op:u8 arg:be16 [arg bytes]", op = kind | flags << 4 ---------------

OP_IP, OP_ARP, OP_RAW, OP_CLOCK, OP_PING, OP_NEIGH, OP_PEER, OP_MTU, OP_LINK, OP_FWD, \
    OP_ADDR, OP_IP6, OP_IP6_CHAIN = range(13)
F_PORT1, F_BCAST, F_OTHER, F_NOFIX = 1, 2, 4, 8
PEER_ARP, PEER_ECHO, PEER_ALT_MAC = 1, 2, 4
# Indexes into fuzz_stack.c's ping_dst[].
PING_A, PING_B, PING_UNUSED0, PING_UNUSED1, PING_DEFAULT, PING_VIA_B, PING_SMALL_MTU, \
    PING_BLACKHOLE, PING_UNREACHABLE, PING_SELF0, PING_SELF1, PING_BCAST0, PING_BCAST, \
    PING_ZERO, PING_LOOPBACK, PING_MCAST = range(16)

MAC_PORT = [bytes.fromhex("020000000000"), bytes.fromhex("020000000001")]
MAC_PEER = [bytes.fromhex("02aa00000001"), bytes.fromhex("02bb00000001")]
ADDR0, ADDR1 = [10, 0, 0, 2], [10, 0, 1, 2]
HOST_A, HOST_B = [10, 0, 0, 1], [10, 0, 1, 1]


def rec(kind, flags=0, arg=0, data=b""):
    if data:
        arg = len(data)
    return struct.pack("!BH", kind | flags << 4, arg) + data


def ip_packet(src, dst, proto, payload, ttl=64, ident=0x1234, df=False, mf=False, off=0,
              opts=b""):
    """An IPv4 datagram with a correct header checksum (off in bytes)."""
    hl = 20 + len(opts)
    field = (0x4000 if df else 0) | (0x2000 if mf else 0) | off // 8
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | hl // 4, 0, hl + len(payload), ident, field, ttl,
                      proto, 0, bytes(src), bytes(dst)) + opts
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def icmp_msg(typ, code, rest, data):
    msg = struct.pack("!BBHI", typ, code, 0, rest) + data
    return msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]


def echo(src, dst, size, ttl=64, df=False, ident=0x1234, seq=1):
    data = bytes((0x10 + i) & 0xFF for i in range(size))
    return ip_packet(src, dst, 1, icmp_msg(8, 0, 0x4D2 << 16 | seq, data), ttl=ttl, df=df,
                     ident=ident)


def fragments(dgram, size):
    """Splits dgram (20-byte header) into fragments of size payload bytes (a multiple of 8)."""
    src, dst, proto, ident = dgram[12:16], dgram[16:20], dgram[9], dgram[4] << 8 | dgram[5]
    payload = dgram[20:]
    out = []
    for off in range(0, len(payload), size):
        piece = payload[off:off + size]
        out.append(ip_packet(src, dst, proto, piece, ident=ident,
                             mf=off + size < len(payload), off=off))
    return out


def arp_body(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, bytes(spa), tha, bytes(tpa))


def v6(text):
    import ipaddress
    return ipaddress.IPv6Address(text).packed


STACK6_0, PEER6_0 = v6("2001:db8::2"), v6("2001:db8::1")
STACK6_LL0, PEER6_LL0 = v6("fe80::ff:fe00:0"), v6("fe80::aa:ff:fe00:1")


def ip6_packet(src, dst, nh, payload, hlim=64):
    """An IPv6 datagram; fuzz_stack sets its payload length and ICMPv6 checksum."""
    return struct.pack("!IHBB", 6 << 28, len(payload), nh, hlim) + src + dst + payload


def icmp6(typ, code=0, rest=0, body=b""):
    return struct.pack("!BBHI", typ, code, 0, rest) + body


def nd_opt(kind, mac):
    return bytes([kind, 1]) + mac


def icmp6_summed(src, dst, msg):
    """msg (an ICMPv6 message, checksum zero) with its checksum over the pseudo-header."""
    return msg[:2] + struct.pack("!H", csum(src + dst + struct.pack("!II", len(msg), 58) +
                                            msg)) + msg[4:]


def udp6_summed(src, dst, sport, dport, body):
    """A UDP datagram with its checksum over the IPv6 pseudo-header (RFC 8200 §8.1)."""
    dgram = struct.pack("!HHHH", sport, dport, 8 + len(body), 0) + body
    c = csum(src + dst + struct.pack("!II", len(dgram), 17) + dgram) or 0xFFFF
    return dgram[:6] + struct.pack("!H", c) + dgram[8:]


def ip6_fragments(src, dst, msg, size, ident, order, nh=58):
    """msg cut into fragments of size bytes (RFC 8200 §4.5), as records in order."""
    pieces = []
    for off in range(0, len(msg), size):
        more = 1 if off + size < len(msg) else 0
        head = bytes([nh, 0]) + struct.pack("!HI", off | more, ident)
        pieces.append(rec(OP_IP6, data=ip6_packet(src, dst, 44, head + msg[off:off + size])))
    return b"".join(pieces[i] for i in order)


def stack6_seeds():
    echo6 = icmp6(128, rest=0x00770001, body=bytes(range(56)))
    big6 = icmp6_summed(PEER6_0, STACK6_0, icmp6(128, rest=0x00780001,
                                                  body=bytes(range(256)) * 5))
    ns = icmp6(135, body=STACK6_0 + nd_opt(1, MAC_PEER[0]))
    udp6 = struct.pack("!HHHH", 5353, 9, 12, 0) + b"dpst"
    return {
        "ip6_echo": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 58, echo6)),
        "ip6_echo_link_local": rec(OP_IP6, data=ip6_packet(PEER6_LL0, STACK6_LL0, 58, echo6)),
        "ip6_echo_all_nodes": rec(OP_IP6, F_BCAST,
                                  data=ip6_packet(PEER6_LL0, v6("ff02::1"), 58, echo6)),
        "ip6_ns": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("ff02::1:ff00:2"), 58, ns, 255)),
        "ip6_dad_ns": rec(OP_IP6, data=ip6_packet(bytes(16), v6("ff02::1:ff00:2"), 58,
                                                  icmp6(135, body=STACK6_0), 255)),
        "ip6_na": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 58, icmp6(
            136, rest=0x60000000, body=PEER6_0 + nd_opt(2, MAC_PEER[0])), 255)),
        # Autoconfiguration news: a Router Advertisement with a prefix and an MTU, MLD
        # queries v2 and v1 behind the Router Alert hop-by-hop option, an unsolicited NA
        # for our address (someone else holds it).
        "ip6_ra": rec(OP_IP6, F_BCAST, data=ip6_packet(PEER6_LL0, v6("ff02::1"), 58, icmp6(
            134, rest=0x40001c20, body=struct.pack("!II", 0, 0) +
            bytes([5, 1, 0, 0]) + struct.pack("!I", 1400) +
            bytes([3, 4, 64, 0xc0]) + struct.pack("!II", 3600, 1800) + bytes(4) +
            v6("2001:db8:77::")), 255)),
        "ip6_mld_query_v2": rec(OP_IP6, F_BCAST, data=ip6_packet(
            PEER6_LL0, v6("ff02::1"), 0, bytes([58, 0, 5, 2, 0, 0, 1, 0]) +
            icmp6(130, rest=0x03e80000, body=bytes(16) + bytes([2, 125, 0, 0])), 1)),
        "ip6_mld_query_v1": rec(OP_IP6, F_BCAST, data=ip6_packet(
            PEER6_LL0, v6("ff02::1"), 0, bytes([58, 0, 5, 2, 0, 0, 1, 0]) +
            icmp6(130, rest=0x03e80000, body=bytes(16)), 1)),
        # A Redirect from the peer's link-local address for a far destination.
        "ip6_redirect": rec(OP_IP6, data=ip6_packet(PEER6_LL0, STACK6_LL0, 58, icmp6(
            137, body=PEER6_LL0 + v6("2001:db8:99::1") + nd_opt(2, MAC_PEER[0])), 255)),
        "ip6_na_unsolicited": rec(OP_IP6, F_BCAST, data=ip6_packet(PEER6_LL0, v6("ff02::1"),
                                  58, icmp6(136, rest=0x20000000,
                                            body=STACK6_0 + nd_opt(2, MAC_PEER[0])), 255)),
        "ip6_routing0": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 43, bytes(
            [58, 2, 0, 1, 0, 0, 0, 0]) + v6("2001:db8::5") + echo6)),
        "ip6_unknown_nh": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 253, bytes(16))),
        "ip6_hop_by_hop": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 0, bytes(
            [58, 0, 1, 4, 0, 0, 0, 0]) + echo6)),
        # A 1288-byte echo in three fragments, last first; the same with one repeated.
        "ip6_fragments": ip6_fragments(PEER6_0, STACK6_0, big6, 512, 7, [2, 0, 1]),
        "ip6_fragments_dup": ip6_fragments(PEER6_0, STACK6_0, big6, 512, 8, [0, 0, 2, 1]),
        # TCP over IPv6 (fuzz_stack fixes the checksum): a SYN with Linux's options to a
        # closed port (reset), an ACK to a closed port, the SYN behind a Destination
        # Options header, and UDP over IPv6 to a closed port (ICMPv6 port unreachable).
        "ip6_tcp_syn": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 6, tcp_segment(
            0x02, bytes.fromhex("020405a00402080a000013880000000001030307"), seq=7))),
        "ip6_tcp_ack_closed": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 6,
                                                          tcp_segment(0x10, payload=b"x"))),
        "ip6_tcp_after_dstopts": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 60, bytes(
            [6, 0, 1, 4, 0, 0, 0, 0]) + tcp_segment(0x02))),
        # The same as chains of small segments (OP_IP6_CHAIN): a SYN whose options cross
        # segments, an echo behind a 32-byte Hop-by-Hop header that crosses them.
        "ip6_chain_tcp_syn": rec(OP_IP6_CHAIN, data=ip6_packet(PEER6_0, STACK6_0, 6, tcp_segment(
            0x02, bytes.fromhex("020405a00402080a000013880000000001030307"), seq=7))),
        "ip6_chain_hop_by_hop": rec(OP_IP6_CHAIN, data=ip6_packet(PEER6_0, STACK6_0, 0, bytes(
            [58, 3, 1, 28]) + bytes(28) + echo6)),
        "ip6_udp": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 17,
                                               struct.pack("!HHHH", 5353, 9, 12, 0) + b"dpst")),
        # UDP over IPv6 to the echo socket on [::]:7: answered; with a zero checksum (kept:
        # F_NOFIX), dropped (RFC 8200 §8.1); 3000 bytes in fragments, answered in fragments;
        # from a link-local peer (the answer leaves by its port); over IPv4 to the same
        # dual-stack socket.
        "ip6_udp_echo": rec(OP_IP6, data=ip6_packet(PEER6_0, STACK6_0, 17, udp6_summed(
            PEER6_0, STACK6_0, 5353, 7, b"dual stack"))),
        "ip6_udp_zero_checksum": rec(OP_IP6, F_NOFIX, data=ip6_packet(
            PEER6_0, STACK6_0, 17, struct.pack("!HHHH", 5353, 7, 12, 0) + b"dpst")),
        "ip6_udp_echo_fragments": ip6_fragments(PEER6_0, STACK6_0, udp6_summed(
            PEER6_0, STACK6_0, 5353, 7, bytes(range(250)) * 12), 1232, 9, [1, 0, 2], nh=17),
        "ip6_udp_echo_link_local": rec(OP_IP6, data=ip6_packet(PEER6_LL0, STACK6_LL0, 17,
                                                               udp6_summed(PEER6_LL0, STACK6_LL0,
                                                                           5353, 7, b"ll"))),
        "ip4_udp_echo_dual_stack": rec(OP_IP, data=ip_packet(
            HOST_A, ADDR0, 17, struct.pack("!HHHH", 5353, 7, 12, 0) + b"dpst")),
        # Forwarded (fuzz_stack routes 2001:db8:1000::/36 via port 1's neighbour, ::1280/48
        # at MTU 1280, blackholes ::bad/48, refuses ::dea/48): passed on, hop limit 1 (time
        # exceeded), no route, too big (Packet Too Big), a link-local source (beyond scope),
        # Hop-by-Hop options, and with forwarding off.
        "ip6_forward": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:1::1"), 17, udp6)),
        "ip6_forward_gateway": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:1001::5"), 58,
                                                           echo6)),
        "ip6_forward_hlim1": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:1::1"), 58,
                                                         echo6, 1)),
        "ip6_forward_no_route": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db9::1"), 17,
                                                            udp6)),
        "ip6_forward_unreachable": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:dea::1"),
                                                               17, udp6)),
        "ip6_forward_blackhole": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:bad::1"), 17,
                                                             udp6)),
        "ip6_forward_too_big": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:1280::1"), 58,
                                                           big6)),
        "ip6_forward_link_local_src": rec(OP_IP6, data=ip6_packet(
            PEER6_LL0, v6("2001:db8:1::1"), 58, echo6)),
        "ip6_forward_hop_by_hop": rec(OP_IP6, data=ip6_packet(PEER6_0, v6("2001:db8:1::1"), 0,
                                                              bytes([17, 0, 0x3e, 4, 0, 0, 0, 0])
                                                              + udp6)),
        "ip6_forward_off": rec(OP_FWD, 0, 0) + rec(OP_IP6, data=ip6_packet(
            PEER6_0, v6("2001:db8:1::1"), 17, udp6)),
    }


def stack_seeds():
    remote = [192, 168, 1, 10]
    udp = struct.pack("!HHHH", 5353, 9, 12, 0) + b"dpst"
    frags3000 = fragments(echo(HOST_A, ADDR0, 3000), 1480)
    lonely = fragments(echo(HOST_A, ADDR0, 2000, ident=0x77), 1480)
    big_fwd = echo(remote, [203, 0, 113, 5], 1400)
    golden_first = with_addrs(first_fragment(), HOST_A, ADDR0)
    golden_last = with_addrs(LAST_FRAGMENT, HOST_A, ADDR0)
    return {
        # Echo from the static neighbour, from the dynamic one (the reply needs ARP, which
        # the peer answers), from a remote host (weak host: port 0 address via port 1).
        "echo_request": rec(OP_IP, data=with_addrs(ECHO_REQUEST_FRAME[14:], HOST_A, ADDR0)),
        "echo_request_port1": rec(OP_IP, F_PORT1, data=echo(HOST_B, ADDR1, 56)),
        "echo_request_remote": rec(OP_IP, F_PORT1, data=echo([8, 8, 4, 4], ADDR0, 56)),
        "echo_reply_unexpected": rec(OP_IP, data=with_addrs(ECHO_REPLY_FRAME[14:], HOST_A,
                                                            ADDR0)),
        # Our own pings: resolved, resolved by ARP, routed, fragmented, to ourselves,
        # filtered, too big; then the replies' clock.
        "ping_out": b"".join([
            rec(OP_PING, PING_A, 56), rec(OP_PING, PING_B, 56), rec(OP_PING, PING_VIA_B, 1000),
            rec(OP_PING, PING_SMALL_MTU, 1400), rec(OP_PING, PING_SELF0, 56),
            rec(OP_PING, PING_SELF1, 56), rec(OP_PING, PING_BLACKHOLE, 56),
            rec(OP_PING, PING_UNREACHABLE, 56), rec(OP_PING, PING_BCAST0, 56),
            rec(OP_CLOCK, 0, 1000)]),
        "ping_out_large": b"".join([
            rec(OP_PING, PING_B, 3000), rec(OP_PING, PING_A, 65507),
            rec(OP_PING, PING_DEFAULT, 65535), rec(OP_CLOCK, 0, 100)]),
        "ping_unanswered": b"".join([
            rec(OP_PEER, 0, 0), rec(OP_PING, PING_UNUSED0, 56), rec(OP_PING, PING_UNUSED0, 56),
            rec(OP_CLOCK, 0, 5000), rec(OP_PING, PING_UNUSED0, 56), rec(OP_CLOCK, 0, 4000)]),
        # Reassembly: in order, reversed with a duplicate, overlapping, incomplete until
        # the timeout (time exceeded), and the golden first/last fragments of Linux.
        "fragments_in_order": b"".join(rec(OP_IP, data=f) for f in frags3000),
        "fragments_reversed": b"".join(rec(OP_IP, data=f) for f in
                                       [frags3000[2], frags3000[1], frags3000[1], frags3000[0]]),
        "fragments_overlap": rec(OP_IP, data=frags3000[0]) + rec(
            OP_IP, data=ip_packet(HOST_A, ADDR0, 1, bytes(1480), ident=0x1234, mf=True,
                                  off=1000)) + rec(OP_IP, data=frags3000[2]),
        "fragment_timeout": rec(OP_IP, data=lonely[0]) + rec(OP_CLOCK, 0, 31000),
        "fragments_golden": rec(OP_IP, F_NOFIX, data=golden_first) + rec(OP_IP, F_NOFIX,
                                                                        data=golden_last),
        # ARP: a request for us (broadcast), a solicited reply releasing a queue, a probe,
        # a conflict with our address and one with the static entry, a gratuitous one.
        "arp_request": rec(OP_ARP, F_BCAST, data=arp_body(1, MAC_PEER[0], [10, 0, 0, 9],
                                                          bytes(6), ADDR0)),
        "arp_reply_solicited": b"".join([
            rec(OP_PEER, 0, 0), rec(OP_PING, PING_UNUSED1, 56), rec(OP_PING, PING_UNUSED1, 56),
            rec(OP_ARP, F_PORT1, data=arp_body(2, MAC_PEER[1], [10, 0, 1, 77], MAC_PORT[1],
                                               ADDR1))]),
        "arp_probe_conflicts": b"".join([
            rec(OP_ARP, F_BCAST, data=arp_body(1, MAC_PEER[0], [0, 0, 0, 0], bytes(6), ADDR0)),
            rec(OP_ARP, F_BCAST, data=arp_body(1, MAC_PEER[0], ADDR0, bytes(6), ADDR0)),
            rec(OP_ARP, 0, data=arp_body(2, bytes.fromhex("02cc00000009"), HOST_A, MAC_PORT[0],
                                         ADDR0)),
            rec(OP_ARP, F_BCAST | F_PORT1, data=arp_body(1, MAC_PEER[1], HOST_B, bytes(6),
                                                         HOST_B))]),
        # A request from 00:00:00:00:00:00 (found by fuzz_stack: it was answered to that
        # address); now dropped as arp.malformed.
        "arp_request_zero_sender": rec(OP_ARP, F_BCAST, data=arp_body(
            1, bytes(6), [10, 0, 0, 9], bytes(6), ADDR0)),
        "arp_golden": rec(OP_RAW, data=ARP_REQUEST_FRAME) + rec(OP_RAW, data=ARP_REPLY_FRAME),
        # Forwarding: there and back through the echoing peer, TTL 1, no route, blackhole,
        # fragmentation to MTU 576, DF (frag needed), an unanswered next hop (host
        # unreachable after the ARP timeout).
        "forward": rec(OP_IP, data=echo(remote, [172, 16, 0, 5], 56)),
        "forward_ttl1": rec(OP_IP, data=echo(remote, [172, 16, 0, 5], 56, ttl=1)),
        "forward_unreachable": rec(OP_IP, data=echo(remote, [198, 51, 100, 1], 56)) + rec(
            OP_IP, data=echo(remote, [192, 0, 2, 1], 56)),
        "forward_fragment": rec(OP_IP, data=big_fwd) + rec(
            OP_IP, data=echo(remote, [203, 0, 113, 5], 1400, df=True)),
        "forward_no_neighbour": rec(OP_PEER, 0, 0) + rec(
            OP_IP, data=echo(remote, [10, 0, 1, 99], 56)) + rec(OP_CLOCK, 0, 4000),
        "forward_off": rec(OP_FWD, 0, 0) + rec(OP_IP, data=echo(remote, [172, 16, 0, 5], 56)),
        # Local delivery of what we do not run, options, broadcasts.
        "udp_to_us": rec(OP_IP, data=ip_packet(HOST_A, ADDR0, 17, udp)),
        "options": b"".join(rec(OP_IP, data=with_addrs(p, HOST_A, ADDR0)) for p in
                            (RR_PACKET, TS_PACKET)) + rec(
            OP_IP, data=ip_packet(HOST_A, ADDR0, 1, icmp_msg(8, 0, 1, b"x" * 8),
                                  opts=bytes([131, 7, 4, 10, 0, 0, 1, 0]))),
        "broadcast": b"".join([
            rec(OP_IP, F_BCAST, data=echo(HOST_A, [10, 0, 0, 255], 56)),
            rec(OP_IP, F_BCAST, data=echo(HOST_A, [255, 255, 255, 255], 56)),
            rec(OP_IP, F_BCAST, data=echo(HOST_A, ADDR0, 56)),
            rec(OP_IP, F_BCAST, data=ip_packet(HOST_A, [10, 0, 0, 255], 17, udp))]),
        # Whole frames: Linux's captures (another host's MACs), VLAN, ours in 64-byte
        # segments, a runt.
        "raw_frames": b"".join([
            rec(OP_RAW, data=ECHO_REQUEST_FRAME), rec(OP_RAW, data=vlan(ARP_REQUEST_FRAME, 10)),
            rec(OP_RAW, F_BCAST, data=MAC_PORT[0] + MAC_PEER[0] + b"\x08\x00" +
                echo(HOST_A, ADDR0, 200)),
            rec(OP_RAW, data=MAC_PORT[0] + MAC_PEER[0] + b"\x08")]),
        # Configuration under traffic: MTU, link down and up, a second address announced,
        # neighbour timers.
        "config": b"".join([
            rec(OP_MTU, 0, 576), rec(OP_IP, data=echo(HOST_A, ADDR0, 1000)),
            rec(OP_LINK, F_PORT1, 0), rec(OP_PING, PING_B, 56), rec(OP_LINK, F_PORT1 | F_BCAST, 0),
            rec(OP_ADDR, F_OTHER, (24 - 16) << 8 | 3), rec(OP_PING, PING_UNUSED0, 56),
            rec(OP_NEIGH, 2, 100), rec(OP_NEIGH, 3, 1), rec(OP_PEER, 0, 0),
            rec(OP_PING, PING_UNUSED1, 56), rec(OP_CLOCK, 0, 500),
            rec(OP_NEIGH, 7, 1 << 8 | 50), rec(OP_PING, PING_VIA_B, 56),
            rec(OP_NEIGH, 8, 1 << 8 | 50), rec(OP_NEIGH, 9, 1 << 8)]),
        # Fragmenting a forwarded datagram with options (router alert is copied into every
        # fragment, record route only into the first).
        "forward_fragment_options": rec(OP_IP, data=ip_packet(
            remote, [203, 0, 113, 5], 1, icmp_msg(8, 0, 7, bytes(1400)),
            opts=bytes([148, 4, 0, 0, 7, 7, 4, 0, 0, 0, 0, 1]))),
        # Echo requests whose replies' RFC 1624 update gives 0: once right, once (all zeros)
        # needing 0xffff.
        "echo_request_csum_edge": rec(OP_IP, data=ip_packet(HOST_A, ADDR0, 1, icmp_msg(
            8, 0, 0xFFFF0000, b""))) + rec(OP_IP, data=ip_packet(HOST_A, ADDR0, 1, icmp_msg(
                8, 0, 0, b""))),
        # More ICMP errors than the burst allows (20 in fuzz_stack).
        "icmp_rate_limit": b"".join(rec(OP_IP, data=ip_packet(HOST_A, ADDR0, 17, udp,
                                                              ident=i)) for i in range(25)),
        # MTU 68: a 64 KB ping needs more fragments than the output allows; 1000 bytes fit.
        "mtu_small_large_ping": rec(OP_MTU, 0, 68) + rec(OP_PING, PING_A, 65507) + rec(
            OP_PING, PING_A, 1000),
        # The address of port 1 goes: its gateway stays, with nothing to ask ARP with.
        "addr_removed": rec(OP_ADDR, F_PORT1 | F_BCAST, (24 - 16) << 8 | 2) + rec(
            OP_PING, PING_VIA_B, 56) + rec(OP_CLOCK, 0, 4000),
        # Found by the fuzzer: with port 1's address gone, a ping via B waited for ARP with
        # source 0.0.0.0 and left when an address came back; now refused (ip.no_source).
        "ping_without_source": bytes.fromhex("3a080254005b65659c9a2323232323238f030fa0"),
        # Found by the fuzzer: a datagram from port 0's wire with port 1's IPv6 address as
        # its source was forwarded as if ours; now dropped as a spoof (ip6.bad_field).
        "forward6_own_source": bytes.fromhex(
            "0b003460000000000c114020010db800010000000000000000000220010db800000000000000"
            "000000000120010db80bad0000000000000000000114e90009000c000064707374"),
        # Large pings to unanswered next hops until the pool (255 mbufs) runs dry, then
        # traffic that needs buffers, then the timeout that frees everything.
        "pool_exhaustion": rec(OP_PEER, 0, 0) + b"".join(
            rec(OP_PING, d, 65507) for d in (PING_UNUSED0, PING_UNUSED0, PING_UNUSED0,
                                             PING_UNUSED1, PING_UNUSED1, PING_UNUSED1,
                                             PING_VIA_B, PING_VIA_B, PING_SMALL_MTU)) + rec(
            OP_IP, data=echo(HOST_A, ADDR0, 56)) + rec(OP_IP, data=ip_packet(
                HOST_A, ADDR0, 17, udp)) + rec(OP_ARP, F_BCAST, data=arp_body(
                    1, MAC_PEER[0], [10, 0, 0, 9], bytes(6), ADDR0)) + rec(OP_CLOCK, 0, 4000),
        # Forwarding to more next hops than the neighbour table (16) holds.
        "neigh_table_full": b"".join(rec(OP_IP, data=echo(remote, [10, 0, 1, 10 + i], 56))
                                     for i in range(20)),
        # Reassembly limits: five datagrams in progress (4 allowed), nine fragments of one
        # (8 allowed).
        "reass_limits": b"".join(rec(OP_IP, data=fragments(echo(HOST_A, ADDR0, 100,
                                                                ident=0x100 + i), 64)[0])
                                 for i in range(5)) + b"".join(
            rec(OP_IP, data=f) for f in fragments(echo(HOST_A, ADDR0, 600, ident=0x200), 64)),
        # The NIC's checksum flags: "bad" on a good frame, "good" on a bad one (forwarded).
        "nic_checksum_flags": rec(OP_RAW, F_OTHER, data=MAC_PORT[0] + MAC_PEER[0] +
                                  b"\x08\x00" + echo(HOST_A, ADDR0, 56)) + rec(
            OP_RAW, F_NOFIX, data=MAC_PORT[0] + MAC_PEER[0] + b"\x08\x00" + bytes(
                echo(remote, [172, 16, 0, 5], 56)[:10]) + b"\x12\x34" + bytes(
                    echo(remote, [172, 16, 0, 5], 56)[12:])),
        "peer_alt_mac": b"".join([
            rec(OP_PING, PING_B, 56), rec(OP_CLOCK, 0, 31000), rec(OP_PEER, 0, PEER_ARP |
                                                                  PEER_ECHO | PEER_ALT_MAC),
            rec(OP_PING, PING_B, 56), rec(OP_CLOCK, 0, 6000), rec(OP_PING, PING_B, 56)]),
    }


# fuzz_tcp_conn records (see tests/fuzz/fuzz_tcp_conn.c).
LINUX_SYN_OPTS = bytes.fromhex("020405b40402080a0000138800000000" "01030307")


def tcp_rec_seg(who, flags, dseq=0, dack=0, window=65535, tos=0, opts=b"", payload_len=0):
    return (bytes([0, who, flags]) + struct.pack(">hhHB", dseq, dack, window, tos) +
            bytes([len(opts)]) + opts + struct.pack(">H", payload_len))


def tcp_rec_clock(ms):
    return bytes([1]) + struct.pack(">H", ms)


def tcp_rec_app(what, arg):
    return bytes([2, what]) + struct.pack(">H", arg)


def tcp_rec_sack(who, blocks, dack=0):
    """A pure ACK with SACK blocks, each (back, length) from the stack's last seq+len."""
    return (bytes([3, who]) + struct.pack(">hB", dack, len(blocks)) +
            b"".join(struct.pack(">HH", back, length) for back, length in blocks))


def tcp_conn_seeds():
    SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08
    passive = tcp_rec_seg(1, SYN, opts=LINUX_SYN_OPTS) + tcp_rec_seg(1, ACK)
    active = tcp_rec_seg(0, SYN | ACK, opts=LINUX_SYN_OPTS)
    return {
        "passive_open_data_close": passive + tcp_rec_app(0, 0x100) +
            tcp_rec_seg(1, ACK | PSH, payload_len=100) + tcp_rec_app(2, 0x1ff) +
            tcp_rec_app(1, 0x1400) + tcp_rec_seg(1, ACK) + tcp_rec_seg(1, FIN | ACK) +
            tcp_rec_app(4, 0x100),
        "active_open_echo": active + tcp_rec_app(1, 3000) + tcp_rec_seg(0, ACK) +
            tcp_rec_seg(0, ACK | PSH, payload_len=500) + tcp_rec_clock(50),
        "ooo_and_holes": passive + tcp_rec_seg(1, ACK, dseq=1000, payload_len=500) +
            tcp_rec_seg(1, ACK, dseq=3000, payload_len=500) +
            tcp_rec_seg(1, ACK, payload_len=1000) + tcp_rec_app(0, 0x100),
        # The same passive open over IPv6 (who | 4) to the listener on ::, data both ways,
        # a SYN flood of IPv6 peers for cookies over 128-bit addresses.
        "passive_open_ipv6": tcp_rec_seg(5, SYN, opts=LINUX_SYN_OPTS) + tcp_rec_seg(5, ACK) +
            tcp_rec_app(0, 0x100) + tcp_rec_seg(5, ACK | PSH, payload_len=100) +
            tcp_rec_app(1, 0x1400) + tcp_rec_seg(5, ACK) + tcp_rec_seg(5, FIN | ACK),
        "syn_flood_cookies_ipv6": b"".join(tcp_rec_seg(w | 4, SYN, opts=LINUX_SYN_OPTS)
                                           for w in (1, 2, 3, 1, 2, 3)) +
            tcp_rec_seg(7, ACK) + tcp_rec_app(0, 0x200),
        "rst_and_challenges": active + tcp_rec_seg(0, RST, dseq=10) + tcp_rec_seg(0, SYN) +
            tcp_rec_seg(0, ACK, dack=5000) + tcp_rec_seg(0, RST),
        "syn_flood_cookies": b"".join(tcp_rec_seg(w, SYN, opts=LINUX_SYN_OPTS)
                                      for w in (1, 2, 3, 1, 2, 3)) +
            tcp_rec_seg(3, ACK) + tcp_rec_app(0, 0x200),
        "loss_and_rto": active + tcp_rec_app(1, 20000) + tcp_rec_clock(1500) +
            tcp_rec_seg(0, ACK, dack=-8000) + tcp_rec_seg(0, ACK, dack=-8000) +
            tcp_rec_seg(0, ACK, dack=-8000) + tcp_rec_seg(0, ACK, dack=-8000) +
            tcp_rec_clock(3000),
        # A send buffer's worth in flight (8 KB here), the first segment lost: SACKs of the
        # rest, a clock step for RACK's reorder timer and the tail loss probe, a D-SACK.
        "sack_recovery": active + tcp_rec_app(1, 8192) + tcp_rec_clock(20) +
            tcp_rec_sack(0, [(6000, 1000)], dack=-8192) +
            tcp_rec_sack(0, [(6000, 3000)], dack=-8192) +
            tcp_rec_sack(0, [(6000, 5000)], dack=-8192) + tcp_rec_clock(30) +
            tcp_rec_sack(0, [(8192, 1000), (6000, 6000)], dack=-8192) +
            tcp_rec_clock(300) + tcp_rec_sack(0, [(200, 100)]) + tcp_rec_clock(600),
        "zero_window": active + tcp_rec_app(1, 30000) + tcp_rec_seg(0, ACK, window=0) +
            tcp_rec_clock(4000) + tcp_rec_seg(0, ACK),
    }


# fuzz_chan records (see tests/fuzz/fuzz_chan.c): op, then big-endian arguments.
(CH_ATTACH, CH_JOIN, CH_HELLO, CH_EXIT, CH_CMD, CH_CALL, CH_POLL, CH_POKE, CH_WRITE, CH_READ,
 CH_DGRAM, CH_ACCEPT, CH_CLOCK, CH_LIMIT, CH_EVENTS) = range(15)
# enum chan_op and enum chan_cmd_op (src/chan/chan_shm.h)
(OP_ATTACH, OP_JOIN, OP_LISTEN, OP_CONNECT, OP_BIND, OP_UDP_OPEN, OP_UDP_CONNECT, OP_SETOPT,
 OP_INFO, OP_UNBIND, OP_LINKS) = range(1, 12)
CMD_KICK, CMD_CLOSE, CMD_SHUTDOWN, CMD_CLAIM, CMD_CALL, CMD_SETOPT = range(1, 7)
CHAN_ADDR = bytes([10, 0, 0, 2])
CHAN_PEER = bytes([10, 0, 0, 1])


def chan_req(op, sock=0, laddr=b"\0" * 4, raddr=b"\0" * 4, lport=0, rport=0, backlog=0,
             opt=0, value=0, flags=0):
    """The leading fields of struct chan_req: host-order words, addresses and ports as on
    the wire (the harness copies these bytes over a zeroed request)."""
    return (struct.pack("<II", op, sock) + laddr + raddr + struct.pack(">HH", lport, rport) +
            struct.pack("<IIII", backlog, opt, value, flags))


def ch_call(worker, slot, req, app=0, proc=0, state=1):
    return bytes([CH_CALL, app, proc, worker, slot, state, len(req)]) + req


def ch_poll(*workers):
    return b"".join(bytes([CH_POLL, w]) for w in workers)


def ch_cmd(worker, op, arg, sock, app=0, proc=0):
    return bytes([CH_CMD, app, proc, worker]) + struct.pack(">Q", op << 56 | arg << 32 | sock)


def ch_sock_op(kind, sock, length, app=0, proc=0):
    return bytes([kind, app, proc]) + struct.pack(">HH", sock, length)


def chan_seeds():
    attach = bytes([CH_ATTACH, 0])
    # Worker w hands out sockets w, w + 2, ...: the listeners are 0 and 1, the connection
    # 2, the accepted one 4 (all on worker 0, whose loopback carries the handshake).
    listen = (ch_call(0, 0, chan_req(OP_LISTEN, laddr=CHAN_ADDR, lport=80, backlog=8)) +
              ch_call(1, 1, chan_req(OP_LISTEN, laddr=CHAN_ADDR, lport=80, backlog=8)) +
              ch_poll(0, 1))
    connect = ch_call(0, 2, chan_req(OP_CONNECT, raddr=CHAN_ADDR, rport=80)) + ch_poll(0, 0)
    accept = bytes([CH_ACCEPT, 0, 0]) + struct.pack(">H", 0) + ch_poll(0)
    udp = ch_call(1, 3, chan_req(OP_UDP_OPEN, laddr=CHAN_ADDR, lport=5353)) + ch_poll(1)
    dgram = (bytes([CH_DGRAM, 0, 0]) + struct.pack(">HHHBB", 1, 100, 0, 1, 0) +
             bytes([CH_DGRAM, 0, 0]) + struct.pack(">HHHBB", 1, 100, 0, 2, 5) + ch_poll(1))
    return {
        "tcp_loopback_echo": attach + listen + connect + accept +
            ch_sock_op(CH_WRITE, 2, 3000) + ch_poll(0) + ch_sock_op(CH_READ, 4, 3000) +
            ch_sock_op(CH_WRITE, 4, 100) + ch_poll(0) + bytes([CH_EVENTS, 0, 0, 0]) +
            ch_cmd(0, CMD_SHUTDOWN, 1, 2) + ch_cmd(0, CMD_CLOSE, 0, 4) + ch_poll(0) +
            bytes([CH_CLOCK]) + struct.pack(">H", 500) + ch_poll(0),
        "udp_send_and_info": attach + udp + dgram +
            ch_call(1, 4, chan_req(OP_INFO, sock=1)) +
            ch_call(1, 5, chan_req(OP_UDP_CONNECT, sock=1, raddr=CHAN_PEER, rport=53)) +
            ch_cmd(1, CMD_SETOPT, 13 << 16 | 7, 1) + ch_poll(1) + ch_cmd(1, CMD_CLOSE, 0, 1) +
            ch_poll(1),
        "options_bind_links": attach +
            ch_call(0, 0, chan_req(OP_BIND, laddr=CHAN_ADDR, lport=8080, flags=1)) +
            ch_call(0, 1, chan_req(OP_LISTEN, sock=1, laddr=CHAN_ADDR, lport=8080, backlog=1,
                                   flags=1)) + ch_poll(0) +
            ch_call(0, 2, chan_req(OP_SETOPT, sock=0, opt=3, value=1)) +
            ch_call(0, 3, chan_req(OP_SETOPT, sock=0xFFFFFFFF, opt=12)) +
            ch_call(0, 4, chan_req(OP_INFO, sock=0)) + ch_call(0, 5, chan_req(OP_LINKS)) +
            ch_call(0, 6, chan_req(OP_UNBIND, sock=1)) + ch_poll(0),
        "fork_join_and_exit": attach + listen + bytes([CH_JOIN, 0, 0, 0]) +
            connect + bytes([CH_JOIN, 0, 0, 1]) + bytes([CH_EXIT, 0, 0]) +
            bytes([CH_ACCEPT, 0, 1]) + struct.pack(">H", 0) + ch_poll(0, 1) +
            bytes([CH_EXIT, 0, 1]),
        "two_users_limits": bytes([CH_LIMIT, 1]) + struct.pack(">I", 2) + attach +
            bytes([CH_ATTACH, 1]) + listen + connect +
            ch_call(0, 0, chan_req(OP_UDP_OPEN), app=1) + ch_poll(0) +
            bytes([CH_HELLO, 3, 1, 0, 0]),
        # Values the library would refuse, set by command: a 1-byte MSS on the listener
        # (its children inherit it) and on the connection, before data both ways.
        "tiny_mss_then_data": attach + listen + ch_cmd(0, CMD_SETOPT, 9 << 16 | 1, 0) +
            connect + ch_cmd(0, CMD_SETOPT, 9 << 16 | 1, 2) + accept +
            ch_sock_op(CH_WRITE, 2, 3000) + ch_poll(0) + ch_sock_op(CH_WRITE, 4, 3000) +
            ch_poll(0, 0) + ch_sock_op(CH_READ, 2, 3000),
        "scribbled_rings": attach + listen + connect +
            bytes([CH_POKE, 0, 0, 2]) + struct.pack(">HBI", 0, 1, 0x7fffffff) + ch_poll(0) +
            attach + listen + bytes([CH_POKE, 0, 0, 5]) + struct.pack(">HBI", 0, 4, 99) +
            connect,
    }


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    for target, files in seeds().items():
        d = os.path.join(top, target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
