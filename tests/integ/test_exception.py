"""The exception path (`port add NAME DEVICE kernel IFNAME`, src/dp/exception.c,
src/stack/exception.h) against the Linux kernel on both sides: the kernel interface sits in a
"host" namespace with the stack's own address, the peer in its namespace beyond the port.

What the stack does not own reaches the host's kernel through the port and the kernel's
answers leave by it: a kernel TCP server beside a stack service on the same address, IPv6
(not in the stack yet) by link-local and global addresses, IP protocols the stack does not run
(GRE's number 47 and OSPF's 89 to its multicast group, by raw sockets: this machine's kernel
has no ip_gre module), the kernel's own ping out of the port. Bypass rules move a port of the
stack's to the kernel and count what they moved. The stack's own outbound connections stay
the stack's (the known failure: their SYN-ACKs handed to the kernel, which resets them).
Bad lines and commands are refused with a clear error, and the kernel interface goes with
the daemon however it stops."""

import contextlib
import json
import os
import subprocess

import pytest

import topo

STACK_IP = "10.0.0.2"
PEER_IP = "10.0.0.1"
ECHO_PORT = 7           # the stack's echo service
KERNEL_PORT = 2222      # a kernel server on the host side
PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")

# A TCP server that answers each connection with its tag and the first bytes it got, on an
# IPv4 or IPv6 address.
TAG_SERVER = r"""
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        c.sendall(sys.argv[3].encode() + b":" + c.recv(100))
    except OSError:
        pass
    c.close()
"""

# A raw IP socket of one protocol, joined to a multicast group on the interface of its
# address when asked; prints each datagram's source and payload.
RAW_LISTENER = r"""
import socket, struct, sys
proto, addr, group = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, proto)
if group != "-":
    mreq = struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton(addr))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
print("listening", flush=True)
while True:
    d, a = s.recvfrom(65535)
    ihl = (d[0] & 0xf) * 4
    print(a[0], socket.inet_ntoa(d[16:20]), d[ihl:].decode(errors="replace"), flush=True)
"""

RAW_SEND = r"""
import socket, sys
proto, dst, src, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, proto)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(src))
s.sendto(payload.encode(), (dst, 0))
"""

# n connections one after the other from one process (a stack application's sockets are
# spread over the workers).
TCP_ASK_MANY = r"""
import socket, sys
for i in range(int(sys.argv[3])):
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
    c.sendall(b"s%d" % i)
    print(c.recv(100).decode())
    c.close()
"""

TCP_ASK = r"""
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
c.sendall(sys.argv[3].encode())
print(c.recv(100).decode())
"""


