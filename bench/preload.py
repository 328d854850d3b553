#!/usr/bin/env python3
"""Unmodified servers on dpstack (LD_PRELOAD=libdpstack_preload.so) against the same servers
on the Linux kernel, in one invocation, alternating, with medians and the ratio.

    dpstack: client (kernel, namespace bnpc) --veth--> dpstackd port, 1 worker --> server
    kernel:  client (kernel, namespace bnpc) --veth--> namespace bnps (kernel) --> server

The client side is the same kernel in both; only the server's network stack differs.
Workloads: nginx requests/s on keep-alive connections (wrk) and with a connection per
request (CPS), redis-benchmark SET and GET, iperf3 TCP throughput, sockperf UDP ping-pong
latency. Prints a table and writes JSON (default bench/out/preload.json).

Usage: bench/preload.py [--runs N] [--seconds S] [--json PATH]   (as root, after a build)
"""
import argparse
import json
import os
import re
import shutil
import signal
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
CLIENT_NS, SERVER_NS = "bnpc", "bnps"
STACK_IP, KERNEL_IP = "10.89.0.2", "10.90.0.2"
STACK6_IP = "2001:db8:89::2"    # the stack's IPv6 address (bench/loopback.py --families)


def sh(*cmd, check=True, timeout=120, env=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=check,
                          timeout=timeout, env=env)


def in_client(*cmd, timeout=300):
    return sh("ip", "netns", "exec", CLIENT_NS, *cmd, timeout=timeout, check=False).stdout


