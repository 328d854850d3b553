#!/usr/bin/env python3
"""Bulk TCP over IPv4 and over IPv6 on the same path in the same run, the families taking
turns run by run: medians and the IPv6/IPv4 ratio (issue 17).

    iperf3 -c in namespace binet6k (the Linux kernel) --veth--> dpstackd (net_af_xdp, the
    built-in iperf3 service on ::, which answers both families), to 10.95.0.2 and to
    2001:db8:95::2; both directions (-R: the stack sends).

IPv6 segments carry 20 more header bytes each (MSS 1440 against 1460) and GRO merges only
IPv4 (src/dp/gro.c), so the receive direction is where the families differ most. Beside
each median, the worker's busy cycles per byte moved (`stats`), as bench/offload.py prints
them. Figures never fail anything: a run that fails is left out ("-").

Usage: bench/inet6.py [--runs N] [--seconds S] [--json PATH]   (as root, after a build)
"""
from offload import Daemon, alternate, bench_main, fmt, iperf3_run, kernel_veth, median, sh

KNS, ROOT_DEV, PEER_DEV = "binet6k", "binet60", "binet61"
STACK4, KERNEL4 = "10.95.0.2", "10.95.0.1"
STACK6, KERNEL6 = "2001:db8:95::2", "2001:db8:95::1"


def bench(work, runs, seconds):
    with kernel_veth(KNS, ROOT_DEV, PEER_DEV):
        sh("ip", "-n", KNS, "addr", "add", "%s/24" % KERNEL4, "dev", PEER_DEV)
        sh("ip", "-n", KNS, "-6", "addr", "add", "%s/64" % KERNEL6, "dev", PEER_DEV, "nodad")
        d = Daemon(work, "d", ["workers 1", "port add port0 net_af_xdp0,iface=%s" % ROOT_DEV,
                               "ip addr add %s/24 dev port0" % STACK4,
                               "ip addr add %s/64 dev port0" % STACK6,
                               "service add iperf3 tcp 5201"])
        try:
            sh("ip", "netns", "exec", KNS, "ping", "-c", "1", "-W", "5", STACK4)
            sh("ip", "netns", "exec", KNS, "ping", "-6", "-c", "1", "-W", "5", STACK6)
            out = {}
            for direction, extra in (("kernel -> stack", []), ("stack -> kernel", ["-R"])):
                target = {}

                def measure(extra=extra):
                    return iperf3_run(["ip", "netns", "exec", KNS, "iperf3", "-c",
                                       target["addr"]] + extra, None, seconds)

                res, per_byte = alternate(
                    runs, ("ipv4", "ipv6"),
                    lambda m: target.update(addr=STACK4 if m == "ipv4" else STACK6),
                    measure, {"stack": d})
                m4, m6 = median(res["ipv4"]), median(res["ipv6"])
                ratio = m6 / m4 if m4 and m6 else None
                print("%s, iperf3 over veth (net_af_xdp), %d runs of %d s:" %
                      (direction, runs, seconds))
                for fam in ("ipv4", "ipv6"):
                    cpb = per_byte[fam]["stack"]
                    print("  %-5s median %s Gbit/s  runs %s  worker %s cycles/byte" %
                          (fam, fmt(median(res[fam])), " ".join(fmt(x) for x in res[fam]),
                           "-" if cpb is None else "%.2f" % cpb))
                print("  ipv6/ipv4 %s" % fmt(ratio))
                out[direction] = {"runs": res, "per_byte": per_byte, "ratio": ratio}
            return out
        finally:
            d.stop()


if __name__ == "__main__":
    bench_main("inet6", bench)
