"""The packet filters over IPv6 (issue 17) against the Linux kernel: an ACL rule on an IPv6
prefix stops ping6 and TCP from one of the peer's addresses while another passes, with every
datagram counted on its rule and as acl6.denied; a rule without an address judges both
families (as an nftables inet table's) and `family` narrows it; a bypass rule hands IPv6
for one of the stack's ports to the kernel interface; flow rules drop and steer IPv6 by
prefix and port; IPv6 rules load from the config file; `sock show` tells the IPv6 wildcard
from IPv4's. The forward hook over IPv6 is test_acl.py's, run on both routers; an IPv6 flow
rule offered to rte_flow is test_flow.py's net_tap test."""

import os

import pytest

import test_exception
import test_flow
import topo
from test_ipv6 import PEER6, STACK6, v6_port

HTTP_PORT = 80
OTHER6 = "2001:db8::100"        # the peer's second address: another prefix than PEER6/128


@pytest.fixture(scope="module")
def v6():
    with v6_port("filter6", [("service", "add", "http", "tcp", str(HTTP_PORT))]) as s:
        s.peer.run("ip", "-6", "addr", "add", OTHER6 + "/64", "dev", s.peer.ifname, "nodad")
        yield s


@pytest.fixture
def acl6(v6):
    v6.daemon.ctl("acl", "flush")
    yield v6
    v6.daemon.ctl("acl", "flush")
    # What a rule kept out may have left the peer's neighbour entry for the stack failed.
    topo.wait_until(lambda: ping6(v6, PEER6, 1) == 1, timeout=10, interval=0.2,
                    what="ping6 answered again")


def add(d, kind, *words):
    return d.ctl(kind, "add", *words, json=True)["id"]


def acl_rules(d):
    return d.ctl("acl", "show", json=True)["rules"]


def acl_hits(d, rid):
    return next(r["hits"] for r in acl_rules(d) if r["id"] == rid)


def ping6(s, src, count):
    """Echo requests from the peer's address src to the stack's; the replies received."""
    return s.peer.ping(STACK6, count=count, interval=0.05, wait=1, extra=["-I", src]).received


def curl(s, url_host, src=None):
    """One HTTP GET from the peer (from address src); curl's exit status (28: timed out)."""
    cmd = ["curl", "-sS", "-o", "/dev/null", "--connect-timeout", "2", "-m", "10"]
    if src is not None:
        cmd += ["--interface", src]
    return s.peer.run(*cmd, "http://%s:%d/" % (url_host, HTTP_PORT), check=False,
                      timeout=20).returncode


def delta(d, before, name):
    return d.counter(name) - d.counter(name, before)


def test_acl_deny_on_ipv6_prefix_stops_ping6_and_tcp_other_prefix_passes(acl6):
    d = acl6.daemon
    assert curl(acl6, "[%s]" % STACK6, PEER6) == 0
    rid = add(d, "acl", "deny", "src", PEER6 + "/128")
    before = d.stats()
    assert ping6(acl6, PEER6, 5) == 0
    assert curl(acl6, "[%s]" % STACK6, PEER6) == 28
    assert ping6(acl6, OTHER6, 5) == 5
    assert curl(acl6, "[%s]" % STACK6, OTHER6) == 0
    acl6.ping_ok(count=3)                                 # IPv4 is not judged by it
    hits = acl_hits(d, rid)
    assert hits >= 5 + 1                                  # the echo requests, a SYN
    assert delta(d, before, "acl6.denied") == hits
    assert delta(d, before, "acl.denied") == 0
    shown = acl_rules(d)[0]
    assert shown["family"] == "ipv6" and shown["src"] == PEER6 + "/128", shown
    assert "src %s/128" % PEER6 in d.ctl("acl", "show")
    d.ctl("acl", "del", rid)
    assert acl_rules(d) == []
    topo.wait_until(lambda: ping6(acl6, PEER6, 1) == 1, timeout=10, interval=0.2,
                    what="ping6 from the denied prefix answered after acl del")


