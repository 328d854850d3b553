"""Every port type from a one-line `port add`, with traffic checked end to end:

  net_af_xdp     on a veth with 2 RX queues: refused, naming the ethtool fix; after it, all
                 of 48 kernel connections complete (they hung silently before)
  net_af_packet  with more queue pairs than workers: every queue polled, 48 connections
  net_tap        its kernel end has a MAC of its own (it had the port's, and every frame
                 was dropped as looped back): ping and TCP both ways
  net_memif      two daemons joined by a memif pair: ping and a TCP echo across
  net_virtio_user + net_vhost   the same across a vhost-user socket
  net_ring       two ports of one daemon joined by a ring pair (`peer=`): what one sends,
                 the other receives

The plain one-queue net_af_xdp port is every other test's default (topo.SinglePort).
"""

import hashlib
import os
import subprocess

import pytest

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")

# A client that connects, sends `size` random bytes, reads them back and prints how many
# came back and whether they were the same, with every wait bounded.
ECHO_CLIENT = r"""
import os, socket, sys
host, port, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
good = 0
for i in range(n):
    data = os.urandom(size)
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(data)
    got = b""
    while len(got) < size:
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    s.close()
    good += got == data
print(good)
"""


def echo_from_kernel(peer, ip, n=48, size=512):
    """n connections from the kernel peer to the echo service at ip:7, one after the
    other; returns how many echoed their bytes exactly."""
    out = peer.run("python3", "-c", ECHO_CLIENT, ip, 7, n, size, timeout=120).stdout
    return int(out.strip())


def echo_from_stack(daemon, ip, n=4, size=256 * 1024):
    """The same from an application of daemon (python3 through the preload shim)."""
    env = dict(daemon.env)
    env["LD_PRELOAD"] = PRELOAD
    p = topo.run(["python3", "-c", ECHO_CLIENT, ip, "7", str(n), str(size)], env=env,
                 timeout=120)
    return int(p.stdout.strip())


def stack_pings(daemon, ip, count=3):
    out = daemon.ctl("ping", ip, "count", count, timeout=30)
    return "%d transmitted, %d received" % (count, count) in out


def test_af_xdp_on_two_queue_veth_refused_naming_fix_then_every_connection_completes(lab):
    peer = lab.add_peer(topo.SinglePort.peer_ip, queues=2)
    config = topo.one_port_config(peer.root_ifname, extra=["service add echo tcp 7"])
    d = lab.start_daemon(config, wait=False)
    assert d.wait_exit() == 1
    log = d.log()
    assert "receives on 2 RX queues but this port serves queue 0" in log, log
    fix_peer = "'ethtool -L %s tx 1'" % "PEER"
    fix_root = "'ethtool -L %s rx 1'" % peer.root_ifname
    assert fix_peer in log and fix_root in log, log
    # The fix it names: the other end (here in its namespace) sends on one queue, this end
    # receives on one.
    peer.run("ethtool", "-L", peer.ifname, "tx", "1")
    topo.run(["ethtool", "-L", peer.root_ifname, "rx", "1"])
    d = lab.start_daemon(config, name="fixed")
    assert echo_from_kernel(peer, topo.SinglePort.stack_ip) == 48


def test_af_packet_with_more_queue_pairs_than_workers_polls_every_queue(lab):
    peer = lab.add_peer(topo.SinglePort.peer_ip)
    d = lab.start_daemon("\n".join([
        "workers 1",
        "port add port0 net_af_packet0,iface=%s,qpairs=2" % peer.root_ifname,
        "ip addr add %s/24 dev port0" % topo.SinglePort.stack_ip,
        "service add echo tcp 7"]) + "\n")
    m = d.ctl("lcore", "show", json=True)
    assert m["workers"][0]["ports"][0]["rx_queues"] == [0, 1], m
    assert m["ports"][0]["queues"] == 2, m
    # The kernel's fanout spreads flows over both sockets: with one of them unpolled, its
    # share of the connections hung.
    assert echo_from_kernel(peer, topo.SinglePort.stack_ip) == 48


