"""Starting and stopping dpstackd: one daemon per control socket, SIGINT and SIGTERM stop
it cleanly (exit 0, socket removed) also under load and during a long command, and several
daemons run side by side."""

import os
import subprocess
import time

import pytest

import topo


def test_second_daemon_on_same_socket_refused_first_unharmed(lab):
    a = lab.add_peer("10.0.0.1")
    b = lab.add_peer("10.0.0.1")
    first = lab.start_daemon(topo.one_port_config(a.root_ifname), name="first")
    second = topo.Daemon(os.path.join(lab.tmp, "second"), topo.one_port_config(b.root_ifname))
    second.sock = first.sock  # the same DPSTACK_CTL
    second.start(wait=False)
    lab.add_cleanup(second.stop_quietly)
    rc = second.wait_exit(timeout=30)
    assert rc != 0
    assert "another dpstackd answers on %s" % first.sock in second.log()
    assert os.path.exists(first.sock)
    first.ctl("link", "show")
    r = a.ping("10.0.0.2", count=2, interval=0.05, wait=2)
    assert r.received == 2, r


def test_two_daemons_side_by_side(lab):
    a = lab.add_peer("10.0.0.1")
    b = lab.add_peer("10.0.0.1")
    da = lab.start_daemon(topo.one_port_config(a.root_ifname), name="a")
    db = lab.start_daemon(topo.one_port_config(b.root_ifname, "10.0.0.3/24"), name="b")
    assert a.ping("10.0.0.2", count=3, interval=0.05, wait=2).received == 3
    assert b.ping("10.0.0.3", count=3, interval=0.05, wait=2).received == 3
    assert da.port_mac() != db.port_mac()
    assert da.stop() == 0
    assert b.ping("10.0.0.3", count=2, interval=0.05, wait=2).received == 2


def test_sigint_stops_cleanly(lab):
    veth = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.one_port_config(veth.root_ifname))
    d.proc.send_signal(topo.signal.SIGINT)
    assert d.wait_exit(timeout=15) == 0, d.log()
    assert not os.path.exists(d.sock)
    assert "signal 2, stopping" in d.log()


def test_sigterm_during_ping_flood_exits_cleanly(fresh_one_port):
    s = fresh_one_port
    flood = subprocess.Popen(["ip", "netns", "exec", s.peer.ns, "ping", "-f", "-s", "3000",
                              "-w", "20", s.stack_ip], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        topo.wait_until(lambda: s.daemon.counter("ip.reassembled") > 200, timeout=10,
                        what="flood under way")
        t0 = time.monotonic()
        assert s.daemon.stop() == 0
        assert time.monotonic() - t0 < 5
    finally:
        flood.kill()
        flood.wait(5)


def test_sigterm_during_abandoned_stack_ping_stops_promptly(fresh_one_port):
    s = fresh_one_port
    d = s.daemon
    client = subprocess.Popen([topo.DPSTACKCTL, "-s", d.sock, "ping", s.peer_ip, "count", "20",
                               "interval-ms", "500"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(1)
    client.kill()  # the user gave up on it (Ctrl-C)
    client.wait(5)
    t0 = time.monotonic()
    d.proc.send_signal(topo.signal.SIGTERM)
    rc = d.wait_exit(timeout=30)
    took = time.monotonic() - t0
    assert rc == 0
    assert took < 3, "dpstackd took %.1f s to act on SIGTERM" % took
