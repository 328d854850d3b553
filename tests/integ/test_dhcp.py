"""The DHCP client (`ip addr dhcp dev PORT`, RFC 2131) against dnsmasq in the kernel peer's
namespace: the lease applied (address, default route, MTU) and usable by a kernel client,
renewal at T1 (dnsmasq sends the T1/T2 options it is given, so they can be seconds while the
lease is its 2-minute minimum), the server gone (rebinding, then expiry removes the address
and route; busybox's udhcpd there, whose leases can be seconds long), a NAK from an authoritative server that no longer has the lease, release on
`ip addr dhcp del`, on `ip addr del` and at shutdown, and hostile replies counted as drops.
"""

import os
import re

import pytest

import topo

SERVER = "10.9.0.1"
POOL = ("10.9.0.50", "10.9.0.59")
OTHER_POOL = ("10.9.0.100", "10.9.0.109")


class Dnsmasq:
    """dnsmasq as the DHCP server of the peer's namespace, its log in the lab's directory."""

    def __init__(self, lab, peer, pool=POOL, extra=()):
        self.lab, self.peer = lab, peer
        self.dir = os.path.join(lab.tmp, "dnsmasq")
        os.makedirs(self.dir, exist_ok=True)
        self.log_path = os.path.join(self.dir, "log")
        self.proc = None
        self.start(pool, extra)

    def start(self, pool, extra=()):
        argv = ["dnsmasq", "--no-daemon", "--port=0",
                "--log-dhcp", "--interface=" + self.peer.ifname, "--bind-interfaces",
                "--dhcp-leasefile=" + os.path.join(self.dir, "leases"),
                "--pid-file=" + os.path.join(self.dir, "pid"),
                "--dhcp-range=%s,%s,255.255.255.0,2m" % pool,
                "--dhcp-option=option:router," + SERVER,
                "--dhcp-option=option:mtu,1400"] + list(extra)
        self.proc = topo.NsProcess(self.lab, self.peer.ns, argv, self.log_path)
        topo.wait_until(lambda: "DHCP, sockets bound" in self.text(), 10,
                        what="dnsmasq started")

    def stop(self):
        if self.proc is not None:
            self.proc.stop()
        self.proc = None

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def __repr__(self):
        return "dnsmasq log:\n" + self.text()[-3000:]

    def count(self, what):
        return len(re.findall(r"\b%s\(" % what, self.text()))


class Udhcpd:
    """busybox's udhcpd as the server where a lease must run out within the test: dnsmasq
    will not give one under two minutes, udhcpd gives what its config says (min_lease)."""

    def __init__(self, lab, peer, lease, t1, t2):
        self.lab, self.peer = lab, peer
        self.dir = os.path.join(lab.tmp, "udhcpd")
        os.makedirs(self.dir, exist_ok=True)
        self.conf = os.path.join(self.dir, "udhcpd.conf")
        leases = os.path.join(self.dir, "leases")
        with open(self.conf, "w") as f:
            f.write("start %s\nend %s\ninterface %s\nlease_file %s\nmin_lease %d\n"
                    "option subnet 255.255.255.0\noption router %s\noption lease %d\n"
                    "option 0x3a %08x\noption 0x3b %08x\n" %
                    (POOL[0], POOL[1], peer.ifname, leases, lease, SERVER, lease, t1, t2))
        open(leases, "w").close()
        self.log_path = os.path.join(self.dir, "log")
        self.proc = None
        self.start()

    def start(self):
        self.proc = topo.NsProcess(self.lab, self.peer.ns, ["busybox", "udhcpd", "-f",
                                                            self.conf], self.log_path)
        topo.wait_until(lambda: "started" in self.proc.text(), 10, what="udhcpd started")

    def stop(self):
        self.proc.stop()


def start(lab, pool=POOL, extra=(), server=True):
    """server: True for dnsmasq, a class (Udhcpd) called with (lab, peer), or False."""
    peer = lab.add_peer(SERVER, 24)
    if server is True:
        dnsmasq = Dnsmasq(lab, peer, pool, extra)
    else:
        dnsmasq = server(lab, peer) if server else None
    d = lab.start_daemon("workers 1\nport add port0 net_af_xdp0,iface=%s\n"
                         "ip addr dhcp dev port0\n" % peer.root_ifname)
    return peer, dnsmasq, d


def port0(d):
    return [p for p in d.ctl("ip", "addr", "show", json=True) if p["ifname"] == "port0"][0]


def leased(d):
    """The dynamic address of port0 and its port object, or None."""
    p = port0(d)
    for a in p["addr_info"]:
        if a.get("family") == "inet" and a.get("dynamic"):
            return a["local"], p
    return None


