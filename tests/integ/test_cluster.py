"""Packet distribution clusters (issue 16, docs/CLUSTERS.md): a kernel peer sends frames into
a port that a cluster owns; consumers (ordinary processes on libdpstack_cluster) read them in
place. Checked: each hash's placement against the documented formula computed here, both
directions of a flow on one consumer, fan-out copies (every group gets every frame), a
stalled consumer's drops counted while a fast one loses nothing, a consumer killed with
SIGKILL reclaimed (the port's pool back where it was), cluster del letting consumers go, bad
commands and attaches refused with the reason, and the pcapng consumer read by tshark."""

import os
import shutil
import signal
import struct
import subprocess

import pytest

import topo

COUNT = os.path.join(topo.BUILD, "examples", "cluster", "dps-cluster-count")
PCAPNG = os.path.join(topo.BUILD, "examples", "cluster", "dps-cluster-pcapng")
MARK = b"dpstack-cluster-test"
STATE_TIMEOUT = 10.0


# -- the hashes, as docs/CLUSTERS.md writes them ----------------------------------------------

def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h


def frame_hash(kind, f):
    def be(b):
        return int.from_bytes(b, "big")
    if kind == "mac":
        fold = lambda m: be(m[0:2]) ^ be(m[2:6])
        return fmix32((fold(f[0:6]) + fold(f[6:12])) & 0xffffffff)
    if be(f[12:14]) != 0x0800:
        return 0
    ip = f[14:]
    a, b, proto = be(ip[12:16]), be(ip[16:20]), ip[9]
    if kind == "proto":
        return proto
    if kind == "ip":
        return fmix32((a + b) & 0xffffffff)
    ihl = (ip[0] & 0xf) * 4
    ports = 0
    if proto in (6, 17, 132) and be(ip[6:8]) & 0x3fff == 0:
        ports = be(ip[ihl:ihl + 2]) + be(ip[ihl + 2:ihl + 4])
    return fmix32(fmix32((a + b) & 0xffffffff) ^ ((ports << 8 | proto) & 0xffffffff))


# -- frames -------------------------------------------------------------------------------------

def ip4(s):
    return bytes(int(x) for x in s.split("."))


def make_frame(src_mac, dst_mac, src, dst, proto=17, sport=1000, dport=2000, seq=0):
    payload = MARK + struct.pack("!I", seq)
    if proto == 17:   # a whole UDP header: the stack parses those it is given
        l4 = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    else:
        l4 = struct.pack("!HH", sport, dport) + b"\0" * (16 if proto == 6 else 4) + payload
    total = 20 + len(l4)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, seq & 0xffff, 0, 64, proto, 0,
                      ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack("!H", topo.inet_csum(hdr)) + hdr[12:]
    return dst_mac + src_mac + b"\x08\x00" + hdr + l4


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def varied_frames(n):
    """n frames of many flows: addresses, ports, protocols and MACs vary; frame 2k+1 is
    frame 2k's flow in the other direction."""
    frames = []
    for i in range(n):
        j = i // 2
        src = "10.%d.%d.%d" % (j % 7, (j * 13) % 250, 1 + j % 200)
        dst = "192.168.%d.%d" % ((j * 7) % 250, 1 + (j * 31) % 250)
        proto = (17, 6, 47)[j % 3]
        sport, dport = 1024 + j * 17 % 60000, 80 + j % 5
        smac = bytes([2, 0, 0, 0, j % 251, 1])
        dmac = bytes([2, 0, 0, 1, (j * 3) % 251, 2])
        if i % 2:
            src, dst, sport, dport, smac, dmac = dst, src, dport, sport, dmac, smac
        frames.append(make_frame(smac, dmac, src, dst, proto, sport, dport, seq=i))
    return frames


def read_pcapng(data):
    """The packets of a pcapng stream (bytes), as a list of frame bytes."""
    out, at = [], 0
    while at + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, at)
        if blen < 12 or at + blen > len(data):
            break
        if btype == 6:
            caplen = struct.unpack_from("<I", data, at + 20)[0]
            out.append(data[at + 28:at + 28 + caplen])
        at += blen
    return out


# -- the daemon and its consumers --------------------------------------------------------------

