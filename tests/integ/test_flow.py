"""Flow filter rules (`flow add|del|show`, src/flow, src/dp/worker_flow.c) against real traffic
from the Linux kernel: a drop rule stops pings and curl with every frame counted and its
deletion restores them; steer moves a flow to the chosen worker of two (per-worker counters
show the frames there, and UDP and TCP exchanges and forwarding still work); the kernel and
cluster actions are refused naming why; bad rules are refused naming the word; rules load
from the config file; many rules and changes under traffic keep every verdict. The virtual
ports here have no rte_flow, so every rule runs in software and `flow show` says so and why."""

import os
import subprocess

import pytest

import topo

HTTP_PORT = 80
ECHO_PORT = 7070


@pytest.fixture(scope="module")
def svc():
    with topo.single_port("flow", extra_config=["service add http tcp %d" % HTTP_PORT]) as s:
        yield s


@pytest.fixture
def flow(svc):
    """The module's port with no flow rule before and after the test."""
    clear(svc.daemon)
    yield svc
    clear(svc.daemon)


def rules(d):
    return d.ctl("flow", "show", json=True)["rules"]


def clear(d):
    for r in rules(d):
        d.ctl("flow", "del", r["id"])


def hits(d, rule_id):
    return next(r["hits"] for r in rules(d) if r["id"] == rule_id)


def add(d, *words):
    return d.ctl("flow", "add", *words, json=True)["id"]


def curl(s, ip=None):
    """One HTTP GET from the kernel peer; curl's exit status (28: timed out connecting)."""
    return s.peer.run("curl", "-sS", "-o", "/dev/null", "--connect-timeout", "2", "-m", "10",
                      "http://%s:%d/" % (ip or s.stack_ip, HTTP_PORT), check=False,
                      timeout=20).returncode


def test_drop_icmp_stops_ping_counts_each_frame_and_del_restores(flow):
    d = flow.daemon
    flow.ping_ok(count=2)
    rid = add(d, "drop", "proto", "icmp")
    before = d.stats()
    r = flow.peer.ping(flow.stack_ip, count=5, interval=0.01, wait=1)
    assert r.received == 0, r
    assert hits(d, rid) == 5
    assert d.counter("flow.dropped") - d.counter("flow.dropped", before) == 5
    assert curl(flow) == 0           # TCP is not matched
    d.ctl("flow", "del", rid)
    assert rules(d) == []
    flow.ping_ok(count=3)


def test_drop_tcp_dport_stops_curl_not_ping(flow):
    d = flow.daemon
    rid = add(d, "drop", "proto", "tcp", "dport", HTTP_PORT)
    assert curl(flow) == 28          # the SYNs are dropped: connect timed out
    flow.ping_ok(count=3)
    assert hits(d, rid) >= 1
    d.ctl("flow", "del", rid)
    assert curl(flow) == 0


def test_priority_and_age_decide_between_overlapping_rules(flow):
    d = flow.daemon
    wide = add(d, "prio", 200, "drop", "proto", "icmp", "src", "10.0.0.0/24")
    narrow = add(d, "prio", 100, "steer", 0, "proto", "icmp", "src", "10.0.0.1")
    flow.ping_ok(count=4)            # steer to the only worker: delivered
    assert (hits(d, narrow), hits(d, wide)) == (4, 0)
    assert [r["id"] for r in rules(d)] == [narrow, wide]   # in the order they are judged
    d.ctl("flow", "del", narrow)
    same_prio = add(d, "prio", 200, "steer", 0, "proto", "icmp")
    r = flow.peer.ping(flow.stack_ip, count=3, interval=0.01, wait=1)
    assert r.received == 0 and hits(d, wide) == 3 and hits(d, same_prio) == 0, r


