#!/usr/bin/env python3
"""Writes the seed corpus of the wire-layer fuzzers: tests/fuzz/corpus/<target>/<seed>.

The packets are the golden captures of the unit tests (tcpdump of the Linux kernel: ping,
ARP, record route, timestamp, fragments, host unreachable), plus a few variants made from
them (VLAN tag, options with routable addresses, address strings). Standard library only;
the output is deterministic, so re-running it changes nothing. Usage: make_corpus.py [DIR]
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
    return {"eth": eth, "arp": arp, "ipv4": ipv4, "icmp4": icmp4}


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