class ClusterLab:
    def __init__(self, lab, extra=(), boot_ports="port0"):
        """extra: config lines after port0's (more ports); boot_ports: the ports given
        shared memory."""
        self.peer = lab.add_peer("10.0.0.1", 24)
        # The cluster line gives port0 shared packet memory from the start; the tests make
        # their own clusters on it.
        self.daemon = lab.start_daemon("\n".join([
            "workers 1",
            "port add port0 net_af_xdp0,iface=%s" % self.peer.root_ifname,
        ] + list(extra) + [
            "cluster add boot ports %s consumers 1" % boot_ports,
        ]) + "\n")
        # Frames to any MAC reach the port (the mac hash test varies them).
        topo.run(["ip", "link", "set", self.peer.root_ifname, "promisc", "on"])
        self.env = self.daemon.env
        self.procs = []

    def ctl(self, *args, json=False):
        return self.daemon.ctl(*args, json=json)

    def clusters(self):
        return {c["name"]: c for c in self.ctl("cluster", "show", json=True)["clusters"]}

    def fresh(self, *words):
        """Deletes every flow rule and cluster, then adds `cluster add t ...words`."""
        for rule in self.ctl("flow", "show", json=True)["rules"]:
            self.ctl("flow", "del", str(rule["id"]))
        for name in self.clusters():
            self.ctl("cluster", "del", name)
        self.ctl("cluster", "add", "t", "ports", "port0", *[str(w) for w in words])

    def consumer(self, prog, *args, stdout=subprocess.PIPE):
        p = subprocess.Popen(topo.dying_with_parent([prog] + [str(a) for a in args]),
                             stdout=stdout, stderr=subprocess.PIPE, env=self.env)
        self.procs.append(p)
        return p

    def wait_attached(self, n, name="t"):
        topo.wait_until(lambda: sum(c["attached"] for c in self.clusters()[name]["consumers"])
                        == n, STATE_TIMEOUT, what="%d consumers attached" % n)

    def wait_delivered(self, total, name="t"):
        """Until the consumers' delivered + dropped + absent add up to total frames per
        group: the daemon has placed every frame sent."""
        def placed():
            c = self.clusters()[name]
            per_group = {}
            for k in c["consumers"]:
                per_group[k["group"]] = per_group.get(k["group"], 0) + (
                    k["delivered"] + k["dropped"] + k["absent"])
            return all(v >= total for v in per_group.values()) and c
        return topo.wait_until(placed, STATE_TIMEOUT, what="%d frames placed" % total)

    def send(self, frames):
        with topo.PacketSocket(self.peer.ns, self.peer.ifname) as s:
            s.send_many(frames, pace_every=32)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=topo.DEFAULT_TIMEOUT)


@pytest.fixture(scope="module")
def cl():
    lab = topo.Lab("cluster")
    c = ClusterLab(lab)
    try:
        yield c
    finally:
        c.close()
        lab.close()


def stop(p):
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert p.returncode == 0, err
    return out


def placed_frames(lab, n, frames, hash_of):
    """Sends frames to the cluster t of n pcapng consumers; returns what each consumer got,
    having checked that every frame reached one, the consumer hash_of(frame) % n."""
    consumers = [lab.consumer(PCAPNG, "t@%d" % i) for i in range(n)]
    lab.wait_attached(n)
    lab.send(frames)
    lab.wait_delivered(len(frames))
    got = [[f for f in read_pcapng(stop(p)) if MARK in f] for p in consumers]
    assert sum(len(g) for g in got) == len(frames)
    for i, g in enumerate(got):
        for f in g:
            assert hash_of(f) % n == i, "frame %r on consumer %d" % (f[:42].hex(), i)
    return got


@pytest.mark.parametrize("kind", ["ip", "5tuple", "mac", "proto"])
def test_each_hash_places_frames_as_documented(cl, kind):
    n = 3
    cl.fresh("hash", kind, "consumers", n)
    frames = varied_frames(90)
    got = placed_frames(cl, n, frames, lambda f: frame_hash(kind, f))
    if kind in ("ip", "5tuple", "mac"):
        assert sum(1 for g in got if g) > 1, "the hash did not spread the flows"
    if kind in ("ip", "5tuple"):
        where = {f: i for i, g in enumerate(got) for f in g}
        for k in range(0, len(frames), 2):  # frame k+1 is frame k's flow reversed
            assert where[frames[k]] == where[frames[k + 1]]