def test_ethertype_rule_sees_every_frame_of_its_type(flow):
    """ethertype ipv4 takes every IPv4 frame (ICMP, TCP alike) and nothing else: ARP goes on,
    so the stack answers again the moment the rule goes."""
    d = flow.daemon
    rid = add(d, "drop", "ethertype", "ipv4")
    arp = add(d, "prio", 2000, "steer", 0, "ethertype", "arp")
    r = flow.peer.ping(flow.stack_ip, count=5, interval=0.01, wait=1)
    assert r.received == 0 and hits(d, rid) == 5, r
    assert curl(flow) == 28
    flow.peer.run("arping", "-c", "2", "-w", "3", "-I", flow.peer.ifname, flow.stack_ip,
                  check=False)
    assert hits(d, arp) >= 1
    d.ctl("flow", "del", rid)
    flow.ping_ok(count=3)


def test_every_rule_runs_in_software_here_and_says_why(flow):
    d = flow.daemon
    first = add(d, "drop", "proto", "udp", "dport", 9)
    second = add(d, "drop", "proto", "udp", "dport", 10)
    shown = rules(d)
    assert [r["where"] for r in shown] == ["sw", "sw"]
    assert shown[0]["id"] == first and shown[0]["why_sw"].startswith("port0: rte_flow: ")
    assert shown[1]["why_sw"] == "after rule %d, which runs in software" % first, shown
    text = d.ctl("flow", "show").splitlines()
    assert text[2].strip().startswith("software: port0: rte_flow: "), text
    assert text[-1].startswith("2 rules (0 in hardware); dropped "), text
    assert second in [r["id"] for r in shown]


def test_kernel_action_refused_without_a_kernel_interface(flow):
    d = flow.daemon
    for words, why in [(["kernel", "proto", "tcp", "dport", 22],
                        "flow action kernel: port0 has no kernel exception interface"),
                       (["kernel", "dev", "port0"],
                        "flow action kernel: port0 has no kernel exception interface"),
                       (["cluster", "web", "proto", "tcp"],
                        "flow action cluster: no cluster named 'web'")]:
        for json in (False, True):
            r = d.ctl_result("flow", "add", *words, json=json)
            assert r.rc == 1 and r.out == "" and r.err.startswith("dpstackctl: " + why), r
    assert rules(d) == []


BAD_RULES = [
    ("no_action", ["flow", "add"], "action"),
    ("unknown_action", ["flow", "add", "deny", "proto", "tcp"], "deny"),
    ("steer_no_worker", ["flow", "add", "steer"], "steer"),
    ("steer_bad_worker", ["flow", "add", "steer", "1", "proto", "udp"], "'1'"),
    ("steer_not_a_number", ["flow", "add", "steer", "x"], "'x'"),
    ("cluster_no_name", ["flow", "add", "cluster"], "cluster"),
    ("bad_prefix", ["flow", "add", "drop", "src", "10.0.0.0/33"], "10.0.0.0/33"),
    ("host_bits", ["flow", "add", "drop", "dst", "10.0.0.1/8"], "10.0.0.1/8"),
    ("reversed_range", ["flow", "add", "drop", "proto", "tcp", "dport", "90-80"], "90-80"),
    ("unknown_field", ["flow", "add", "drop", "port", "80"], "port"),
    ("bad_proto", ["flow", "add", "drop", "proto", "tcpp"], "tcpp"),
    ("ports_without_proto", ["flow", "add", "drop", "dport", "80"], "dport"),
    ("bad_ethertype", ["flow", "add", "drop", "ethertype", "0x05ff"], "0x05ff"),
    ("ip_match_not_ipv4", ["flow", "add", "drop", "ethertype", "arp", "proto", "udp"],
     "ethertype ipv4"),
    ("unknown_dev", ["flow", "add", "drop", "dev", "port9"], "port9"),
    ("missing_value", ["flow", "add", "drop", "src"], "src"),
    ("twice", ["flow", "add", "drop", "proto", "tcp", "proto", "udp"], "proto"),
    ("bad_prio", ["flow", "add", "prio", "70000", "drop"], "70000"),
    ("del_missing_id", ["flow", "del", "999999"], "999999"),
    ("del_not_a_number", ["flow", "del", "abc"], "abc"),
    ("show_extra_word", ["flow", "show", "all"], "flow show"),
    ("unknown_subcommand", ["flow", "flush"], "flush"),
]