def wait_lease(d, timeout=30):
    return topo.wait_until(lambda: leased(d), timeout, interval=0.2, what="a DHCP lease")


def in_pool(addr, pool):
    last = lambda a: int(a.rsplit(".", 1)[1])
    return last(pool[0]) <= last(addr) <= last(pool[1])


def default_route(d):
    return [r for r in d.ctl("ip", "route", "show", json=True) if r["dst"] == "default"]


def counters(d):
    return port0(d)["dhcp"]["counters"]


def test_dhcp_lease_applied_and_usable_by_kernel_client(lab):
    peer, server, d = start(lab)
    addr, p = wait_lease(d)
    assert in_pool(addr, POOL)
    lease = p["dhcp"]
    assert lease["state"] == "bound"
    assert lease["server"] == SERVER and lease["router"] == SERVER and lease["mtu"] == 1400
    assert lease["lease_time"] == 120
    assert 0 < p["addr_info"][0]["valid_life_time"] <= 120
    assert p["mtu"] == 1400
    (route,) = default_route(d)
    assert route["gateway"] == SERVER and route["dev"] == "port0"
    text = d.ctl("ip", "addr", "show")
    assert re.search(r"inet %s/24 dynamic\n +valid_lft \d+sec preferred_lft \d+sec" % addr,
                     text), text
    assert "dhcp bound server %s router %s mtu 1400" % (SERVER, SERVER) in text
    assert addr in open(os.path.join(server.dir, "leases")).read()
    # A kernel client reaches a server on the stack at the leased address.
    d.ctl("service", "add", "http", "tcp", "8080")
    out = peer.run("curl", "-sS", "--max-time", "10", "-o", "/dev/null", "-w",
                   "%{http_code}", "http://%s:8080/" % addr).stdout
    assert out == "200"
    assert peer.ping(addr, count=3, interval=0.1, wait=2).received == 3


def test_dhcp_renews_at_t1_and_keeps_address(lab):
    peer, server, d = start(lab, extra=("--dhcp-option=58,2", "--dhcp-option=59,4"))
    addr, _ = wait_lease(d)
    # Each renewal is a unicast DHCPREQUEST the server ACKs (and logs).
    topo.wait_until(lambda: counters(d)["rx_ack"] >= 3, 30, interval=0.2,
                    what="two renewals acknowledged")
    assert server.count("DHCPACK") >= 3
    assert counters(d)["tx_discover"] >= 1
    assert leased(d)[0] == addr
    assert counters(d)["rx_nak"] == 0 and counters(d)["expired"] == 0
    assert peer.ping(addr, count=1, wait=2).received == 1


@pytest.mark.slow
def test_dhcp_server_gone_rebinds_then_expiry_removes_address_and_route(lab):
    """A 20-second lease with T1 2 s and T2 4 s (udhcpd: dnsmasq's shortest is 2 minutes)."""
    peer, server, d = start(lab, server=lambda lab, peer: Udhcpd(lab, peer, 20, 2, 4))
    addr, _ = wait_lease(d)
    server.stop()
    topo.wait_until(lambda: port0(d)["dhcp"]["state"] == "rebinding", 30, interval=0.2,
                    what="rebinding after T2")
    assert leased(d)[0] == addr and default_route(d)
    topo.wait_until(lambda: counters(d)["expired"] == 1, 40, interval=0.5,
                    what="the lease expired")
    p = port0(d)
    assert not [a for a in p["addr_info"] if a.get("family") == "inet"]
    assert default_route(d) == []
    assert p["mtu"] == 1500
    assert p["dhcp"]["state"] == "selecting"
    # The server comes back: a new lease.
    server.start()
    assert in_pool(wait_lease(d, timeout=60)[0], POOL)


def test_dhcp_nak_from_authoritative_server_drops_lease_and_starts_over(lab):
    peer, server, d = start(lab, extra=("--dhcp-option=58,2", "--dhcp-option=59,4"))
    addr, _ = wait_lease(d)
    # The server is replaced by one that manages another range: at the renewal, it NAKs.
    server.stop()
    server.start(OTHER_POOL, ("--dhcp-authoritative", "--dhcp-option=58,30",
                              "--dhcp-option=59,60"))
    try:
        new = topo.wait_until(lambda: (leased(d) or (None,))[0] not in (None, addr) and
                              leased(d)[0], 60, interval=0.2, what="a lease from the new range")
    except AssertionError as e:
        raise AssertionError("%s\n%r\n%s" % (e, server, d.ctl("ip", "addr", "show"))) from None
    assert in_pool(new, OTHER_POOL)
    assert counters(d)["rx_nak"] >= 1
    assert server.count("DHCPNAK") >= 1
    addrs = [a["local"] for a in port0(d)["addr_info"] if a.get("family") == "inet"]
    assert addrs == [new]