def test_fanout_gives_every_group_every_frame(cl):
    cl.fresh("hash", "5tuple", "consumers", "2,2")
    consumers = [cl.consumer(COUNT, "t@%d:%d" % (g, i)) for g in range(2) for i in range(2)]
    cl.wait_attached(4)
    frames = varied_frames(100)
    cl.send(frames)
    c = cl.wait_delivered(len(frames))
    for g in range(2):
        mine = [k for k in c["consumers"] if k["group"] == g]
        assert sum(k["delivered"] for k in mine) == len(frames)
        assert sum(k["dropped"] + k["absent"] for k in mine) == 0
    counted = [int(stop(p).split()[1]) for p in consumers]
    assert counted[0] + counted[1] == len(frames)
    assert counted[2] + counted[3] == len(frames)
    assert counted[0] == counted[2] and counted[1] == counted[3]  # one hash, both groups


def test_stalled_consumer_drops_alone_and_is_reclaimed_when_killed(cl):
    ring = 64
    cl.fresh("mode", "fanout", "consumers", 2, "ring", ring)
    baseline = cl.clusters()["t"]["pool_in_use"]
    fast = cl.consumer(COUNT, "t@0")
    slow = cl.consumer(COUNT, "--stall", "t@1")
    cl.wait_attached(2)
    frames = varied_frames(320)
    sent = 0
    for k in range(0, len(frames), 32):
        cl.send(frames[k:k + 32])
        sent += 32
        # Wait for the fast one to be given and to release all of it: it never lags by
        # more than a chunk, far less than its ring, so anything it lost would be a bug.
        topo.wait_until(lambda: (lambda c: c["delivered"] == sent and c["outstanding"] == 0)(
            cl.clusters()["t"]["consumers"][0]), STATE_TIMEOUT, what="fast consumer done")
    c = cl.clusters()["t"]["consumers"]
    assert c[0]["delivered"] == len(frames) and c[0]["dropped"] == 0
    assert c[1]["delivered"] == ring and c[1]["dropped"] == len(frames) - ring
    assert c[1]["outstanding"] == ring
    slow.kill()
    slow.communicate(timeout=topo.DEFAULT_TIMEOUT)
    topo.wait_until(lambda: not cl.clusters()["t"]["consumers"][1]["attached"], STATE_TIMEOUT,
                    what="killed consumer detached")
    c = cl.clusters()["t"]
    assert c["consumers"][1]["outstanding"] == 0
    assert c["pool_in_use"] <= baseline
    assert int(stop(fast).split()[1]) == len(frames)


def test_pcapng_consumer_is_read_by_tshark(cl):
    if shutil.which("tshark") is None:
        pytest.skip("tshark not installed (./install-deps.sh)")
    cl.fresh("consumers", 1)
    pcap = cl.consumer(PCAPNG, "-c", 40, "t@0")
    cl.wait_attached(1)
    cl.send(varied_frames(40))
    data, err = pcap.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert pcap.returncode == 0, err
    r = subprocess.run(["tshark", "-r", "-", "-T", "fields", "-e", "ip.src"], input=data,
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.decode().split()) == 40


def test_cluster_del_lets_consumers_go(cl):
    cl.fresh("consumers", 1)
    p = cl.consumer(COUNT, "t@0")
    cl.wait_attached(1)
    cl.ctl("cluster", "del", "t")
    out, err = p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert p.returncode == 1 and out.startswith(b"frames 0"), (out, err)


def test_bad_attaches_are_refused_with_the_reason(cl):
    cl.fresh("consumers", "2,1")
    for spec, why in [("nosuch@0", "no cluster named 'nosuch'"),
                      ("t@3", "has consumers 0 to 2, not 3"),
                      ("t@1:1", "has no consumer 1:1"),
                      ("t@x", "not NAME@i or NAME@g:i"),
                      ("t", "not NAME@i or NAME@g:i")]:
        r = topo.run([COUNT, spec], env=cl.env, check=False)
        assert r.returncode == 1 and why in r.stderr, (spec, r.stderr)
    first = cl.consumer(COUNT, "t@1:0")
    cl.wait_attached(1)
    r = topo.run([COUNT, "t@2"], env=cl.env, check=False)
    assert r.returncode == 1 and "attached already" in r.stderr, r.stderr
    stop(first)


