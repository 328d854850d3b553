#!/usr/bin/env python3
"""How long dpstack's DHCP client takes to a usable lease against dnsmasq, and to give it
back: the median over runs of

    lease:   `dpstackctl ip addr dhcp dev port0` returning → the address in `ip addr show`
             (DISCOVER, OFFER, REQUEST, ACK, and the address, route and MTU applied on the
             worker), then → the kernel peer's first answered ping to it;
    release: `dpstackctl ip addr dhcp del dev port0` returning → dnsmasq logging the
             DHCPRELEASE.

Each run twice: dnsmasq as it comes, which pings an address before offering it and waits
for no answer (about 3 s of the lease time is that wait), and with --no-ping, which leaves the
client's and the stack's own time.

Topology: dnsmasq in the kernel peer's namespace on a veth whose other end is dpstackd's
net_af_xdp port (tests/integ/topo.py builds and removes it). The times include dpstackctl's
polling (every 2 ms) and, on a loaded machine, whatever the scheduler adds: figures, not
limits; nothing here fails.

Usage: bench/dhcp.py [--runs N]   (as root, after a build; DPSTACK_BUILD picks the build)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integ"))
import topo  # noqa: E402

SERVER = "10.9.0.1"


def one_run(lab, no_ping):
    peer = lab.add_peer(SERVER, 24)
    log_path = os.path.join(lab.tmp, "dnsmasq.log")
    log = open(log_path, "w")
    dnsmasq = subprocess.Popen(topo.dying_with_parent(
        ["ip", "netns", "exec", peer.ns, "dnsmasq", "--no-daemon", "--port=0",
         "--interface=" + peer.ifname, "--bind-interfaces",
         "--dhcp-leasefile=" + os.path.join(lab.tmp, "leases"),
         "--pid-file=" + os.path.join(lab.tmp, "dnsmasq.pid"),
         "--dhcp-range=10.9.0.50,10.9.0.99,255.255.255.0,2m"] + (["--no-ping"] if no_ping else [])),
        stdout=log,
        stderr=subprocess.STDOUT)
    lab.add_cleanup(lambda: (dnsmasq.terminate(), dnsmasq.wait(10), log.close()))
    text = lambda: open(log_path, errors="replace").read()
    topo.wait_until(lambda: "sockets bound" in text(), 10, what="dnsmasq started")
    d = lab.start_daemon("workers 1\nport add port0 net_af_xdp0,iface=%s\n" % peer.root_ifname)

    def addr():
        for p in d.ctl("ip", "addr", "show", json=True):
            for a in p["addr_info"]:
                if a.get("dynamic"):
                    return a["local"]
        return None
    d.ctl("ip", "addr", "dhcp", "dev", "port0")
    t0 = time.monotonic()
    leased = topo.wait_until(addr, 30, interval=0.002, what="lease")
    t_lease = time.monotonic() - t0
    topo.wait_until(lambda: peer.ping(leased, count=1, wait=1).received == 1, 20,
                    interval=0.01, what="ping")
    t_ping = time.monotonic() - t0
    d.ctl("ip", "addr", "dhcp", "del", "dev", "port0")
    t1 = time.monotonic()
    topo.wait_until(lambda: "DHCPRELEASE" in text(), 10, interval=0.002, what="release")
    t_release = time.monotonic() - t1
    return t_lease, t_ping, t_release


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    topo.remove_stale()
    rows = {False: [], True: []}
    for k in range(args.runs):
        for no_ping in (False, True):
            lab = topo.Lab("bench-dhcp")
            try:
                rows[no_ping].append(one_run(lab, no_ping))
            except AssertionError as e:
                print("run %d failed: %s" % (k + 1, e))
            finally:
                lab.close()
    for no_ping, name in ((False, "dnsmasq default"), (True, "dnsmasq --no-ping")):
        r = rows[no_ping]
        if not r:
            print("%s: no run completed" % name)
            continue
        med = [statistics.median(x[i] for x in r) * 1000 for i in range(3)]
        print("dhcp, %s (%d runs, medians): lease %.1f ms, first ping answered %.1f ms, "
              "release seen by the server %.1f ms" % (name, len(r), *med))


if __name__ == "__main__":
    main()
