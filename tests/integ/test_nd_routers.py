"""The rest of IPv6 Neighbor Discovery against real peers: two radvd routers (Linux network
namespaces on one bridged link) in the stack's Default Router List (RFC 4861 §6.3.4, RFC 4191
preferences), traffic moving to the second when the first says goodbye or stops answering
(§6.3.6); Redirects (§8) from the router honoured and invalid ones counted; RFC 7217 stable
privacy addresses, the same after a daemon restart."""

import ipaddress
import os

from scapy.layers.inet6 import (ICMPv6EchoRequest, ICMPv6ND_Redirect, ICMPv6NDOptDstLLAddr,
                                IPv6)
from scapy.layers.l2 import Ether

import topo
from test_ipv6 import eui64_link_local
from test_slaac import PREFIX, Radvd, addrs, autoconf, default_routes, slaac_addr

SERVER = "2001:db8:f::100"  # on both routers' loopback: "the Internet" behind them


def icmp6_in_echos(ns):
    """Echo requests the namespace's kernel received (/proc/net/snmp6 is per namespace)."""
    out = topo.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp6"]).stdout
    for line in out.splitlines():
        key, _, val = line.partition(" ")
        if key == "Icmp6InEchos":
            return int(val)
    raise AssertionError("no Icmp6InEchos in /proc/net/snmp6")


class Router:
    """Router n in a namespace of its own, on the peer's link through a bridge in the peer's
    namespace: MAC 02:00:00:00:0n:01, 2001:db8:77::n/64, forwarding, SERVER on its
    loopback."""

    def __init__(self, lab, peer, n):
        self.ns = lab.add_netns()
        base = "nd6%s%s" % (topo.PID_HEX[-4:], lab._next_id())
        link, self.ifname = base + "a", base + "b"
        topo.run(["ip", "link", "add", link, "type", "veth", "peer", "name", self.ifname])
        lab.add_cleanup(lambda: topo.run(["ip", "link", "del", link], check=False)
                        if os.path.exists("/sys/class/net/" + link) else None)
        topo.run(["ip", "link", "set", link, "netns", peer.ns])
        topo.run(["ip", "link", "set", self.ifname, "netns", self.ns])
        self.mac = "02:00:00:00:%02x:01" % n
        self.ll = eui64_link_local(self.mac)
        for key in ("all.disable_ipv6=0", "default.disable_ipv6=0",
                    "%s.disable_ipv6=0" % self.ifname, "%s.accept_dad=0" % self.ifname,
                    "%s.accept_ra=0" % self.ifname, "all.forwarding=1"):
            self.run("sysctl", "-qw", "net.ipv6.conf." + key)
        self.run("ip", "link", "set", self.ifname, "address", self.mac)
        self.run("ethtool", "-K", self.ifname, "tx", "off")
        self.run("ip", "-6", "addr", "add", "2001:db8:77::%d/64" % n, "dev", self.ifname,
                 "nodad")
        self.run("ip", "-6", "addr", "add", SERVER + "/128", "dev", "lo")
        self.run("ip", "link", "set", self.ifname, "up")
        peer.run("ethtool", "-K", link, "tx", "off")
        peer.run("ip", "link", "set", link, "master", "nd6br")
        peer.run("ip", "link", "set", link, "up")
        self.radvd = None

    def run(self, *cmd):
        return topo.run(["ip", "netns", "exec", self.ns] + list(cmd))

    def advertise(self, lab, preference="medium"):
        self.radvd = Radvd(lab, self, preference=preference)

    def echoes(self):
        return icmp6_in_echos(self.ns)


