"""The kernel sync (`sync on`, src/ctl/kernel_sync.c) against the Linux kernel: addresses and
routes set with ip(8) on a port's kernel interface reach the stack, removals too, with the
kernel route's protocol; the lowest metric wins; a user's route is never touched; routes Linux
flushes without a word (the interface going down) leave the stack; `sync off` keeps what was
mirrored and `sync on` reconciles. The kernel interface follows the port: its MTU and its
carrier (`link set PORT down`). Bad commands and config lines get a clear error.

dpstackd runs in a namespace of its own with its kernel interface there (sync_topo.py); the
peer is beyond the port."""

import os

import pytest

import sync_topo
import topo

PEER_IP = "10.3.0.1"
STACK_IP = "10.3.0.2"
OTHER_GW = "10.3.0.3"


@pytest.fixture(scope="module")
def rt():
    lab = topo.Lab("ksync")
    try:
        r = sync_topo.SyncRouter(lab, [(PEER_IP, None)], extra=["sync on"])
        # The address is set on the kernel side only: the sync gives it to the stack.
        r.host("ip", "addr", "add", "%s/24" % STACK_IP, "dev", r.kifs[0])
        topo.wait_until(lambda: r.addr(STACK_IP), timeout=20, what="address mirrored")
        topo.wait_until(lambda: r.peers[0].ping(STACK_IP, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="first ping answered")
        yield r
    finally:
        lab.close()


def test_kernel_address_is_mirrored_and_the_stack_answers_on_it(rt):
    a = rt.addr(STACK_IP)
    assert a["prefixlen"] == 24 and a["origin"] == "kernel-sync"
    assert "inet %s/24 synced" % STACK_IP in rt.ctl("ip", "addr", "show")
    # The stack answers the peer's echo requests itself: none goes to the kernel.
    before = rt.daemon.stats()
    assert rt.peers[0].ping(STACK_IP, count=3, interval=0.2, wait=2).received == 3
    after = rt.daemon.stats()
    assert rt.daemon.counter("kernel.icmp", after) == rt.daemon.counter("kernel.icmp", before)
    s = rt.sync()
    assert s["sync"] is True and s["interfaces"][0]["kernel"] == rt.kifs[0]
    assert s["interfaces"][0]["ifindex"] > 0 and s["counters"]["addrs_added"] >= 1


def test_kernel_route_is_mirrored_with_its_protocol_then_removed(rt):
    peer = rt.peers[0]
    peer.run("ip", "addr", "add", "10.9.0.1/24", "dev", "lo")
    rt.host("ip", "route", "add", "10.9.0.0/24", "via", PEER_IP, "dev", rt.kifs[0],
            "proto", "static")
    r = rt.wait_route("10.9.0.0/24")
    assert r["gateway"] == PEER_IP and r["dev"] == "port0"
    assert r["protocol"] == "static" and r["origin"] == "kernel-sync"
    assert "10.9.0.0/24 via %s dev port0 proto static" % PEER_IP in rt.ctl("ip", "route")
    # The stack routes its own traffic by it.
    assert "1 received" in rt.ctl("ping", "10.9.0.1", "count", "1", "timeout-ms", "3000")
    rt.host("ip", "route", "del", "10.9.0.0/24")
    rt.wait_route("10.9.0.0/24", lambda r: r is None)
    res = rt.daemon.ctl_result("ping", "10.9.0.1", "count", "1", "timeout-ms", "500")
    assert "1 received" not in res.out
    peer.run("ip", "addr", "del", "10.9.0.1/24", "dev", "lo")


def test_lowest_metric_wins_and_the_next_takes_over_when_it_goes(rt):
    k = rt.kifs[0]
    before = rt.sync()["counters"]
    rt.host("ip", "route", "add", "10.10.0.0/24", "via", PEER_IP, "dev", k, "metric", "200")
    rt.wait_route("10.10.0.0/24", lambda r: r is not None and r["gateway"] == PEER_IP)
    rt.host("ip", "route", "add", "10.10.0.0/24", "via", OTHER_GW, "dev", k, "metric", "100",
            "proto", "bird")
    r = rt.wait_route("10.10.0.0/24", lambda r: r is not None and r["gateway"] == OTHER_GW)
    assert r["protocol"] == "bird"
    rt.host("ip", "route", "del", "10.10.0.0/24", "metric", "100")
    r = rt.wait_route("10.10.0.0/24", lambda r: r is not None and r["gateway"] == PEER_IP)
    assert r["protocol"] == "boot"     # ip(8)'s default protocol
    rt.host("ip", "route", "del", "10.10.0.0/24")
    rt.wait_route("10.10.0.0/24", lambda r: r is None)
    after = rt.sync()["counters"]
    assert after["routes_replaced"] - before["routes_replaced"] == 2
    assert after["routes_added"] - before["routes_added"] == 1
    assert after["routes_removed"] - before["routes_removed"] == 1


def test_a_users_route_wins_and_stays_when_the_kernel_drops_its_own(rt):
    rt.ctl("ip", "route", "add", "10.11.0.0/24", "via", PEER_IP)
    conflicts = rt.sync()["counters"]["conflicts"]
    rt.host("ip", "route", "add", "10.11.0.0/24", "via", OTHER_GW, "dev", rt.kifs[0])
    topo.wait_until(lambda: rt.sync()["counters"]["conflicts"] > conflicts, timeout=10,
                    what="conflict counted")
    r = rt.route("10.11.0.0/24")
    assert r["gateway"] == PEER_IP and "origin" not in r and "protocol" not in r
    assert "10.11.0.0/24 via %s dev port0\n" % PEER_IP in rt.ctl("ip", "route")
    rt.host("ip", "route", "del", "10.11.0.0/24")
    # A new route after the deletion proves the sync read past it.
    rt.host("ip", "route", "add", "10.11.1.0/24", "via", PEER_IP, "dev", rt.kifs[0])
    rt.wait_route("10.11.1.0/24")
    assert "origin" not in rt.route("10.11.0.0/24")
    rt.host("ip", "route", "del", "10.11.1.0/24")
    rt.ctl("ip", "route", "del", "10.11.0.0/24")
    # The same route on both sides (the exception path's way) is no conflict.
    conflicts = rt.sync()["counters"]["conflicts"]
    rt.ctl("ip", "route", "add", "10.11.2.0/24", "via", PEER_IP)
    rt.host("ip", "route", "add", "10.11.2.0/24", "via", PEER_IP, "dev", rt.kifs[0])
    rt.host("ip", "route", "add", "10.11.3.0/24", "via", PEER_IP, "dev", rt.kifs[0])
    rt.wait_route("10.11.3.0/24")
    assert rt.sync()["counters"]["conflicts"] == conflicts
    assert "origin" not in rt.route("10.11.2.0/24")
    for prefix in ("10.11.2.0/24", "10.11.3.0/24"):
        rt.host("ip", "route", "del", prefix)
    rt.wait_route("10.11.3.0/24", lambda r: r is None)
    rt.ctl("ip", "route", "del", "10.11.2.0/24")


def test_routes_linux_flushes_silently_when_the_interface_goes_down_leave_the_stack(rt):
    k = rt.kifs[0]
    rt.host("ip", "route", "add", "10.12.0.0/24", "via", PEER_IP, "dev", k)
    rt.wait_route("10.12.0.0/24")
    resyncs = rt.sync()["counters"]["resyncs"]
    rt.host("ip", "link", "set", k, "down")
    try:
        rt.wait_route("10.12.0.0/24", lambda r: r is None)
        assert rt.sync()["counters"]["resyncs"] > resyncs
        # IPv4 addresses stay on a down interface, in the kernel and in the stack.
        assert rt.addr(STACK_IP)["origin"] == "kernel-sync"
    finally:
        rt.host("ip", "link", "set", k, "up")
    topo.wait_until(lambda: rt.peers[0].ping(STACK_IP, count=1, wait=1).received == 1,
                    timeout=20, interval=0.1, what="ping after the interface came back")


def test_ipv6_address_and_route_from_the_kernel(rt):
    k = rt.kifs[0]
    rt.host("ip", "-6", "addr", "add", "2001:db8:3::2/64", "dev", k, "nodad")
    topo.wait_until(lambda: rt.addr("2001:db8:3::2"), timeout=20, what="IPv6 address")
    assert rt.addr("2001:db8:3::2")["origin"] == "kernel-sync"
    rt.host("ip", "-6", "route", "add", "2001:db8:9::/64", "via", "2001:db8:3::1", "dev", k,
            "proto", "dhcp")
    r = rt.wait_route("2001:db8:9::/64", family=6)
    assert r["gateway"] == "2001:db8:3::1" and r["protocol"] == "dhcp"
    assert r["dev"] == "port0"
    rt.host("ip", "-6", "route", "del", "2001:db8:9::/64")
    rt.wait_route("2001:db8:9::/64", lambda r: r is None, family=6)
    rt.host("ip", "-6", "addr", "del", "2001:db8:3::2/64", "dev", k)
    topo.wait_until(lambda: rt.addr("2001:db8:3::2") is None, timeout=20,
                    what="IPv6 address gone")
    # The link-local address stays the stack's own.
    assert any(a["scope"] == "link" and "origin" not in a for a in rt.addrs()
               if a["family"] == "inet6")


def test_sync_off_keeps_what_was_mirrored_and_on_again_reconciles(rt):
    k = rt.kifs[0]
    rt.host("ip", "route", "add", "10.13.0.0/24", "via", PEER_IP, "dev", k)
    rt.wait_route("10.13.0.0/24")
    rt.ctl("sync", "off")
    assert rt.sync()["sync"] is False
    assert "sync off" in rt.ctl("sync")
    rt.host("ip", "route", "del", "10.13.0.0/24")
    rt.host("ip", "route", "add", "10.14.0.0/24", "via", PEER_IP, "dev", k)
    # Nothing listens: a later command is answered with the old table.
    rt.ctl("ip", "route", "show")
    assert rt.route("10.13.0.0/24")["origin"] == "kernel-sync"
    assert rt.route("10.14.0.0/24") is None
    rt.ctl("sync", "on")
    assert rt.route("10.13.0.0/24") is None              # reconciled by `sync on` itself
    assert rt.route("10.14.0.0/24")["origin"] == "kernel-sync"
    rt.host("ip", "route", "del", "10.14.0.0/24")
    rt.wait_route("10.14.0.0/24", lambda r: r is None)


def test_port_mtu_and_state_reach_the_kernel_interface(rt):
    assert rt.kernel_attr(0, "mtu") == "1500" and rt.kernel_attr(0, "carrier") == "1"
    rt.ctl("link", "set", "port0", "mtu", "1400")
    try:
        assert rt.kernel_attr(0, "mtu") == "1400"
    finally:
        rt.ctl("link", "set", "port0", "mtu", "1500")
    assert rt.kernel_attr(0, "mtu") == "1500"
    rt.ctl("link", "set", "port0", "down")
    try:
        assert rt.kernel_attr(0, "carrier") == "0"
        link = rt.host("ip", "-j", "link", "show", rt.kifs[0]).stdout
        assert "NO-CARRIER" in link
    finally:
        rt.ctl("link", "set", "port0", "up")
    assert rt.kernel_attr(0, "carrier") == "1"
    topo.wait_until(lambda: rt.peers[0].ping(STACK_IP, count=1, wait=1).received == 1,
                    timeout=20, interval=0.1, what="ping after the port came back")


def test_bad_sync_commands_are_refused_with_the_grammar(rt):
    for words in (["sync", "maybe"], ["sync", "on", "now"]):
        res = rt.daemon.ctl_result(*words)
        assert res.rc != 0 and "sync [on | off | show]" in res.err + res.out, res


def test_sync_on_without_a_kernel_interface_is_refused_at_its_line(tmp_path):
    path = os.path.join(str(tmp_path), "nokernel.conf")
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\nsync on\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert p.returncode != 0
    assert "%s:3:" % path in p.stderr and "no port has a kernel interface" in p.stderr, p
    # A kernel interface given by a later line is one `sync on` can use.
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\nlink set port0 kernel dpsk0\n"
                "sync on\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert p.returncode == 0, p


def test_kernel_interface_added_at_run_time_carries_the_exception_path_and_sync():
    lab = topo.Lab("ksync_late")
    try:
        r = sync_topo.SyncRouter(lab, [(PEER_IP, None)], kernel=False)
        k = r.kifs[0]
        res = r.daemon.ctl_result("sync", "on")
        assert res.rc != 0 and "no port has a kernel interface" in res.err
        for bad in ("a/b", "x" * 16):
            res = r.daemon.ctl_result("link", "set", "port0", "kernel", bad)
            assert res.rc != 0 and "kernel interface name" in res.err, res
        r.ctl("link", "set", "port0", "kernel", k)
        link = r.ctl("link", "show", "port0", as_json=True)[0]
        assert link["kernel"]["ifname"] == k and link["kernel"]["in_namespace"] is True
        mac = r.host("cat", "/sys/class/net/%s/address" % k).stdout.strip()
        assert mac == r.daemon.port_mac("port0")
        assert r.kernel_attr(0, "mtu") == "1500" and r.kernel_attr(0, "carrier") == "1"
        res = r.daemon.ctl_result("link", "set", "port0", "kernel", k + "x")
        assert res.rc != 0 and "has the kernel interface %s already" % k in res.err, res
        r.ctl("sync", "on")
        r.host("ip", "addr", "add", "%s/24" % STACK_IP, "dev", k)
        topo.wait_until(lambda: r.addr(STACK_IP), timeout=20, what="address mirrored")
        topo.wait_until(lambda: r.peers[0].ping(STACK_IP, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="the stack answers")
        # The kernel's own ping leaves by the port; the reply, not the stack's, comes back.
        p = r.host("ping", "-n", "-c", "2", "-W", "2", PEER_IP, check=False)
        assert p.returncode == 0, p.stdout
        assert r.ctl("link", "show", "port0", as_json=True)[0]["kernel"]["from_kernel"] >= 2
    finally:
        lab.close()
