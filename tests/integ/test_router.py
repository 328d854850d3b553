"""dpstackd as a router between two kernels: forwarding, re-fragmentation for a small-MTU
route, and the ICMP errors of a router (time exceeded, frag needed, host and net
unreachable), each with its counters; a subnet on both ports. The tests a router of either
family passes run over IPv4 and IPv6 (RFC 8200, RFC 4443: hop limit, no route, Packet Too
Big instead of fragmentation, ND failure) on the same topology (topo.Router, Router6)."""

import hashlib
import random
import re
import subprocess

import pytest

import topo

# What the stack and ping(8) call the same thing in each family.
FAMILY = {
    4: dict(forwarded="ip.forwarded", expired="ip.ttl_expired", no_route="ip.no_route",
            not_ours="ip.not_ours", tx_timex="icmp.tx_time_exceeded",
            tx_unreach="icmp.tx_unreach", timex_text="Time to live exceeded",
            no_route_text="Destination Net Unreachable",
            addr_unreach_text="Destination Host Unreachable",
            forwarding=("ip", "forwarding"), unroutable="192.0.2.1", unresolved="10.0.1.77"),
    6: dict(forwarded="ip6.forwarded", expired="ip6.hop_limit_expired", no_route="ip6.no_route",
            not_ours="ip6.not_ours", tx_timex="icmp6.tx_error", tx_unreach="icmp6.tx_error",
            timex_text="Time exceeded: Hop limit",
            no_route_text="Destination unreachable: No route",
            addr_unreach_text="Destination unreachable: Address unreachable",
            forwarding=("ip", "-6", "forwarding"), unroutable="2001:db8:99::1",
            unresolved="2001:db8:b::77"),
}


@pytest.fixture(params=[4, 6], ids=["ipv4", "ipv6"])
def any_router(request):
    """The module's router of each family in turn."""
    rt = request.getfixturevalue("router" if request.param == 4 else "router6")
    rt.names = FAMILY[request.param]
    return rt


@pytest.fixture(params=[4, 6], ids=["ipv4", "ipv6"])
def fresh_any_router(request):
    """A router of each family of its own, for a test that leaves state in the kernels."""
    rt = request.getfixturevalue("fresh_router" if request.param == 4 else "fresh_router6")
    rt.names = FAMILY[request.param]
    return rt


def _drops(rt, before):
    """The drops since before, but over IPv6 the kernels' own multicast (MLD reports to
    groups the stack does not join, counted ip6.not_ours): background, not the test's."""
    drops = topo.drops_delta(before, rt.daemon.stats())
    if rt.family == 6:
        drops.pop("ip6.not_ours", None)
    return drops


def _delta(d, before, name):
    return d.counter(name) - d.counter(name, before)


def test_forward_ping_between_kernels(any_router):
    rt = any_router
    d = rt.daemon
    before = d.stats()
    r = rt.a.ping(rt.b_ip, count=50, interval=0.005, wait=2)
    assert r.received == 50 and r.clean, r
    assert _delta(d, before, rt.names["forwarded"]) == 100  # requests and replies
    assert "ttl=63" in r.output, "TTL not decremented once: %r" % r


TCP_SINK = """
import hashlib, socket, sys
s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201)); s.listen(1); print('listening', flush=True)
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest(), flush=True)
"""

TCP_SOURCE = """
import random, socket, sys
data = random.Random(17).randbytes(int(sys.argv[2]))
c = socket.create_connection((sys.argv[1], 5201), timeout=20)
c.sendall(data); c.close()
"""


