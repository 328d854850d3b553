#!/usr/bin/env python3
"""Bulk TCP with the port offloads on and off on the same path, alternating run by run,
medians and ratios.

    tso:  iperf3 -c (LD_PRELOAD) on dpstackd A, net_virtio_user --vhost-user--> net_vhost
          (tso=1) of dpstackd B, its built-in iperf3 service. "on": A leaves checksums and
          TSO to its port, B its checksums and runs GRO; "off": `link set port0 offload off`
          and `gro off` on both, everything in software, one MSS per segment.
    gro:  iperf3 -c in namespace boffk (the Linux kernel sending) --veth--> dpstackd C
          (net_af_xdp, the built-in iperf3 service), with `link set port0 gro on|off`.

Beside each median it prints what a byte cost each worker: its busy cycles (the loop
iterations that did work, `stats`) over the bytes moved, summed over the mode's runs, and
after the runs each daemon's TCP segment counters and GRO merges, so that a figure can be
read against what the stacks did. Figures never fail anything: a run that fails is
left out ("-").

Usage: bench/offload.py [--runs N] [--seconds S] [--json PATH]   (as root, after a build)
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
PRELOAD = os.path.join(BUILD, "lib", "preload", "libdpstack_preload.so")
DPSTACKD = os.path.join(BUILD, "dpstackd")
CTL = os.path.join(BUILD, "tools", "dpstackctl", "dpstackctl")

A_IP, B_IP = "10.94.0.1", "10.94.0.2"
KNS, ROOT_DEV, PEER_DEV = "boffk", "boff0", "boff1"
C_IP, K_IP = "10.94.1.2", "10.94.1.1"
COUNTERS = ("tcp.out_segs", "tcp.in_segs", "tcp.tso_segs", "gro.merged", "tcp.retrans_segs")


def sh(*cmd, check=True, **kw):
    return subprocess.run([str(c) for c in cmd], check=check, capture_output=True,
                          text=True, **kw)


class Daemon:
    def __init__(self, work, name, lines):
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.env = dict(os.environ, DPSTACK_CTL=os.path.join(self.dir, "ctl.sock"),
                        DPSTACK_SOCK=os.path.join(self.dir, "app.sock"))
        conf = os.path.join(self.dir, "dpstackd.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen([DPSTACKD, "-c", conf], env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while self.ctl_ok("link", "show") is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("dpstackd %s did not start: see %s" % (name, self.dir))
            time.sleep(0.1)

    def ctl_ok(self, *args):
        p = subprocess.run([CTL] + [str(a) for a in args], env=self.env, capture_output=True,
                           text=True)
        return p.stdout if p.returncode == 0 else None

    def ctl(self, *args):
        out = self.ctl_ok(*args)
        if out is None:
            raise SystemExit("dpstackctl %s failed" % " ".join(map(str, args)))
        return out

    def counters(self):
        s = json.loads(self.ctl("-j", "stats"))
        return {n: s["events"].get(n, 0) for n in COUNTERS}

    def busy_cycles(self):
        return sum(w["busy_cycles"] for w in json.loads(self.ctl("-j", "stats"))["workers"])

    def stop(self):
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()


def iperf3_run(argv, env=None, seconds=3):
    """(Gbit/s, bytes received), or (None, 0)."""
    try:
        p = subprocess.run(argv + ["-t", str(seconds), "-J"], env=env, capture_output=True,
                           text=True, timeout=seconds + 30)
        r = json.loads(p.stdout)["end"]["sum_received"]
        return r["bits_per_second"] / 1e9, r["bytes"]
    except (subprocess.TimeoutExpired, ValueError, KeyError):
        return None, 0


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x):
    return "-" if x is None else "%.2f" % x


def alternate(runs, modes, set_mode, measure, daemons):
    """({mode: [Gbit/s per run]}, {mode: {daemon: busy cycles per byte}}), the modes taking
    turns in each round."""
    out = {m: [] for m in modes}
    cycles = {m: {name: 0 for name in daemons} for m in modes}
    moved = {m: 0 for m in modes}
    for _ in range(runs):
        for m in modes:
            set_mode(m)
            before = {name: d.busy_cycles() for name, d in daemons.items()}
            gbps, nbytes = measure()
            for name, d in daemons.items():
                cycles[m][name] += d.busy_cycles() - before[name]
            out[m].append(gbps)
            moved[m] += nbytes
            time.sleep(0.5)
    per_byte = {m: {name: c / moved[m] if moved[m] else None for name, c in cycles[m].items()}
                for m in modes}
    return out, per_byte


def report(title, res, per_byte, on, off, deltas):
    mon, moff = median(res[on]), median(res[off])
    ratio = "%.2f" % (mon / moff) if mon and moff else "-"
    print("%s: %s %s Gbit/s (runs %s), %s %s Gbit/s (runs %s), ratio %s" %
          (title, on, fmt(mon), " ".join(map(fmt, res[on])), off, fmt(moff),
           " ".join(map(fmt, res[off])), ratio))
    for m in (on, off):
        print("    %s: worker busy cycles per byte: %s" %
              (m, ", ".join("%s %s" % (n, fmt(c)) for n, c in per_byte[m].items())))
    for who, d in deltas.items():
        print("    %s: %s" % (who, ", ".join("%s %d" % kv for kv in d.items())))
    return {"on": res[on], "off": res[off], "median_on": mon, "median_off": moff,
            "cycles_per_byte": per_byte}


def bench_tso(work, runs, seconds):
    sock = os.path.join(work, "vhost.sock")
    b = Daemon(work, "b", ["eal -l 0-1 --main-lcore 0 --no-huge -m 512 --file-prefix boffb",
                           "workers 1", "port add port0 net_vhost0,iface=%s,tso=1" % sock,
                           "ip addr add %s/24 dev port0" % B_IP, "service add iperf3 tcp 5201"])
    a = Daemon(work, "a", ["eal -l 0-1 --main-lcore 1 --no-huge -m 512 --file-prefix boffa",
                           "workers 1", "port add port0 net_virtio_user0,path=%s,queues=1" % sock,
                           "ip addr add %s/24 dev port0" % A_IP])
    try:
        a.ctl("ping", B_IP, "count", 1)
        env = dict(a.env, LD_PRELOAD=PRELOAD)

        def set_mode(m):
            for d in (a, b):
                d.ctl("link", "set", "port0", "offload", m)
                d.ctl("link", "set", "port0", "gro", m)

        before = {"sender A": a.counters(), "receiver B": b.counters()}
        res, per_byte = alternate(runs, ("on", "off"), set_mode,
                                  lambda: iperf3_run(["iperf3", "-c", B_IP], env, seconds),
                                  {"sender A": a, "receiver B": b})
        after = {"sender A": a.counters(), "receiver B": b.counters()}
        deltas = {w: {k: after[w][k] - before[w][k] for k in COUNTERS} for w in before}
        return report("virtio-user -> vhost, stack to stack", res, per_byte, "on", "off",
                      deltas)
    finally:
        a.stop()  # the vhost-user client first: the server outlives it
        b.stop()


@contextlib.contextmanager
def kernel_veth(kns, root_dev, peer_dev):
    """A veth pair, peer_dev in the new namespace kns (the kernel peer, up, no address
    yet), root_dev up in ours for a daemon's port; both gone at the end."""
    sh("ip", "netns", "add", kns)
    try:
        sh("ip", "link", "add", root_dev, "type", "veth", "peer", "name", peer_dev,
           "netns", kns)
        # Kernel frames with partial checksums are dropped by the stack (README).
        sh("ethtool", "-K", root_dev, "tx", "off")
        sh("ip", "netns", "exec", kns, "ethtool", "-K", peer_dev, "tx", "off")
        sh("ip", "link", "set", root_dev, "up")
        sh("ip", "-n", kns, "link", "set", peer_dev, "up")
        yield
    finally:
        sh("ip", "link", "del", root_dev, check=False)
        sh("ip", "netns", "del", kns, check=False)


