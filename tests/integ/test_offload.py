"""Offloads on the port pair that has them: two daemons joined by net_virtio_user (the
sender's port, which offers TCP/UDP checksums and TSO) and net_vhost with tso=1 (which offers
TCP/UDP checksums and takes TSO segments whole). Unmodified nc through the preload shim moves
random bytes both ways and the receiver's SHA-256 must match; the offloads are seen where
they act: TSO segments counted by the sender's stack (tcp.tso_segs) and frames longer than
the MTU counted by the vhost port's own size histogram (xstats), the checksums the sender
left to the port verified in software by the receiving stack (tcp.bad_checksum stays 0
while virtio-user's receive path hands it frames whose sums vhost finished from our
pseudo-header sums), segments merged by GRO on receive, and with `link set PORT offload off`
every frame again within the MTU. The same over IPv6 (issue 17): TSO segments cut by the
port, checksums left to it with the IPv6 pseudo-header, and GRO merging on receive."""

import hashlib
import os
import shutil
import subprocess

import pytest

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")
A_IP, B_IP = "10.77.0.1", "10.77.0.2"
A_IP6, B_IP6 = "fd77::1", "fd77::2"
SIZE = 16 << 20
# virtio's size histogram of what it put on the ring (vhost repeats xstat names, so its own
# histogram is not one JSON object; its basic counters give the mean size instead).
BIG_FRAMES = "tx_q0_size_1519_max_packets"

pytestmark = pytest.mark.skipif(shutil.which("nc") is None, reason="nc is not installed")


def config(port, addr, addr6, main_lcore, prefix):
    # Two DPDK processes share the vhost-user memory: --no-huge keeps it in memfd segments.
    # Each worker on a CPU of its own (the other's main lcore is the control thread).
    return "\n".join(["eal -l 0-1 --main-lcore %d --no-huge -m 512 --file-prefix %s" %
                      (main_lcore, prefix),
                      "workers 1",
                      "port add port0 %s" % port,
                      "ip addr add %s/24 dev port0" % addr,
                      "ip addr add %s/64 dev port0" % addr6]) + "\n"


@pytest.fixture(scope="module")
def pair():
    """(a, b): a on net_virtio_user, b on net_vhost (the vhost-user server, started first)."""
    if not os.access(PRELOAD, os.R_OK):
        pytest.skip("not built: %s" % PRELOAD)
    lab = topo.Lab("offload")
    try:
        sock = os.path.join(lab.tmp, "vhost.sock")
        prefix = "%s%soff" % (topo.PREFIX, topo.PID_HEX)
        b = lab.start_daemon(config("net_vhost0,iface=%s,tso=1" % sock, B_IP, B_IP6, 0,
                                    prefix + "b"), name="b")
        a = lab.start_daemon(config("net_virtio_user0,path=%s,queues=1" % sock, A_IP, A_IP6, 1,
                                    prefix + "a"), name="a")
        topo.wait_until(lambda: a.ctl_result("ping", B_IP, "count", 1).rc == 0, 10,
                        what="a ping through virtio-user/vhost")
        # IPv6 once both addresses passed duplicate address detection.
        topo.wait_until(lambda: a.ctl_result("ping", "-6", B_IP6, "count", 1).rc == 0, 15,
                        what="a ping -6 through virtio-user/vhost")
        yield a, b
        a.stop()  # the virtio-user side first: the vhost server outlives its client
    finally:
        lab.close()


def preloaded(d, argv, **kw):
    env = d.env
    env["LD_PRELOAD"] = PRELOAD
    return subprocess.Popen([str(x) for x in argv], env=env, **kw)


def transfer(sender, receiver, dst_ip, port, data):
    """Sends data with nc over the stacks; returns the SHA-256 and length of what the
    receiver read (into a file: a pipe nobody reads while we send would stall it)."""
    path = os.path.join(receiver.dir, "received")
    with open(path, "wb") as out:
        rx = preloaded(receiver, ["nc", "-l", dst_ip, port], stdout=out)
    try:
        topo.wait_until(lambda: any(s["state"] == "LISTEN" and s["local"].endswith(":%d" % port)
                                    for s in receiver.ctl("sock", "show", json=True)),
                        10, what="nc listening")
        tx = preloaded(sender, ["nc", "-N", dst_ip, port], stdin=subprocess.PIPE)
        tx.communicate(data, timeout=60)
        rx.wait(timeout=60)
    finally:
        if rx.poll() is None:
            rx.kill()
            rx.wait()
    assert tx.returncode == 0
    with open(path, "rb") as f:
        got = f.read()
    os.unlink(path)
    return hashlib.sha256(got).hexdigest(), len(got)


