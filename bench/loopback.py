#!/usr/bin/env python3
"""Both ends on one stack: client and server under the preload shim on one dpstackd,
talking to the stack's own address, against client and server on the Linux kernel's
loopback in a fresh network namespace. One invocation, alternating, medians and ratios.

    dpstack: client (preload) --> dpstackd, 1 worker, its own address --> server (preload)
    kernel:  client --> lo of namespace bnps (127.0.0.1) --> server

This is the host-stack topology (VPP's use case): no NIC and no veth between the two
programs on either side. The stack still needs a port for its address; it carries nothing
here. Workloads: nginx keep-alive and `Connection: close` (wrk), redis-benchmark GET and
SET, iperf3 one stream, sockperf TCP ping-pong p50 and p99. Prints a table and writes JSON
(default bench/out/loopback.json).

--families 4,6 runs the workloads whose servers listen on both families (redis, iperf3)
over IPv6 too, in the same run: AF_INET6 sockets through the shim to the stack's IPv6
address (2001:db8:89::2) against the kernel's ::1; their rows are named "... IPv6".

Usage: bench/loopback.py [--runs N] [--seconds S] [--json PATH] [--only NAME,...]
                         [--families 4[,6]]   (as root, after a build)
"""
import json
import os
import re
import shutil
import subprocess
import sys

from preload import (Bench, PRELOAD, SERVER_NS, STACK6_IP, STACK_IP, nginx_argv, parse_args,
                     prepare, write_results, wrk_rps)

# Where each side's server is, per address family.
IPS = {4: {"dpstack": STACK_IP, "kernel": "127.0.0.1"},
       6: {"dpstack": STACK6_IP, "kernel": "::1"}}


class Loopback:
    """Runs a client on either side: under the shim on the daemon, or in namespace bnps."""

    def __init__(self, bench):
        self.b = bench

    def client(self, side, argv, timeout=300):
        if side == "dpstack":
            env = dict(self.b.env, LD_PRELOAD=PRELOAD)
        else:
            env = dict(os.environ)
            argv = ["ip", "netns", "exec", SERVER_NS] + argv
        r = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True,
                           timeout=timeout, check=False)
        return r.stdout


def url_host(ip):
    return "[%s]" % ip if ":" in ip else ip


def workloads(lb, secs):
    """(name, unit, higher_is_better, server argv maker, client runner(side, ip), whether
    the server listens on IPv6 too)."""

    def wrk(close):
        def run(side, ip):
            argv = ["wrk", "-t1", "-c50", "-d%ds" % secs]
            if close:
                argv += ["-H", "Connection: close"]
            return wrk_rps(lb.client(side, argv + ["http://%s/index.html" % url_host(ip)]))
        return run

    def redis(test):
        def run(side, ip):
            out = lb.client(side, ["redis-benchmark", "-h", ip, "-q", "-c", "50", "-n",
                                   str(20000 * secs), "-t", test.lower()]).replace("\r", "\n")
            m = re.search(r"^%s: ([\d.]+) requests per second" % test, out, re.M)
            return float(m.group(1)) if m else None
        return run

    def iperf3(side, ip):
        out = lb.client(side, ["iperf3", "-c", ip, "-t", str(secs), "-J"])
        try:
            return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9
        except (ValueError, KeyError):
            return None

    def sockperf(pct):
        def run(side, ip):
            out = lb.client(side, ["sockperf", "ping-pong", "--tcp", "-i", ip, "-p", "11111",
                                   "-t", str(secs)])
            key = "50.000" if pct == 50 else "99.000"
            m = re.search(r"percentile %s =\s+([\d.]+)" % key, out)
            return float(m.group(1)) if m else None
        return run

    # "-::": IPv6 too where there is IPv6 (redis's optional bind).
    redis_argv = lambda w, s: ["redis-server", "--port", "6379", "--bind", "0.0.0.0", "-::",
                               "--protected-mode", "no", "--save", "", "--appendonly", "no"]
    sockperf_argv = lambda w, s: ["sockperf", "server", "--tcp", "-p", "11111"]
    return [
        ("nginx keep-alive", "req/s", True, nginx_argv, wrk(False), False),
        ("nginx conn/request", "conn/s", True, nginx_argv, wrk(True), False),
        ("redis SET", "req/s", True, redis_argv, redis("SET"), True),
        ("redis GET", "req/s", True, redis_argv, redis("GET"), True),
        # iperf3 -s without -4: one dual-stack socket on :: on either side.
        ("iperf3 TCP", "Gbit/s", True, lambda w, s: ["iperf3", "-s"], iperf3, True),
        ("sockperf TCP p50", "us", False, sockperf_argv, sockperf(50), False),
        ("sockperf TCP p99", "us", False, sockperf_argv, sockperf(99), False),
    ]


def main():
    only = None
    if "--only" in sys.argv:
        i = sys.argv.index("--only")
        only = sys.argv[i + 1].split(",")
        del sys.argv[i:i + 2]
    families = [4]
    if "--families" in sys.argv:
        i = sys.argv.index("--families")
        families = sorted({int(x) for x in sys.argv[i + 1].split(",")} & {4, 6})
        del sys.argv[i:i + 2]
    a = parse_args("loopback", 5)
    work = prepare("loopback", ("nginx", "wrk", "redis-server", "redis-benchmark", "iperf3",
                                "sockperf"))
    b = Bench(work)
    lb = Loopback(b)
    results = []
    try:
        b.topology()
        b.start_daemon()
        for name, unit, higher, argv_of, client, v6 in workloads(lb, a.seconds):
            if only and not any(o in name for o in only):
                continue
            # One workload's families side by side, so that their rows are measured
            # under the same conditions.
            for fam in families:
                if fam == 6 and not v6:
                    continue
                ips = IPS[fam]
                results.append(b.measure_served(
                    name + (" IPv6" if fam == 6 else ""), unit, higher, a.runs, argv_of,
                    lambda side, c=client, ips=ips: c(side, ips[side])))
    finally:
        b.close()
        shutil.rmtree(work, ignore_errors=True)
    write_results(a, results, topology="both ends on one stack vs kernel loopback")


if __name__ == "__main__":
    main()