class Bench:
    def __init__(self, work):
        self.work = work
        self.procs = []
        self.daemon = None

    def topology(self):
        sh("ip", "netns", "add", CLIENT_NS)
        sh("ip", "netns", "add", SERVER_NS)
        # to dpstack: bnpv0 stays in the root namespace for the daemon
        sh("ip", "link", "add", "bnpv0", "type", "veth", "peer", "name", "bnpv0p")
        sh("ip", "link", "set", "bnpv0p", "netns", CLIENT_NS)
        # to the kernel server
        sh("ip", "link", "add", "bnpk0", "type", "veth", "peer", "name", "bnpk0p")
        sh("ip", "link", "set", "bnpk0", "netns", SERVER_NS)
        sh("ip", "link", "set", "bnpk0p", "netns", CLIENT_NS)
        for ns, dev, addr in ((CLIENT_NS, "bnpv0p", "10.89.0.1/24"),
                              (CLIENT_NS, "bnpk0p", "10.90.0.1/24"),
                              (SERVER_NS, "bnpk0", KERNEL_IP + "/24")):
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off")
        for ns in (CLIENT_NS, SERVER_NS):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "set", "bnpv0", "up")
        sh("ethtool", "-K", "bnpv0", "tx", "off")

    def start_daemon(self, workers=1, extra=()):
        """dpstackd on bnpv0 with workers workers (the port's one queue pair: with more
        workers, worker 0 receives and steers, bench/scaling.py); extra: directives
        (idle-sleep-us, mbufs) placed before the ports."""
        conf = os.path.join(self.work, "dpstackd.conf")
        cpus = sorted(os.sched_getaffinity(0))
        # The control thread shares the first CPU; workers take the CPUs in turn.
        lcores = ["0@%d" % cpus[0]] + ["%d@%d" % (w + 1, cpus[w % len(cpus)])
                                       for w in range(workers)]
        with open(conf, "w") as f:
            f.write("eal --lcores=%s\nworkers %d\n" % (",".join(lcores), workers))
            f.write("".join(line + "\n" for line in extra))
            f.write("port add port0 net_af_xdp0,iface=bnpv0\nip addr add %s/24 dev port0\n"
                    "ip addr add %s/64 dev port0\n" % (STACK_IP, STACK6_IP))
        self.env = dict(os.environ, DPSTACK_CTL=os.path.join(self.work, "ctl.sock"),
                        DPSTACK_SOCK=os.path.join(self.work, "app.sock"))
        log = open(os.path.join(self.work, "dpstackd.log"), "w")
        self.daemon = subprocess.Popen([DPSTACKD, "-c", conf], env=self.env, stdout=log,
                                       stderr=subprocess.STDOUT)
        for _ in range(200):
            if sh(CTL, "stats", check=False, env=self.env).returncode == 0:
                break
            time.sleep(0.05)
        else:
            sys.exit("dpstackd did not start; see %s/dpstackd.log" % self.work)
        for _ in range(100):
            if "1 received" in in_client("ping", "-c", "1", "-W", "1", STACK_IP):
                return
        sys.exit("the stack does not answer pings")

    def stop_daemon(self):
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait(20)
            self.daemon = None

    def server(self, side, argv):
        """Starts argv as the server on side ("dpstack" or "kernel"); returns its Popen."""
        if side == "dpstack":
            env = dict(self.env, LD_PRELOAD=PRELOAD)
        else:
            env = dict(os.environ)
            argv = ["ip", "netns", "exec", SERVER_NS] + argv
        p = subprocess.Popen([str(a) for a in argv], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        time.sleep(1.0)
        return p

    def stop(self, p):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.procs.remove(p)

    def measure_served(self, name, unit, higher, runs, argv_of, client_of_side):
        """measure() of a workload whose server runs on each side in turn: argv_of(work,
        side) starts it, client_of_side(side) returns the figure."""
        spent = {}

        def run_side(side):
            srv = self.server(side, argv_of(self.work, side))
            before = self.worker_cycles() if side == "dpstack" else {}
            v = client_of_side(side)
            for kind, cycles in self.worker_cycles().items() if side == "dpstack" else ():
                spent[kind] = spent.get(kind, 0) + cycles - before[kind]
            self.stop(srv)
            return v
        record = measure(name, unit, higher, runs, run_side, ("dpstack", "kernel"))
        total = sum(spent.values())
        if total:
            record["worker_time_percent"] = {k: round(100 * v / total, 1)
                                             for k, v in spent.items()}
            print("    dpstack worker's time: " + ", ".join(
                "%s %.1f%%" % kv for kv in record["worker_time_percent"].items()), flush=True)
        return record

    def worker_cycles(self):
        """The daemon's TSC cycles by kind (stats: ports, apps, ...), summed over workers."""
        st = json.loads(sh(CTL, "-j", "stats", env=self.env).stdout)
        total = {}
        for w in st["workers"]:
            for kind, cycles in w["cycles"].items():
                total[kind] = total.get(kind, 0) + cycles
        return total

    def close(self):
        for p in list(self.procs):
            self.stop(p)
        self.stop_daemon()
        for cmd in (("ip", "link", "del", "bnpv0"), ("ip", "netns", "del", CLIENT_NS),
                    ("ip", "netns", "del", SERVER_NS)):
            sh(*cmd, check=False)


def nginx_argv(work, side, workers=1):
    """nginx serving work/www; with several worker processes each has its own listener
    (reuseport), as a multi-core deployment would."""
    d = os.path.join(work, "nginx-" + side)
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    root = os.path.join(work, "www")
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write("user root root; worker_processes %d; daemon off; pid %s/nginx.pid;\n"
                "error_log %s/logs/error.log; events { worker_connections 8192; }\n"
                "http { access_log off; keepalive_requests 10000000;\n"
                "  server { listen 80 backlog=4096%s; root %s; } }\n" % (
                    workers, d, d, " reuseport" if workers > 1 else "", root))
    return ["nginx", "-c", conf, "-p", d]


def wrk_rps(out):
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    return float(m.group(1)) if m else None


def nginx_rps(ip, secs):
    """Requests/s on 64 keep-alive connections."""
    return wrk_rps(in_client("wrk", "-t2", "-c64", "-d%ds" % secs, "http://%s/index.html" % ip))


def nginx_cps(ip, secs):
    """Requests/s with a connection per request, 32 at a time."""
    return wrk_rps(in_client("wrk", "-t2", "-c32", "-d%ds" % secs, "-H", "Connection: close",
                             "http://%s/index.html" % ip))


def parse_args(name, seconds):
    """--runs, --seconds and --json (default bench/out/NAME.json)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=seconds)
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "out", name + ".json"))
    return ap.parse_args()


def prepare(name, programs):
    """Exits when a program or the build is missing; else a work directory holding the
    site the nginx runs serve."""
    for prog in programs:
        if shutil.which(prog) is None:
            sys.exit("bench/%s.py: %s is not installed (./install-deps.sh)" % (name, prog))
    if not os.access(PRELOAD, os.R_OK):
        sys.exit("bench/%s.py: build first (make build)" % name)
    work = tempfile.mkdtemp(prefix="dps-bench-%s." % name)
    os.makedirs(os.path.join(work, "www"))
    with open(os.path.join(work, "www", "index.html"), "w") as f:
        f.write("x" * 128)
    return work


def workloads(secs):
    """(name, unit, higher_is_better, server argv maker, client runner)."""

    def redis(test):
        def run(ip):
            out = in_client("redis-benchmark", "-h", ip, "-q", "-c", "50", "-n",
                            str(20000 * secs), "-t", test.lower()).replace("\r", "\n")
            m = re.search(r"^%s: ([\d.]+) requests per second" % test, out, re.M)
            return float(m.group(1)) if m else None
        return run

    def iperf3(ip):
        out = in_client("iperf3", "-c", ip, "-t", str(secs), "-J")
        try:
            return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9
        except (ValueError, KeyError):
            return None

    def sockperf(ip):
        out = in_client("sockperf", "ping-pong", "-i", ip, "-p", "11111", "-t", str(secs))
        m = re.search(r"Summary: Latency is ([\d.]+) usec", out)
        return float(m.group(1)) if m else None

    redis_argv = lambda w, s: ["redis-server", "--port", "6379", "--bind", "0.0.0.0",
                               "--protected-mode", "no", "--save", "", "--appendonly", "no"]
    return [
        ("nginx keep-alive", "req/s", True, nginx_argv, lambda ip: nginx_rps(ip, secs)),
        ("nginx conn/request", "conn/s", True, nginx_argv, lambda ip: nginx_cps(ip, secs)),
        ("redis SET", "req/s", True, redis_argv, redis("SET")),
        ("redis GET", "req/s", True, redis_argv, redis("GET")),
        ("iperf3 TCP", "Gbit/s", True, lambda w, s: ["iperf3", "-s", "-4"], iperf3),
        ("sockperf UDP ping-pong", "us", False,
         lambda w, s: ["sockperf", "server", "-p", "11111"], sockperf),
    ]


def measure(name, unit, higher, runs, run_side, sides):
    """Alternates run_side(side) over sides, runs times; prints the medians and their ratio
    (dpstack/kernel for rates, kernel/dpstack for latencies) and returns the JSON record."""
    got = {side: [] for side in sides}
    for _ in range(runs):
        for side in sides:
            v = run_side(side)
            if v is not None:
                got[side].append(v)
    med = {s: statistics.median(v) if v else None for s, v in got.items()}
    ratio = None
    if med["dpstack"] and med["kernel"]:
        ratio = med["dpstack"] / med["kernel"] if higher else med["kernel"] / med["dpstack"]
    fmt = lambda x: "-" if x is None else "%.4g" % x
    print("%-24s %-7s dpstack %10s  kernel %10s  ratio %s" % (
        name, unit, fmt(med["dpstack"]), fmt(med["kernel"]), fmt(ratio)), flush=True)
    return {"workload": name, "unit": unit, "higher_is_better": higher,
            "dpstack": got["dpstack"], "kernel": got["kernel"],
            "median_dpstack": med["dpstack"], "median_kernel": med["kernel"], "ratio": ratio}


def write_results(a, results, **extra):
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(dict(extra, runs=a.runs, seconds=a.seconds, results=results), f, indent=1)
    print("ratio: dpstack/kernel for rates, kernel/dpstack for latency (above 1: dpstack "
          "better); medians of %d runs; JSON in %s" % (a.runs, a.json))


def main():
    a = parse_args("preload", 5)
    work = prepare("preload", ("nginx", "wrk", "redis-server", "redis-benchmark", "iperf3",
                               "sockperf"))
    b = Bench(work)
    results = []
    ips = {"dpstack": STACK_IP, "kernel": KERNEL_IP}
    try:
        b.topology()
        b.start_daemon()
        for name, unit, higher, argv_of, client in workloads(a.seconds):
            results.append(b.measure_served(name, unit, higher, a.runs, argv_of,
                                            lambda side: client(ips[side])))
    finally:
        b.close()
        shutil.rmtree(work, ignore_errors=True)
    write_results(a, results)


if __name__ == "__main__":
    main()