def xstat(d, name):
    return d.ctl("link", "show", json=True)[0]["stats"]["xstats"][name]


def rx_frames(d):
    """The port's own count of frames and bytes received (rte_eth_stats)."""
    st = d.ctl("link", "show", json=True)[0]["stats"]
    return st["rx_packets"], st["rx_bytes"]


def test_link_show_names_the_offloads_each_port_has(pair):
    a, b = pair
    oa = a.ctl("link", "show", json=True)[0]["offloads"]
    ob = b.ctl("link", "show", json=True)[0]["offloads"]
    assert oa["tx_tcp_checksum"] and oa["tx_udp_checksum"] and oa["tso"] and oa["tx_in_use"]
    assert oa["tso_max"] >= 65000
    assert ob["tx_tcp_checksum"] and not ob["tso"]
    assert "tso" in a.ctl("link", "show").split("offload tx:")[1].split("\n")[0]


# Each family in turn: the address to reach and a port of its own.
FAMILIES = [pytest.param(4, id="ipv4"), pytest.param(6, id="ipv6")]


def addr(family, side):
    return {(4, "a"): A_IP, (4, "b"): B_IP, (6, "a"): A_IP6, (6, "b"): B_IP6}[family, side]


@pytest.mark.parametrize("family", FAMILIES)
def test_virtio_user_sends_tso_segments_that_arrive_whole_and_intact(pair, family):
    a, b = pair
    data = os.urandom(SIZE)
    tso0, big0, (pk0, by0) = a.counter("tcp.tso_segs"), xstat(a, BIG_FRAMES), rx_frames(b)
    digest, n = transfer(a, b, addr(family, "b"), 5300 + family, data)
    assert n == SIZE and digest == hashlib.sha256(data).hexdigest()
    assert a.counter("tcp.tso_segs") > tso0
    assert xstat(a, BIG_FRAMES) > big0, "virtio-user sent no frame over 1518 bytes"
    pk, by = rx_frames(b)
    assert (by - by0) / (pk - pk0) > 1514, "the vhost port received frames of the MTU"
    for name in ("tx.no_tso", "tx.prepare", "tcp.bad_checksum"):
        assert a.counter(name) == 0 and b.counter(name) == 0, name


@pytest.mark.parametrize("family", FAMILIES)
def test_vhost_checksum_offload_verified_by_the_receiving_stack(pair, family):
    a, b = pair
    data = os.urandom(SIZE)
    merged0 = a.counter("gro.merged")
    digest, n = transfer(b, a, addr(family, "a"), 5310 + family, data)
    assert n == SIZE and digest == hashlib.sha256(data).hexdigest()
    # virtio-user without GUEST_CSUM: vhost finished b's partial sums (over the IPv4 or
    # IPv6 pseudo-header), a checked each one, and GRO merged what arrived in order.
    assert a.counter("tcp.bad_checksum") == 0
    assert a.counter("gro.merged") > merged0


def test_offload_off_keeps_frames_within_the_mtu(pair):
    a, b = pair
    a.ctl("link", "set", "port0", "offload", "off")
    try:
        assert not a.ctl("link", "show", json=True)[0]["offloads"]["tx_in_use"]
        data = os.urandom(SIZE // 4)
        tso0, big0 = a.counter("tcp.tso_segs"), xstat(a, BIG_FRAMES)
        digest, n = transfer(a, b, B_IP, 5320, data)
        assert n == len(data) and digest == hashlib.sha256(data).hexdigest()
        assert a.counter("tcp.tso_segs") == tso0
        assert xstat(a, BIG_FRAMES) == big0
    finally:
        a.ctl("link", "set", "port0", "offload", "on")


def test_link_set_offload_rejects_other_words(pair):
    a, _ = pair
    r = a.ctl_result("link", "set", "port0", "offload", "maybe")
    assert r.rc == 1
    r = a.ctl_result("link", "set", "port0", "gro", "auto")
    assert r.rc == 1
