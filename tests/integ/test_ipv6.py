"""IPv6 on a port: the link-local address every port gets, global addresses and routes
through `ip`, Neighbor Discovery with the kernel in both directions, ICMPv6 echo, and
malformed or hostile IPv6 frames each dropped under its own counter (RFC 8200, RFC 4861,
RFC 4443)."""

import contextlib
import ipaddress
import json as jsonlib

import pytest
from scapy.layers.inet6 import (ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NA,
                                ICMPv6ND_NS, ICMPv6NDOptSrcLLAddr, ICMPv6ParamProblem,
                                ICMPv6TimeExceeded, IPv6, IPv6ExtHdrFragment,
                                IPv6ExtHdrHopByHop, IPv6ExtHdrRouting)
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import topo

STACK6 = "2001:db8::2"
PEER6 = "2001:db8::1"


def eui64_link_local(mac):
    """RFC 4291 appendix A, as the stack and Linux derive it."""
    b = bytes.fromhex(mac.replace(":", ""))
    iid = bytes([b[0] ^ 2]) + b[1:3] + b"\xff\xfe" + b[3:]
    return str(ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + iid))


class V6Port(topo.SinglePort):
    """SinglePort with IPv6 on both ends: 2001:db8::2/64 on the stack, ::1 on the kernel."""

    def __init__(self, lab):
        super().__init__(lab, extra_config=["ip addr add %s/64 dev port0" % STACK6])
        p = self.peer
        p.run("sysctl", "-qw", "net.ipv6.conf.%s.accept_dad=0" % p.ifname)
        p.run("sysctl", "-qw", "net.ipv6.conf.%s.accept_ra=0" % p.ifname)
        p.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
        p.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=0" % p.ifname)
        p.run("ip", "-6", "addr", "add", PEER6 + "/64", "dev", p.ifname, "nodad")
        self.stack_ll = eui64_link_local(self.stack_mac)
        self.peer_ll = eui64_link_local(self.peer_mac)

    def warm_up(self):
        super().warm_up()
        topo.wait_until(lambda: self.peer.ping(STACK6, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="first ping6 answered")

    def frame(self, payload_ip6):
        return bytes(Ether(src=self.peer_mac, dst=self.stack_mac) / payload_ip6)

    def ip6(self, **kw):
        kw.setdefault("src", PEER6)
        kw.setdefault("dst", STACK6)
        return IPv6(**kw)


@contextlib.contextmanager
def v6_port(name, commands=()):
    """A warmed-up V6Port in a lab of its own, the dpstackctl commands (argument lists) run
    on its daemon; the lab is closed afterwards."""
    lab = topo.Lab(name)
    try:
        setup = V6Port(lab)
        setup.warm_up()
        for c in commands:
            setup.daemon.ctl(*c)
        yield setup
    finally:
        lab.close()


@pytest.fixture(scope="module")
def v6():
    with v6_port("ipv6") as setup:
        yield setup


def test_ping6_global_address(v6):
    d = v6.daemon
    before = d.counter("icmp6.tx_echo_reply")
    r = v6.peer.ping(STACK6, count=20, interval=0.01, wait=2)
    assert r.received == 20 and r.clean, r
    assert d.counter("icmp6.tx_echo_reply") - before == 20


def test_ping6_link_local_address(v6):
    r = v6.peer.ping("%s%%%s" % (v6.stack_ll, v6.peer.ifname), count=5, interval=0.01,
                     wait=2)
    assert r.received == 5 and r.clean, r


def test_ping6_sizes_up_to_the_mtu(v6):
    for size in (0, 1, 56, 1000, 1452):
        r = v6.peer.ping(STACK6, count=2, size=size, interval=0.01, wait=2)
        assert r.received == 2, (size, r)


def test_ping6_fragmented_both_ways(v6):
    """Echo requests larger than the link's 1500 bytes: the kernel fragments them, the stack
    reassembles (RFC 8200 §4.5) and fragments its own replies, which the kernel puts back
    together; the counters tell each step."""
    d = v6.daemon
    before = {k: d.counter(k) for k in ("ip6.reassembled", "ip6.fragmented",
                                        "ip6.frags_created")}
    for size in (1453, 3000, 9000, 65000):
        r = v6.peer.ping(STACK6, count=2, size=size, interval=0.05, wait=3)
        assert r.received == 2, (size, r)
    assert d.counter("ip6.reassembled") - before["ip6.reassembled"] == 8
    assert d.counter("ip6.fragmented") - before["ip6.fragmented"] == 8
    assert d.counter("ip6.frags_created") - before["ip6.frags_created"] >= 2 * (2 + 3 + 7 + 45)
    assert d.stats()["reassembly6"]["datagrams"] == 0


def fragments(v6, payload, size, ident, order=None, overlap=0):
    """The frames of an echo request with payload bytes of data, cut in pieces of size bytes
    (a multiple of 8), each piece after the first starting overlap bytes early; in the
    order given (indexes, repeats allowed)."""
    whole = bytes(v6.ip6() / ICMPv6EchoRequest(id=ident, seq=1, data=b"z" * payload))[40:]
    pieces = []
    for off in range(0, len(whole), size):
        start = max(off - overlap, 0)
        more = 1 if off + size < len(whole) else 0
        pieces.append(v6.frame(v6.ip6() / IPv6ExtHdrFragment(nh=58, offset=start // 8, m=more,
                                                                id=ident)
                               / Raw(whole[start:off + size])))
    return [pieces[i] for i in order] if order else pieces


def send_all(v6, frames):
    with topo.PacketSocket(v6.peer.ns, v6.peer.ifname) as ps:
        for f in frames:
            ps.send(f)


def test_fragments_out_of_order_and_duplicated_are_reassembled(v6):
    d = v6.daemon
    before = {k: d.counter(k) for k in ("ip6.reass_duplicate", "icmp6.tx_echo_reply")}
    send_all(v6, fragments(v6, 3000, 1024, 0x4242, order=[2, 0, 0, 1]))
    topo.wait_until(lambda: d.counter("icmp6.tx_echo_reply") - before["icmp6.tx_echo_reply"]
                    == 1, timeout=5, what="the reassembled request answered")
    topo.wait_until(lambda: d.counter("ip6.reass_duplicate") - before["ip6.reass_duplicate"]
                    == 1, timeout=5, what="the duplicate counted")
    assert d.stats()["reassembly6"]["datagrams"] == 0


def test_overlapping_fragments_discard_the_datagram(v6):
    """RFC 5722: overlapping fragments discard the whole datagram, silently."""
    d = v6.daemon
    before = {k: d.counter(k) for k in ("ip6.reass_overlap", "icmp6.tx_echo_reply")}
    send_all(v6, fragments(v6, 2000, 1024, 0x4343, overlap=16))
    topo.wait_until(lambda: d.counter("ip6.reass_overlap") - before["ip6.reass_overlap"] == 1,
                    timeout=5, what="overlap counted")
    v6.peer.ping(STACK6, count=1, wait=2)  # handled after the fragments: they are done with
    assert d.stats()["reassembly6"]["datagrams"] == 0
    assert d.counter("icmp6.tx_echo_reply") - before["icmp6.tx_echo_reply"] == 1  # the ping's


def test_incomplete_datagram_times_out_with_time_exceeded(v6):
    """RFC 8200 §4.5: the first fragment alone, the timer runs out: Time Exceeded code 1."""
    d = v6.daemon
    v6.ctl("ip", "-6", "reassembly", "timeout-ms", "300")
    try:
        assert v6.ctl("ip", "-6", "reassembly", json=True)["timeout-ms"] == 300
        before = d.counter("ip6.reass_timeout")
        first = fragments(v6, 3000, 1024, 0x4444)[0]
        with topo.PacketSocket(v6.peer.ns, v6.peer.ifname) as ps:
            ps.send(first)
            got = ps.recv_until(lambda f: ICMPv6TimeExceeded in Ether(bytes(f)), timeout=5)
        assert got is not None, "no Time Exceeded"
        assert Ether(bytes(got))[ICMPv6TimeExceeded].code == 1
        assert d.counter("ip6.reass_timeout") - before == 1
    finally:
        v6.ctl("ip", "-6", "reassembly", "timeout-ms", "60000")


def test_neighbours_learnt_both_ways(v6):
    v6.peer.ping(STACK6, count=1, wait=2)
    rows = v6.ctl("neigh", "show", json=True)
    addrs = {row.get("dst") or row.get("addr") for row in rows}
    assert PEER6 in addrs, rows
    k = v6.peer.neigh(STACK6)
    assert k is not None and k["lladdr"] == v6.stack_mac, k
    assert v6.daemon.counter("nd.rx_ns") >= 1
    assert v6.daemon.counter("nd.tx_na") >= 1


def test_stack_resolves_kernel_by_solicitation(v6):
    """A ping whose reply needs the kernel's MAC after a flush: the stack sends the NS."""
    d = v6.daemon
    v6.ctl("neigh", "flush", "dev", "port0")
    v6.peer.run("ip", "-6", "neigh", "flush", "dev", v6.peer.ifname)
    before = d.counter("nd.tx_ns")
    # The kernel's NS carries its MAC, so make it unicast to the stack: it then has no
    # option to learn from, and the stack must ask.
    v6.peer.run("ip", "-6", "neigh", "replace", STACK6, "lladdr", v6.stack_mac, "dev",
                v6.peer.ifname, "nud", "permanent")
    try:
        r = v6.peer.ping(STACK6, count=3, interval=0.2, wait=2)
        assert r.received == 3, r
        assert d.counter("nd.tx_ns") > before
    finally:
        v6.peer.run("ip", "-6", "neigh", "del", STACK6, "dev", v6.peer.ifname, check=False)


def test_ip_addr_show_lists_both_families(v6):
    rows = v6.ctl("ip", "addr", "show", json=True)
    infos = rows[0]["addr_info"]
    fam = {(a["family"], a["local"], a["prefixlen"], a.get("scope")) for a in infos}
    assert ("inet", "10.0.0.2", 24, None) in fam
    assert ("inet6", STACK6, 64, "global") in fam
    assert ("inet6", v6.stack_ll, 64, "link") in fam
    text = v6.ctl("ip", "addr", "show")
    assert "inet6 %s/64 scope global" % STACK6 in text
    assert "inet6 %s/64 scope link" % v6.stack_ll in text


def test_routes_show_and_gateway_route(v6):
    text = v6.ctl("ip", "-6", "route", "show")
    assert "local %s dev port0 proto kernel" % STACK6 in text
    assert "2001:db8::/64 dev port0 proto kernel scope link src %s" % STACK6 in text
    assert "2001:db8" not in v6.ctl("ip", "route", "show")
    # A prefix behind the kernel: the reply to a source in it goes via the gateway.
    v6.peer.run("ip", "-6", "addr", "add", "2001:db8:5::1/128", "dev", "lo")
    v6.ctl("ip", "-6", "route", "add", "2001:db8:5::/64", "via", PEER6)
    try:
        r = v6.peer.ping(STACK6, count=3, interval=0.01, wait=2,
                         extra=("-I", "2001:db8:5::1"))
        assert r.received == 3, r
        rows = v6.ctl("ip", "-6", "route", "show", json=True)
        gw = [x for x in rows if x["dst"] == "2001:db8:5::/64"]
        assert gw and gw[0]["gateway"] == PEER6 and gw[0]["type"] == "gateway", rows
    finally:
        v6.ctl("ip", "-6", "route", "del", "2001:db8:5::/64")
    r = v6.peer.ping(STACK6, count=1, wait=1, extra=("-I", "2001:db8:5::1"))
    assert r.received == 0, r  # no route back any more
    assert v6.daemon.counter("ip6.no_route") >= 1


def test_addresses_added_and_removed_at_run_time(v6):
    v6.ctl("ip", "addr", "add", "2001:db8::77/64", "dev", "port0")
    r = v6.peer.ping("2001:db8::77", count=2, interval=0.05, wait=2)
    assert r.received == 2, r
    v6.ctl("ip", "addr", "del", "2001:db8::77/64", "dev", "port0")
    v6.peer.run("ip", "-6", "neigh", "flush", "dev", v6.peer.ifname)
    before = v6.daemon.counter("ip6.not_ours")
    r = v6.peer.ping("2001:db8::77", count=1, wait=1)
    assert r.received == 0, r
    # The kernel asks the address's solicited-node group, which the port left with it.
    topo.wait_until(lambda: v6.daemon.counter("ip6.not_ours") > before, timeout=5,
                    what="the solicitation for a removed address ignored")
    # The kernel solicits a few times more before it gives up: let it, so that no late
    # solicitation lands in another test's counters.
    topo.wait_until(lambda: (v6.peer.neigh("2001:db8::77") or {"state": ["FAILED"]})["state"]
                    in (["FAILED"], "FAILED"), timeout=15, interval=0.2,
                    what="the kernel giving up on 2001:db8::77")
    # The prefix route stays with the remaining address.
    assert "2001:db8::/64 dev port0" in v6.ctl("ip", "-6", "route", "show")
    v6.peer.ping(STACK6, count=1, wait=2)


@pytest.mark.parametrize("args,message", [
    (("ip", "addr", "add", "ff02::1/64", "dev", "port0"), "cannot be assigned"),
    (("ip", "addr", "add", "2001:db8::9", "dev", "port0"), "prefix length"),
    (("ip", "addr", "add", "2001:db8::9/129", "dev", "port0"), "not an IPv6 address"),
    (("ip", "addr", "add", "2001:db8:::9/64", "dev", "port0"), "not an IPv6 address"),
    (("ip", "addr", "add", STACK6 + "/64", "dev", "port0"), "exists"),
    (("ip", "addr", "del", "2001:db8::99/64", "dev", "port0"), "ip addr del"),
    (("ip", "-6", "route", "add", "2001:db8:7::/48", "via", "2001:db9::1"),
     "not on a connected prefix"),
    (("ip", "-6", "route", "add", "2001:db8:7::/48", "via", "fe80::1"), "needs 'dev PORT'"),
    (("ip", "-6", "route", "add", "2001:db8:7::1/48", "dev", "port0"), "host bits set"),
    (("ip", "-6", "route", "add", "2001:db8:7::/48", "via", "ff02::2"), "not a unicast"),
    (("ip", "-6", "route", "add", "2001:db8:7::/48", "dev", "port0", "mtu", "1000"),
     "mtu"),
    (("ip", "-6", "route", "del", "2001:db8:7::/48"), "ip route del"),
    (("ip", "-6", "route", "del", STACK6 + "/128"), "ip route del"),
])
def test_bad_commands_rejected(v6, args, message):
    r = v6.daemon.ctl_result(*args)
    assert r.rc != 0, r
    assert message in r.err, r


def test_link_local_gateway_needs_and_takes_a_port(v6):
    v6.ctl("ip", "-6", "route", "add", "2001:db8:8::/64", "via", v6.peer_ll, "dev", "port0")
    try:
        assert "2001:db8:8::/64 via %s dev port0" % v6.peer_ll in \
            v6.ctl("ip", "-6", "route", "show")
    finally:
        v6.ctl("ip", "-6", "route", "del", "2001:db8:8::/64")


# (name, counter, builder(setup) -> frame)
MALFORMED = [
    ("truncated", "ip6.truncated",
     lambda s: bytes(Ether(src=s.peer_mac, dst=s.stack_mac, type=0x86dd)) + bytes(20)),
    ("payload_len_past_frame", "ip6.bad_length",
     lambda s: s.frame(s.ip6(plen=200) / ICMPv6EchoRequest())),
    ("payload_len_zero", "ip6.bad_length",
     lambda s: s.frame(s.ip6(plen=0, nh=59))),
    ("multicast_source", "ip6.bad_field",
     lambda s: s.frame(s.ip6(src="ff02::1") / ICMPv6EchoRequest())),
    ("not_ours", "ip6.not_ours",
     lambda s: s.frame(s.ip6(dst="2001:db8::99") / ICMPv6EchoRequest())),
    ("routing_type0_segments_left", "ip6.bad_ext",
     lambda s: s.frame(s.ip6() / IPv6ExtHdrRouting(type=0, segleft=1, addresses=["2001:db8::5"])
                       / ICMPv6EchoRequest())),
    ("hop_by_hop_not_first", "ip6.bad_ext",
     lambda s: s.frame(s.ip6() / IPv6ExtHdrRouting(segleft=0) / IPv6ExtHdrHopByHop()
                       / ICMPv6EchoRequest())),
    ("unknown_next_header", "ip6.unknown_proto",
     lambda s: s.frame(s.ip6(nh=253) / Raw(b"x" * 16))),
    ("fragment_empty", "ip6.reass_tiny",    # offset 8, M set, no payload
     lambda s: s.frame(s.ip6(nh=44) / Raw(bytes([58, 0, 0, 9, 0, 0, 0, 9])))),
    ("icmp6_bad_checksum", "icmp6.bad_checksum",
     lambda s: s.frame(s.ip6() / ICMPv6EchoRequest(cksum=0x1234))),
    ("icmp6_truncated", "icmp6.truncated",
     lambda s: s.frame(s.ip6(nh=58) / Raw(b"\x80\x00\x00"))),
    ("ns_hop_limit_not_255", "nd.invalid",
     lambda s: s.frame(s.ip6(hlim=64) / ICMPv6ND_NS(tgt=STACK6)
                       / ICMPv6NDOptSrcLLAddr(lladdr=s.peer_mac))),
    ("ns_multicast_target", "nd.invalid",
     lambda s: s.frame(s.ip6(hlim=255) / ICMPv6ND_NS(tgt="ff02::1"))),
    ("ns_for_another_address", "nd.not_for_us",
     lambda s: s.frame(s.ip6(hlim=255) / ICMPv6ND_NS(tgt="2001:db8::99")
                       / ICMPv6NDOptSrcLLAddr(lladdr=s.peer_mac))),
    ("na_claiming_our_address", "nd.addr_conflict",
     lambda s: s.frame(s.ip6(hlim=255) / ICMPv6ND_NA(tgt=STACK6, S=1))),
]


@pytest.mark.parametrize("name,counter,build", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_counted_and_harmless(v6, name, counter, build):
    d = v6.daemon
    before = d.counter(counter)
    with topo.PacketSocket(v6.peer.ns, v6.peer.ifname) as ps:
        for _ in range(3):
            ps.send(build(v6))
    topo.wait_until(lambda: d.counter(counter) - before >= 3, timeout=5,
                    what="%s counted" % counter)
    r = v6.peer.ping(STACK6, count=2, interval=0.01, wait=2)
    assert r.received == 2, r
    assert d.counter(counter) - before == 3


def test_unknown_next_header_answered_by_parameter_problem(v6):
    """RFC 8200 §4: code 1, the pointer at the Next Header field (offset 6)."""
    frame = v6.frame(v6.ip6(nh=253) / Raw(b"y" * 16))
    with topo.PacketSocket(v6.peer.ns, v6.peer.ifname) as ps:
        ps.send(frame)
        got = ps.recv_until(lambda f: ICMPv6ParamProblem in f, timeout=5)
    assert got is not None, "no parameter problem"
    pp = got[ICMPv6ParamProblem]
    assert pp.code == 1 and pp.ptr == 6, pp.show(dump=True)