@pytest.mark.parametrize("words, why", [
    (["t2", "ports", "port0", "consumers", "1"], "port port0 belongs to cluster 't'"),
    (["t", "ports", "port0", "consumers", "1"], "already exists"),
    (["t2", "ports", "nope", "consumers", "1"], "no port named 'nope'"),
    (["t2", "ports", "port0", "consumers", "0"], "from 1 to 64"),
    (["t2", "ports", "port0", "consumers", "2", "hash", "crc"], "hash must be"),
    (["t2", "ports", "port0", "consumers", "2,2", "mode", "balance"], "mode balance has one"),
    (["t2", "ports", "port0", "consumers", "2", "ring", "100"], "power of two"),
    (["t2", "ports", "port0", "consumers", "64", "ring", "65536"], "use a smaller ring"),
    (["t2", "ports", "port0"], "needs ports, and consumers or a bounce port"),
    (["t2", "ports", "port0", "consumers", "1", "take", "some"], "take must be all"),
    (["a@b", "ports", "port0", "consumers", "1"], "no '@'"),
])
def test_bad_cluster_commands_are_refused(cl, words, why):
    if "t" not in cl.clusters():
        cl.fresh("consumers", 1)
    before = cl.clusters()
    r = cl.daemon.ctl_result("cluster", "add", *words)
    assert r.rc == 1 and why in r.err, r
    assert cl.clusters() == before


def flow_hits(cl, rule_id):
    return {r["id"]: r["hits"] for r in cl.ctl("flow", "show", json=True)["rules"]}[rule_id]


def test_flow_rule_sends_its_frames_to_a_cluster_that_takes_flow(cl):
    """take flow: the port stays the stack's (it answers pings on it meanwhile) and the
    cluster's consumer gets exactly the frames a `flow add ... cluster t dev port0` rule
    matches, in place; cluster del waits for the rule to go."""
    cl.fresh("take", "flow", "consumers", 1)
    assert cl.clusters()["t"]["take"] == "flow"
    cl.ctl("ip", "addr", "add", "10.0.0.2/24", "dev", "port0")
    try:
        rule = cl.ctl("flow", "add", "cluster", "t", "dev", "port0", "proto", "udp",
                      "dport", "7000-7001", json=True)["id"]
        p = cl.consumer(PCAPNG, "t@0")
        cl.wait_attached(1)
        peer_mac, port_mac = mac_bytes(cl.peer.mac), mac_bytes(cl.daemon.port_mac())
        wanted = [make_frame(peer_mac, port_mac, "10.0.0.1", "10.0.0.2", 17, 5000 + i,
                             7000 + i % 2, seq=i) for i in range(39)]
        others = [make_frame(peer_mac, port_mac, "10.0.0.1", "10.0.0.2", proto, 5000 + i,
                             dport, seq=100 + i)
                  for i, (proto, dport) in enumerate([(17, 7002), (6, 7000), (17, 6999)] * 13)]
        mixed = [f for pair in zip(wanted, others) for f in pair]
        cl.send(mixed)
        cl.wait_delivered(len(wanted))
        assert cl.peer.ping("10.0.0.2", count=3, interval=0.01, wait=2).received == 3
        got = [f for f in read_pcapng(stop(p)) if MARK in f]
        assert sorted(got) == sorted(wanted)
        assert flow_hits(cl, rule) == len(wanted)
        c = cl.clusters()["t"]
        assert c["unsupported"] == 0 and c["consumers"][0]["delivered"] == len(wanted)
        r = cl.daemon.ctl_result("cluster", "del", "t")
        assert r.rc == 1 and "flow rules %d send to cluster 't'" % rule in r.err, r
        cl.ctl("flow", "del", str(rule))
        cl.ctl("cluster", "del", "t")
    finally:
        cl.ctl("ip", "addr", "del", "10.0.0.2/24", "dev", "port0")


def test_clusters_that_take_flow_share_a_port(cl):
    cl.fresh("take", "flow", "consumers", 1)
    cl.ctl("cluster", "add", "u", "ports", "port0", "take", "flow", "consumers", "1")
    r = cl.daemon.ctl_result("cluster", "add", "v", "ports", "port0", "consumers", "1")
    assert r.rc == 1 and "belongs to cluster 't'" in r.err, r
    cl.ctl("cluster", "del", "u")