def test_acl_rule_without_address_judges_both_families_family_narrows_it(acl6):
    d = acl6.daemon
    both = add(d, "acl", "deny", "proto", "tcp", "dport", HTTP_PORT)
    assert curl(acl6, acl6.stack_ip) == 28
    assert curl(acl6, "[%s]" % STACK6) == 28
    shown = acl_rules(d)[0]
    assert shown["family"] == "any" and acl_hits(d, both) >= 2, shown
    d.ctl("acl", "del", both)
    only6 = add(d, "acl", "deny", "family", "ipv6", "proto", "tcp", "dport", HTTP_PORT)
    assert curl(acl6, acl6.stack_ip) == 0
    assert curl(acl6, "[%s]" % STACK6) == 28
    assert "family ipv6 proto tcp dport %d" % HTTP_PORT in d.ctl("acl", "show")
    only4 = add(d, "acl", "prio", "1", "permit", "family", "ipv4")
    assert [r["id"] for r in acl_rules(d)] == [only4, only6]
    assert acl_hits(d, only4) == 0
    acl6.ping_ok(count=2)
    assert acl_hits(d, only4) == 2


@pytest.mark.parametrize("words, word", [
    (("deny", "src", "10.0.0.0/8", "dst", "2001:db8::/32"), "a rule judges one family"),
    (("deny", "src", "2001:db8::1/64"), "did you mean 2001:db8::/64"),
    (("deny", "dst", "2001:db8::/129"), "2001:db8::/129"),
    (("deny", "family", "ipv4", "dst", "2001:db8::1"), "family"),
    (("deny", "family", "inet6"), "ipv4 or ipv6"),
])
def test_acl_bad_ipv6_rules_refused_naming_the_word(v6, words, word):
    r = v6.daemon.ctl_result("acl", "add", *words)
    assert r.rc != 0 and word in r.err, (r.rc, r.err)
    assert acl_rules(v6.daemon) == []


HOST6, PEER6_EXC = "fd00:db8::2", "fd00:db8::1"


def test_bypass_rule_hands_ipv6_to_the_kernel_interface(lab):
    """The stack and the kernel interface's namespace share fd00:db8::2; the stack runs the
    echo service on port 7, the kernel a tagged server there. A bypass rule on the peer's
    IPv6 prefix moves the port to the kernel; IPv4 to the same port stays the stack's."""
    e = test_exception.Exception_(lab)
    port = test_exception.ECHO_PORT
    p = e.peer
    p.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    p.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=0" % p.ifname)
    p.run("ip", "-6", "addr", "add", PEER6_EXC + "/64", "dev", p.ifname, "nodad")
    e.host("ip", "-6", "addr", "add", HOST6 + "/64", "dev", e.kif, "nodad")
    e.ctl("ip", "addr", "add", HOST6 + "/64", "dev", "port0")
    topo.wait_until(lambda: p.ping(HOST6, count=1, wait=1).received == 1, timeout=20,
                    interval=0.2, what="ping6 answered")
    e.spawn(e.host_ns, test_exception.TAG_SERVER, HOST6, port, "kernel6")

    def ask6(text):
        return p.run("/usr/bin/python3", "-c", test_exception.TCP_ASK, HOST6, port,
                     text).stdout.strip()
    assert ask6("a") == "a"                                   # the stack's echo service
    rid = add(e.daemon, "bypass", "src", "fd00:db8::/64", "proto", "tcp", "dport", port)
    before = e.daemon.stats()
    assert ask6("b") == "kernel6:b"
    assert e.ask(port, "v4") == "v4"                          # IPv4: still the stack's
    rule = e.ctl("bypass", "show", as_json=True)[0]
    assert rule["family"] == "ipv6" and rule["hits"] >= 4, rule
    assert delta(e.daemon, before, "kernel.bypass6") == rule["hits"]
    assert delta(e.daemon, before, "kernel.bypass") == 0
    e.ctl("bypass", "del", rid)
    assert ask6("c") == "c"


@pytest.fixture
def flow6(v6):
    test_flow.clear(v6.daemon)
    yield v6
    test_flow.clear(v6.daemon)
    topo.wait_until(lambda: ping6(v6, PEER6, 1) == 1, timeout=10, interval=0.2,
                    what="ping6 answered again")


