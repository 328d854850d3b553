"""Clusters that forward and programs that decide (issue 16, docs/CLUSTERS.md): `bounce`
forwards every frame of a cluster's port out of another port, where a kernel namespace
captures them byte for byte; a bounce filter (eBPF, or a shared object) passes some and
drops the others, counted; `hash custom` places frames on consumers by an eBPF program or a
shared object, checked against the same function computed here; bad programs are refused
with the reason; and a cluster on a daemon with two workers still places by the hash."""

import os
import shutil
import struct
import subprocess

import pytest

import topo
from test_cluster import (MARK, PCAPNG, STATE_TIMEOUT, ClusterLab, frame_hash, ip4,
                          make_frame, placed_frames, read_pcapng, stop, varied_frames)

EXAMPLES = os.path.join(topo.BUILD, "examples", "cluster")
HASH_DPORT = os.path.join(EXAMPLES, "hash_dport.bpf.o")
DNS_FILTER = os.path.join(EXAMPLES, "bounce_dns_queries.bpf.o")
HASH_SOURCE = os.path.join(EXAMPLES, "libdps-hash-source.so")
FORWARD = os.path.join(EXAMPLES, "dps-cluster-forward")


def need_bpf():
    if not os.path.exists(HASH_DPORT):
        pytest.skip("no eBPF examples: clang with its BPF target is missing (./install-deps.sh)")


class BounceLab(ClusterLab):
    """ClusterLab's port0 (in shared memory) and peer, and a second port, port1, whose peer
    (self.far) sees what the cluster bounces."""

    def __init__(self, lab):
        self.far = lab.add_peer("10.0.1.1", 24)
        super().__init__(lab, extra=["port add port1 net_af_xdp1,iface=%s" %
                                     self.far.root_ifname], boot_ports="port0,port1")

    def capture_bounced(self, frames, expect):
        """Sends frames into port0; returns the MARKed frames the far peer received (waits
        for expect of them, then a little for any more: there must be none)."""
        got = []
        with topo.PacketSocket(self.far.ns, self.far.ifname) as far:
            self.send(frames)
            while True:
                f = far.recv_until(lambda f: MARK in bytes(f),
                                   timeout=STATE_TIMEOUT if len(got) < expect else 0.5)
                if f is None:
                    break
                got.append(bytes(f))
        return got

    def totals(self, name="t"):
        return self.clusters()[name]


@pytest.fixture(scope="module")
def bl():
    lab = topo.Lab("bounce")
    b = BounceLab(lab)
    try:
        yield b
    finally:
        b.close()
        lab.close()


def udp_frame(src, dst, sport, dport, payload, smac=b"\x02\0\0\0\0\x01", dmac=b"\x02\0\0\0\0\x02"):
    l4 = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    total = 20 + len(l4)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 17, 0, ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack("!H", topo.inet_csum(hdr)) + hdr[12:]
    return dmac + smac + b"\x08\x00" + hdr + l4


def dns(seq, response):
    """A DNS message (RFC 1035 4.1.1) with one question, MARKed in its name."""
    flags = 0x8180 if response else 0x0100
    name = b"".join(bytes([len(p)]) + p for p in [MARK, b"n%d" % seq, b"test"]) + b"\0"
    return struct.pack("!HHHHHH", seq, flags, 1, 0, 0, 0) + name + struct.pack("!HH", 1, 1)


def test_bounce_forwards_every_frame_to_the_far_side(bl):
    bl.fresh("bounce", "port1")
    frames = varied_frames(120)
    got = bl.capture_bounced(frames, len(frames))
    assert sorted(got) == sorted(frames)
    t = bl.totals()
    assert t["bounce"] == "port1" and t["bounced"] == len(frames) and t["filtered"] == 0
    text = bl.ctl("cluster", "show")
    assert "cluster t ports port0 take all bounce port1\n" in text, text
    assert "bounced %d, filtered 0" % len(frames) in text, text


def test_bounce_and_consumers_share_each_frame(bl):
    """Consumers and the bounce port both get every frame (the mbuf's count, no copy)."""
    bl.fresh("consumers", 2, "bounce", "port1")
    baseline = bl.totals()["pool_in_use"]
    consumers = [bl.consumer(PCAPNG, "t@%d" % i) for i in range(2)]
    bl.wait_attached(2)
    frames = varied_frames(60)
    got = bl.capture_bounced(frames, len(frames))
    bl.wait_delivered(len(frames))
    seen = [f for p in consumers for f in read_pcapng(stop(p)) if MARK in f]
    assert sorted(got) == sorted(frames) and sorted(seen) == sorted(frames)
    assert bl.totals()["bounced"] == len(frames)
    # Every frame freed once by both (consumers gone, the port sent them): none kept.
    topo.wait_until(lambda: bl.totals()["pool_in_use"] <= baseline, STATE_TIMEOUT,
                    what="the port's pool back to %d mbufs in use" % baseline)