class Exception_:
    """One port with a kernel interface moved into a host namespace that has the stack's
    address, a peer beyond the port, and the stack's echo service."""

    def __init__(self, lab, workers=1):
        self.lab = lab
        self.peer = lab.add_peer(PEER_IP, 24)
        nid = lab._next_id()
        self.kif = "%s%s%sk" % (topo.PREFIX, topo.PID_HEX, nid)
        self.host_ns = "%s%s-%s" % (topo.PREFIX, topo.PID_HEX, nid)
        topo.run(["ip", "netns", "add", self.host_ns])
        lab.add_cleanup(lambda: topo.run(["ip", "netns", "del", self.host_ns], check=False))
        if workers == 1:
            lines = ["workers 1",
                     "port add port0 net_af_xdp0,iface=%s kernel %s" % (self.peer.root_ifname,
                                                                         self.kif)]
        else:
            # Two workers on a port with two queue pairs (net_af_packet; topo's layout):
            # a flow's frames may reach either worker and are steered to its owner.
            lines = topo.two_worker_config(self.peer.root_ifname).splitlines()[:3]
            lines[2] += " kernel %s" % self.kif
        self.daemon = lab.start_daemon("\n".join(lines + [
            "ip addr add %s/24 dev port0" % STACK_IP,
            "service add echo tcp %d" % ECHO_PORT]) + "\n")
        self.stack_mac = self.daemon.port_mac("port0")
        topo.run(["ip", "link", "set", self.kif, "netns", self.host_ns])
        self.host("ip", "link", "set", "lo", "up")
        self.host("ip", "addr", "add", "%s/24" % STACK_IP, "dev", self.kif)
        self.host("ip", "link", "set", self.kif, "up")
        self.procs = []

    def host(self, *cmd, check=True, timeout=topo.DEFAULT_TIMEOUT):
        return topo.run(["ip", "netns", "exec", self.host_ns] + [str(c) for c in cmd],
                        check=check, timeout=timeout)

    def ctl(self, *args, as_json=False):
        return self.daemon.ctl(*args, json=as_json)

    def spawn(self, ns, script, *args):
        """A python script in namespace ns, stopped at teardown; returns once it printed its
        first line (it listens)."""
        p = subprocess.Popen(topo.dying_with_parent(
            ["ip", "netns", "exec", ns, "/usr/bin/python3", "-u", "-c", script] +
            [str(a) for a in args]), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        self.procs.append(p)
        self.lab.add_cleanup(lambda: (p.kill(), p.wait()))
        assert p.stdout.readline().strip() == "listening"
        return p

    def ask(self, port, text="hi"):
        """Connects from the peer to the stack's address; returns the answer."""
        return self.peer.run("/usr/bin/python3", "-c", TCP_ASK, STACK_IP, port,
                             text).stdout.strip()

    def kernel(self):
        return next(p for p in self.ctl("link", "show", as_json=True)
                    if p["ifname"] == "port0")["kernel"]


@contextlib.contextmanager
def exception_lab(name, workers):
    lab = topo.Lab(name)
    try:
        e = Exception_(lab, workers)
        topo.wait_until(lambda: e.peer.ping(STACK_IP, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="first ping answered")
        e.spawn(e.host_ns, TAG_SERVER, STACK_IP, KERNEL_PORT, "kernel")
        yield e
    finally:
        lab.close()


@pytest.fixture(scope="module")
def exc():
    with exception_lab("exception", 1) as e:
        yield e


@pytest.fixture(scope="module")
def exc2():
    with exception_lab("exception2", 2) as e:
        yield e


def test_kernel_tcp_server_answers_beside_stack_service_on_the_same_address(exc):
    before = exc.daemon.stats()
    k0 = exc.kernel()
    assert exc.ask(KERNEL_PORT, "ssh?") == "kernel:ssh?"
    assert exc.ask(ECHO_PORT, "echo?") == "echo?"          # the stack's echo service
    assert exc.ask(KERNEL_PORT, "again") == "kernel:again"
    after = exc.daemon.stats()
    k1 = exc.kernel()
    # Two connections to the kernel: at least SYN, ACK, data, FIN each way per connection.
    assert exc.daemon.counter("kernel.tcp_no_socket", after) - \
        exc.daemon.counter("kernel.tcp_no_socket", before) >= 8
    assert exc.daemon.counter("tcp.no_conn", after) == exc.daemon.counter("tcp.no_conn", before)
    assert k1["to_kernel"] - k0["to_kernel"] >= 8
    assert k1["from_kernel"] - k0["from_kernel"] >= 8
    assert k1["ifname"] == exc.kif and k1["dropped"] == 0
    # Moved to the host namespace, it is out of reach of the sync and of the port's MTU and
    # carrier, and `link show` says so (the daemon looks once a second).
    topo.wait_until(lambda: exc.kernel()["in_namespace"] is False, timeout=10,
                    what="kernel interface seen away")
    # Both sides know the peer by ARP; the peer knows one MAC for the shared address.
    assert exc.peer.neigh(STACK_IP)["lladdr"] == exc.stack_mac


def test_arp_one_mac_the_stack_answers_and_the_kernel_learns(exc):
    exc.peer.run("ip", "neigh", "flush", "dev", exc.peer.ifname)
    exc.host("ip", "neigh", "flush", "dev", exc.kif)
    before = exc.daemon.stats()
    assert exc.peer.ping(STACK_IP, count=1, wait=2).received == 1
    after = exc.daemon.stats()
    assert exc.daemon.counter("arp.tx_reply", after) > exc.daemon.counter("arp.tx_reply", before)
    assert exc.daemon.counter("kernel.arp_copies", after) > \
        exc.daemon.counter("kernel.arp_copies", before)
    # The kernel's own answer for the stack's address is held back: one answer, one MAC.
    assert exc.daemon.counter("kernel.arp_replies_held", after) > \
        exc.daemon.counter("kernel.arp_replies_held", before)
    assert exc.peer.neigh(STACK_IP)["lladdr"] == exc.stack_mac
    # The peer's request taught the host's kernel the peer's MAC.
    out = exc.host("ip", "-j", "neigh", "show", "to", PEER_IP, "dev", exc.kif).stdout
    assert exc.peer.mac in out


def test_kernel_pings_out_of_the_port_and_gets_its_replies(exc):
    before = exc.daemon.stats()
    r = exc.host("ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", PEER_IP, check=False)
    assert " 0% packet loss" in r.stdout, r.stdout
    assert exc.daemon.counter("kernel.icmp") - exc.daemon.counter("kernel.icmp", before) >= 3


def test_ipv6_link_local_and_global_reach_the_kernel_interface(exc):
    """IPv6 is the stack's; what is for the kernel's own addresses (and their solicited-node
    groups) goes there. Both sides have the port's MAC, so the same EUI-64 link-local
    address: the stack answers for it, one answer as with ARP."""
    p = exc.peer
    p.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    p.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=0" % p.ifname)
    p.run("ip", "-6", "addr", "add", "fd00:db8::1/64", "dev", p.ifname, "nodad")
    exc.host("ip", "-6", "addr", "add", "fd00:db8::2/64", "dev", exc.kif, "nodad")
    addrs = json.loads(exc.host("ip", "-j", "-6", "addr", "show", "dev", exc.kif).stdout)
    lladdr = next(a["local"] for a in addrs[0]["addr_info"] if a["local"].startswith("fe80:"))
    before = exc.daemon.stats()
    r = p.ping("fd00:db8::2", count=3, interval=0.2, wait=3, extra=["-6"])
    assert r.received == 3, r
    r = p.ping("%s%%%s" % (lladdr, p.ifname), count=2, interval=0.2, wait=3, extra=["-6"])
    assert r.received == 2, r
    assert exc.daemon.counter("kernel.ip6") - exc.daemon.counter("kernel.ip6", before) >= 3
    assert exc.daemon.counter("eth.unknown_type") == 0


def test_gre_and_ospf_protocol_numbers_reach_the_kernel_not_protocol_unreachable(exc):
    gre = exc.spawn(exc.host_ns, RAW_LISTENER, 47, STACK_IP, "-")
    ospf = exc.spawn(exc.host_ns, RAW_LISTENER, 89, STACK_IP, "224.0.0.5")
    before = exc.daemon.stats()
    exc.peer.run("/usr/bin/python3", "-c", RAW_SEND, 47, STACK_IP, PEER_IP, "gre-payload")
    exc.peer.run("/usr/bin/python3", "-c", RAW_SEND, 89, "224.0.0.5", PEER_IP, "ospf-hello")
    assert gre.stdout.readline().split() == [PEER_IP, STACK_IP, "gre-payload"]
    assert ospf.stdout.readline().split() == [PEER_IP, "224.0.0.5", "ospf-hello"]
    after = exc.daemon.stats()
    assert exc.daemon.counter("kernel.ip_proto", after) - \
        exc.daemon.counter("kernel.ip_proto", before) == 1
    assert exc.daemon.counter("kernel.ip_multicast", after) - \
        exc.daemon.counter("kernel.ip_multicast", before) == 1
    assert exc.daemon.counter("icmp.tx_unreach", after) == \
        exc.daemon.counter("icmp.tx_unreach", before)


def test_bypass_rule_moves_a_stack_port_to_the_kernel_counts_and_del_restores(exc):
    exc.spawn(exc.host_ns, TAG_SERVER, STACK_IP, ECHO_PORT, "kernel-echo")
    assert exc.ask(ECHO_PORT, "a") == "a"                      # the stack's service
    rid = exc.ctl("bypass", "add", "proto", "tcp", "dport", ECHO_PORT, as_json=True)["id"]
    assert exc.ask(ECHO_PORT, "b") == "kernel-echo:b"
    rules = exc.ctl("bypass", "show", as_json=True)
    assert [r["id"] for r in rules] == [rid]
    assert rules[0]["proto"] == 6 and rules[0]["dport_min"] == ECHO_PORT
    hits = rules[0]["hits"]
    assert hits >= 4          # SYN, ACK, data, FIN at least
    assert exc.daemon.counter("kernel.bypass") >= hits
    table = exc.ctl("bypass", "show")
    assert "proto tcp dport %d" % ECHO_PORT in table and str(hits) in table, table
    exc.ctl("bypass", "del", rid)
    assert exc.ctl("bypass", "show", as_json=True) == []
    assert exc.ask(ECHO_PORT, "c") == "c"


def test_flow_rule_kernel_action_hands_frames_to_the_kernel(exc):
    """A flow rule's kernel action (issue 15) takes frames before any stack sees them: the
    kernel's server answers on the stack's port, and deleting the rule gives it back."""
    exc.spawn(exc.host_ns, TAG_SERVER, STACK_IP, ECHO_PORT + 1, "kernel-flow")
    exc.ctl("service", "add", "echo", "tcp", ECHO_PORT + 1)
    try:
        assert exc.ask(ECHO_PORT + 1, "a") == "a"
        rid = exc.ctl("flow", "add", "kernel", "dev", "port0", "proto", "tcp", "dport",
                      ECHO_PORT + 1, as_json=True)["id"]
        before = exc.daemon.counter("kernel.flow")
        assert exc.ask(ECHO_PORT + 1, "b") == "kernel-flow:b"
        rule = [r for r in exc.ctl("flow", "show", as_json=True)["rules"] if r["id"] == rid][0]
        assert rule["hits"] >= 4 and rule["action"] == "kernel", rule
        assert exc.daemon.counter("kernel.flow") - before >= 4
        exc.ctl("flow", "del", rid)
        assert exc.ask(ECHO_PORT + 1, "c") == "c"
    finally:
        exc.ctl("service", "del", "tcp", ECHO_PORT + 1)


def test_bypass_bad_commands_are_refused_with_clear_errors(exc):
    cases = [
        (("bypass", "add", "deny", "proto", "tcp"), "'deny' is an ACL word"),
        (("bypass", "add", "dport", "22"), "proto tcp or udp"),
        (("bypass", "add", "proto", "tcp", "dport", "90-80"), "reversed"),
        (("bypass", "add", "dev", "port9"), "port9"),
        (("bypass", "del", "999"), "no bypass rule with id 999"),
        (("bypass", "del", "x"), "rule id"),
    ]
    for args, text in cases:
        r = exc.daemon.ctl_result(*args)
        assert r.rc == 1 and text in r.err, (args, r)
    assert exc.ctl("bypass", "show", as_json=True) == []


def test_stack_connections_out_are_never_swallowed_by_the_kernel(exc, tmp_path):
    """Regression: a connection the stack opens gets its SYN-ACK, not the kernel (which would
    reset it), though the kernel interface has the same address."""
    if not os.access(PRELOAD, os.R_OK):
        pytest.skip("not built: %s" % PRELOAD)
    exc.spawn(exc.peer.ns, TAG_SERVER, PEER_IP, 5001, "peer")
    env = exc.daemon.env
    env["LD_PRELOAD"] = PRELOAD
    before = exc.daemon.stats()
    for i in range(20):
        p = topo.run(["/usr/bin/python3", "-c", TCP_ASK, PEER_IP, "5001", "n%d" % i], env=env)
        assert p.stdout.strip() == "peer:n%d" % i, p
    after = exc.daemon.stats()
    assert exc.daemon.counter("kernel.tcp_no_socket", after) == \
        exc.daemon.counter("kernel.tcp_no_socket", before)
    assert exc.daemon.counter("tcp.active_opens", after) - \
        exc.daemon.counter("tcp.active_opens", before) == 20


def test_two_workers_stack_and_kernel_connections_out_both_succeed(exc2):
    """With two workers a SYN-ACK may reach the worker that does not own the connection:
    it is steered to the owner before any lookup, so it never falls to the kernel. The
    kernel's own connections out, from the same address to the same server, get their
    answers through the exception path meanwhile."""
    if not os.access(PRELOAD, os.R_OK):
        pytest.skip("not built: %s" % PRELOAD)
    e = exc2
    e.spawn(e.peer.ns, TAG_SERVER, PEER_IP, 5001, "peer")
    env = e.daemon.env
    env["LD_PRELOAD"] = PRELOAD
    before = e.daemon.stats()
    stack_app = subprocess.Popen(topo.dying_with_parent(
        ["/usr/bin/python3", "-c", TCP_ASK_MANY, PEER_IP, "5001", "10"]), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for i in range(10):
        p = e.host("/usr/bin/python3", "-c", TCP_ASK, PEER_IP, 5001, "k%d" % i)
        assert p.stdout.strip() == "peer:k%d" % i, p
    out, _ = stack_app.communicate(timeout=60)
    assert out.split() == ["peer:s%d" % i for i in range(10)], out
    after = e.daemon.stats()

    def delta(name):
        return e.daemon.counter(name, after) - e.daemon.counter(name, before)
    assert delta("tcp.active_opens") == 10
    assert delta("tcp.no_conn") == 0
    # Each kernel connection: at least SYN-ACK, data and FIN from the peer.
    assert delta("kernel.tcp_no_socket") >= 30
    opened = [w["events"]["tcp.active_opens"] for w in after["workers"]]
    assert all(n > 0 for n in opened), opened


def test_bad_kernel_lines_are_refused_at_their_line(lab):
    path = os.path.join(lab.tmp, "k.conf")
    with open(path, "w") as f:
        f.write("workers 1\n"
                "port add port0 net_ring0 kernel a/b\n"
                "port add port1 net_ring1 kernel averyveryverylongname\n"
                "port add port2 net_ring2 kernel\n"
                "port add port3 net_ring3 kernel dpk0\n"
                "port add port4 net_ring4 kernel dpk0\n"
                "port add port5 net_ring5 tap dpk1\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False,
                 env=dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "c.sock"),
                          DPSTACK_SOCK=os.path.join(lab.tmp, "a.sock")))
    assert p.returncode == 1, p
    lines = p.stderr.splitlines()
    assert "%s:2: kernel interface name 'a/b'" % path in lines[0], p
    assert "%s:3: kernel interface name 'averyveryverylongname'" % path in lines[1], p
    assert lines[2] == "%s:4: usage: port add NAME DEVICE [kernel IFNAME]" % path, p
    assert lines[3] == "%s:6: kernel interface 'dpk0' used twice" % path, p
    assert lines[4] == "%s:7: usage: port add NAME DEVICE [kernel IFNAME]" % path, p
    with open(path, "w") as f:
        f.write("workers 1\nport add port0 net_ring0\nbypass add proto tcp dport 22\n")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False,
                 env=dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "c.sock"),
                          DPSTACK_SOCK=os.path.join(lab.tmp, "a.sock")))
    assert p.returncode == 1 and "%s:3: bypass add: no port has a kernel interface" % path \
        in p.stderr, p