@pytest.mark.parametrize("name,args,word", BAD_RULES, ids=[b[0] for b in BAD_RULES])
def test_bad_rule_refused_naming_the_word(flow, name, args, word):
    d = flow.daemon
    kept = add(d, "drop", "proto", "udp", "dport", 9)
    before = rules(d)
    for json in (False, True):
        r = d.ctl_result(*args, json=json)
        assert r.rc == 1 and r.out == "", r
        lines = r.err.splitlines()
        assert len(lines) == 1 and word in lines[0], r
    assert rules(d) == before and before[0]["id"] == kept


def test_show_text_and_json_agree(flow):
    d = flow.daemon
    rid = add(d, "prio", 5, "steer", 0, "proto", "udp", "src", "192.0.2.0/24", "sport",
              "1000-2000", "dport", 53, "dev", "port0")
    eth = add(d, "drop", "ethertype", "0x88cc")
    j = rules(d)
    why = j[0].pop("why_sw")
    assert why == "port ranges are judged in software", why
    assert j[0] == {"id": rid, "prio": 5, "action": "steer", "worker": 0, "dev": "port0",
                    "ethertype": 0x0800, "proto": 17, "src": "192.0.2.0/24",
                    "sport_min": 1000, "sport_max": 2000, "dport_min": 53, "dport_max": 53,
                    "match": "proto udp src 192.0.2.0/24 sport 1000-2000 dport 53",
                    "where": "sw", "hits": 0}
    assert j[1]["id"] == eth and j[1]["match"] == "ethertype 0x88cc" and \
        j[1]["action"] == "drop" and "dev" not in j[1], j[1]
    text = d.ctl("flow", "show").splitlines()
    assert text[0].split() == ["ID", "PRIO", "ACTION", "DEV", "MATCH", "WHERE", "HITS"]
    assert text[1].split() == [str(rid), "5", "steer", "0", "port0", "proto", "udp", "src",
                               "192.0.2.0/24", "sport", "1000-2000", "dport", "53", "sw", "0"]
    assert text[3].split() == [str(eth), "1000", "drop", "any", "ethertype", "0x88cc", "sw",
                               "0"], text
    usage = d.ctl("help")
    assert "flow add [prio N] { drop | steer WORKER | kernel | cluster NAME }" in usage
    assert "flow del ID" in usage and "flow show" in usage, usage


def test_many_rules_and_changes_under_traffic_keep_every_verdict(flow):
    """500 rules that never match the pings, then 200 adds and deletes while the kernel pings
    1000 times through a steer rule that always matches: every set a worker is handed holds
    that rule, so a half-built or freed set would show as a lost ping, a hit counted
    elsewhere, a crash or a leak."""
    d = flow.daemon
    baseline = flow.settled_mempool()
    for i in range(500):
        add(d, "drop", "proto", "udp", "src", "192.0.2.%d" % (i % 250), "dport", 1000 + i)
    keep = add(d, "prio", 10, "steer", 0, "proto", "icmp")
    before = d.stats()
    ping = subprocess.Popen(
        ["ip", "netns", "exec", flow.peer.ns, "ping", "-n", "-q", "-c", "1000", "-i", "0.002",
         "-W", "2", flow.stack_ip], stdout=subprocess.PIPE, text=True)
    try:
        churn = []
        for i in range(100):
            churn.append(add(d, "drop", "proto", "udp", "dport", 2000 + i))
            churn.append(add(d, "prio", 5, "drop", "proto", "icmp", "src", "192.0.2.1"))
            while len(churn) > 10:
                d.ctl("flow", "del", churn.pop(0))
        out, _ = ping.communicate(timeout=120)
    finally:
        if ping.poll() is None:
            ping.kill()
            ping.wait()
    assert ping.returncode == 0 and " 0% packet loss" in out, out
    assert hits(d, keep) == 1000
    assert d.counter("flow.dropped") == d.counter("flow.dropped", before)
    assert len(rules(d)) == 511
    flow.wait_mempool_back(baseline)