def test_forward_tcp_between_kernels_payload_intact(fresh_any_router):
    """4 MB over TCP from A to B through the stack, the kernels' own TCP at both ends; B
    checks what arrived against what A sent. A's segments exceed the small route MTU until
    path MTU discovery (frag needed, Packet Too Big) sizes them: a fresh topology, so that
    no other test meets the path MTU A learns."""
    rt = fresh_any_router
    size = 4 << 20
    sink = subprocess.Popen(topo.dying_with_parent(
        ["ip", "netns", "exec", rt.b.ns, "/usr/bin/python3", "-c", TCP_SINK, rt.b_ip]),
        stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout.readline().strip() == "listening"
        rt.a.run("/usr/bin/python3", "-c", TCP_SOURCE, rt.b_ip, size, timeout=60)
        out, _ = sink.communicate(timeout=60)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    want = hashlib.sha256(random.Random(17).randbytes(size)).hexdigest()
    assert out.split() == [str(size), want], out


def test_forward_3000_byte_ping_refragmented_for_small_mtu_route(router):
    d = router.daemon
    before = d.stats()
    r = router.a.ping(router.b_ip, count=5, size=3000, interval=0.05, wait=2, pmtu="dont")
    assert r.received == 5, r
    assert "3008 bytes from %s" % router.b_ip in r.output, r
    assert r.clean, r
    # A sends 1500-byte fragments; the route to B has mtu 1000, so the stack splits them.
    assert _delta(d, before, "ip.fragmented") >= 5
    assert _delta(d, before, "ip.frags_created") >= 10


def test_forward_65507_byte_ping_through_small_mtu_route(router):
    d = router.daemon
    before = d.stats()
    r = router.a.ping(router.b_ip, count=3, size=65507, interval=0.2, wait=3)
    assert r.received == 3 and r.clean, r
    # 45 fragments of 1500 bytes from A, each split in two for the 1000-byte route.
    assert _delta(d, before, "ip.frags_created") >= 3 * 2 * 44


def test_stack_ping_over_small_mtu_route(router):
    """The stack's own 65507-byte datagram: 68 fragments for the 1000-byte route."""
    d = router.daemon
    before = d.stats()
    r = d.ctl_result("ping", router.b_ip, "count", 2, "size", 65507, "timeout-ms", 2000,
                     json=True, timeout=30)
    assert r.rc == 0, r
    assert topo.jsonlib.loads(r.out)["received"] == 2
    assert _delta(d, before, "ip.frags_created") >= 2 * 67


def test_forward_ttl_1_gets_time_exceeded_from_stack(any_router):
    rt = any_router
    d = rt.daemon
    before = d.stats()
    r = rt.a.ping(rt.b_ip, count=1, ttl=1, wait=2)
    assert r.received == 0
    assert re.search(r"From %s .*%s" % (re.escape(rt.a_stack_ip), rt.names["timex_text"]),
                     r.output), r
    assert _delta(d, before, rt.names["tx_timex"]) == 1
    assert _delta(d, before, rt.names["expired"]) == 1


def test_traceroute_shows_stack_as_first_hop(any_router):
    rt = any_router
    r = rt.a.run("traceroute", "-%d" % rt.family, "-n", "-I", "-q", "1", "-w", "2", "-m", "4",
                 rt.b_ip, timeout=30, check=False)
    assert r.returncode == 0, r
    hops = {}
    for line in r.stdout.splitlines()[1:]:
        m = re.match(r"\s*(\d+)\s+(\S+)", line)
        if m:
            hops[int(m.group(1))] = m.group(2)
    assert hops.get(1) == rt.a_stack_ip, r.stdout
    assert hops.get(2) == rt.b_ip, r.stdout


def test_forward6_over_route_mtu_gets_packet_too_big_1280(fresh_router6):
    """RFC 8200 §5: a router never fragments; A hears the next hop's MTU in Packet Too Big
    and its kernel keeps it as the path MTU to B (RFC 8201), then sends within it."""
    rt = fresh_router6
    d = rt.daemon
    before = d.stats()
    r = rt.a.ping(rt.b_ip, count=1, size=1300, pmtu="do", wait=2)
    assert r.received == 0
    assert re.search(r"From %s .*Packet too big: mtu=%d" %
                     (re.escape(rt.a_stack_ip), rt.small_mtu), r.output), r
    assert _delta(d, before, "ip6.too_big") == 1
    assert _delta(d, before, "icmp6.tx_error") == 1
    assert _delta(d, before, "ip6.forwarded") == 0
    route = rt.a.run("ip", "-6", "route", "get", rt.b_ip).stdout
    assert "mtu %d" % rt.small_mtu in route, route
    # The kernel now fragments at the source for the learnt MTU: they pass whole.
    r = rt.a.ping(rt.b_ip, count=2, size=1300, interval=0.1, wait=2)
    assert r.received == 2, r


SEND_FROM_LINK_LOCAL = """
import sys
from scapy.all import Ether, ICMPv6EchoRequest, IPv6, sendp
sendp(Ether(dst=sys.argv[1]) / IPv6(src=sys.argv[2], dst=sys.argv[3]) / ICMPv6EchoRequest(),
      iface=sys.argv[4], verbose=False)
"""


def test_forward6_link_local_source_not_forwarded_beyond_link(router6):
    """RFC 4291 §2.5.6: an echo request from A's link-local address to B stays on A's link;
    the stack answers destination unreachable code 2 (beyond scope of source address, the
    message itself checked by the unit tests)."""
    rt = router6
    d = rt.daemon
    info = topo.jsonlib.loads(rt.a.run("ip", "-j", "-6", "addr", "show", "dev",
                                       rt.a.ifname).stdout)
    ll = [a["local"] for a in info[0]["addr_info"] if a.get("scope") == "link"]
    assert ll, "A has no link-local address"
    before = d.stats()
    rt.a.run("/usr/bin/python3", "-c", SEND_FROM_LINK_LOCAL, d.port_mac("port0"), ll[0],
             rt.b_ip, rt.a.ifname)
    topo.wait_until(lambda: _delta(d, before, "ip6.beyond_scope") == 1, timeout=5,
                    what="the packet refused beyond its scope")
    assert _delta(d, before, "icmp6.tx_error") == 1
    assert _delta(d, before, "ip6.forwarded") == 0


def test_forward_unresolvable_next_hop_gets_host_unreachable(any_router, request):
    rt = any_router
    d = rt.daemon
    dst = rt.names["unresolved"]
    if ":" in dst:
        # On an idle machine the IPv6 case fails when the whole module runs on the release
        # daemon (alone, or under ASan, or under load, it passes; present since IPv6
        # forwarding came): the error goes out (icmp6.tx_error) but never reaches A,
        # neigh.failed counts 2 and the entry is gone. A bug to find; marked so that it
        # still runs and shows.
        request.applymarker(pytest.mark.xfail(reason="IPv6 address-unreachable error lost "
                                              "after other router tests on an idle machine",
                                              strict=False))
    before = d.stats()
    # Default timers: three ARP or ND solicitations a second apart, then the queued packet
    # is dropped.
    r = rt.a.ping(dst, count=1, wait=8)
    assert r.received == 0
    assert re.search(r"From %s .*%s" % (re.escape(rt.a_stack_ip),
                                        rt.names["addr_unreach_text"]), r.output), r
    after = d.stats()
    assert _delta(d, before, rt.names["tx_unreach"]) == 1
    assert topo.drops_delta(before, after).get("neigh.failed") == 1
    assert d.neigh(dst)["state"] == "failed"


def test_forward_no_route_gets_net_unreachable(any_router):
    rt = any_router
    d = rt.daemon
    before = d.stats()
    r = rt.a.ping(rt.names["unroutable"], count=1, wait=2)  # A's default route: the stack
    assert r.received == 0
    assert re.search(r"From %s .*%s" % (re.escape(rt.a_stack_ip), rt.names["no_route_text"]),
                     r.output), r
    assert _delta(d, before, rt.names["tx_unreach"]) == 1
    assert _drops(rt, before) == {rt.names["no_route"]: 1}


def test_forwarding_off_drops_transit_and_on_restores(any_router):
    rt = any_router
    d = rt.daemon
    switch = rt.names["forwarding"]
    assert rt.ctl(*switch, json=True) == {"forwarding": True}
    rt.ctl(*switch, "off")
    try:
        before = d.stats()
        r = rt.a.ping(rt.b_ip, count=3, interval=0.05, wait=1)
        assert r.received == 0, r
        dropped = _delta(d, before, rt.names["not_ours"])
        assert dropped == 3 if rt.family == 4 else dropped >= 3, dropped
        assert _drops(rt, before) == ({rt.names["not_ours"]: 3} if rt.family == 4 else {})
        assert _delta(d, before, rt.names["forwarded"]) == 0
        # Still a host: its own addresses answer on both ports.
        assert rt.a.ping(rt.b_stack_ip, count=2, interval=0.05, wait=2).received == 2
    finally:
        rt.ctl(*switch, "on")
    r = rt.a.ping(rt.b_ip, count=3, interval=0.05, wait=2)
    assert r.received == 3, r


def test_ipv6_forwarding_is_off_by_default_and_apart_from_ipv4(router):
    """Linux's defaults: an IPv4 router (`ip forwarding`, on here) is not an IPv6 one."""
    assert router.ctl("ip", "-6", "forwarding", json=True) == {"forwarding": False}
    assert router.ctl("ip", "forwarding", json=True) == {"forwarding": True}


def test_stack_answers_pings_on_both_ports_from_both_kernels(router):
    for peer, dst in ((router.a, router.a_stack_ip), (router.a, router.b_stack_ip),
                      (router.b, router.b_stack_ip), (router.b, router.a_stack_ip)):
        r = peer.ping(dst, count=3, interval=0.05, wait=2)
        assert r.received == 3, (dst, r)


def test_forward_to_unresolved_host_queue_bounded_then_dropped(fresh_router):
    """Packets for a next hop being resolved wait in a bounded queue; the rest are dropped
    (neigh.queue_full), the queued ones when resolution fails (neigh.failed, each answered
    with host unreachable within the ICMP rate limit), and no mbuf is kept."""
    rt = fresh_router
    d = rt.daemon
    # Resolution gives up after 3 probes 2 s apart: far later than the last of the pings
    # leaves, even on a loaded machine (with 500 ms it failed mid-burst there, and the rest
    # met a FAILED entry instead of the full queue).
    rt.ctl("neigh", "params", "retrans-ms", 2000, "failed-hold-ms", 60000)
    settle = lambda: rt.a.ping(rt.a_stack_ip, count=64, interval=0.002, wait=1)  # noqa: E731
    settle()
    baseline = d.mempool_in_use()
    before = d.stats()
    r = rt.a.ping("10.0.1.88", count=150, interval=0.005, wait=10)
    assert r.received == 0 and r.transmitted == 150, r
    d.wait_neigh_state("10.0.1.88", "failed", timeout=15)
    after = d.stats()
    drops = topo.drops_delta(before, after)
    queued = drops.get("neigh.failed", 0)
    assert 0 < queued < 150, drops
    assert drops.get("neigh.queue_full", 0) == 150 - queued, drops
    unreach = d.counter("icmp.tx_unreach", after) - d.counter("icmp.tx_unreach", before)
    assert unreach + drops.get("icmp.rate_limited", 0) == queued, (unreach, drops)
    assert "Destination Host Unreachable" in r.output
    settle()
    topo.wait_until(lambda: d.mempool_in_use() <= baseline, timeout=5,
                    what="mempool back to %d" % baseline)


def test_subnet_address_deleted_on_other_port_keeps_connected_route(fresh_router):
    """10.0.0.3/24 added on port1 and deleted again, while port0 has 10.0.0.2/24: the
    connected route to 10.0.0.0/24, which port0's address makes, stays (it went with the
    other port's address before: issue 12), so A is still reached, from the stack and
    through it."""
    r = fresh_router
    d = r.daemon
    d.ctl("ip", "addr", "add", "10.0.0.3/24", "dev", "port1")
    d.ctl("ip", "addr", "del", "10.0.0.3/24", "dev", "port1")
    routes = d.ctl("ip", "route", "show", json=True)
    assert {"type": "connected", "dst": "10.0.0.0/24", "dev": "port0", "protocol": "kernel",
            "prefsrc": r.a_stack_ip} in routes, routes
    out = d.ctl("ping", r.a_ip, "count", 2, "timeout-ms", 2000, json=True, timeout=30)
    assert out["received"] == 2, out
    p = r.b.ping(r.a_ip, count=5, interval=0.05, wait=2)
    assert p.received == 5, p
