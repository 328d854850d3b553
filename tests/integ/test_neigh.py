"""The stack's neighbour cache against a live kernel, with short timers (`neigh params`):
reachable -> stale -> delay/probe -> reachable, garbage collection, failed resolution and its
counters, and a peer that changes its MAC."""

from scapy.layers.l2 import ARP

import topo

UNUSED_IP = "10.0.0.99"


def _stack_ping(s, dst, count=1, timeout_ms=1000, size=None):
    args = ["ping", dst, "count", count, "timeout-ms", timeout_ms]
    if size is not None:
        args += ["size", size]
    r = s.daemon.ctl_result(*args, json=True, timeout=30)
    res = topo.jsonlib.loads(r.out) if r.rc == 0 and r.out.strip() else None
    return r, res


def _fresh_cache(s, **params):
    args = []
    for k, v in params.items():
        args += [k.replace("_", "-"), v]
    s.ctl("neigh", "params", *args)
    s.ctl("neigh", "flush")
    s.peer.run("ip", "neigh", "flush", "dev", s.peer.ifname)


def test_neigh_params_show_and_set(fresh_one_port):
    s = fresh_one_port
    p = s.ctl("neigh", "params", json=True)
    for key in ("reachable-ms", "delay-ms", "retrans-ms", "gc-stale-ms", "failed-hold-ms"):
        assert key in p, p
    s.ctl("neigh", "params", "reachable-ms", 1234, "failed-hold-ms", 4321)
    p2 = s.ctl("neigh", "params", json=True)
    assert p2["reachable-ms"] == 1234 and p2["failed-hold-ms"] == 4321
    assert {k: v for k, v in p2.items() if k not in ("reachable-ms", "failed-hold-ms")} == \
        {k: v for k, v in p.items() if k not in ("reachable-ms", "failed-hold-ms")}


def test_neigh_reachable_expires_to_stale_and_ping_reresolves(fresh_one_port):
    s = fresh_one_port
    _fresh_cache(s, reachable_ms=400, delay_ms=200, retrans_ms=200, gc_stale_ms=60000)
    r, res = _stack_ping(s, s.peer_ip)
    assert r.rc == 0 and res["received"] == 1, r
    entry = s.daemon.wait_neigh_state(s.peer_ip, "reachable", timeout=2)
    assert entry["lladdr"] == s.peer_mac
    s.daemon.wait_neigh_state(s.peer_ip, "stale", timeout=3)
    with s.packet_socket() as ps:
        r, res = _stack_ping(s, s.peer_ip)
        assert r.rc == 0 and res["received"] == 1, r
        # Used while stale: delay, then a unicast probe to the cached MAC (RFC 4861 7.3.3).
        probe = ps.recv_until(lambda f: f.haslayer(ARP) and f[ARP].op == 1 and
                              f[ARP].pdst == s.peer_ip, timeout=3)
    assert probe is not None, "no ARP probe after using a stale entry"
    assert probe.dst == s.peer_mac, "the probe should be unicast to the cached MAC"
    entry = s.daemon.wait_neigh_state(s.peer_ip, "reachable", timeout=3)
    assert entry["lladdr"] == s.peer_mac


def test_neigh_unused_stale_entry_garbage_collected(fresh_one_port):
    s = fresh_one_port
    _fresh_cache(s, reachable_ms=200, gc_stale_ms=300)
    r, _ = _stack_ping(s, s.peer_ip)
    assert r.rc == 0, r
    topo.wait_until(lambda: s.daemon.neigh(s.peer_ip) is None, timeout=5, interval=0.05,
                    what="stale entry removed")


def test_neigh_unanswered_address_fails_and_drops_counted(fresh_one_port):
    s = fresh_one_port
    _fresh_cache(s, retrans_ms=100, failed_hold_ms=60000)
    before = s.daemon.stats()
    r, _ = _stack_ping(s, UNUSED_IP, timeout_ms=1500)
    assert r.rc == 1, r
    entry = s.daemon.wait_neigh_state(UNUSED_IP, "failed", timeout=3)
    assert "lladdr" not in entry, entry
    mid = s.daemon.stats()
    assert topo.drops_delta(before, mid) == {"neigh.failed": 1}
    requests = s.daemon.counter("arp.tx_request", mid) - s.daemon.counter("arp.tx_request",
                                                                            before)
    params = s.ctl("neigh", "params", json=True)
    assert requests == params.get("mcast-probes", 3), requests
    # While failed, a new packet is refused at once, without a new round of requests.
    r, _ = _stack_ping(s, UNUSED_IP, timeout_ms=300)
    assert r.rc == 1, r
    after = s.daemon.stats()
    assert topo.drops_delta(mid, after) == {"neigh.failed": 1}
    assert s.daemon.counter("arp.tx_request", after) == s.daemon.counter("arp.tx_request", mid)


def test_neigh_failed_entry_expires_and_host_then_resolves(fresh_one_port):
    s = fresh_one_port
    _fresh_cache(s, retrans_ms=100, failed_hold_ms=1500)
    r, _ = _stack_ping(s, UNUSED_IP, timeout_ms=400)
    assert r.rc == 1, r
    s.daemon.wait_neigh_state(UNUSED_IP, "failed", timeout=3)
    topo.wait_until(lambda: s.daemon.neigh(UNUSED_IP) is None, timeout=5, interval=0.05,
                    what="failed entry removed after failed-hold-ms")
    s.peer.run("ip", "addr", "add", UNUSED_IP + "/24", "dev", s.peer.ifname)
    r, res = _stack_ping(s, UNUSED_IP, timeout_ms=2000)
    assert r.rc == 0 and res["received"] == 1, r
    assert s.daemon.wait_neigh_state(UNUSED_IP, "reachable", timeout=2)["lladdr"] == s.peer_mac


def test_neigh_peer_mac_change_learnt_from_its_next_request(fresh_one_port):
    """Linux flushes its own cache when its MAC changes, so its next ping starts with an
    ARP request carrying the new MAC, which the stack must take over."""
    s = fresh_one_port
    new_mac = "02:42:de:ad:be:01"
    s.peer.set_mac(new_mac)
    s.ping_ok()
    entry = s.daemon.neigh(s.peer_ip)
    assert entry["lladdr"] == new_mac, entry
    r, res = _stack_ping(s, s.peer_ip, count=2)
    assert r.rc == 0 and res["received"] == 2, r


def test_neigh_peer_mac_change_learnt_from_gratuitous_arp(lab):
    """With arp_notify the kernel announces its new MAC; the stack updates its entry without
    any traffic of its own and reaches the peer at the new address."""
    s = topo.SinglePort(lab, peer_sysctls=["net.ipv4.conf.all.arp_notify=1"])
    s.warm_up()
    assert s.daemon.neigh(s.peer_ip)["lladdr"] == s.peer_mac
    new_mac = "02:42:de:ad:be:02"
    s.peer.set_mac(new_mac)
    topo.wait_until(lambda: (s.daemon.neigh(s.peer_ip) or {}).get("lladdr") == new_mac,
                    timeout=3, what="stack learns the announced MAC")
    r, res = _stack_ping(s, s.peer_ip, count=2)
    assert r.rc == 0 and res["received"] == 2, r