def worker_counter(stats, w, name):
    row = stats["workers"][w]
    return row["events"].get(name, row["drops"].get(name))


def worker_delta(d, before, w, name):
    return worker_counter(d.stats(), w, name) - worker_counter(before, w, name)


@pytest.fixture
def two(lab):
    """Two workers on one port (topo.two_workers), the HTTP service, and examples/udp_echo.c
    bound to ECHO_PORT (a UDP socket lives on its port's worker, steer.h)."""
    s = topo.two_workers(lab, extra_config=["service add http tcp %d" % HTTP_PORT])
    echo = os.path.join(topo.BUILD, "examples", "dps-udp-echo")
    p = subprocess.Popen([echo, "-p", str(ECHO_PORT)], env=s.daemon.env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop():
        p.terminate()
        p.wait(10)
    lab.add_cleanup(stop)
    topo.wait_until(lambda: any(r["local"].endswith(":%d" % ECHO_PORT)
                                for r in s.daemon.ctl("sock", "show", json=True)),
                    timeout=10, what="dps-udp-echo bound")
    return s


@pytest.mark.parametrize("target", [0, 1])
def test_steer_udp_and_tcp_to_one_of_two_workers(two, target):
    """steer TARGET for the peer's UDP to the echo port and TCP to the HTTP port: the other
    worker's stack sees none of those datagrams (ip.rx unchanged; what its queue received
    went over as flow.steered_out), the target's sees every one, and the exchanges work —
    TCP connections live on the target (sock show), UDP datagrams reach their socket's
    worker from there."""
    d, other = two.daemon, 1 - target
    udp = add(d, "steer", target, "proto", "udp", "dport", ECHO_PORT)
    tcp = add(d, "steer", target, "proto", "tcp", "dport", HTTP_PORT)
    icmp = add(d, "steer", target, "proto", "icmp")
    before = d.stats()
    for i in range(8):
        assert curl(two) == 0
    for sport in range(40000, 40016):
        reply = two.peer.run("sh", "-c", "printf hello%d | nc -u -w 1 -p %d %s %d" %
                             (sport, sport, two.stack_ip, ECHO_PORT), check=False, timeout=20)
        assert reply.stdout == "hello%d" % sport, reply
    r = two.peer.ping(two.stack_ip, count=5, interval=0.01, wait=2)
    assert r.received == 5, r
    assert hits(d, udp) == 16 and hits(d, icmp) == 5 and hits(d, tcp) >= 8 * 3
    assert worker_delta(d, before, other, "ip.rx") == 0
    assert worker_delta(d, before, target, "ip.rx") == hits(d, udp) + hits(d, tcp) + 5
    assert worker_delta(d, before, other, "flow.steered_out") == \
        worker_delta(d, before, target, "flow.steered_in")
    assert worker_delta(d, before, target, "flow.steered_out") == 0


def test_steer_del_returns_the_flow_to_rss(two):
    d = two.daemon
    rid = add(d, "steer", 1, "proto", "icmp")
    two.peer.ping(two.stack_ip, count=3, interval=0.01, wait=2)
    d.ctl("flow", "del", rid)
    before = d.stats()
    r = two.peer.ping(two.stack_ip, count=5, interval=0.01, wait=2)
    assert r.received == 5, r
    assert sum(worker_delta(d, before, w, "flow.steered_in") for w in (0, 1)) == 0


def test_steer_forwarded_traffic_to_one_of_two_workers(lab):
    """Two ports, two workers (net_af_packet, two queue pairs each): pings from A to B routed
    by the stack all cross worker 1 once a rule steers ICMP there, both ways."""
    a = lab.add_peer("10.0.0.1", 24, gw="10.0.0.2")
    b = lab.add_peer("10.0.1.1", 24, gw="10.0.1.2")
    cpus = sorted(os.sched_getaffinity(0))
    config = "\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (cpus[0], cpus[0], cpus[1 % len(cpus)]),
        "workers 2",
        "port add port0 net_af_packet0,iface=%s,qpairs=2" % a.root_ifname,
        "port add port1 net_af_packet1,iface=%s,qpairs=2" % b.root_ifname,
        "ip addr add 10.0.0.2/24 dev port0",
        "ip addr add 10.0.1.2/24 dev port1",
        "flow add steer 1 proto icmp",
    ]) + "\n"
    d = lab.start_daemon(config)
    topo.wait_until(lambda: a.ping("10.0.1.1", count=1, wait=1).received == 1, timeout=20,
                    interval=0.1, what="first ping A -> B through dpstackd")
    before = d.stats()
    r = a.ping("10.0.1.1", count=10, interval=0.01, wait=2)
    assert r.received == 10, r
    assert worker_delta(d, before, 0, "ip.forwarded") == 0
    assert worker_delta(d, before, 1, "ip.forwarded") == 20
    assert worker_delta(d, before, 0, "ip.rx") == 0