def test_tap_kernel_end_has_its_own_mac_ping_and_tcp_both_ways(lab):
    ns = lab.add_netns()
    tap = "%s%st" % (topo.PREFIX, topo.PID_HEX)
    d = lab.start_daemon("\n".join([
        "workers 1",
        "port add port0 net_tap0,iface=%s" % tap,
        "ip addr add 10.0.0.2/24 dev port0",
        "service add echo tcp 7"]) + "\n", netns=ns)
    # The tap's kernel end is made in the daemon's namespace: the kernel peer is there.
    peer = topo.Peer(ns, tap, None, "10.0.0.1")
    peer.run("ip", "addr", "add", "10.0.0.1/24", "dev", tap)
    assert peer.mac != d.port_mac("port0")
    topo.wait_until(lambda: peer.ping("10.0.0.2", count=1, wait=1).received == 1,
                    timeout=20, interval=0.1, what="first ping through the tap")
    assert peer.ping("10.0.0.2", count=5, interval=0.05, wait=2).received == 5
    assert echo_from_kernel(peer, "10.0.0.2", n=8, size=64 * 1024) == 8
    assert stack_pings(d, "10.0.0.1")
    assert d.counter("eth.bad_src") == 0


def two_daemons(lab, server_dev, client_dev):
    """Daemon "a" (10.0.0.1, echo on TCP 7) on server_dev, daemon "b" (10.0.0.2) on
    client_dev, joined by those devices; b pings a first."""
    a = lab.start_daemon("\n".join([
        "workers 1", "port add port0 " + server_dev, "ip addr add 10.0.0.1/24 dev port0",
        "service add echo tcp 7"]) + "\n", name="a")
    b = lab.start_daemon("\n".join([
        "workers 1", "port add port0 " + client_dev,
        "ip addr add 10.0.0.2/24 dev port0"]) + "\n", name="b")
    topo.wait_until(lambda: stack_pings(b, "10.0.0.1", count=1), timeout=20, interval=0.2,
                    what="first ping from b to a")
    return a, b


def test_memif_pair_between_two_daemons_ping_and_tcp_echo(lab):
    sock = os.path.join(lab.tmp, "memif.sock")
    common = "socket=%s,id=0,socket-abstract=no" % sock
    a, b = two_daemons(lab, "net_memif0,role=server," + common,
                       "net_memif0,role=client," + common)
    assert stack_pings(b, "10.0.0.1", count=5)
    assert echo_from_stack(b, "10.0.0.1") == 4
    # DPDK 22.11's memif receiver was seen to crash when its peer left first: the server
    # stops first, the client last (as bench/l3fwd.sh does), each exiting cleanly.
    a.stop()
    b.stop()


def test_virtio_user_to_vhost_between_two_daemons_ping_and_tcp_echo(lab):
    sock = os.path.join(lab.tmp, "vhost.sock")
    a, b = two_daemons(lab, "net_vhost0,iface=%s,queues=1" % sock,
                       "net_virtio_user0,path=%s,queues=1" % sock)
    assert stack_pings(b, "10.0.0.1", count=5)
    assert echo_from_stack(b, "10.0.0.1") == 4


def port_frames(d):
    """Each port's device counters: {name: (rx packets, tx packets)}."""
    return {p["ifname"]: (p["stats"]["rx_packets"], p["stats"]["tx_packets"])
            for p in d.ctl("link", "show", json=True)}


def test_ring_pair_from_config_what_each_port_sends_the_other_receives(lab):
    d = lab.start_daemon("\n".join([
        "workers 1",
        "port add r0 net_ring0",
        "port add r1 net_ring1,peer=r0",
        "ip addr add 10.0.0.1/24 dev r0",
        "ip addr add 10.0.1.1/24 dev r1"]) + "\n")
    assert d.port_mac("r0") != d.port_mac("r1")
    for out, via in (("r0", "10.0.0.9"), ("r1", "10.0.1.9")):
        other = "r1" if out == "r0" else "r0"
        before = port_frames(d)
        # Nobody answers: the stack sends ARP requests on `out`, which cross the ring.
        d.ctl_result("ping", via, "count", 2, "timeout-ms", 500, timeout=30)

        def crossed():
            now = port_frames(d)
            sent = now[out][1] - before[out][1]
            return sent >= 2 and now[other][0] - before[other][0] == sent and now
        topo.wait_until(crossed, timeout=10, what="every frame %s sent received by %s" %
                        (out, other))