def test_existing_interface_name_is_refused_at_start(lab):
    peer = lab.add_peer(PEER_IP, 24)
    d = topo.Daemon(os.path.join(lab.tmp, "d"),
                    "workers 1\nport add port0 net_af_xdp0,iface=%s kernel lo\n"
                    % peer.root_ifname)
    d.start(wait=False)
    lab.add_cleanup(d.stop_quietly)
    assert d.wait_exit(timeout=30) != 0
    assert "dpstackd: port port0: kernel interface lo: an interface of that name exists" \
        in d.log()


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_kernel_interface_goes_with_the_daemon(lab, how):
    peer = lab.add_peer(PEER_IP, 24)
    kif = "%s%s%sk" % (topo.PREFIX, topo.PID_HEX, lab._next_id())
    d = lab.start_daemon("workers 1\nport add port0 net_af_xdp0,iface=%s kernel %s\n"
                         % (peer.root_ifname, kif))
    assert os.path.exists("/sys/class/net/" + kif)
    with open("/sys/class/net/%s/address" % kif) as f:
        assert f.read().strip() == d.port_mac("port0")
    # In the daemon's namespace, Linux's own drops on the interface are shown too.
    k = d.ctl("link", "show", json=True)[0]["kernel"]
    assert k["ifname"] == kif and k["device"] == "tap" and k["linux_tx_dropped"] == 0, k
    if how == "stop":
        d.stop()
    else:
        d.kill()
    topo.wait_until(lambda: not os.path.exists("/sys/class/net/" + kif), timeout=10,
                    what="kernel interface %s removed" % kif)