def test_config_file_rules_and_check_config(lab):
    peer = lab.add_peer("10.0.0.1", 24)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname, extra=[
        "flow add drop proto icmp src 10.0.0.1",
        "flow add prio 1 drop proto udp dport 9"]))
    shown = rules(d)
    assert [r["match"] for r in shown] == ["proto udp dport 9", "proto icmp src 10.0.0.1/32"]
    r = peer.ping("10.0.0.2", count=2, interval=0.2, wait=1)
    assert r.received == 0 and rules(d)[1]["hits"] >= 1, r

    path = os.path.join(lab.tmp, "flow.conf")
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\n"
                "flow add drop proto tcp dport 80\n"
                "flow add steer 3 proto tcp\n"
                "flow show\n"
                "flow add kernel dev port0\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert p.returncode == 1, p
    assert p.stderr.splitlines() == [
        "%s:4: steer '3': the worker must be a number from 0 to 0 (lcore show lists them)"
        % path,
        "%s:6: flow action kernel: port0 has no kernel exception interface (port add port0 "
        "DEVICE kernel IFNAME)" % path,
        "%s: 2 error(s)" % path], p


@pytest.mark.parametrize("steer_match", ["proto tcp dport 80",
                                         "src 2001:db8::/32 proto tcp dport 80"],
                         ids=["ipv4", "ipv6"])
def test_net_tap_offers_rules_to_rte_flow_and_says_why_not(lab, steer_match):
    """net_tap is the one virtual PMD here with rte_flow (as TC flower rules): each rule goes
    through rte_flow_validate and rte_flow_create. This machine's kernel has no multiq qdisc
    for the PMD's flower rules, so the PMD refuses them and every rule stays in software,
    saying which port refused and rte_flow's reason; on a kernel that takes them the steer
    rule would show as hw (flow_hw.h)."""
    ifname = "%s%stap" % (topo.PREFIX, topo.PID_HEX)
    cpus = sorted(os.sched_getaffinity(0))
    d = lab.start_daemon("\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (cpus[0], cpus[0], cpus[1 % len(cpus)]),
        "workers 2",
        "port add port0 net_tap0,iface=%s" % ifname,
        "ip addr add 198.51.100.2/24 dev port0",
        "flow add steer 1 " + steer_match,
        "flow add drop proto udp sport 1000-2000"]) + "\n")
    steer, ranged = rules(d)
    assert steer["where"] in ("hw", "sw") and ranged["where"] == "sw", (steer, ranged)
    if steer["where"] == "sw":
        assert steer["why_sw"].startswith("port0: rte_flow: "), steer
        assert ranged["why_sw"] == "after rule %d, which runs in software" % steer["id"]
    else:
        assert ranged["why_sw"] == "port ranges are judged in software", ranged
