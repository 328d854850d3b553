"""Dynamic routing through the kernel (issue 14): BIRD 2 runs on the kernel side of dpstackd's
exception interfaces and peers with two neighbours over the stack's ports, A by OSPF and B by
BGP; the routes it installs in the kernel reach the stack's FIB by the kernel sync, and the
stack forwards by them. Withdrawing a route (A's stub network going down, B's announcement
disabled) stops the forwarding; how long that took is printed (a measurement, never judged).

       A (OSPF, stub 10.50.0.0/24)        B (BGP AS 65002, announces 10.60.0.0/24)
            | veth                            | veth
          port0 --- dpstackd (sync on) --- port1
            k0 ---- router namespace ------ k1     BIRD: OSPF on k0, BGP AS 65001 on k1

The router namespace's kernel does not forward (ip_forward 0), so what crosses between A and
B is the stack's forwarding."""

import os
import select
import statistics
import subprocess
import time

import pytest

import sync_topo
import topo

A_IP, A_STACK = "10.21.0.1", "10.21.0.2"
B_IP, B_STACK = "10.22.0.1", "10.22.0.2"
OSPF_NET, OSPF_HOST = "10.50.0.0/24", "10.50.0.1"
BGP_NET, BGP_HOST = "10.60.0.0/24", "10.60.0.1"
PROBE_PORT = 9999
LATE_S = 2.0    # a bound no datagram forwarded before a route's removal arrives after
TIMERS = "hello 1; dead 4; retransmit 2;"
BGP_TIMERS = "connect delay time 1; connect retry time 1; error wait time 1, 5;"

R_CONF = """
log stderr all;
router id %(r_id)s;
protocol device { scan time 1; }
protocol kernel {
  ipv4 { import none;
         export filter { if net ~ [10.50.0.0/16+, 10.60.0.0/16+] then accept; reject; }; };
}
protocol ospf v2 ospf_a {
  ipv4 { import all; export none; };
  area 0 { interface "%(k0)s" { type ptp; %(timers)s }; };
}
protocol bgp bgp_b {
  local %(b_stack)s as 65001; neighbor %(b_ip)s as 65002; %(bgp_timers)s
  ipv4 { import all; export none; };
}
"""

A_CONF = """
log stderr all;
router id %(a_ip)s;
protocol device { scan time 1; }
protocol ospf v2 ospf_r {
  ipv4 { import none; export none; };
  area 0 {
    interface "%(ifname)s" { type ptp; %(timers)s };
    interface "d50" { stub yes; };
  };
}
"""

B_CONF = """
log stderr all;
router id %(b_ip)s;
protocol device { scan time 1; }
protocol direct d60 { ipv4; interface "d60"; }
protocol bgp bgp_r {
  local %(b_ip)s as 65002; neighbor %(b_stack)s as 65001; %(bgp_timers)s
  ipv4 { import none; export where net ~ [10.60.0.0/24]; };
}
"""

# Prints "listening", then the kernel's arrival time (CLOCK_MONOTONIC, s) of each datagram.
PROBE_RECV = r"""
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 35, 1)      # SO_TIMESTAMPNS (realtime)
s.bind(("0.0.0.0", int(sys.argv[1])))
print("listening", flush=True)
while True:
    d, anc, _, _ = s.recvmsg(64, 64)
    t = time.time()
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == 35 and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            t = sec + nsec / 1e9
    print("%.6f" % (t - time.time() + time.monotonic()), flush=True)
"""

# A datagram every 5 ms to argv[1] from argv[2], until killed.
PROBE_SEND = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 0))
print("listening", flush=True)
while True:
    try:
        s.sendto(b"probe", (sys.argv[1], int(sys.argv[3])))
    except OSError:
        pass
    time.sleep(0.005)