def link_with_routers(lab, extra=()):
    """The stack's port on a bridge with nothing else yet; returns (peer, daemon)."""
    peer = lab.add_peer()
    peer.run("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
    peer.run("ip", "link", "add", "nd6br", "type", "bridge", "mcast_snooping", "0")
    peer.run("ip", "link", "set", peer.ifname, "master", "nd6br")
    peer.run("ip", "link", "set", "nd6br", "up")
    d = lab.start_daemon("\n".join(["workers 1",
                                    "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
                                    "ip -6 dad-transmits 0 dev port0",
                                    "ip -6 autoconf on dev port0"] + list(extra)) + "\n")
    return peer, d


def routers_listed(d):
    return {r["addr"]: r for r in autoconf(d).get("routers", [])}


def gateway(d):
    routes = default_routes(d)
    return routes[0]["gateway"] if routes else None


def ping_server(d, count=3):
    out = d.ctl("ping", SERVER, "count", str(count), "interval-ms", "20", "timeout-ms", "1000",
                json=True)
    return out["received"]


def wait_two_routers(lab, d, a, b, pref_a="medium", pref_b="medium"):
    """a advertises first (so it is chosen among equals), then b; both listed."""
    a.advertise(lab, pref_a)
    topo.wait_until(lambda: gateway(d) == a.ll, 30, interval=0.2, what="default via a")
    topo.wait_until(lambda: slaac_addr(d) in addrs(d), 30, interval=0.2, what="SLAAC address")
    b.advertise(lab, pref_b)
    topo.wait_until(lambda: len(routers_listed(d)) == 2, 30, interval=0.2,
                    what="both routers listed")


def test_two_routers_preference_then_goodbye_moves_traffic(lab):
    peer, d = link_with_routers(lab)
    a, b = Router(lab, peer, 1), Router(lab, peer, 2)
    # b has the higher preference (RFC 4191): chosen once it is heard.
    wait_two_routers(lab, d, a, b, "medium", "high")
    topo.wait_until(lambda: gateway(d) == b.ll, 10, interval=0.2, what="default via b")
    listed = routers_listed(d)
    assert listed[b.ll]["preference"] == "high" and listed[b.ll]["default"]
    assert listed[a.ll]["preference"] == "medium" and not listed[a.ll]["default"]
    assert 0 < listed[a.ll]["lifetime_s"] <= 1800
    assert "preference high" in d.ctl("ip", "-6", "autoconf", "show")
    before_a, before_b = a.echoes(), b.echoes()
    assert ping_server(d) == 3
    assert b.echoes() - before_b >= 3 and a.echoes() == before_a
    # b leaves: radvd's last advertisement has router lifetime 0 (RFC 4861 §6.2.5).
    b.radvd.stop()
    topo.wait_until(lambda: gateway(d) == a.ll, 15, interval=0.2, what="default via a")
    assert list(routers_listed(d)) == [a.ll]
    before_a = a.echoes()
    assert ping_server(d) == 3
    assert a.echoes() - before_a >= 3
    assert autoconf(d)["counters"]["router_changes"] >= 2


def test_unreachable_router_is_left_for_the_other(lab):
    # Short neighbour timers: the dead router's entry fails in seconds, not a minute.
    peer, d = link_with_routers(lab, ["neigh params reachable-ms 1000 delay-ms 1000 "
                                      "retrans-ms 300"])
    a, b = Router(lab, peer, 1), Router(lab, peer, 2)
    wait_two_routers(lab, d, a, b)
    assert gateway(d) == a.ll
    assert ping_server(d) == 3
    # a's link goes down: no answer to anything, no last advertisement either.
    a.run("ip", "link", "set", a.ifname, "down")

    def moved():
        d.ctl_result("ping", SERVER, "count", "1", "timeout-ms", "300")
        return gateway(d) == b.ll
    topo.wait_until(moved, 60, interval=0.2, what="default via b after a stopped answering")
    listed = routers_listed(d)
    assert not listed[a.ll]["reachable"] and listed[b.ll]["default"]
    assert autoconf(d)["counters"]["router_unreachable"] >= 1
    before_b = b.echoes()
    assert ping_server(d) == 3
    assert b.echoes() - before_b >= 3


def redirect_frame(peer, d, src_ll, target, dst, hlim=255):
    """A Redirect from src_ll (through the peer's MAC) to the stack's link-local address."""
    mac = d.port_mac("port0")
    return (Ether(src=peer.mac, dst=mac) /
            IPv6(src=src_ll, dst=eui64_link_local(mac), hlim=hlim) /
            ICMPv6ND_Redirect(tgt=target, dst=dst) /
            ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:77"))


def echo_to_server(f):
    e = Ether(bytes(f))
    return ICMPv6EchoRequest in e and e[IPv6].dst == SERVER


def test_redirect_from_router_sends_destination_to_target(lab):
    peer = lab.add_peer()
    for key in ("disable_ipv6=0", "accept_dad=0", "accept_ra=0"):
        peer.run("sysctl", "-qw", "net.ipv6.conf.%s.%s" % (peer.ifname, key))
    router_ll = eui64_link_local(peer.mac)
    d = lab.start_daemon("\n".join([
        "workers 1", "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
        "ip -6 dad-transmits 0 dev port0", "ip addr add 2001:db8:77::2/64 dev port0",
        "ip -6 route add default via %s dev port0" % router_ll]) + "\n")
    target_ll = "fe80::77"
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        # Before: the server's packets go to the router.
        d.ctl_result("ping", SERVER, "count", "1", "timeout-ms", "300")
        got = ps.recv_until(echo_to_server, timeout=5)
        assert got is not None and Ether(bytes(got)).dst == peer.mac
        # Invalid ones change nothing: from another node, and with hop limit 254.
        ps.send(redirect_frame(peer, d, "fe80::99", target_ll, SERVER))
        d.wait_counter("nd.redirect_not_router", 1)
        ps.send(redirect_frame(peer, d, router_ll, target_ll, SERVER, hlim=254))
        d.wait_counter("nd.redirect_invalid", 1)
        assert not [r for r in d.ctl("ip", "-6", "route", "show", json=True)
                    if r["dst"] == SERVER]
        # The router's own.
        ps.send(redirect_frame(peer, d, router_ll, target_ll, SERVER))
        d.wait_counter("nd.redirect_rx", 1)
        topo.wait_until(lambda: [r for r in d.ctl("ip", "-6", "route", "show", json=True)
                                 if r["dst"] == SERVER], 10, what="the redirected route")
        route = [r for r in d.ctl("ip", "-6", "route", "show", json=True)
                 if r["dst"] == SERVER][0]
        assert route["gateway"] == target_ll and route["protocol"] == "redirect"
        assert "proto redirect" in d.ctl("ip", "-6", "route", "show")
        red = autoconf(d)["redirects"]
        assert red[0]["dst"] == SERVER and red[0]["target"] == target_ll
        assert 590 <= red[0]["lifetime_s"] <= 600
        # The next packets for the destination go to the target's MAC, taken from the
        # option: no solicitation first (§8.3: the entry is created STALE).
        d.ctl_result("ping", SERVER, "count", "1", "timeout-ms", "300")
        got = ps.recv_until(lambda f: echo_to_server(f) and
                            Ether(bytes(f)).dst == "02:00:00:00:00:77", timeout=5)
        assert got is not None, "no echo request to the redirect's target"
    # Other destinations still go to the router.
    assert gateway(d) == router_ll
    assert d.counter("nd.redirect_invalid") == 1 and d.counter("nd.redirect_not_router") == 1


STABLE_CONFIG = ["ip -6 addrgen stable-privacy dev port0",
                 "ip -6 stable-secret 2b6d:6b0c:91f6:1d7e:8f4a:0c3e:55d2:a901"]


def test_stable_privacy_address_same_after_restart(lab):
    peer = lab.add_peer()
    for key in ("disable_ipv6=0", "accept_dad=0", "accept_ra=0"):
        peer.run("sysctl", "-qw", "net.ipv6.conf.%s.%s" % (peer.ifname, key))
    peer.run("ip", "-6", "addr", "add", "2001:db8:77::1/64", "dev", peer.ifname, "nodad")
    Radvd(lab, peer)
    config = "\n".join(["workers 1", "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
                        "ip -6 dad-transmits 0 dev port0"] + STABLE_CONFIG +
                       ["ip -6 autoconf on dev port0"]) + "\n"
    prefix = ipaddress.IPv6Network(PREFIX + "/64")

    def stable_addrs(d):
        return [a for a, info in addrs(d).items() if info.get("origin") == "slaac" and
                ipaddress.IPv6Address(a) in prefix]
    d = lab.start_daemon(config, name="d1")
    topo.wait_until(lambda: stable_addrs(d), 30, interval=0.2, what="a stable address")
    first = stable_addrs(d)
    assert len(first) == 1 and first[0] != slaac_addr(d)  # not the EUI-64 one
    assert autoconf(d)["addrgen"] == "stable-privacy"
    bad = d.ctl_result("ip", "-6", "addrgen", "random", "dev", "port0")
    assert bad.rc != 0 and "eui64 or stable-privacy" in bad.err, bad
    bad = d.ctl_result("ip", "-6", "stable-secret", "not-a-secret")
    assert bad.rc != 0 and "128 bits" in bad.err, bad
    r = peer.ping(first[0], count=2, interval=0.05, wait=2)
    assert r.received == 2, r
    d.stop()
    d2 = lab.start_daemon(config, name="d2")
    topo.wait_until(lambda: stable_addrs(d2), 30, interval=0.2, what="a stable address again")
    assert stable_addrs(d2) == first


def test_router_redirects_kernel_host_to_better_router(lab):
    """The stack as a router (RFC 4861 §8.2): the kernel's packet for SERVER comes in and
    would leave by the same port towards fe80::77, so the kernel is told, and its own route
    lookup then goes to fe80::77 directly."""
    peer = lab.add_peer()
    for key in ("disable_ipv6=0", "accept_dad=0", "accept_ra=0", "accept_redirects=1"):
        peer.run("sysctl", "-qw", "net.ipv6.conf.%s.%s" % (peer.ifname, key))
    d = lab.start_daemon("\n".join([
        "workers 1", "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
        "ip -6 dad-transmits 0 dev port0", "ip addr add 2001:db8:77::2/64 dev port0",
        "ip -6 forwarding on",
        "neigh add fe80::77 lladdr 02:00:00:00:00:77 dev port0",
        "ip -6 route add 2001:db8:f::/48 via fe80::77 dev port0"]) + "\n")
    stack_ll = eui64_link_local(d.port_mac("port0"))
    peer.run("ip", "-6", "addr", "add", "2001:db8:77::1/64", "dev", peer.ifname, "nodad")
    peer.run("ip", "-6", "route", "add", "default", "via", stack_ll, "dev", peer.ifname)
    assert "via %s" % stack_ll in peer.run("ip", "-6", "route", "get", SERVER).stdout
    peer.ping(SERVER, count=1, wait=1)  # goes unanswered: fe80::77 is nobody
    d.wait_counter("nd.redirect_tx", 1)
    topo.wait_until(lambda: "via fe80::77" in peer.run("ip", "-6", "route", "get",
                                                       SERVER).stdout,
                    10, interval=0.1, what="the kernel's route redirected")
    assert d.counter("ip6.forwarded") >= 1
