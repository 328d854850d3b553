"""ACLs (`acl add|del|flush|show`, src/acl) against real traffic from the Linux kernel: a deny
on TCP port 80 stops curl while ping goes on, per-rule hit counters count every packet
judged, priorities decide between overlapping rules, the forward hook filters what the stack
routes, a storm of rule changes under traffic never lets a packet see half a rule set, bad
rules are refused naming the bad word, and 10,000 rules load from the config file."""

import os
import subprocess

import pytest

import topo

HTTP_PORT = 80


@pytest.fixture(scope="module")
def svc():
    with topo.single_port("acl", extra_config=["service add http tcp %d" % HTTP_PORT]) as s:
        yield s


@pytest.fixture
def acl(svc):
    """The module's port with no ACL rule before and after the test."""
    svc.ctl("acl", "flush")
    yield svc
    svc.ctl("acl", "flush")


def rules(d):
    return d.ctl("acl", "show", json=True)["rules"]


def hits(d, rule_id):
    return next(r["hits"] for r in rules(d) if r["id"] == rule_id)


def add(d, *words):
    return d.ctl("acl", "add", *words, json=True)["id"]


def curl(s):
    """One HTTP GET from the kernel peer; curl's exit status (28: timed out connecting)."""
    return s.peer.run("curl", "-sS", "-o", "/dev/null", "--connect-timeout", "2", "-m", "10",
                      "http://%s:%d/" % (s.stack_ip, HTTP_PORT), check=False,
                      timeout=20).returncode


def test_deny_tcp_dport_80_stops_curl_not_ping_and_del_restores(acl):
    d = acl.daemon
    assert curl(acl) == 0
    rid = add(d, "deny", "proto", "tcp", "dport", HTTP_PORT)
    before = d.stats()
    assert curl(acl) == 28          # the SYNs are dropped: connect timed out
    acl.ping_ok(count=5)
    assert hits(d, rid) >= 1
    assert d.counter("acl.denied") - d.counter("acl.denied", before) == hits(d, rid)
    d.ctl("acl", "del", rid)
    assert rules(d) == []
    assert curl(acl) == 0


def test_hits_count_each_packet_judged(acl):
    d = acl.daemon
    permit = add(d, "permit", "proto", "icmp", "src", "10.0.0.1/32")
    other = add(d, "deny", "proto", "icmp", "src", "10.0.0.99/32")
    acl.ping_ok(count=10)
    assert hits(d, permit) == 10    # the echo requests; replies leave by no hook
    assert hits(d, other) == 0
    deny = add(d, "prio", 1, "deny", "proto", "icmp")
    before = d.stats()
    r = acl.peer.ping(acl.stack_ip, count=5, interval=0.01, wait=1)
    assert r.received == 0, r
    assert hits(d, deny) == 5
    assert hits(d, permit) == 10    # kept across the rebuilds of the set
    assert d.counter("acl.denied") - d.counter("acl.denied", before) == 5


def test_higher_priority_permit_inside_lower_priority_deny(acl):
    d = acl.daemon
    deny = add(d, "prio", 200, "deny", "proto", "icmp", "src", "10.0.0.0/24")
    permit = add(d, "prio", 100, "permit", "proto", "icmp", "src", "10.0.0.1/32")
    acl.ping_ok(count=4)
    assert (hits(d, permit), hits(d, deny)) == (4, 0)
    shown = [r["id"] for r in rules(d)]
    assert shown == [permit, deny]  # in the order they are judged
    d.ctl("acl", "del", permit)
    r = acl.peer.ping(acl.stack_ip, count=3, interval=0.01, wait=1)
    assert r.received == 0 and hits(d, deny) == 3, r


def test_equal_priorities_older_rule_wins(acl):
    d = acl.daemon
    first = add(d, "permit", "proto", "icmp")
    second = add(d, "deny", "proto", "icmp")
    acl.ping_ok(count=3)
    assert (hits(d, first), hits(d, second)) == (3, 0)


def test_tcp_flags_syn_without_ack_blocks_new_connections_only(acl):
    d = acl.daemon
    rid = add(d, "deny", "proto", "tcp", "dport", HTTP_PORT, "flags", "SYN/SYN,ACK")
    assert curl(acl) == 28
    assert hits(d, rid) >= 1
    text = d.ctl("acl", "show")
    assert "flags SYN/SYN,ACK" in text and "deny" in text, text


def test_dev_and_hook_input_rules(acl):
    d = acl.daemon
    rid = add(d, "deny", "proto", "icmp", "dev", "port0", "hook", "input")
    r = acl.peer.ping(acl.stack_ip, count=2, interval=0.01, wait=1)
    assert r.received == 0 and hits(d, rid) == 2, r
    shown = rules(d)[0]
    assert shown["dev"] == "port0" and shown["hook"] == "input", shown
    d.ctl("acl", "del", rid)
    forward_only = add(d, "deny", "proto", "icmp", "hook", "forward")
    acl.ping_ok(count=2)
    assert hits(d, forward_only) == 0


