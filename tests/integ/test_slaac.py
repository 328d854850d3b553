"""IPv6 address autoconfiguration against the kernel peer: Duplicate Address Detection of every
address (RFC 4862 §5.4: tentative, then preferred, or dadfailed when another node holds or
probes for it), SLAAC from radvd's Router Advertisements on a port with `ip -6 autoconf on`
(RFC 4862 §5.5: an address from the prefix, the default router as a `proto ra` route gone
with the router lifetime, the MTU and hop limit of RFC 4861 §6.3.4), MLD reports of the
solicited-node groups (RFC 3810, and RFC 2710 towards a version 1 querier), and `dpstackctl
ping` over ICMPv6."""

import ipaddress
import os

import pytest
from scapy.layers.inet6 import (ICMPv6MLDone, ICMPv6MLQuery, ICMPv6MLQuery2,
                                ICMPv6MLReport, ICMPv6MLReport2, ICMPv6ND_NA, ICMPv6ND_NS,
                                ICMPv6NDOptSrcLLAddr, IPv6, IPv6ExtHdrHopByHop, RouterAlert)
from scapy.layers.l2 import Ether

import topo
from test_ipv6 import PEER6, eui64_link_local

PREFIX = "2001:db8:77::"
ROUTER6 = "2001:db8:77::1"