def test_ebpf_filter_bounces_dns_queries_only(bl):
    need_bpf()
    bl.fresh("bounce", "port1", "filter", DNS_FILTER)
    queries = [udp_frame("10.0.0.7", "10.9.0.1", 4000 + i, 53, dns(i, False)) for i in range(30)]
    answers = [udp_frame("10.9.0.1", "10.0.0.7", 53, 4000 + i, dns(i, True)) for i in range(20)]
    other = [udp_frame("10.0.0.7", "10.9.0.1", 4000 + i, 5353, dns(i, False)) for i in range(10)]
    short = [udp_frame("10.0.0.7", "10.9.0.1", 4000, 53, MARK[:2])]  # no DNS header
    frames = [f for group in zip(queries[:20], answers, queries[20:] + other) for f in group]
    frames += short
    got = bl.capture_bounced(frames, len(queries))
    assert sorted(got) == sorted(queries)
    t = bl.totals()
    assert t["filter"] == DNS_FILTER
    assert t["bounced"] == len(queries) and t["filtered"] == len(frames) - len(queries)


def test_shared_object_filter_bounces_one_network(bl):
    bl.fresh("bounce", "port1", "filter", HASH_SOURCE)  # its dps_cluster_filter: 10.0.0.0/8
    frames = varied_frames(80)  # sources 10.x and 192.168.x, half each
    mine = [f for f in frames if f[26] == 10]
    assert 0 < len(mine) < len(frames)
    got = bl.capture_bounced(frames, len(mine))
    assert sorted(got) == sorted(mine)
    t = bl.totals()
    assert t["bounced"] == len(mine) and t["filtered"] == len(frames) - len(mine)


def test_consumer_forwards_frames_uncopied_out_of_another_port(bl):
    """dps-cluster-forward marks each frame for port1 as it releases it: the daemon sends
    the NIC's buffer itself, and the far peer gets every frame byte for byte."""
    for name in bl.clusters():
        bl.ctl("cluster", "del", name)
    bl.ctl("cluster", "add", "t", "ports", "port0,port1", "consumers", "1")
    baseline = bl.totals()["pool_in_use"]
    frames = varied_frames(100)
    p = bl.consumer(FORWARD, "-n", len(frames), "t@0")
    bl.wait_attached(1)
    got = bl.capture_bounced(frames, len(frames))
    out, err = p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert p.returncode == 0 and out.split() == [b"forwarded", str(len(frames)).encode()], err
    assert sorted(got) == sorted(frames)
    assert bl.totals()["forwarded"] == len(frames)
    # net_af_xdp gives a sent mbuf back when a later transmit reaps its completion ring:
    # one more frame forwarded takes back all of the first round's, and holds only itself.
    p = bl.consumer(FORWARD, "-n", 1, "t@0")
    bl.wait_attached(1)
    assert bl.capture_bounced(frames[:1], 1) == frames[:1]
    p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    topo.wait_until(lambda: bl.totals()["pool_in_use"] <= baseline + 1, STATE_TIMEOUT,
                    what="the ports' pools back to %d mbufs in use" % (baseline + 1))


def test_forward_out_of_a_port_the_cluster_lacks_is_refused(bl):
    for name in bl.clusters():
        bl.ctl("cluster", "del", name)
    bl.ctl("cluster", "add", "t", "ports", "port0,port1", "consumers", "1")
    p = bl.consumer(FORWARD, "-p", 2, "t@0")  # the cluster has ports 0 and 1
    bl.wait_attached(1)
    bl.send(varied_frames(1))
    out, err = p.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert p.returncode == 0 and out.split() == [b"forwarded", b"0"], (out, err)
    topo.wait_until(lambda: bl.totals()["consumers"][0]["outstanding"] == 0, STATE_TIMEOUT,
                    what="the consumer's frames reclaimed")
    assert bl.totals()["forwarded"] == 0


def dport_hash(f):
    """hash_dport.bpf.c, computed here."""
    if f[12:14] != b"\x08\x00" or f[23] not in (6, 17) or \
            int.from_bytes(f[20:22], "big") & 0x3fff:
        return 0
    l4 = 14 + (f[14] & 0xf) * 4
    return int.from_bytes(f[l4 + 2:l4 + 4], "big")


