"""A dpstackd in a network namespace of its own (the "router" namespace), whose ports have
kernel interfaces there: the kernel sync (`sync on`) reads the kernel of dpstackd's own
namespace, so the interfaces stay where the daemon made them (unlike test_exception.py, which
moves its interface away). The root ends of the peers' veths are in that namespace too."""

import json

import topo


class SyncRouter:
    """dpstackd on one port per peer (net_af_xdp), each with a kernel interface (with
    kernel; else named in kifs for `link set PORT kernel IFNAME`), and config lines `extra`
    after the ports. peers: (addr, gw) pairs."""

    def __init__(self, lab, peers, extra=(), workers=1, kernel=True):
        self.lab = lab
        nid = lab._next_id()
        self.ns = "%s%s-%s" % (topo.PREFIX, topo.PID_HEX, nid)
        topo.run(["ip", "netns", "add", self.ns])
        lab.add_cleanup(lambda: topo.run(["ip", "netns", "del", self.ns], check=False))
        self.host("ip", "link", "set", "lo", "up")
        self.peers = [lab.add_peer(addr, 24, gw=gw, root_ns=self.ns) for addr, gw in peers]
        self.kifs = ["%s%s%sk%d" % (topo.PREFIX, topo.PID_HEX, nid, i)
                     for i in range(len(peers))]
        lines = ["workers %d" % workers]
        for i, p in enumerate(self.peers):
            lines.append("port add port%d net_af_xdp%d,iface=%s" % (i, i, p.root_ifname) +
                         (" kernel %s" % self.kifs[i] if kernel else ""))
        self.daemon = lab.start_daemon("\n".join(lines + list(extra)) + "\n", netns=self.ns)

    def host(self, *cmd, check=True, timeout=topo.DEFAULT_TIMEOUT):
        """A command in the router namespace (its kernel: the kernel interfaces)."""
        return topo.run(["ip", "netns", "exec", self.ns] + [str(c) for c in cmd],
                        check=check, timeout=timeout)

    def ctl(self, *args, as_json=False):
        return self.daemon.ctl(*args, json=as_json)

    def routes(self, family=4):
        cmd = ("ip", "route", "show") if family == 4 else ("ip", "-6", "route", "show")
        return self.ctl(*cmd, as_json=True)

    def route(self, dst, family=4):
        """The stack's route to dst (as `ip route show -j` gives it), or None."""
        return next((r for r in self.routes(family) if r["dst"] == dst), None)

    def wait_route(self, dst, pred=lambda r: r is not None, family=4, timeout=20,
                   what=None):
        topo.wait_until(lambda: pred(self.route(dst, family)), timeout=timeout,
                        interval=0.05, what=what or "stack route %s as expected" % dst)
        return self.route(dst, family)

    def addrs(self, port="port0"):
        rows = self.ctl("ip", "addr", "show", "dev", port, as_json=True)
        return rows[0]["addr_info"]

    def addr(self, local, port="port0"):
        return next((a for a in self.addrs(port) if a["local"] == local), None)

    def sync(self):
        return self.ctl("sync", "show", as_json=True)

    def kernel_attr(self, i, attr):
        return self.host("cat", "/sys/class/net/%s/%s" % (self.kifs[i], attr)).stdout.strip()

    def kernel_routes(self):
        return json.loads(self.host("ip", "-j", "route", "show").stdout or "[]")