def test_cluster_that_takes_the_rest_gets_what_the_stack_does_not_own(cl):
    """take rest: the stack keeps serving port0 (pings, a UDP echo service) and the
    cluster's consumer gets, in place, exactly the frames the stack does not own: UDP for
    no socket (and no port unreachable goes back), a datagram for another host (the stack
    does not forward), a frame for another MAC, an EtherType the stack does not run."""
    cl.fresh("take", "rest", "consumers", 1)
    assert cl.clusters()["t"]["take"] == "rest"
    cl.ctl("ip", "addr", "add", "10.0.0.2/24", "dev", "port0")
    cl.ctl("service", "add", "echo", "udp", "7")
    cl.ctl("ip", "forwarding", "off")   # else datagrams for other hosts are the router's
    try:
        p = cl.consumer(PCAPNG, "t@0")
        cl.wait_attached(1)
        before = cl.daemon.stats()
        peer_mac, port_mac = mac_bytes(cl.peer.mac), mac_bytes(cl.daemon.port_mac())
        other_mac = mac_bytes("02:00:00:00:99:01")
        rest = ([make_frame(peer_mac, port_mac, "10.0.0.1", "10.0.0.2", 17, 5000 + i, 9999,
                            seq=i) for i in range(10)] +
                [make_frame(peer_mac, port_mac, "10.0.0.1", "10.0.0.77", 17, 5000, 7,
                            seq=20 + i) for i in range(10)] +
                [make_frame(peer_mac, other_mac, "10.0.0.1", "10.0.0.2", 17, 5000, 7,
                            seq=40 + i) for i in range(10)] +
                [port_mac + peer_mac + b"\x88\xb5" + MARK + struct.pack("!I", 60 + i) +
                 b"\0" * 30 for i in range(10)])
        owned = [make_frame(peer_mac, port_mac, "10.0.0.1", "10.0.0.2", 17, 5000, 7,
                            seq=80 + i) for i in range(10)]
        cl.send([f for pair in zip(rest, owned) for f in pair] + rest[len(owned):])
        cl.wait_delivered(len(rest))
        assert cl.peer.ping("10.0.0.2", count=3, interval=0.01, wait=2).received == 3
        got = [f for f in read_pcapng(stop(p)) if MARK in f]
        assert sorted(got) == sorted(rest)
        delta = topo.counters_delta(before, cl.daemon.stats())
        assert delta.get("cluster.rest") == len(rest), delta
        assert "icmp.tx_unreach" not in delta, delta
        assert delta.get("udp.in_datagrams") == len(owned), delta   # the echo service
        c = cl.clusters()["t"]
        assert c["unsupported"] == 0 and c["consumers"][0]["delivered"] == len(rest)
    finally:
        cl.ctl("ip", "forwarding", "on")
        cl.ctl("service", "del", "udp", "7")
        cl.ctl("ip", "addr", "del", "10.0.0.2/24", "dev", "port0")
        cl.ctl("cluster", "del", "t")


@pytest.mark.parametrize("first, second, why", [
    (["take", "rest"], ["take", "rest"], "port port0 belongs to cluster 't'"),
    (["take", "rest"], ["take", "all"], "port port0 belongs to cluster 't'"),
    (["take", "all"], ["take", "rest"], "port port0 belongs to cluster 't'"),
    (["take", "rest"], ["take", "flow"], None),
    (["take", "flow"], ["take", "rest"], None),
])
def test_one_cluster_takes_a_ports_rest_and_shares_it_with_take_flow(cl, first, second, why):
    cl.fresh(*(first + ["consumers", 1]))
    r = cl.daemon.ctl_result("cluster", "add", "u", "ports", "port0", *second, "consumers", 1)
    if why is None:
        assert r.rc == 0, r
        cl.ctl("cluster", "del", "u")
    else:
        assert r.rc == 1 and why in r.err, r


def test_take_rest_and_a_kernel_interface_exclude_each_other(lab):
    """What the stack does not own goes to one place: a port with a kernel interface
    refuses a cluster that takes the rest, and the other way round."""
    peer = lab.add_peer("10.0.0.1", 24)
    kif = "dpsr%d" % (os.getpid() % 10000)
    d = lab.start_daemon("\n".join([
        "workers 1",
        "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
        "port add port1 net_af_xdp1,iface=%s kernel %s" % (
            lab.add_peer("10.0.1.1", 24).root_ifname, kif),
        "cluster add boot ports port0,port1 consumers 1"]) + "\n")
    d.ctl("cluster", "del", "boot")
    r = d.ctl_result("cluster", "add", "r", "ports", "port1", "take", "rest", "consumers", 1)
    assert r.rc == 1 and "port port1 gives what the stack does not own to its kernel " \
        "interface %s" % kif in r.err, r
    d.ctl("cluster", "add", "r", "ports", "port0", "take", "rest", "consumers", 1)
    r = d.ctl_result("link", "set", "port0", "kernel", kif + "b")
    assert r.rc == 1 and "cluster 'r' takes what the stack does not own on port0" in r.err, r
    d.ctl("cluster", "del", "r")