def source_hash(f):
    """hash_source.c's dps_cluster_hash, computed here."""
    return int.from_bytes(f[26:30], "big") if f[12:14] == b"\x08\x00" else 0


@pytest.mark.parametrize("prog, fn", [("ebpf", dport_hash), ("so", source_hash)])
def test_custom_hash_places_frames_as_its_program_says(bl, prog, fn):
    if prog == "ebpf":
        need_bpf()
    n = 3
    bl.fresh("hash", "custom", HASH_DPORT if prog == "ebpf" else HASH_SOURCE, "consumers", n)
    assert bl.totals()["hash"] == "custom"
    got = placed_frames(bl, n, varied_frames(90), fn)
    assert sum(1 for g in got if g) > 1, "the program did not spread the frames"


def compile_bpf(tmp, name, body):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(body)
    out = os.path.join(tmp, name + ".o")
    topo.run(["clang", "-O2", "-target", "bpf", "-c", src, "-o", out])
    return out


def test_bad_programs_are_refused_with_the_reason(bl):
    need_bpf()
    tmp = bl.daemon.dir
    text = os.path.join(tmp, "not-a-program.txt")
    with open(text, "w") as f:
        f.write("hello\n")
    # Reads 8 bytes far past the frame handle it was given: DPDK's verifier refuses it.
    wild = compile_bpf(tmp, "wild", "unsigned long long f(unsigned char *m)"
                       "{ return *(unsigned long long *)(m + 4000); }\n")
    cases = [
        (["hash", "custom", "/nonexistent/h.o", "consumers", "1"],
         "hash custom: cannot open /nonexistent/h.o: No such file or directory"),
        (["hash", "custom", text, "consumers", "1"], "is neither an eBPF object nor a shared"),
        (["hash", "custom", HASH_DPORT + ":nosuch", "consumers", "1"],
         "has no section 'nosuch'"),
        (["hash", "custom", wild, "consumers", "1"], "eBPF section '.text' refused (Invalid argument): evaluate: memory boundary violation"),
        (["hash", "custom", HASH_SOURCE + ":nosuch", "consumers", "1"],
         "has no function 'nosuch'"),
        (["bounce", "port1", "filter", HASH_SOURCE + ":dps_nothing"],
         "filter: %s has no function 'dps_nothing'" % HASH_SOURCE),
        (["hash", "custom"], "hash custom needs a program"),
        (["consumers", "1", "filter", DNS_FILTER], "name a bounce port"),
        (["bounce", "nope"], "bounce: no port named 'nope'"),
        (["bounce", "port1", "mode", "fanout"], "this cluster has none"),
        ([], "consumers or a bounce port"),
    ]
    for name in bl.clusters():
        bl.ctl("cluster", "del", name)
    for words, why in cases:
        r = bl.daemon.ctl_result("cluster", "add", "t", "ports", "port0", *words)
        assert r.rc == 1 and why in r.err, (words, r)
        assert bl.clusters() == {}


def test_two_workers_place_by_the_hash(lab):
    """A daemon with two workers, each polling one of port0's two queues (net_af_packet,
    qpairs=2): each frame still reaches the consumer its hash names, whichever worker
    received it, and every frame is delivered once."""
    peer = lab.add_peer("10.0.0.1", 24, queues=2)
    cpus = sorted(os.sched_getaffinity(0))
    d = lab.start_daemon("\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (cpus[0], cpus[0], cpus[1 % len(cpus)]),
        "workers 2",
        "port add port0 net_af_packet0,iface=%s,qpairs=2" % peer.root_ifname,
        "cluster add t ports port0 hash 5tuple consumers 2 ring 256",
    ]) + "\n")
    c = ClusterLab.__new__(ClusterLab)
    c.peer, c.daemon, c.env, c.procs = peer, d, d.env, []
    try:
        lcores = d.ctl("lcore", "show", json=True)["workers"]
        polling = [w["worker"] for w in lcores for p in w["ports"]
                   if p["port"] == "port0" and p.get("rx_queues")]
        assert polling == [0, 1], lcores
        consumers = [c.consumer(PCAPNG, "t@%d" % i) for i in range(2)]
        c.wait_attached(2)
        frames = varied_frames(120)
        c.send(frames)
        c.wait_delivered(len(frames))
        got = [[f for f in read_pcapng(stop(p)) if MARK in f] for p in consumers]
        assert sorted(f for g in got for f in g) == sorted(frames)
        for i, g in enumerate(got):
            for f in g:
                assert frame_hash("5tuple", f) % 2 == i
    finally:
        c.close()
