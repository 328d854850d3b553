#!/usr/bin/env python3
"""Scaling from one to two cores: nginx on dpstack with 1 and 2 stack workers (and as many
nginx worker processes, `listen reuseport`) against nginx on the Linux kernel with 1 and 2
worker processes, in one invocation, alternating, with medians and ratios.

Topology and clients as bench/preload.py: wrk in namespace bnpc; the stack's port is
net_af_xdp on a veth with one queue pair, so with two workers worker 0 receives every frame
and hands worker 1 the flows it owns (software RSS). Workloads: requests/s on keep-alive
connections (RPS) and with a connection per request (CPS).

On a 2-CPU machine the client, the servers and the daemon share the two CPUs: read the
ratios, not the absolute figures. Usage: bench/scaling.py [--runs N] [--seconds S] [--json P]
"""
import json
import os
import shutil
import statistics

from preload import (Bench, KERNEL_IP, STACK_IP, nginx_argv, nginx_cps, nginx_rps, parse_args,
                     prepare)


def main():
    a = parse_args("scaling", 4)
    work = prepare("scaling", ("nginx", "wrk"))
    b = Bench(work)
    got = {}  # (workload, side, cores) -> [figures]
    try:
        b.topology()
        for cores in (1, 2):
            b.start_daemon(workers=cores)
            for _ in range(a.runs):
                for side, ip in (("dpstack", STACK_IP), ("kernel", KERNEL_IP)):
                    srv = b.server(side, nginx_argv(work, side, workers=cores))
                    for name, run in (("RPS", nginx_rps), ("CPS", nginx_cps)):
                        v = run(ip, a.seconds)
                        if v is not None:
                            got.setdefault((name, side, cores), []).append(v)
                    b.stop(srv)
            b.stop_daemon()
    finally:
        b.close()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    fmt = lambda x: "-" if x is None else "%.4g" % x
    div = lambda x, y: x / y if x and y else None
    results = []
    print("%-4s %5s %12s %12s %8s" % ("", "cores", "dpstack", "kernel", "ratio"))
    for name in ("RPS", "CPS"):
        for cores in (1, 2):
            d, k = med.get((name, "dpstack", cores)), med.get((name, "kernel", cores))
            print("%-4s %5d %12s %12s %8s" % (name, cores, fmt(d), fmt(k), fmt(div(d, k))))
            results.append({"workload": name, "cores": cores, "dpstack": got.get(
                (name, "dpstack", cores), []), "kernel": got.get((name, "kernel", cores), []),
                "median_dpstack": d, "median_kernel": k, "ratio": div(d, k)})
        print("%-4s 2/1 cores: dpstack x%s, kernel x%s" % (
            name, fmt(div(med.get((name, "dpstack", 2)), med.get((name, "dpstack", 1)))),
            fmt(div(med.get((name, "kernel", 2)), med.get((name, "kernel", 1))))))
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"runs": a.runs, "seconds": a.seconds, "results": results}, f, indent=1)
    print("ratio: dpstack/kernel (above 1: dpstack faster); medians of %d runs; JSON in %s" %
          (a.runs, a.json))


if __name__ == "__main__":
    main()