def v6_peer(lab):
    peer = lab.add_peer("10.0.0.1", 24)
    for key, val in (("disable_ipv6", 0), ("accept_dad", 0), ("accept_ra", 0),
                     ("forwarding", 1)):
        peer.run("sysctl", "-qw", "net.ipv6.conf.%s.%s=%d" % (peer.ifname, key, val))
    peer.run("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    return peer


def start(lab, extra=()):
    peer = v6_peer(lab)
    d = lab.start_daemon("\n".join(["workers 1",
                                    "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
                                    "ip addr add 10.0.0.2/24 dev port0"] + list(extra)) + "\n",
                        dad=True)
    return peer, d


def addrs(d):
    port = [p for p in d.ctl("ip", "addr", "show", json=True) if p["ifname"] == "port0"][0]
    return {a["local"]: a for a in port["addr_info"] if a.get("family") == "inet6"}


def state(d, addr):
    a = addrs(d).get(addr)
    return a["state"] if a else None


def wait_state(d, addr, want, timeout=30):
    topo.wait_until(lambda: state(d, addr) == want, timeout, interval=0.1,
                    what="%s %s (now %s)" % (addr, want, state(d, addr)))


def autoconf(d):
    return d.ctl("ip", "-6", "autoconf", json=True)[0]


def default_routes(d):
    return [r for r in d.ctl("ip", "-6", "route", "show", json=True) if r["dst"] == "default"]


class Radvd:
    """radvd advertising PREFIX on the peer's interface (anything with ns and ifname), with a
    default router preference (RFC 4191: low, medium, high), its log in the lab's
    directory."""

    def __init__(self, lab, peer, lifetime=1800, mtu=1400, hop_limit=42, preference="medium"):
        self.lab, self.peer = lab, peer
        self.dir = os.path.join(lab.tmp, "radvd-" + peer.ifname)
        os.makedirs(self.dir, exist_ok=True)
        self.conf = os.path.join(self.dir, "radvd.conf")
        with open(self.conf, "w") as f:
            f.write("interface %s {\n AdvSendAdvert on;\n MinRtrAdvInterval 3;\n"
                    " MaxRtrAdvInterval 4;\n AdvDefaultLifetime %d;\n AdvLinkMTU %d;\n"
                    " AdvCurHopLimit %d;\n AdvDefaultPreference %s;\n"
                    " prefix %s/64 {\n  AdvOnLink on;\n"
                    "  AdvAutonomous on;\n  AdvValidLifetime 3600;\n"
                    "  AdvPreferredLifetime 1800;\n };\n};\n"
                    % (peer.ifname, lifetime, mtu, hop_limit, preference, PREFIX))
        argv = ["radvd", "-n", "-C", self.conf, "-p", os.path.join(self.dir, "pid"),
                "-m", "stderr", "-d", "1"]
        self.proc = topo.NsProcess(lab, peer.ns, argv, os.path.join(self.dir, "log"))

    def stop(self):
        """radvd's last advertisement on the way out has router lifetime 0 (RFC 4861
        §6.2.5)."""
        self.proc.stop()


def slaac_addr(d):
    """The prefix with the modified EUI-64 identifier, as the link-local address has it."""
    iid = ipaddress.IPv6Address(eui64_link_local(d.port_mac("port0"))).packed[8:]
    return str(ipaddress.IPv6Address(ipaddress.IPv6Address(PREFIX).packed[:8] + iid))


def test_slaac_from_radvd_address_route_mtu_and_router_gone(lab):
    peer, d = start(lab, ["ip -6 autoconf on dev port0"])
    peer.run("ip", "-6", "addr", "add", ROUTER6 + "/64", "dev", peer.ifname, "nodad")
    radvd = Radvd(lab, peer)
    addr = slaac_addr(d)
    wait_state(d, addr, "preferred")
    a = addrs(d)[addr]
    assert a["origin"] == "slaac" and a["prefixlen"] == 64
    assert 3500 <= a["valid_lft"] <= 3600 and 1700 <= a["preferred_lft"] <= 1800
    r = peer.ping(addr, count=3, interval=0.05, wait=2)
    assert r.received == 3, r
    routes = default_routes(d)
    assert len(routes) == 1, routes
    assert routes[0]["gateway"] == eui64_link_local(peer.mac)
    assert routes[0]["protocol"] == "ra" and routes[0]["dev"] == "port0"
    assert "proto ra" in d.ctl("ip", "-6", "route", "show")
    ac = autoconf(d)
    assert ac["autoconf"] and ac["mtu"] == 1400 and ac["hop_limit"] == 42
    assert ac["counters"]["rs_sent"] >= 1 and ac["counters"]["addr_formed"] == 1
    assert d.counter("nd.rx_ra_autoconf") >= 1
    # The router goes: its last advertisement ends its lifetime, and the route with it.
    radvd.stop()
    topo.wait_until(lambda: default_routes(d) == [], 15, interval=0.2,
                    what="the RA's default route removed")
    assert autoconf(d).get("router") is None
    # The address lives on until its own lifetime ends.
    assert state(d, addr) == "preferred"


def test_autoconf_off_ignores_advertisements(lab):
    peer, d = start(lab)
    peer.run("ip", "-6", "addr", "add", ROUTER6 + "/64", "dev", peer.ifname, "nodad")
    Radvd(lab, peer)
    topo.wait_until(lambda: d.counter("nd.rx_router") >= 1, 20, interval=0.2,
                    what="an advertisement received")
    assert slaac_addr(d) not in addrs(d)
    assert default_routes(d) == []
    assert d.counter("nd.rx_ra_autoconf") == 0


def dad_probes(ps, target, timeout):
    """A DAD solicitation (from ::, RFC 4862 §5.4.2) for target the peer sees."""
    def probe(f):
        e = Ether(bytes(f))
        return ICMPv6ND_NS in e and e[IPv6].src == "::" and e[ICMPv6ND_NS].tgt == target
    return ps.recv_until(probe, timeout=timeout)


def test_dad_probe_then_preferred(lab):
    peer, d = start(lab, ["ip -6 dad-transmits 3 dev port0"])
    target = "2001:db8:5::2"
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        d.ctl("ip", "addr", "add", target + "/64", "dev", "port0")
        assert state(d, target) in ("tentative", "preferred")
        got = dad_probes(ps, target, 10)
    assert got is not None, "no DAD probe seen"
    e = Ether(bytes(got))
    assert e[IPv6].hlim == 255 and e.dst == "33:33:ff:00:00:02"
    assert ICMPv6NDOptSrcLLAddr not in e  # §7.2.2 of RFC 4861: none from ::
    wait_state(d, target, "preferred")
    peer.run("ip", "-6", "addr", "add", "2001:db8:5::1/64", "dev", peer.ifname, "nodad")
    r = peer.ping(target, count=2, interval=0.05, wait=2)
    assert r.received == 2, r


def test_dad_conflict_with_kernel_address_marks_dadfailed(lab):
    peer, d = start(lab)
    peer.run("ip", "-6", "addr", "add", PEER6 + "/64", "dev", peer.ifname, "nodad")
    # The kernel answers the stack's probe for its own address with an advertisement.
    d.ctl("ip", "addr", "add", PEER6 + "/64", "dev", "port0")
    wait_state(d, PEER6, "dadfailed")
    assert d.counter("nd.dad_conflict") >= 1
    assert "duplicate address %s detected" % PEER6 in d.log()
    assert "dadfailed" in d.ctl("ip", "-6", "addr", "show")
    assert autoconf(d)["counters"]["dad_failed"] == 1
    # Never answered for: a solicitation for it from a third node goes unanswered.
    before = d.counter("nd.tx_na")
    ns = (Ether(src="02:00:00:00:00:99", dst="33:33:ff:00:00:01") /
          IPv6(src="fe80::99", dst="ff02::1:ff00:1", hlim=255) / ICMPv6ND_NS(tgt=PEER6))
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        ps.send(ns)
        peer.ping("10.0.0.2", count=1, wait=2)  # the stack handled what came before
    assert d.counter("nd.tx_na") == before


def test_dad_conflict_with_another_nodes_probe(lab):
    """§5.4.3: a solicitation from :: for our tentative address is another node's DAD."""
    peer, d = start(lab, ["ip -6 dad-transmits 100 dev port0"])
    target = "2001:db8:6::2"
    d.ctl("ip", "addr", "add", target + "/64", "dev", "port0")
    assert state(d, target) == "tentative"
    probe = (Ether(src=peer.mac, dst="33:33:ff:00:00:02") /
             IPv6(src="::", dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt=target))
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        ps.send(probe)
    wait_state(d, target, "dadfailed")


def test_tentative_address_is_not_answered(lab):
    peer, d = start(lab, ["ip -6 dad-transmits 100 dev port0"])
    target = "2001:db8:6::2"
    d.ctl("ip", "addr", "add", target + "/64", "dev", "port0")
    before = d.counter("nd.tentative")
    ns = (Ether(src=peer.mac, dst="33:33:ff:00:00:02") /
          IPv6(src="fe80::99", dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt=target))
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        ps.send(ns)
        topo.wait_until(lambda: d.counter("nd.tentative") == before + 1, 10,
                        what="the solicitation counted")
        assert ps.recv_until(lambda f: ICMPv6ND_NA in Ether(bytes(f)), timeout=1) is None
    # 100 probes a second apart: tentative all along.
    assert state(d, target) == "tentative"


def mld_records(frame):
    """{group: record type} of an MLDv2 report, read from its bytes (scapy nests the second
    record of a report inside the first)."""
    e = Ether(bytes(frame))
    if ICMPv6MLReport2 not in e:
        return None
    raw = bytes(e[ICMPv6MLReport2])
    n = int.from_bytes(raw[6:8], "big")
    recs = [raw[8 + 20 * i:28 + 20 * i] for i in range(n)]
    return {str(ipaddress.IPv6Address(r[4:20])): r[0] for r in recs if len(r) == 20}


def test_mld_reports_on_join_and_on_queries(lab):
    peer, d = start(lab)
    target = "2001:db8:9::abcd"
    group = "ff02::1:ff00:abcd"
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        d.ctl("ip", "addr", "add", target + "/64", "dev", "port0")
        got = ps.recv_until(lambda f: group in (mld_records(f) or {}), timeout=10)
        assert got is not None, "no unsolicited MLDv2 report for %s" % group
        e = Ether(bytes(got))
        assert e[IPv6].hlim == 1 and e[IPv6].dst == "ff02::16"
        assert IPv6ExtHdrHopByHop in e
        assert mld_records(got)[group] == 4  # CHANGE_TO_EXCLUDE: a join
        wait_state(d, target, "preferred")
        # A general query (v2) is answered with the current state of every group.
        query = (Ether(src=peer.mac, dst="33:33:00:00:00:01") /
                 IPv6(src=eui64_link_local(peer.mac), dst="ff02::1", hlim=1) /
                 IPv6ExtHdrHopByHop(options=[RouterAlert()]) / ICMPv6MLQuery2(mrd=1000))
        ps.send(query)
        got = ps.recv_until(lambda f: (mld_records(f) or {}).get(group) == 2, timeout=10)
        assert got is not None, "no answer to the general query"
        # The link-local address's group is in it too.
        assert len(mld_records(got)) == 2, mld_records(got)
        # A version 1 querier gets version 1 reports (RFC 3810 §8.2.1).
        q1 = (Ether(src=peer.mac, dst="33:33:00:00:00:01") /
              IPv6(src=eui64_link_local(peer.mac), dst="ff02::1", hlim=1) /
              IPv6ExtHdrHopByHop(options=[RouterAlert()]) / ICMPv6MLQuery(mrd=1000))
        ps.send(q1)
        got = ps.recv_until(lambda f: ICMPv6MLReport in Ether(bytes(f)) and
                            Ether(bytes(f))[ICMPv6MLReport].mladdr == group, timeout=10)
        assert got is not None, "no MLDv1 report"
        # Removing the address leaves its group: a v1 Done to all-routers.
        d.ctl("ip", "addr", "del", target + "/64", "dev", "port0")
        got = ps.recv_until(lambda f: ICMPv6MLDone in Ether(bytes(f)) and
                            Ether(bytes(f))[ICMPv6MLDone].mladdr == group, timeout=10)
        assert got is not None, "no MLDv1 done"
        assert Ether(bytes(got))[IPv6].dst == "ff02::2"
    assert d.counter("mld.rx_query") >= 2 and d.counter("mld.tx") >= 3


def test_stack_pings_kernel_over_ipv6_with_fragments(lab):
    peer, d = start(lab, ["ip addr add 2001:db8::2/64 dev port0"])
    peer.run("ip", "-6", "addr", "add", PEER6 + "/64", "dev", peer.ifname, "nodad")
    wait_state(d, "2001:db8::2", "preferred")
    out = d.ctl("ping", PEER6, "count", "3", "interval-ms", "10", "timeout-ms", "2000")
    assert "3 transmitted, 3 received" in out, out
    assert "bytes from %s" % PEER6 in out
    out = d.ctl("ping", "-6", PEER6, "count", "2", "size", "4000", "timeout-ms", "2000",
                json=True)
    assert out["received"] == 2 and out["replies"][0]["bytes"] == 4008, out
    assert d.counter("ip6.fragmented") >= 2
    out = d.ctl("ping", eui64_link_local(peer.mac), "dev", "port0", "count", "2",
                "timeout-ms", "2000")
    assert "2 received" in out, out
    r = d.ctl_result("ping", eui64_link_local(peer.mac))
    assert r.rc != 0 and "dev PORT" in r.err
