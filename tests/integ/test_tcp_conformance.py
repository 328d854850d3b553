"""Differential TCP conformance (issue 13: "behave as Linux where applications or peers
notice"): one scripted peer, raw frames from a packet socket, plays the same script against
the Linux kernel (a server in a namespace) and against dpstackd (the same server through the
preload shim), and each case asserts that both give the same observable answer. The summary
(printed, and written to $DPSTACK_CONFORMANCE_OUT when set) says how many cases pass on both.

The scripted peer owns an address the kernel of its namespace does not have (one per case,
so no case meets another's TIME-WAIT or path MTU) and answers ARP for it. It announces MSS
1000 and SACK, no timestamps, so both stacks cut the same segments."""

import errno
import os
import random
import select
import subprocess
import sys
import textwrap
import time

import pytest
from scapy.layers.inet import ICMP, IP, TCP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")
PY = "/usr/bin/python3"
MSS = 1000

# The server each case talks to: the same program on both stacks.
SERVER = textwrap.dedent(r"""
    import errno, socket, sys, time
    mode, port = sys.argv[1], int(sys.argv[2])
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("0.0.0.0", port))
    l.listen(4)
    print("ready", flush=True)
    if mode == "lateaccept":
        time.sleep(1.5)   # the peer connects, sends and resets meanwhile
    c, _ = l.accept()
    def out(*a):
        print(*a, flush=True)
    def drain(timeout):
        c.settimeout(timeout)
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    return "eof"
        except socket.timeout:
            return "timeout"
        except OSError as e:
            return "err " + errno.errorcode.get(e.errno, str(e.errno))
    if mode == "sink":
        out(drain(10))
    elif mode == "acceptsink":
        out("accepted")
        out(drain(10))
    elif mode == "lastack":
        out(drain(10))
        c.shutdown(socket.SHUT_WR)
        out("shut")
        time.sleep(1.0)
        e = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        out("so_error " + (errno.errorcode.get(e, str(e)) if e else "0"))
    elif mode == "closefirst":
        c.close()
        out("closed")
        time.sleep(3)
    elif mode == "cork":
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        for i in range(25):
            c.send(b"c" * 100)
        time.sleep(0.08)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)
        time.sleep(0.5)
        for i in range(5):
            c.send(b"m" * 100, socket.MSG_MORE)
        time.sleep(0.08)
        c.send(b"e" * 100)
        out("sent")
        time.sleep(2)
    elif mode == "lateaccept":
        reads = []
        for i in range(3):
            c.settimeout(2)
            try:
                b = c.recv(65536)
                reads.append("data=%s" % b.decode() if b else "eof")
            except socket.timeout:
                reads.append("timeout")
            except OSError as e:
                reads.append("err " + errno.errorcode.get(e.errno, str(e.errno)))
        out(" ".join(reads))
    elif mode == "bulk":
        c.send(b"b" * 4000)
        out("sent")
        time.sleep(3)
    c.close()
""")