@pytest.mark.parametrize("take, words, why", [
    ("all", ["dev", "port0"], "cluster 't' takes its ports whole"),
    ("flow", [], "name one of cluster 't''s ports with dev (port0)"),
    ("flow", ["dev", "port0"], None),
])
def test_flow_rules_to_clusters_are_checked(cl, take, words, why):
    cl.fresh("take", take, "consumers", 1)
    r = cl.daemon.ctl_result("flow", "add", "cluster", "t", *words)
    if why is None:
        assert r.rc == 0, r
        r = cl.daemon.ctl_result("flow", "add", "cluster", "nosuch", *words)
        why = "no cluster named 'nosuch'"
    assert r.rc == 1 and why in r.err, r


def test_port_without_shared_memory_is_refused(lab):
    peer = lab.add_peer("10.0.0.1", 24)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname))
    r = d.ctl_result("cluster", "add", "c", "ports", "port0", "consumers", "1")
    assert r.rc == 1 and "config file" in r.err, r
    assert d.ctl("cluster", "show", json=True) == {"clusters": []}


REFLECT = os.path.join(topo.BUILD, "examples", "cluster", "dps-cluster-reflect")


@pytest.mark.parametrize("n", [40, 700])
def test_consumer_sends_out_of_the_cluster_port(cl, n):
    """Transmit through the cluster: a consumer builds each frame it gets, MACs swapped, in
    a buffer the daemon lends and posts it out of its port; the peer captures every one,
    byte for byte. 700 frames: each of the 256 buffers is lent again once the port sent
    it."""
    cl.fresh("consumers", 1)
    frames = varied_frames(n)
    p = cl.consumer(REFLECT, "-n", len(frames), "t@0")
    cl.wait_attached(1)
    peer_mac = mac_bytes(cl.peer.mac)
    with topo.PacketSocket(cl.peer.ns, cl.peer.ifname) as s:
        # Sent to the peer's own MAC: the kernel takes the reflections as its own frames.
        mine = [f[6:12] + peer_mac + f[12:] for f in frames]
        back = []
        # In chunks that the packet socket's receive buffer holds whole.
        for k in range(0, len(mine), 100):
            s.send_many(mine[k:k + 100], pace_every=32)
            while len(back) < min(k + 100, len(mine)):
                f = s.recv_until(lambda f: MARK in bytes(f) and bytes(f)[:6] == peer_mac,
                                 timeout=STATE_TIMEOUT)
                assert f is not None, "%d of %d frames came back" % (len(back), len(mine))
                back.append(bytes(f))
    out, err = p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert p.returncode == 0 and out.split() == [b"reflected", str(len(frames)).encode()], err
    expected = sorted(f[6:12] + f[0:6] + f[12:] for f in mine)
    assert sorted(back) == expected


def test_daemon_stopping_lets_consumers_go(lab):
    """SIGTERM with consumers attached: the daemon takes their frames back and exits
    cleanly (the lab checks), and each consumer's wait ends with the daemon gone."""
    c = ClusterLab(lab)
    c.fresh("consumers", 2, "ring", 64)
    procs = [c.consumer(COUNT, "t@0"), c.consumer(COUNT, "--stall", "t@1")]
    c.wait_attached(2)
    c.send(varied_frames(200))
    c.wait_delivered(200)
    try:
        c.daemon.stop()
        out, err = procs[0].communicate(timeout=topo.DEFAULT_TIMEOUT)
        assert procs[0].returncode == 1 and out.startswith(b"frames "), (out, err)
        assert procs[1].poll() is None   # a consumer that never waits is not killed
    finally:
        c.close()


def test_check_config_judges_cluster_lines(lab):
    """dpstackd --check-config runs cluster lines as dry runs: a good one passes, a bad one
    is reported at its line with the reason."""
    peer = lab.add_peer("10.0.0.1", 24)
    base = "workers 1\nport add port0 net_af_xdp0,iface=%s\n" % peer.root_ifname
    env = dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "chk.sock"),
               DPSTACK_SOCK=os.path.join(lab.tmp, "chk-app.sock"))
    for text, status, why in [
            (base + "cluster add c ports port0 hash ip consumers 2,2\n", 0, ""),
            (base + "cluster add c ports port0 consumers 2 hash crc\n", 1,
             "check.conf:3: hash must be ip, mac, proto, 5tuple or custom PROG, not 'crc'")]:
        path = os.path.join(lab.tmp, "check.conf")
        with open(path, "w") as f:
            f.write(text)
        r = topo.run([topo.DPSTACKD, "--check-config", path], check=False, env=env)
        assert r.returncode == status and why in r.stderr + r.stdout, r