def test_dhcp_release_on_del_then_on_addr_del_then_at_shutdown(lab):
    peer, server, d = start(lab)
    addr, _ = wait_lease(d)
    d.ctl("ip", "addr", "dhcp", "del", "dev", "port0")
    topo.wait_until(lambda: server.count("DHCPRELEASE") == 1, 10, what="DHCPRELEASE")
    p = port0(d)
    assert "dhcp" not in p
    assert not [a for a in p["addr_info"] if a.get("family") == "inet"]
    assert default_route(d) == [] and p["mtu"] == 1500
    r = d.ctl_result("ip", "addr", "dhcp", "del", "dev", "port0")
    assert r.rc != 0 and "no DHCP client runs on port0" in r.err
    # Again, and this time the operator deletes the address: the lease is released.
    d.ctl("ip", "addr", "dhcp", "dev", "port0")
    r = d.ctl_result("ip", "addr", "dhcp", "dev", "port0")
    assert r.rc != 0 and "runs on port0 already" in r.err
    addr, _ = wait_lease(d)
    d.ctl("ip", "addr", "del", addr + "/24", "dev", "port0")
    topo.wait_until(lambda: server.count("DHCPRELEASE") == 2, 10, what="second DHCPRELEASE")
    assert "dhcp" not in port0(d) and default_route(d) == []
    # And once more, released by the daemon's shutdown.
    d.ctl("ip", "addr", "dhcp", "dev", "port0")
    wait_lease(d)
    d.stop()
    topo.wait_until(lambda: server.count("DHCPRELEASE") == 3, 10, what="release at shutdown")


def test_dhcp_hostile_replies_are_counted_drops(lab):
    """No server: the client keeps discovering, and what the peer sends in its place is
    refused by reason."""
    from scapy.layers.dhcp import BOOTP, DHCP
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    peer, _, d = start(lab, server=False)
    mac = d.port_mac("port0")
    chaddr = bytes.fromhex(mac.replace(":", ""))
    base = (Ether(src=peer.mac, dst="ff:ff:ff:ff:ff:ff") /
            IP(src=SERVER, dst="255.255.255.255") / UDP(sport=67, dport=68, chksum=0))

    def offer(xid, ch=chaddr, opts=None):
        return base / BOOTP(op=2, xid=xid, yiaddr="10.9.0.77", chaddr=ch) / DHCP(
            options=opts or [("message-type", "offer"), ("server_id", SERVER),
                             ("lease_time", 60), "end"])
    with topo.PacketSocket(peer.ns, peer.ifname) as ps:
        good = bytes(offer(0x1234))
        # Option 51 claims 200 bytes where 4 follow; then a reply whose hlen is 17.
        cut = good.replace(bytes([51, 4, 0, 0, 0, 60]), bytes([51, 200, 0, 0, 0, 60]))
        ps.send(cut)
        bad_hlen = bytearray(good)
        bad_hlen[14 + 20 + 8 + 2] = 17
        ps.send(bytes(bad_hlen))
        ps.send(offer(0x1234))                       # wrong xid
        ps.send(offer(0, ch=b"\x02\x99\x99\x99\x99\x99"))  # not our chaddr
        topo.wait_until(lambda: counters(d)["drop_malformed"] == 2 and
                        counters(d)["drop_wrong_xid"] + counters(d)["drop_wrong_chaddr"] >= 2,
                        10, what="drops counted")
    assert port0(d)["dhcp"]["state"] == "selecting"
    assert d.alive()


def test_dhcp_config_line_and_errors(lab):
    peer = lab.add_peer(SERVER, 24)
    d = lab.start_daemon("workers 1\nport add port0 net_af_xdp0,iface=%s\n"
                         "ip addr dhcp dev port0\n" % peer.root_ifname)
    assert port0(d)["dhcp"]["state"] == "selecting"
    for args, err in ((("ip", "addr", "dhcp", "dev", "nope"), "nope"),
                      (("ip", "addr", "dhcp", "port0"), "usage: ip addr dhcp")):
        r = d.ctl_result(*args)
        assert r.rc != 0 and err in r.err, r
    path = os.path.join(lab.tmp, "check.conf")
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_af_xdp0,iface=%s\nip addr dhcp dev port1\n" %
                peer.root_ifname)
    r = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert r.returncode != 0 and ":3:" in r.stderr, r.stderr