def test_flow_drop_on_ipv6_prefix_and_port(flow6):
    d = flow6.daemon
    rid = add(d, "flow", "drop", "src", PEER6 + "/128", "proto", "tcp", "dport", HTTP_PORT)
    assert curl(flow6, "[%s]" % STACK6, PEER6) == 28
    assert curl(flow6, "[%s]" % STACK6, OTHER6) == 0
    assert ping6(flow6, PEER6, 3) == 3                        # not TCP: passes
    assert test_flow.hits(d, rid) >= 1
    shown = test_flow.rules(d)[0]
    assert shown["ethertype"] == 0x86dd and shown["src"] == PEER6 + "/128", shown
    assert shown["where"] == "sw", shown
    d.ctl("flow", "del", rid)
    assert curl(flow6, "[%s]" % STACK6, PEER6) == 0
    # Every IPv6 frame by EtherType; IPv4 goes on.
    rid = add(d, "flow", "drop", "ethertype", "ipv6")
    assert ping6(flow6, OTHER6, 3) == 0
    assert test_flow.hits(d, rid) >= 3
    flow6.ping_ok(count=2)


@pytest.mark.parametrize("target", [0, 1])
def test_flow_steer_ipv6_tcp_to_one_of_two_workers(lab, target):
    s = topo.two_workers(lab, extra_config=["service add http tcp %d" % HTTP_PORT,
                                            "ip addr add %s/64 dev port0" % STACK6])
    p = s.peer
    p.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    p.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=0" % p.ifname)
    p.run("ip", "-6", "addr", "add", PEER6 + "/64", "dev", p.ifname, "nodad")
    topo.wait_until(lambda: p.ping(STACK6, count=1, wait=1).received == 1, timeout=20,
                    interval=0.2, what="ping6 answered")
    d, other = s.daemon, 1 - target
    rid = add(d, "flow", "steer", target, "ethertype", "ipv6", "proto", "tcp", "dport",
              HTTP_PORT)
    before = d.stats()
    for _ in range(8):
        assert curl(s, "[%s]" % STACK6) == 0
    assert test_flow.hits(d, rid) >= 8 * 3
    assert test_flow.worker_delta(d, before, other, "flow.steered_out") == \
        test_flow.worker_delta(d, before, target, "flow.steered_in")
    assert test_flow.worker_delta(d, before, target, "flow.steered_out") == 0
    assert test_flow.worker_delta(d, before, target, "ip6.delivered") >= 8 * 3


def test_sock_show_tells_ipv6_wildcard_from_ipv4(v6):
    """The HTTP service listens on :: (both families): [::]:80 as ss prints an IPv6
    wildcard; an IPv4 wildcard stays *:PORT."""
    rows = [r for r in v6.daemon.ctl("sock", "show", "tcp", json=True)
            if r["state"] == "LISTEN" and r["local"].endswith(":%d" % HTTP_PORT)]
    assert [(r["local"], r["peer"]) for r in rows] == [("[::]:%d" % HTTP_PORT, "[::]:*")]
    assert "[::]:%d" % HTTP_PORT in v6.daemon.ctl("sock", "show")


def test_config_file_ipv6_rules_load_and_bad_ones_are_named_at_their_line(lab):
    """acl and flow lines with IPv6 prefixes in the config file: the good ones load with the
    daemon (as `acl show` and `flow show` print them), the bad ones are named at their line
    by --check-config."""
    path = os.path.join(lab.tmp, "filter6.conf")
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\n"
                "acl add deny src 2001:db8:1::/48 proto tcp dport 22\n"
                "acl add deny src 2001:db8::1/32\n"
                "flow add drop dst 2001:db8::/32 proto udp\n"
                "flow add drop src 10.0.0.0/8 dst 2001:db8::1\n")
    env = dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "c.sock"),
               DPSTACK_SOCK=os.path.join(lab.tmp, "a.sock"))
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False, env=env)
    assert p.returncode == 1, p
    err = p.stderr.splitlines()
    assert err[0] == "%s:4: src '2001:db8::1/32' has host bits set (did you mean " \
                     "2001:db8::/32?)" % path, p
    assert err[1].startswith("%s:6: " % path) and "a rule matches one family" in err[1], p
    peer = lab.add_peer("10.0.0.1", 24)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname, extra=[
        "acl add deny src 2001:db8:1::/48 proto tcp dport 22",
        "acl add permit family ipv6 proto icmpv6",
        "flow add drop dst 2001:db8::/32 proto udp"]))
    shown = d.ctl("acl", "show", json=True)["rules"]
    assert [r["match"] for r in shown] == ["proto tcp src 2001:db8:1::/48 dport 22",
                                           "family ipv6 proto icmpv6"], shown
    assert [r["family"] for r in shown] == ["ipv6", "ipv6"]
    flows = d.ctl("flow", "show", json=True)["rules"]
    assert [r["match"] for r in flows] == ["proto udp dst 2001:db8::/32"], flows