"""


class RoutingLab:
    def __init__(self, lab):
        self.lab = lab
        self.r = sync_topo.SyncRouter(lab, [(A_IP, A_STACK), (B_IP, B_STACK)],
                                      extra=["sync on"])
        self.a, self.b = self.r.peers
        r = self.r
        r.host("sysctl", "-qw", "net.ipv4.ip_forward=0")
        r.host("ip", "addr", "add", "%s/24" % A_STACK, "dev", r.kifs[0])
        r.host("ip", "addr", "add", "%s/24" % B_STACK, "dev", r.kifs[1])
        # The announced networks sit on a veth pair inside each peer (this machine's kernel
        # has no dummy interfaces).
        for peer, name, ip in ((self.a, "d50", OSPF_HOST), (self.b, "d60", BGP_HOST)):
            peer.run("ip", "link", "add", name, "type", "veth", "peer", "name", name + "p")
            peer.run("ip", "addr", "add", "%s/24" % ip, "dev", name)
            peer.run("ip", "link", "set", name + "p", "up")
            peer.run("ip", "link", "set", name, "up")
        params = {"r_id": A_STACK, "k0": r.kifs[0], "a_ip": A_IP, "b_ip": B_IP,
                  "b_stack": B_STACK, "ifname": self.a.ifname, "timers": TIMERS,
                  "bgp_timers": BGP_TIMERS}
        self.birds = {}
        for name, ns, conf in (("r", r.ns, R_CONF), ("a", self.a.ns, A_CONF),
                               ("b", self.b.ns, B_CONF)):
            self.birds[name] = self.start_bird(name, ns, conf % params)

    def start_bird(self, name, ns, conf):
        base = os.path.join(self.lab.tmp, "bird-%s" % name)
        with open(base + ".conf", "w") as f:
            f.write(conf)
        log = open(base + ".log", "w")
        p = subprocess.Popen(topo.dying_with_parent(
            ["ip", "netns", "exec", ns, "bird", "-f", "-c", base + ".conf", "-s",
             base + ".ctl", "-P", base + ".pid"]), stdout=log, stderr=subprocess.STDOUT)

        def stop():
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            log.close()
        self.lab.add_cleanup(stop)
        return {"proc": p, "sock": base + ".ctl", "ns": ns, "log": base + ".log"}

    def birdc(self, name, *cmd):
        b = self.birds[name]
        p = topo.run(["ip", "netns", "exec", b["ns"], "birdc", "-s", b["sock"]] + list(cmd),
                     check=False)
        assert p.returncode == 0, "birdc %s: %s%s\n%s" % (" ".join(cmd), p.stdout, p.stderr,
                                                           self.bird_log(name))
        return p.stdout

    def bird_log(self, name):
        with open(self.birds[name]["log"], errors="replace") as f:
            return f.read()[-3000:]

    def spawn(self, ns, script, *args):
        p = subprocess.Popen(topo.dying_with_parent(
            ["ip", "netns", "exec", ns, "/usr/bin/python3", "-u", "-c", script] +
            [str(a) for a in args]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        self.lab.add_cleanup(lambda: (p.kill(), p.wait()))
        assert p.stdout.readline().strip() == "listening"
        return p

    def wait_learnt(self, prefix, proto_name, gateway, what):
        try:
            return self.r.wait_route(prefix, lambda rt: rt is not None and
                                     rt["gateway"] == gateway, timeout=90, what=what)
        except AssertionError:
            raise AssertionError("%s\nR: %s\nbird r: %s\nbird peer: %s" % (
                what, self.birdc("r", "show", "protocols", "all", proto_name),
                self.bird_log("r"), self.bird_log("a" if proto_name == "ospf_a" else "b")))


@pytest.fixture(scope="module")
def net():
    lab = topo.Lab("routing")
    try:
        n = RoutingLab(lab)
        n.wait_learnt(OSPF_NET, "ospf_a", A_IP, "OSPF route in the stack")
        n.wait_learnt(BGP_NET, "bgp_b", B_IP, "BGP route in the stack")
        yield n
    finally:
        lab.close()


def measure_withdrawal(net, sender, src, dst, receiver_ns, prefix, withdraw):
    """Streams datagrams sender -> dst through the stack, withdraws the route, and returns
    (kernel route gone, stack route gone, last datagram forwarded), each in seconds after
    the withdrawal, and the datagrams received before it."""
    recv = net.spawn(receiver_ns, PROBE_RECV, PROBE_PORT)
    send = net.spawn(sender.ns, PROBE_SEND, dst, src, PROBE_PORT)
    arrivals = []
    # Forwarding works before the withdrawal.
    assert select.select([recv.stdout], [], [], 20)[0], "no datagram crossed the stack"
    line = recv.stdout.readline()
    arrivals.append(float(line))
    t0 = time.monotonic()
    withdraw()
    t_kernel = topo.wait_until(
        lambda: not any(r["dst"] == prefix for r in net.r.kernel_routes()) and
        time.monotonic(), timeout=60, interval=0.01, what="kernel route %s gone" % prefix)
    t_stack = topo.wait_until(lambda: net.r.route(prefix) is None and time.monotonic(),
                              timeout=30, interval=0.01,
                              what="stack route %s gone" % prefix)
    time.sleep(LATE_S + 1.0)
    send.kill()
    send.wait()
    recv.kill()
    out, _ = recv.communicate(timeout=10)
    arrivals += [float(x) for x in out.split()]
    before = sum(1 for t in arrivals if t < t0)
    last = max(arrivals)
    # Once the stack's route is gone nothing more crosses: a datagram forwarded just before
    # the removal leaves within the worker's loop, far inside LATE_S even on a loaded host.
    assert all(t < t_stack + LATE_S for t in arrivals), (t_stack, last)
    return t_kernel - t0, t_stack - t0, max(0.0, last - t0), before


def test_ospf_route_steers_forwarding_and_its_withdrawal_stops_it(net):
    r = net.r.route(OSPF_NET)
    assert r["dev"] == "port0" and r["protocol"] == "bird" and r["origin"] == "kernel-sync"
    assert "%s via %s dev port0 proto bird" % (OSPF_NET, A_IP) in net.r.ctl("ip", "route")
    fwd = net.r.daemon.counter("ip.forwarded")
    assert net.b.ping(OSPF_HOST, count=3, interval=0.2, wait=2).received == 3
    assert net.r.daemon.counter("ip.forwarded") - fwd >= 6    # both ways, by the stack
    k, s, last, before = measure_withdrawal(
        net, net.b, B_IP, OSPF_HOST, net.a.ns, OSPF_NET,
        lambda: net.a.run("ip", "link", "set", "d50", "down"))
    print("\nOSPF withdrawal: kernel route gone after %.0f ms, stack route after %.0f ms "
          "(sync: %.0f ms), last datagram forwarded %.0f ms after (%d before)" %
          (k * 1e3, s * 1e3, (s - k) * 1e3, last * 1e3, before))
    assert net.b.ping(OSPF_HOST, count=1, wait=1).received == 0
    net.a.run("ip", "link", "set", "d50", "up")
    net.wait_learnt(OSPF_NET, "ospf_a", A_IP, "OSPF route back")
    topo.wait_until(lambda: net.b.ping(OSPF_HOST, count=1, wait=1).received == 1,
                    timeout=20, what="forwarding by the OSPF route again")


def test_bgp_route_steers_forwarding_and_its_withdrawal_stops_it(net):
    r = net.r.route(BGP_NET)
    assert r["dev"] == "port1" and r["protocol"] == "bird" and r["origin"] == "kernel-sync"
    assert net.a.ping(BGP_HOST, count=3, interval=0.2, wait=2).received == 3
    times = []
    for _ in range(3):
        k, s, last, before = measure_withdrawal(
            net, net.a, A_IP, BGP_HOST, net.b.ns, BGP_NET,
            lambda: net.birdc("b", "disable", "d60"))
        times.append((k, s, last))
        assert net.a.ping(BGP_HOST, count=1, wait=1).received == 0
        net.birdc("b", "enable", "d60")
        net.wait_learnt(BGP_NET, "bgp_b", B_IP, "BGP route back")
        topo.wait_until(lambda: net.a.ping(BGP_HOST, count=1, wait=1).received == 1,
                        timeout=20, what="forwarding by the BGP route again")
    med = [statistics.median(t[i] for t in times) * 1e3 for i in range(3)]
    print("\nBGP withdrawal, median of %d: kernel route gone after %.0f ms, stack route "
          "after %.0f ms (sync: %.0f ms), last datagram forwarded %.0f ms after" %
          (len(times), med[0], med[1], med[1] - med[0], med[2]))
    s = net.r.sync()["counters"]
    assert s["routes_added"] >= 2 and s["routes_removed"] >= 1 and s["refused"] == 0