@pytest.fixture(params=[4, 6], ids=["ipv4", "ipv6"])
def any_router(request):
    """The routers of conftest, IPv4's and IPv6's (topo.Router, Router6)."""
    return request.getfixturevalue("router" if request.param == 4 else "router6")


def test_forward_hook_filters_routed_traffic_not_the_stacks_own(any_router):
    router = any_router
    d = router.daemon
    six = "6" if router.family == 6 else ""
    try:
        dst = "%s/%d" % (router.b_ip, router.host_plen)
        input_only = add(d, "deny", "dst", dst, "hook", "input")
        router.a.ping(router.b_ip, count=2, interval=0.01, wait=2)
        assert hits(d, input_only) == 0
        d.ctl("acl", "del", input_only)
        rid = add(d, "deny", "dst", dst, "hook", "forward")
        before = d.stats()
        r = router.a.ping(router.b_ip, count=4, interval=0.01, wait=1)
        assert r.received == 0, r
        assert hits(d, rid) == 4
        assert d.counter("acl%s.denied" % six) - d.counter("acl%s.denied" % six, before) == 4
        assert d.counter("ip%s.forwarded" % six) == d.counter("ip%s.forwarded" % six, before)
        # The stack's own address on the far side is input, not forward.
        r = router.a.ping(router.b_stack_ip, count=3, interval=0.01, wait=2)
        assert r.received == 3, r
        d.ctl("acl", "del", rid)
        r = router.a.ping(router.b_ip, count=3, interval=0.01, wait=2)
        assert r.received == 3, r
    finally:
        d.ctl("acl", "flush")


def test_rule_changes_under_traffic_keep_every_verdict(acl):
    """300 rule changes (adds and deletes of rules that never match the pings) while the
    kernel pings 2000 times: every set the worker is handed permits ICMP by the same rule,
    so a half-built or freed set would show as a lost ping, a hit counted elsewhere, a
    crash or a leak; the permit's counter survives every swap and counts each request."""
    d = acl.daemon
    baseline = acl.settled_mempool()
    add(d, "prio", 2000, "deny", "proto", "icmp")
    keep = add(d, "prio", 10, "permit", "proto", "icmp")
    before = d.stats()
    ping = subprocess.Popen(
        ["ip", "netns", "exec", acl.peer.ns, "ping", "-n", "-q", "-c", "2000", "-i", "0.002",
         "-W", "2", acl.stack_ip], stdout=subprocess.PIPE, text=True)
    try:
        churn = []
        for i in range(100):
            churn.append(add(d, "deny", "proto", "udp", "src", "192.0.2.%d/32" % (i % 250),
                             "dport", 1000 + i))
            churn.append(add(d, "prio", 5, "deny", "proto", "icmp", "src", "192.0.2.1/32"))
            while len(churn) > 10:
                d.ctl("acl", "del", churn.pop(0))
        out, _ = ping.communicate(timeout=120)
    finally:
        if ping.poll() is None:
            ping.kill()
            ping.wait()
    assert ping.returncode == 0 and " 0% packet loss" in out, out
    assert hits(d, keep) == 2000
    assert d.counter("acl.denied") == d.counter("acl.denied", before)
    assert len(rules(d)) == 12
    acl.wait_mempool_back(baseline)


BAD_RULES = [
    ("bad_prefix", ["acl", "add", "deny", "src", "10.0.0.0/33"], "10.0.0.0/33"),
    ("host_bits", ["acl", "add", "deny", "dst", "10.0.0.1/8"], "10.0.0.1/8"),
    ("reversed_range", ["acl", "add", "deny", "proto", "tcp", "dport", "90-80"], "90-80"),
    ("unknown_field", ["acl", "add", "deny", "port", "80"], "port"),
    ("unknown_action", ["acl", "add", "drop", "proto", "tcp"], "drop"),
    ("bad_proto", ["acl", "add", "deny", "proto", "tcpp"], "tcpp"),
    ("ports_without_proto", ["acl", "add", "deny", "dport", "80"], "dport"),
    ("flags_without_tcp", ["acl", "add", "deny", "proto", "udp", "flags", "SYN"], "flags"),
    ("bad_flag", ["acl", "add", "deny", "proto", "tcp", "flags", "SYN,FOO"], "SYN,FOO"),
    ("unknown_dev", ["acl", "add", "deny", "dev", "port9"], "port9"),
    ("bad_hook", ["acl", "add", "deny", "hook", "output"], "output"),
    ("missing_value", ["acl", "add", "deny", "src"], "src"),
    ("twice", ["acl", "add", "deny", "proto", "tcp", "proto", "udp"], "proto"),
    ("bad_prio", ["acl", "add", "prio", "70000", "deny"], "70000"),
    ("del_missing_id", ["acl", "del", "999999"], "999999"),
    ("del_not_a_number", ["acl", "del", "abc"], "abc"),
]