def bench_main(name, run):
    """The command line every bench here shares: --runs, --seconds, --json; out = run(work
    directory, runs, seconds) is written as JSON."""
    ap = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "out", name + ".json"))
    args = ap.parse_args()
    if os.geteuid() != 0 or shutil.which("iperf3") is None:
        sys.exit("bench/%s.py: needs root and iperf3" % name)
    work = tempfile.mkdtemp(prefix="dpstack-%s-" % name)
    out = run(work, args.runs, args.seconds)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


def bench_gro(work, runs, seconds):
    with kernel_veth(KNS, ROOT_DEV, PEER_DEV):
        sh("ip", "-n", KNS, "addr", "add", "%s/24" % K_IP, "dev", PEER_DEV)
        c = Daemon(work, "c", ["workers 1", "port add port0 net_af_xdp0,iface=%s" % ROOT_DEV,
                               "ip addr add %s/24 dev port0" % C_IP,
                               "service add iperf3 tcp 5201"])
        try:
            sh("ip", "netns", "exec", KNS, "ping", "-c", "1", "-W", "5", C_IP)
            before = {"receiver C": c.counters()}
            res, per_byte = alternate(runs, ("on", "off"),
                                      lambda m: c.ctl("link", "set", "port0", "gro", m),
                                      lambda: iperf3_run(["ip", "netns", "exec", KNS,
                                                          "iperf3", "-c", C_IP], None,
                                                         seconds),
                                      {"receiver C": c})
            after = {"receiver C": c.counters()}
            deltas = {w: {k: after[w][k] - before[w][k] for k in COUNTERS} for w in before}
            return report("kernel -> stack over veth (net_af_xdp), GRO", res, per_byte, "on",
                          "off", deltas)
        finally:
            c.stop()


if __name__ == "__main__":
    bench_main("offload", lambda work, runs, seconds: {"tso": bench_tso(work, runs, seconds),
                                                       "gro": bench_gro(work, runs, seconds)})