class Target:
    """One stack under test: where the scripted peer sends from (namespace, interface, its
    MAC) and what it talks to (address, MAC), and how to start the server there."""

    def __init__(self, name, ns, ifname, peer_mac, ip, mac, net, server_cmd, env):
        self.name, self.ns, self.ifname, self.peer_mac = name, ns, ifname, peer_mac
        self.ip, self.mac, self.net = ip, mac, net
        self.server_cmd, self.env = server_cmd, env

    def server(self, mode, port):
        p = subprocess.Popen(self.server_cmd + [mode, str(port)], env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        srv = Server(p)
        assert srv.line(15) == "ready", "%s server did not start: %s" % (
            self.name, srv.stderr())
        return srv


class Server:
    """The server's output, line by line, read from the pipe itself (a buffered reader
    would hold lines that select() no longer sees)."""

    def __init__(self, proc):
        self.proc = proc
        self.buf = b""

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            r, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if not r:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode().strip()

    def stderr(self):
        self.stop()
        return self.proc.stderr.read().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class Scripted:
    """The scripted peer of one case: its own address (net.host), a source port, and the
    sequence numbers of both sides."""

    def __init__(self, t, host, dport):
        self.t = t
        self.ip = "%s.%d" % (t.net, host)
        self.sport = random.randint(20000, 60000)
        self.dport = dport
        self.sock = topo.PacketSocket(t.ns, t.ifname)
        self.iss = random.getrandbits(32)
        self.snd_nxt = self.iss
        self.rcv_nxt = None
        self.segs = []      # (time, TCP) of every segment received from the target

    def close(self):
        self.sock.close()

    def eth(self):
        return Ether(src=self.t.peer_mac, dst=self.t.mac)

    def ip_hdr(self):
        return IP(src=self.ip, dst=self.t.ip)

    def send(self, flags, seq=None, ack=None, data=b"", options=None, window=65535):
        seq = self.snd_nxt if seq is None else seq
        ack = (self.rcv_nxt or 0) if ack is None else ack
        th = TCP(sport=self.sport, dport=self.dport, seq=seq % (1 << 32), ack=ack % (1 << 32),
                 flags=flags, window=window, options=options or [])
        return self.sock.send(self.eth() / self.ip_hdr() / th / Raw(data) if data else
                       self.eth() / self.ip_hdr() / th)

    def announce(self):
        """An ARP request to the target: both stacks learn our address from it."""
        self.sock.send(Ether(src=self.t.peer_mac, dst="ff:ff:ff:ff:ff:ff") /
                       ARP(op=1, hwsrc=self.t.peer_mac, psrc=self.ip, pdst=self.t.ip))

    def _mine(self, f):
        if ARP in f and f[ARP].op == 1 and f[ARP].pdst == self.ip:
            self.sock.send(Ether(src=self.t.peer_mac, dst=f[ARP].hwsrc) /
                           ARP(op=2, hwsrc=self.t.peer_mac, psrc=self.ip,
                               hwdst=f[ARP].hwsrc, pdst=f[ARP].psrc))
            return False
        if IP not in f or TCP not in f or f[IP].src != self.t.ip or f[IP].dst != self.ip:
            return False
        th = f[TCP]
        if th.sport != self.dport or th.dport != self.sport:
            return False
        self.segs.append((time.monotonic(), th))
        return True

    def recv(self, pred=lambda th: True, timeout=2.0):
        """The next segment from the target for which pred holds, or None; the kernel's
        receive time of its frame is in self.received_at."""
        f = self.sock.recv_until(lambda f: self._mine(f) and pred(f[TCP]), timeout)
        if f is None:
            return None
        self.received_at = f.time
        return f[TCP]

    def connect(self):
        self.announce()
        for _ in range(3):
            self.send("S", options=[("MSS", MSS), ("SAckOK", b"")])
            sa = self.recv(lambda th: th.flags.S and th.flags.A, 2.0)
            if sa is not None:
                break
        assert sa is not None, "%s: no SYN-ACK" % self.t.name
        self.snd_nxt = self.iss + 1
        self.rcv_nxt = sa.seq + 1
        self.send("A")

    def collect(self, duration, ack=True):
        """Receives for duration seconds, ACKing in-order data and FINs at once."""
        deadline = time.monotonic() + duration
        got = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return got
            th = self.recv(timeout=left)
            if th is None:
                return got
            got.append(th)
            n = plen(th) + (1 if th.flags.F else 0)
            if ack and n and th.seq == self.rcv_nxt % (1 << 32):
                self.rcv_nxt += n
                self.send("A")


def plen(th):
    """Payload bytes of a received segment, from the IP length: a frame padded to the
    Ethernet minimum (as DPDK ports send them) carries padding that is not data."""
    ip = th.underlayer
    return ip.len - ip.ihl * 4 - th.dataofs * 4


def ack_of(th):
    return None if th is None else "ACK" if th.flags == "A" else str(th.flags)


# ---- the cases: each returns the observable answer, compared across the stacks ----

def case_syn_fin_established_challenge_ack(t, host, port):
    """RFC 5961 §4: SYN+FIN at RCV.NXT on an established connection: an ACK of what was
    received, the FIN not taken."""
    srv = t.server("sink", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        p.send("SF", data=b"")
        th = p.recv(timeout=2.0)
        return "%s ack=%s" % (ack_of(th), None if th is None else th.ack - p.iss)
    finally:
        p.close()
        srv.stop()


def case_syn_rst_established_at_rcv_nxt(t, host, port):
    srv = t.server("acceptsink", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        # Once accepted (before accept() is case_rst_before_accept_reported).
        assert srv.line(5) == "accepted"
        p.send("SR")
        th = p.recv(timeout=1.0)
        return "answer=%s app=%s" % (None if th is None else str(th.flags), srv.line(2))
    finally:
        p.close()
        srv.stop()


def case_syn_fin_to_listener_dropped(t, host, port):
    srv = t.server("sink", port)
    p = Scripted(t, host, port)
    try:
        p.announce()
        p.send("SF", options=[("MSS", MSS)])
        th = p.recv(timeout=1.5)
        return "none" if th is None else str(th.flags)
    finally:
        p.close()
        srv.stop()


def case_syn_fin_to_closed_port(t, host, port):
    p = Scripted(t, host, port + 500)   # nothing listens there
    try:
        p.announce()
        p.send("SF", options=[("MSS", MSS)])
        th = p.recv(timeout=1.5)
        return "none" if th is None else str(th.flags)
    finally:
        p.close()


def ooo_fin(t, host, port, with_data):
    srv = t.server("sink", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        data = bytes(range(100))
        # The FIN (with or without data) beyond a 100-byte hole.
        p.send("FA", seq=p.snd_nxt + 100, data=data if with_data else b"")
        dup = p.recv(timeout=1.0)
        sack = None
        if dup is not None:
            for kind, val in dup.options:
                if kind == "SAck":
                    sack = [(v - p.iss) % (1 << 32) for v in val]
        fin_end = 1 + 100 + (100 if with_data else 0) + 1
        # The hole fills: the ACK must cover the FIN at once, without its resend.
        t0 = time.monotonic()
        p.send("A", data=data)
        th = p.recv(lambda th: (th.ack - p.iss) % (1 << 32) == fin_end, timeout=1.0)
        ok = th is not None and time.monotonic() - t0 < 0.5
        res = srv.line(3)
        return "dupack=%s sack=%s fin_acked_at_once=%s app=%s" % (
            None if dup is None else (dup.ack - p.iss) % (1 << 32), sack, ok, res)
    finally:
        p.close()
        srv.stop()


def case_ooo_bare_fin_kept(t, host, port):
    return ooo_fin(t, host, port, False)


def case_ooo_data_fin_kept(t, host, port):
    return ooo_fin(t, host, port, True)


def case_first_segments_quick_acked(t, host, port):
    """Linux's quick-ACK start: the first data segments are ACKed at once, not after the
    40 ms delayed-ACK time. Timed from the send system call to the kernel's receive stamp
    of the ACK, so that a busy machine delaying this script does not turn a quick ACK into
    a late one."""
    srv = t.server("sink", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        quick = 0
        for i in range(4):
            sent_at = p.send("PA", data=b"q" * 100)
            p.snd_nxt += 100
            th = p.recv(lambda th: (th.ack - p.iss) % (1 << 32) == p.snd_nxt - p.iss,
                        timeout=1.0)
            if th is not None and p.received_at - sent_at < 0.03:
                quick += 1
            time.sleep(0.05)
        return "quick=%d/4" % quick
    finally:
        p.close()
        srv.stop()


def case_rst_before_accept_reported(t, host, port):
    """A connection reset while it waits in the accept queue: accept() still returns it,
    and reads give what came before the reset, then ECONNRESET, then end of file."""
    srv = t.server("lateaccept", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        p.send("PA", data=b"early")
        p.snd_nxt += 5
        p.recv(lambda th: (th.ack - p.iss) % (1 << 32) == 6, timeout=1.0)
        p.send("R", seq=p.snd_nxt, ack=0, window=0)
        return "app=%s" % srv.line(10)
    finally:
        p.close()
        srv.stop()


def case_rst_in_last_ack_econnreset(t, host, port):
    srv = t.server("lastack", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        p.send("FA")
        p.snd_nxt += 1
        first = srv.line(5)
        fin = p.recv(lambda th: th.flags.F, timeout=3.0)
        shut = srv.line(3)
        if fin is not None:
            # LAST-ACK: a reset at the sequence number it expects.
            p.send("R", seq=p.snd_nxt, ack=0, window=0)
        res = srv.line(5)
        return "%s %s fin=%s %s" % (first, shut, fin is not None, res)
    finally:
        p.close()
        srv.stop()


def case_time_wait_acks_retransmitted_fin(t, host, port):
    srv = t.server("closefirst", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        fin = p.recv(lambda th: th.flags.F, timeout=3.0)
        assert fin is not None, "%s: no FIN from the server" % t.name
        p.rcv_nxt = fin.seq + 1
        p.send("FA")              # ACK of its FIN, with ours: it enters TIME-WAIT
        p.snd_nxt += 1
        a1 = p.recv(lambda th: th.flags.A and (th.ack - p.iss) % (1 << 32) == 2, timeout=2)
        time.sleep(0.6)            # past any rate limit
        p.send("FA", seq=p.snd_nxt - 1)   # our FIN again: its ACK was "lost"
        a2 = p.recv(timeout=2.0)
        time.sleep(0.6)
        p.send("A", seq=p.snd_nxt + 10)   # an ACK off RCV.NXT
        a3 = p.recv(timeout=1.5)
        p.send("A")                # a bare ACK at RCV.NXT: nothing
        a4 = p.recv(timeout=1.0)
        return "fin_acked=%s refin=%s ack=%s off_ack=%s in_ack=%s" % (
            a1 is not None, ack_of(a2), None if a2 is None else (a2.ack - p.iss) % (1 << 32),
            ack_of(a3), ack_of(a4))
    finally:
        p.close()
        srv.stop()


def case_time_wait_newer_syn_reopens(t, host, port):
    """RFC 6191 / RFC 1122 §4.2.2.13: a SYN above the old connection's sequence space
    takes the TIME-WAIT 4-tuple over: a SYN-ACK, not an ACK."""
    srv = t.server("closefirst", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        fin = p.recv(lambda th: th.flags.F, timeout=3.0)
        assert fin is not None, "%s: no FIN from the server" % t.name
        p.rcv_nxt = fin.seq + 1
        p.send("FA")
        p.snd_nxt += 1
        a1 = p.recv(lambda th: th.flags.A and (th.ack - p.iss) % (1 << 32) == 2, timeout=2)
        time.sleep(0.2)
        p.send("S", seq=p.snd_nxt + 100000, ack=0, options=[("MSS", MSS), ("SAckOK", b"")])
        th = p.recv(timeout=2.0)
        return "time_wait=%s answer=%s ack=%s" % (
            a1 is not None, None if th is None else str(th.flags),
            None if th is None else (th.ack - p.iss) % (1 << 32))
    finally:
        p.close()
        srv.stop()


def case_cork_and_msg_more(t, host, port):
    """TCP_CORK: 25 writes of 100 bytes leave as full segments, the tail when uncorked;
    5 sends with MSG_MORE and one without leave as one segment."""
    srv = t.server("cork", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        got = p.collect(3.0)
        # New data only: on a loaded machine this script ACKs late, and a tail loss probe
        # or an RTO resends a segment (either side may), which says nothing of corking.
        sizes, seen = [], set()
        for th in got:
            if plen(th) and th.seq not in seen:
                seen.add(th.seq)
                sizes.append(plen(th))
        return "segments=%s app=%s" % (sizes, srv.line(1))
    finally:
        p.close()
        srv.stop()


def case_frag_needed_tiny_mtu_floor_552(t, host, port):
    srv = t.server("bulk", port)
    p = Scripted(t, host, port)
    try:
        p.connect()
        first = p.recv(lambda th: plen(th) > 0, timeout=3.0)
        assert first is not None, "%s: no data" % t.name
        quoted = bytes(IP(src=t.ip, dst=p.ip, flags="DF", len=40 + plen(first))
                       / TCP(sport=p.dport, dport=p.sport, seq=first.seq, ack=first.ack,
                             flags="PA"))[:28]
        p.sock.send(p.eth() / p.ip_hdr() / ICMP(type=3, code=4, nexthopmtu=100) /
                    Raw(quoted))
        resent = p.recv(lambda th: th.seq == first.seq and plen(th) > 0,
                        timeout=2.0)
        return "first=%d resent=%s" % (plen(first),
                                       None if resent is None else plen(resent))
    finally:
        p.close()
        srv.stop()


CASES = [
    case_syn_fin_established_challenge_ack,
    case_syn_fin_to_listener_dropped,
    case_syn_rst_established_at_rcv_nxt,
    case_syn_fin_to_closed_port,
    case_ooo_bare_fin_kept,
    case_ooo_data_fin_kept,
    case_first_segments_quick_acked,
    case_rst_in_last_ack_econnreset,
    case_rst_before_accept_reported,
    case_time_wait_acks_retransmitted_fin,
    case_time_wait_newer_syn_reopens,
    case_cork_and_msg_more,
    case_frag_needed_tiny_mtu_floor_552,
]

# What Linux answers (checked on the kernel first, so that a broken script is not mistaken
# for conformance).
EXPECTED = {
    "case_syn_fin_established_challenge_ack": "ACK ack=1",
    "case_syn_fin_to_listener_dropped": "none",
    "case_syn_rst_established_at_rcv_nxt": "answer=None app=err ECONNRESET",
    "case_syn_fin_to_closed_port": "RA",
    "case_ooo_bare_fin_kept": "dupack=1 sack=[101, 102] fin_acked_at_once=True app=eof",
    "case_ooo_data_fin_kept": "dupack=1 sack=[101, 202] fin_acked_at_once=True app=eof",
    "case_first_segments_quick_acked": "quick=4/4",
    "case_rst_in_last_ack_econnreset": "eof shut fin=True so_error ECONNRESET",
    "case_rst_before_accept_reported": "app=data=early err ECONNRESET eof",
    "case_time_wait_acks_retransmitted_fin":
        "fin_acked=True refin=ACK ack=2 off_ack=ACK in_ack=None",
    "case_time_wait_newer_syn_reopens": "time_wait=True answer=SA ack=100003",
    "case_cork_and_msg_more": "segments=[1000, 1000, 500, 600] app=sent",
    "case_frag_needed_tiny_mtu_floor_552": "first=1000 resent=512",
}


@pytest.fixture(scope="module")
def targets():
    lab = topo.Lab("conformance")
    try:
        # dpstackd on one port; the scripted peer on the kernel end of its veth.
        s = topo.SinglePort(lab, extra_config=("tcp params time-wait-ms 5000",))
        s.warm_up()
        denv = dict(s.daemon.env, LD_PRELOAD=PRELOAD)
        dp = Target("dpstack", s.peer.ns, s.peer.ifname, s.peer_mac, s.stack_ip,
                    s.stack_mac, "10.0.0", [PY, "-c", SERVER], denv)
        # The kernel: a namespace with 10.9.0.1; the other end of its veth moves into a
        # namespace of the scripted peer's own, without an address.
        k = lab.add_peer("10.9.0.1")
        k.run("ethtool", "-K", k.ifname, "tso", "off", "gso", "off", check=False)
        sns = k.ns + "s"
        topo.run(["ip", "netns", "add", sns])
        lab.add_cleanup(lambda: topo.run(["ip", "netns", "del", sns], check=False))
        topo.run(["ip", "link", "set", k.root_ifname, "netns", sns])
        topo.run(["ip", "netns", "exec", sns, "sysctl", "-qw",
                  "net.ipv6.conf.all.disable_ipv6=1"])
        topo.run(["ip", "netns", "exec", sns, "ip", "link", "set", k.root_ifname, "up"])
        smac = topo.run(["ip", "netns", "exec", sns, "cat",
                         "/sys/class/net/%s/address" % k.root_ifname]).stdout.strip()
        kern = Target("linux", sns, k.root_ifname, smac, "10.9.0.1", k.mac, "10.9.0",
                      ["ip", "netns", "exec", k.ns, PY, "-c", SERVER], dict(os.environ))
        time.sleep(0.5)
        yield {"linux": kern, "dpstack": dp}
    finally:
        lab.close()


RESULTS = {}


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c.__name__[5:] for c in CASES])
def test_same_answer_as_linux(targets, i):
    case = CASES[i]
    name = case.__name__
    port = 7100 + i
    got = {}
    for which in ("linux", "dpstack"):
        got[which] = case(targets[which], 100 + i, port)
    RESULTS[name] = got
    _report()
    assert got["linux"] == EXPECTED[name], "the script or the kernel changed: %r" % got
    assert got["dpstack"] == got["linux"], "dpstack differs from Linux: %r" % got


def _report():
    both = sum(1 for g in RESULTS.values() if g["linux"] == g["dpstack"])
    lines = ["conformance: %d of %d cases give the same answer on Linux and dpstack" %
             (both, len(RESULTS))]
    for name, g in RESULTS.items():
        lines.append("  %-45s %s  linux=%r dpstack=%r" % (
            name[5:], "same" if g["linux"] == g["dpstack"] else "DIFFERS", g["linux"],
            g["dpstack"]))
    text = "\n".join(lines)
    print(text, file=sys.stderr)
    out = os.environ.get("DPSTACK_CONFORMANCE_OUT")
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