@pytest.mark.parametrize("name,args,word", BAD_RULES, ids=[b[0] for b in BAD_RULES])
def test_bad_rule_refused_naming_the_word(acl, name, args, word):
    d = acl.daemon
    kept = add(d, "permit", "proto", "icmp")
    before = rules(d)
    for json in (False, True):
        r = d.ctl_result(*args, json=json)
        assert r.rc == 1 and r.out == "", r
        lines = r.err.splitlines()
        assert len(lines) == 1 and word in lines[0], r
    assert rules(d) == before and before[0]["id"] == kept


def test_show_text_and_json_agree(acl):
    d = acl.daemon
    rid = add(d, "prio", 5, "deny", "proto", "udp", "src", "192.0.2.0/24", "sport",
              "1000-2000", "dport", 53, "dev", "port0")
    j = rules(d)
    assert j == [{"id": rid, "prio": 5, "action": "deny", "hook": "input,forward",
                  "dev": "port0", "proto": 17, "family": "ipv4", "src": "192.0.2.0/24",
                  "sport_min": 1000,
                  "sport_max": 2000, "dport_min": 53, "dport_max": 53,
                  "match": "proto udp src 192.0.2.0/24 sport 1000-2000 dport 53",
                  "hits": 0}]
    text = d.ctl("acl", "show").splitlines()
    assert text[0].split() == ["ID", "PRIO", "ACTION", "HOOK", "DEV", "MATCH", "HITS"]
    assert text[1].split() == [str(rid), "5", "deny", "input,forward", "port0", "proto",
                               "udp", "src", "192.0.2.0/24", "sport", "1000-2000", "dport",
                               "53", "0"]
    assert text[2].startswith("1 rules; denied ")
    usage = d.ctl("help")
    assert "acl add [prio N] { permit | deny }" in usage and "acl del ID" in usage, usage


def test_10000_rules_from_the_config_file(lab):
    peer = lab.add_peer("10.0.0.1", 24)
    lines = ["service add http tcp %d" % HTTP_PORT]
    # 10,000 rules that never match the peer: other sources, other ports.
    for i in range(10000):
        lines.append("acl add deny proto udp src 172.16.%d.%d/32 dport %d" %
                     (i // 250, i % 250, 1024 + i))
    lines.append("acl add prio 10 deny proto tcp dport %d" % HTTP_PORT)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname, extra=lines))
    s = topo.SinglePort.__new__(topo.SinglePort)
    s.peer, s.daemon, s.stack_ip = peer, d, "10.0.0.2"
    s.warm_up()
    shown = rules(d)
    assert len(shown) == 10001
    assert shown[0]["match"] == "proto tcp dport %d" % HTTP_PORT
    assert curl(s) == 28
    assert shown[0]["hits"] == 0 and rules(d)[0]["hits"] >= 1
    s.ping_ok(count=3)


def test_two_workers_hits_summed_and_one_source_denied(lab):
    """Two workers (net_af_packet, two queue pairs: the kernel spreads the flows), pings
    from eight addresses: each worker judges with its own copy of the pointer and counts
    in its own row; acl show sums them, exactly."""
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.two_worker_config(peer.root_ifname))
    addrs = ["10.0.0.%d" % (11 + i) for i in range(8)]
    for a in addrs:
        peer.run("ip", "addr", "add", a + "/24", "dev", peer.ifname)
    for a in addrs:  # ARP both ways first: no rule yet
        topo.wait_until(lambda: peer.ping("10.0.0.2", count=1, wait=1,
                                          extra=("-I", a)).received == 1,
                        timeout=20, what="first ping from %s" % a)
    deny = add(d, "prio", 10, "deny", "proto", "icmp", "src", addrs[2])
    permit = add(d, "permit", "proto", "icmp")
    before = d.stats()
    for a in addrs:
        r = peer.ping("10.0.0.2", count=5, interval=0.02, wait=1, extra=("-I", a))
        assert r.received == (0 if a == addrs[2] else 5), (a, r)
    assert hits(d, permit) == 35 and hits(d, deny) == 5
    assert d.counter("acl.denied") - d.counter("acl.denied", before) == 5


def test_check_config_names_each_bad_acl_line(lab):
    """dpstackd --check-config runs the acl lines as dry runs: each bad rule at its line,
    the good ones built into a set (and freed) without a worker."""
    path = os.path.join(lab.tmp, "acl.conf")
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\nip addr add 10.0.0.2/24 dev port0\n"
                "acl add deny proto tcp dport 80\n"
                "acl add deny proto tcp dport 90-80\n"
                "acl show\n"
                "acl add deny src 10.0.0.1/8\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False,
                 env=dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "c.sock"),
                          DPSTACK_SOCK=os.path.join(lab.tmp, "a.sock")))
    assert p.returncode == 1, p
    assert p.stderr.splitlines() == [
        "%s:5: dport range '90-80' is reversed (did you mean 80-90?)" % path,
        "%s:7: src '10.0.0.1/8' has host bits set (did you mean 10.0.0.0/8?)" % path,
        "%s: 2 error(s)" % path], p
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\nacl add deny proto tcp dport 80\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert p.returncode == 0 and "ok: 1 port(s), 1 worker(s), 1 command(s)" in p.stdout, p
