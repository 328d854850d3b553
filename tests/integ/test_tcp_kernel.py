"""TCP of dpstackd against the Linux kernel as the peer, through the built-in services (src/svc):
bulk transfers both ways checked by SHA-256, many short connections, loss injected with
nftables in the peer's namespace, a peer that resets or goes silent, the options the stack
negotiates as tshark sees them (ECN included), and hostile segments built with scapy
(SYN flood, blind RST/SYN/data injection per RFC 5961, malformed options, data past the
window, a sender that uses every byte of the window, SACKs that must trigger fast
retransmit).

Tests that change the peer's state (nftables, sysctls, routes) or leave connections
half-open run on a fresh topology and undo what they added; the others share one daemon.
Loss of the kernel's own segments is injected on the forward hook of the peer's namespace,
with the client one hop behind it (RoutedClient says why)."""

import contextlib
import hashlib
import os
import random
import select
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest
from scapy.layers.inet import TCP
from scapy.packet import Raw

import topo

MB = 1 << 20
BULK = 100 * MB
ECHO, DISCARD, CHARGEN = 7, 9, 19
HTTP_BULK_PORT = 8080
SYNFLOOD_PORT = 7016      # echo with a small backlog, so that the SYN queue fills
SCAPY_PORT = 23456        # our own handshakes; outside the kernel's ephemeral range

# The module's daemon: (kind, port, extra words of `service add`).
SERVICES = [("echo", ECHO, ()), ("discard", DISCARD, ()), ("chargen", CHARGEN, ()),
            ("http", HTTP_BULK_PORT, ("size", BULK))]


# ---------------------------------------------------------------------------------------------
# Helpers

def chargen_pattern(n, offset=0):
    """RFC 864's rotating pattern (src/svc/svc_priv.h), also the body of `http ... size N`:
    72 printable characters per line, each line one character later, CR LF; period 95 lines."""
    period = bytearray()
    for line in range(95):
        period += bytes(32 + (line + col) % 95 for col in range(72)) + b"\r\n"
    reps = (offset + n) // len(period) + 1
    return bytes((period * reps)[offset:offset + n])


PATTERN_PERIOD = 95 * 74


def pattern_sha256(n):
    """SHA-256 of the first n bytes of the pattern, without holding n bytes."""
    block = chargen_pattern(PATTERN_PERIOD * 150)   # whole periods, about 1 MB
    h = hashlib.sha256()
    while n > 0:
        k = min(n, len(block))
        h.update(block[:k])
        n -= k
    return h.hexdigest()


def add_services(d, services):
    for kind, port, extra in services:
        d.ctl("service", "add", kind, "tcp", port, *extra)


@pytest.fixture(scope="module")
def svc(one_port):
    """one_port with the module's TCP services; removed again at the end."""
    add_services(one_port.daemon, SERVICES)
    yield one_port
    for _kind, port, _extra in SERVICES:
        one_port.daemon.ctl("service", "del", "tcp", port)


@pytest.fixture
def fresh_svc(fresh_one_port):
    """A fresh topology with echo, discard and chargen, for tests that change the peer."""
    add_services(fresh_one_port.daemon, [s for s in SERVICES if s[0] != "http"])
    yield fresh_one_port


def service_row(d, port, proto="tcp"):
    for row in d.ctl("service", "show", json=True):
        if row["proto"] == proto and row["port"] == port:
            return row
    raise AssertionError("no service on %s %d" % (proto, port))


def wait_idle(d, port, timeout=20.0):
    """Waits until the service has no open connection (closes finish asynchronously)."""
    return topo.wait_until(lambda: service_row(d, port)["active"] == 0 and
                           service_row(d, port), timeout, interval=0.1,
                           what="no active connection on tcp %d" % port)


def tcp_connect(s, port, timeout=30.0):
    """A kernel TCP socket in the peer's namespace, connected to the stack's port."""
    return topo.in_netns(s.peer.ns, lambda: socket.create_connection((s.stack_ip, port),
                                                                      timeout=timeout),
                         timeout=timeout + 5)


def recv_exact(sock, n):
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def echo_round_trip(sock, payload):
    sock.sendall(payload)
    return recv_exact(sock, len(payload))


def echo_transfer(s, data, port=ECHO, stall_s=60.0, connect=None):
    """Sends data to echo while reading the echo back (full duplex), then shuts down the
    write side and reads to EOF. Returns (bytes received, their SHA-256); fails when nothing
    arrives for stall_s seconds. connect(port, timeout): another client than the peer."""
    sock = (connect or (lambda p, timeout: tcp_connect(s, p, timeout)))(port, timeout=stall_s)
    errors = []

    def send():
        try:
            view = memoryview(data)
            for i in range(0, len(data), MB):
                sock.sendall(view[i:i + MB])
            sock.shutdown(socket.SHUT_WR)
        except OSError as e:
            errors.append(e)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    h = hashlib.sha256()
    got = 0
    last_progress = time.monotonic()
    try:
        while True:
            if not select.select([sock], [], [], 1.0)[0]:
                if time.monotonic() - last_progress > stall_s:
                    raise AssertionError("echo stalled: no byte for %.0f s after %d of %d" %
                                         (stall_s, got, len(data)))
                continue
            chunk = sock.recv(1 << 18)
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
            last_progress = time.monotonic()
    finally:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)   # wakes a sender blocked in sendall
        sock.close()
        sender.join(stall_s)
    assert not errors, errors
    assert not sender.is_alive(), "sender still blocked"
    return got, h.hexdigest()


def http_get_body(sock, size):
    """GET / on a connected socket to an `http ... size N` service; checks the head and
    returns (body bytes received until the server closed, their SHA-256)."""
    sock.sendall(b"GET /bulk HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = bytearray()
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "closed before the end of the head: %r" % bytes(head)
        head += chunk
    head, _, body = bytes(head).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), head
    assert b"\r\nContent-Length: %d\r\n" % size in head + b"\r\n", head
    h = hashlib.sha256(body)
    got = len(body)
    while True:
        chunk = sock.recv(1 << 18)
        if not chunk:
            break
        h.update(chunk)
        got += len(chunk)
    return got, h.hexdigest()


class RoutedClient:
    """A kernel client one hop behind the peer: namespace C (10.9.0.2/24) -- veth -- the
    peer's namespace, which forwards -- the stack, which routes 10.9.0.0/24 via the peer.

    Loss has to be injected there, on the peer's forward hook: a segment the client's own
    kernel drops on its output hook is not lost (ip_local_out fails with EPERM and TCP sends
    it again, with no hole and no retransmission), and netem is not in this kernel."""

    net, router_ip, client_ip = "10.9.0.0/24", "10.9.0.1", "10.9.0.2"

    def __init__(self, s):
        self.s = s
        nid = s.lab._next_id()   # names of topo's pattern: remove_stale knows them
        base = "%s%s%s" % (topo.PREFIX, topo.PID_HEX, nid)
        self.ns = "%s%s-%s" % (topo.PREFIX, topo.PID_HEX, nid)
        self.rif, self.cif = base + "r", base + "p"
        topo.run(["ip", "netns", "add", self.ns])
        s.lab.add_cleanup(lambda: topo.run(["ip", "netns", "del", self.ns], check=False))
        self.peer = topo.Peer(self.ns, self.cif, None, self.client_ip)
        topo.run(["ip", "link", "add", self.rif, "netns", s.peer.ns, "type", "veth", "peer",
                  "name", self.cif, "netns", self.ns])
        self.forwarding = sysctl(s.peer, "net.ipv4.ip_forward")
        r, c = s.peer, self.peer
        r.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.rif)
        r.run("ip", "addr", "add", "%s/24" % self.router_ip, "dev", self.rif)
        r.run("ip", "link", "set", self.rif, "up")
        sysctl(r, "net.ipv4.ip_forward", 1)
        c.run("ip", "link", "set", "lo", "up")
        c.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        # Checksums filled in by the client (the stack sees the frames as they are), and
        # one segment per packet, so that the forward hook drops single segments.
        c.run("ethtool", "-K", self.cif, "tx", "off")
        c.run("ip", "link", "set", "dev", self.cif, "gso_max_segs", "1")
        c.run("ip", "addr", "add", "%s/24" % self.client_ip, "dev", self.cif)
        c.run("ip", "link", "set", self.cif, "up")
        c.run("ip", "route", "add", "default", "via", self.router_ip)
        s.ctl("ip", "route", "add", self.net, "via", s.peer_ip, "dev", "port0")
        topo.wait_until(lambda: c.ping(s.stack_ip, count=1, wait=1).received == 1, timeout=20,
                        interval=0.1, what="client reaches the stack through the peer")

    def close(self):
        self.s.ctl("ip", "route", "del", self.net)
        sysctl(self.s.peer, "net.ipv4.ip_forward", self.forwarding)
        topo.run(["ip", "netns", "del", self.ns], check=False)   # takes the veth along

    def connect(self, port, timeout=30.0):
        s = self.s
        return topo.in_netns(self.ns, lambda: socket.create_connection((s.stack_ip, port),
                                                                        timeout=timeout),
                             timeout=timeout + 5)


@contextlib.contextmanager
def routed_client(s):
    c = RoutedClient(s)
    try:
        yield c
    finally:
        c.close()


def forward_loss_rules(pct, match="meta l4proto tcp"):
    return ["%s numgen random mod 100 < %d drop" % (match, pct)]


def kernel_tcp_mib(peer, name):
    """A counter of the peer namespace's kernel TCP MIB (/proc/net/snmp, "Tcp:" lines)."""
    rows = [line.split() for line in peer.run("cat", "/proc/net/snmp").stdout.splitlines()
            if line.startswith("Tcp:")]
    return int(rows[1][rows[0].index(name)])


@contextlib.contextmanager
def nft_table(peer, name, input_rules=(), output_rules=(), forward_rules=()):
    """An nftables table in the peer's namespace with an input, an output and a forward
    chain holding the given rules; deleted again on exit."""
    lines = ["add table inet %s" % name]
    for hook, rules in (("input", input_rules), ("output", output_rules),
                        ("forward", forward_rules)):
        lines.append("add chain inet %s %s { type filter hook %s priority 0; policy accept; }"
                     % (name, hook, hook))
        lines += ["add rule inet %s %s %s" % (name, hook, r) for r in rules]
    topo.run(["ip", "netns", "exec", peer.ns, "nft", "-f", "-"], input="\n".join(lines) + "\n")
    try:
        yield
    finally:
        peer.run("nft", "delete", "table", "inet", name, check=False)


def sysctl(peer, key, value=None):
    if value is None:
        return peer.run("sysctl", "-n", key).stdout.strip()
    peer.run("sysctl", "-q", "-w", "%s=%s" % (key, value))


class Capture:
    """tshark on the peer's interface, inside its namespace, writing a file; read it back
    with fields() after stop(). It also captures ICMP: pings mark the moment the capture
    is live (tshark announces "Capturing on" a little before it is)."""

    def __init__(self, s, bpf, name):
        self.path = os.path.join(s.lab.tmp, name + ".pcapng")
        self.err_path = self.path + ".err"
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", s.peer.ns, "tshark", "-i", s.peer.ifname,
                 "-f", "(%s) or icmp" % bpf, "-s", "200", "-a", "duration:120",
                 "-w", self.path],
                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            topo.wait_until(lambda: self.proc.poll() is not None or self._sees_ping(s),
                            timeout=30, interval=0.1, what="tshark capturing")
        except AssertionError:
            self.stop()
            raise
        assert self.proc.poll() is None, "tshark exited: %s" % self._err()

    def _sees_ping(self, s):
        s.peer.ping(s.stack_ip, count=1, wait=1)
        if not os.path.exists(self.path):
            return False
        out = topo.run(["tshark", "-r", self.path, "-Y", "icmp"], check=False).stdout
        return out.strip() != ""

    def _err(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """Lets the last frames reach the file, then stops tshark (SIGINT, by its PID)."""
        if self.proc.poll() is None:
            time.sleep(0.5)
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def fields(self, display_filter, *fields):
        """One list of field values per frame matching display_filter."""
        cmd = ["tshark", "-r", self.path, "-Y", display_filter, "-T", "fields",
               "-E", "separator=/t"]
        for f in fields:
            cmd += ["-e", f]
        out = topo.run(cmd, timeout=60).stdout
        return [line.split("\t") for line in out.splitlines() if line.strip()]


def tshark_bool(v):
    return v in ("1", "True", "true", "Set")


# ---------------------------------------------------------------------------------------------
# 1. Bulk transfers: 100 MB each way

def test_echo_100mb_full_duplex_sha256_matches(svc):
    d = svc.daemon
    before = service_row(d, ECHO)
    data = os.urandom(BULK)
    got, digest = echo_transfer(svc, data)
    assert got == BULK
    assert digest == hashlib.sha256(data).hexdigest()
    after = wait_idle(d, ECHO)
    assert after["bytes_in"] - before["bytes_in"] == BULK
    assert after["bytes_out"] - before["bytes_out"] == BULK
    svc.ping_ok()


def test_discard_100mb_upload_counted_exactly(svc):
    d = svc.daemon
    before = service_row(d, DISCARD)
    block = os.urandom(MB)
    sock = tcp_connect(svc, DISCARD, timeout=120)
    try:
        for _ in range(BULK // MB):
            sock.sendall(block)
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(1) == b""   # discard sends nothing and closes after our FIN
    finally:
        sock.close()
    after = wait_idle(d, DISCARD)
    assert after["bytes_in"] - before["bytes_in"] == BULK
    assert after["bytes_out"] == before["bytes_out"]
    svc.ping_ok()


def test_http_100mb_download_is_the_pattern(svc):
    sock = tcp_connect(svc, HTTP_BULK_PORT, timeout=60)
    try:
        got, digest = http_get_body(sock, BULK)
    finally:
        sock.close()
    assert got == BULK
    assert digest == pattern_sha256(BULK)
    wait_idle(svc.daemon, HTTP_BULK_PORT)
    svc.ping_ok()


# ---------------------------------------------------------------------------------------------
# 2. Many short connections

def test_echo_1000_short_connections_all_succeed_none_reset(svc):
    d = svc.daemon
    n = 1000
    before = service_row(d, ECHO)
    resets = d.counter("tcp.estab_resets")

    def run_all():
        failures = []
        for i in range(n):
            byte = bytes([i & 0xff])
            try:
                c = socket.create_connection((svc.stack_ip, ECHO), timeout=20)
                try:
                    c.sendall(byte)
                    got = c.recv(1)
                finally:
                    c.close()
                if got != byte:
                    failures.append((i, got))
            except OSError as e:
                failures.append((i, e))
        return failures

    failures = topo.in_netns(svc.peer.ns, run_all, timeout=600)
    assert failures == []
    after = wait_idle(d, ECHO)
    assert after["accepted"] - before["accepted"] == n
    assert after["bytes_in"] - before["bytes_in"] == n
    assert d.counter("tcp.estab_resets") == resets
    svc.ping_ok()


# ---------------------------------------------------------------------------------------------
# 3. Loss

@pytest.mark.slow
@pytest.mark.parametrize("loss_pct,cc", [(1, "cubic"), (5, "cubic"), (5, "bbr")])
def test_echo_20mb_under_random_loss_byte_exact(fresh_svc, loss_pct, cc):
    """loss_pct % of the TCP segments lost both ways on the peer's forward hook, between a
    client behind it and echo, the stack's congestion control cc: the stack finds the
    holes by RACK (RFC 8985) and retransmits, so does the kernel, and every byte comes
    back in order."""
    s, d = fresh_svc, fresh_svc.daemon
    d.ctl("tcp", "params", "cc", cc)
    data = os.urandom(20 * MB)
    with routed_client(s) as client:
        retrans = d.counter("tcp.retrans_segs")
        rack_lost = d.counter("tcp.rack_lost")
        kernel_retrans = kernel_tcp_mib(client.peer, "RetransSegs")
        with nft_table(s.peer, "dpsloss", forward_rules=forward_loss_rules(loss_pct)):
            got, digest = echo_transfer(s, data, connect=client.connect)
        assert got == len(data)
        assert digest == hashlib.sha256(data).hexdigest()
        assert d.counter("tcp.retrans_segs") > retrans
        assert d.counter("tcp.rack_lost") > rack_lost
        assert kernel_tcp_mib(client.peer, "RetransSegs") > kernel_retrans
        wait_idle(d, ECHO)
    s.ping_ok()


@pytest.mark.slow
def test_echo_20mb_with_stack_segments_lost_at_peer_input_byte_exact(fresh_svc):
    """1 % of the stack's segments dropped on the peer's own input hook (the client is the
    peer itself), so loss hits both ways of echo at once: echo's send side stalls, its
    receive window closes, and the kernel keeps probing it. This deadlocked when the
    scaled window's right edge moved back by a few bytes (Linux's SND.NXT then lay past
    RCV.NXT, and its ACKs into the zero window were ignored): fixed in c99752e."""
    s = fresh_svc
    data = os.urandom(20 * MB)
    with nft_table(s.peer, "dpsloss", input_rules=forward_loss_rules(1)):
        got, digest = echo_transfer(s, data)
    assert got == len(data)
    assert digest == hashlib.sha256(data).hexdigest()
    wait_idle(s.daemon, ECHO)
    s.ping_ok()


# ---------------------------------------------------------------------------------------------
# 4. The peer vanishes

def test_peer_rst_during_chargen_download_ends_the_connection(svc):
    d = svc.daemon
    in_rsts = d.counter("tcp.in_rsts")
    sock = tcp_connect(svc, CHARGEN)
    try:
        assert len(recv_exact(sock, 100000)) == 100000
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()   # SO_LINGER {1, 0}: the kernel sends RST instead of FIN
    d.wait_counter("tcp.in_rsts", in_rsts + 1, timeout=20)
    wait_idle(d, CHARGEN)
    svc.ping_ok()


class PatternReader:
    """Reads a chargen stream on a thread, checking every byte against the pattern; keeps
    going through silences until stopped, and records how the stream ended."""

    def __init__(self, sock):
        self.sock = sock
        self.sock.settimeout(1.0)
        self.total = 0
        self.mismatch = None
        self.ended = None          # "eof" or the exception that ended it
        self.stop_flag = threading.Event()
        self._pattern = chargen_pattern(PATTERN_PERIOD * 40)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_flag.is_set():
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError as e:
                self.ended = e
                return
            if not chunk:
                self.ended = "eof"
                return
            off = self.total % PATTERN_PERIOD
            if self.mismatch is None and chunk != self._pattern[off:off + len(chunk)]:
                self.mismatch = self.total
            self.total += len(chunk)

    def stop(self):
        self.stop_flag.set()
        self.thread.join(10)


def test_peer_silent_stack_backs_off_then_recovers_or_resets(fresh_svc):
    s, d = fresh_svc, fresh_svc.daemon
    baseline = s.settled_mempool()
    sock = tcp_connect(s, CHARGEN)
    reader = PatternReader(sock)
    try:
        topo.wait_until(lambda: reader.total >= MB, timeout=30, what="1 MB of chargen")
        rto = d.counter("tcp.rto")
        retrans = d.counter("tcp.retrans_segs")
        with nft_table(s.peer, "dpsblackhole", input_rules=["drop"], output_rules=["drop"]):
            silent_since = time.monotonic()
            d.wait_counter("tcp.rto", rto + 3, timeout=60)
            # Exponential backoff (RFC 6298 §5.5): from an RTO of at least 200 ms, 6 s of
            # silence hold no more than 5 timeouts; a fixed 200 ms timer would make 30. (A
            # slow machine only makes fewer.)
            time.sleep(max(0.0, 6.0 - (time.monotonic() - silent_since)))
            assert d.counter("tcp.rto") - rto <= 12
            assert d.counter("tcp.retrans_segs") > retrans
            at_restore = reader.total
        # Recovered (more pattern bytes arrive) or reset cleanly; either way no crash.
        topo.wait_until(lambda: reader.total > at_restore + MB or reader.ended is not None,
                        timeout=90, interval=0.2, what="stream recovered or ended")
        assert reader.mismatch is None, "pattern broken at byte %d" % reader.mismatch
        if reader.ended is not None:
            assert reader.ended == "eof" or isinstance(reader.ended, ConnectionResetError), \
                reader.ended
    finally:
        reader.stop()
        sock.close()
    wait_idle(d, CHARGEN, timeout=30)
    s.wait_mempool_back(baseline, timeout=30)
    s.ping_ok()


# ---------------------------------------------------------------------------------------------
# 5. What tshark sees

def test_synack_offers_mss_1460_sack_wscale_timestamps(svc):
    cap = Capture(svc, "tcp port %d" % ECHO, "options")
    try:
        sock = tcp_connect(svc, ECHO)
        try:
            assert echo_round_trip(sock, b"options?") == b"options?"
        finally:
            sock.close()
    finally:
        cap.stop()
    rows = cap.fields("ip.src==%s && tcp.flags.syn==1 && tcp.flags.ack==1" % svc.stack_ip,
                      "tcp.options.mss_val", "tcp.options.sack_perm",
                      "tcp.options.wscale.shift", "tcp.options.timestamp.tsval")
    assert rows, "no SYN-ACK captured"
    mss, sack_perm, wscale, tsval = rows[0]
    assert mss == "1460"
    assert sack_perm != ""
    assert wscale != ""
    assert tsval != ""
    wait_idle(svc.daemon, ECHO)
    svc.ping_ok()


def test_ecn_synack_has_ece_not_cwr_and_data_is_ect0(fresh_svc):
    s = fresh_svc
    old = sysctl(s.peer, "net.ipv4.tcp_ecn")
    sysctl(s.peer, "net.ipv4.tcp_ecn", 1)
    try:
        cap = Capture(s, "tcp port %d" % ECHO, "ecn")
        try:
            sock = tcp_connect(s, ECHO)
            try:
                payload = os.urandom(64 * 1024)
                assert echo_round_trip(sock, payload) == payload
            finally:
                sock.close()
        finally:
            cap.stop()
    finally:
        sysctl(s.peer, "net.ipv4.tcp_ecn", old)
    syn = cap.fields("ip.src==%s && tcp.flags.syn==1 && tcp.flags.ack==0" % s.peer_ip,
                     "tcp.flags.ece", "tcp.flags.cwr")
    assert syn and all(tshark_bool(v) for v in syn[0]), "the kernel did not ask for ECN: %r" % syn
    synack = cap.fields("ip.src==%s && tcp.flags.syn==1 && tcp.flags.ack==1" % s.stack_ip,
                        "tcp.flags.ece", "tcp.flags.cwr")
    assert synack, "no SYN-ACK captured"
    assert tshark_bool(synack[0][0]) and not tshark_bool(synack[0][1]), synack
    # RFC 3168 §6.1.5: retransmissions are sent without ECT; a busy machine may cause one.
    data = cap.fields("ip.src==%s && tcp.len>0 && !tcp.analysis.retransmission && "
                      "!tcp.analysis.fast_retransmission" % s.stack_ip, "ip.dsfield.ecn")
    assert data, "no data segment from the stack captured"
    assert {row[0] for row in data} == {"2"}, "ECN field of data segments (2 = ECT(0))"
    wait_idle(s.daemon, ECHO)
    s.ping_ok()


def test_acks_carry_sack_blocks_when_uploads_have_holes(fresh_svc):
    """5 % of a client's segments to discard are lost on the peer's forward hook: the
    stack's ACKs (captured on the peer's stack-facing interface) report the holes."""
    s = fresh_svc
    with routed_client(s) as client:
        loss = forward_loss_rules(5, "ip daddr %s tcp dport %d" % (s.stack_ip, DISCARD))
        cap = Capture(s, "tcp port %d" % DISCARD, "sack")
        try:
            with nft_table(s.peer, "dpsloss", forward_rules=loss):
                sock = client.connect(DISCARD, timeout=60)
                try:
                    block = os.urandom(MB)
                    for _ in range(5):
                        sock.sendall(block)
                    sock.shutdown(socket.SHUT_WR)
                    assert sock.recv(1) == b""
                finally:
                    sock.close()
        finally:
            cap.stop()
        wait_idle(s.daemon, DISCARD)
    sacks = cap.fields("ip.src==%s && tcp.options.sack_le" % s.stack_ip, "tcp.options.sack_le")
    assert sacks, "no ACK from the stack carried a SACK block"
    assert service_row(s.daemon, DISCARD)["bytes_in"] == 5 * MB
    s.ping_ok()


# ---------------------------------------------------------------------------------------------
# 6. Attacks

def test_syn_flood_answered_with_cookies_real_client_still_served(fresh_svc):
    s, d = fresh_svc, fresh_svc.daemon
    d.ctl("service", "add", "echo", "tcp", SYNFLOOD_PORT, "backlog", 16)
    cookies = d.counter("tcp.syncookies_sent")
    # Half-open entries must stay: the kernel's RSTs to the SYN-ACKs never leave.
    rules = ["tcp flags & rst == rst drop"]
    sports = random.sample(range(1024, 32768), 5000)   # below the ephemeral range
    frames = [bytes(s.eth() / s.ip() / TCP(sport=p, dport=SYNFLOOD_PORT, flags="S",
                                           seq=random.getrandbits(32), window=64240,
                                           options=[("MSS", 1460), ("SAckOK", b""),
                                                    ("Timestamp", (p, 0)), ("WScale", 7)]))
              for p in sports]
    with nft_table(s.peer, "dpsnorst", output_rules=rules):
        with s.packet_socket() as ps:
            flood = threading.Thread(target=ps.send_many, args=(frames,), daemon=True)
            flood.start()
            try:
                time.sleep(0.2)
                sock = tcp_connect(s, SYNFLOOD_PORT, timeout=60)
                try:
                    assert echo_round_trip(sock, b"still here") == b"still here"
                finally:
                    sock.close()
            finally:
                flood.join(120)
            assert not flood.is_alive()
    assert d.counter("tcp.syncookies_sent") > cookies
    # After the flood, a client still gets through.
    sock = tcp_connect(s, SYNFLOOD_PORT, timeout=60)
    try:
        assert echo_round_trip(sock, b"after") == b"after"
    finally:
        sock.close()
    s.ping_ok()


def test_blind_rst_syn_and_data_injection_do_not_harm_connection(svc):
    d = svc.daemon
    sock = tcp_connect(svc, ECHO)
    try:
        assert echo_round_trip(sock, b"before") == b"before"
        cport = sock.getsockname()[1]
        before = d.stats()

        def forged(flags, payload=b""):
            seg = TCP(sport=cport, dport=ECHO, flags=flags, seq=random.getrandbits(32),
                      ack=random.getrandbits(32) if "A" in flags else 0, window=512)
            return svc.eth() / svc.ip() / seg / Raw(payload) if payload else \
                svc.eth() / svc.ip() / seg

        with svc.packet_socket() as ps:
            for _ in range(5):
                ps.send(forged("R"))
            svc.ping_ok()   # handled in order: the RSTs were seen
            assert echo_round_trip(sock, b"after rst") == b"after rst"
            mid = d.stats()
            assert d.counter("tcp.in_rsts", mid) == d.counter("tcp.in_rsts", before)

            ps.send(forged("S"))
            d.wait_counter("tcp.syn_challenged", d.counter("tcp.syn_challenged", mid) + 1)
            assert echo_round_trip(sock, b"after syn") == b"after syn"

            ps.send(forged("PA", b"INJECTED"))
            svc.ping_ok()
            assert echo_round_trip(sock, b"after data") == b"after data"
        # Nothing else comes back: the injected bytes were not delivered to echo.
        sock.settimeout(1.0)
        with pytest.raises(socket.timeout):
            sock.recv(100)
        after = d.stats()
        assert d.counter("tcp.in_rsts", after) == d.counter("tcp.in_rsts", before)
        assert d.counter("tcp.estab_resets", after) == d.counter("tcp.estab_resets", before)
    finally:
        sock.close()
    wait_idle(d, ECHO)
    svc.ping_ok()


BAD_OPTIONS = [
    ("length_0", b"\x02\x00\x00\x00"),
    ("length_1", b"\x08\x01\x00\x00"),
    ("past_the_header", b"\x08\x0a\x00\x00"),
    ("mss_length_3", b"\x02\x03\x05\x00"),
    ("sack_not_whole_blocks", b"\x01\x01\x05\x06\x00\x00\x00\x01"),
]


@pytest.mark.parametrize("name,options", BAD_OPTIONS, ids=[c[0] for c in BAD_OPTIONS])
def test_malformed_tcp_option_counted_and_stack_still_serves(svc, name, options):
    d = svc.daemon
    copies = 3
    assert len(options) % 4 == 0
    bad = d.counter("tcp.bad_option")
    frames = [svc.eth() / svc.ip() / TCP(sport=20000 + i, dport=ECHO, flags="S",
                                         seq=random.getrandbits(32),
                                         dataofs=5 + len(options) // 4) / Raw(options)
              for i in range(copies)]
    with svc.packet_socket() as ps:
        ps.send_many(frames)
    svc.ping_ok()
    assert d.counter("tcp.bad_option") - bad == copies
    sock = tcp_connect(svc, ECHO)
    try:
        assert echo_round_trip(sock, name.encode()) == name.encode()
    finally:
        sock.close()
    wait_idle(d, ECHO)


class RawConn:
    """A TCP connection to the stack made by hand with scapy from SCAPY_PORT, a port the
    kernel does not use (the caller drops the kernel's RSTs for it). Sequence numbers are
    kept relative: byte 0 is the first data byte either way."""

    def __init__(self, s, ps, dport, syn_options=(), window=65535):
        self.s, self.ps, self.dport, self.window = s, ps, dport, window
        self.iss = random.getrandbits(32)
        ps.send(self._frame(self.iss, 0, "S", options=list(syn_options)))
        synack = ps.recv_until(self.from_stack(lambda t: t.flags.S and t.flags.A), timeout=10)
        assert synack is not None, "no SYN-ACK"
        t = synack[TCP]
        assert t.ack == (self.iss + 1) & 0xffffffff
        self.irs = t.seq
        self.synack_window = t.window
        # The stack's shift applies only if we offered scaling too (RFC 7323 §2.2).
        offered = any(k == "WScale" for k, _ in syn_options)
        self.wscale = dict(o for o in t.options if len(o) == 2).get("WScale", 0) \
            if offered else 0
        self.send(0, "A")

    def _frame(self, seq, ack, flags, payload=b"", options=(), window=None):
        p = self.s.eth() / self.s.ip() / TCP(sport=SCAPY_PORT, dport=self.dport, flags=flags,
                                             seq=seq, ack=ack, options=list(options),
                                             window=self.window if window is None else window)
        return p / Raw(payload) if payload else p

    def ack_frame(self, rel_ack, sack=(), window=None):
        """A pure ACK of the stack's data up to rel_ack (relative), with SACK blocks
        [(left, right)] relative too."""
        base = self.irs + 1
        blocks = tuple((base + x) & 0xffffffff for blk in sack for x in blk)
        return self._frame((self.iss + 1) & 0xffffffff, (base + rel_ack) & 0xffffffff, "A",
                           options=[("SAck", blocks)] if blocks else [], window=window)

    def rel_seq(self, tcp):
        return (tcp.seq - self.irs - 1) & 0xffffffff

    def frame(self, rel_seq, flags="A", payload=b""):
        """A segment at relative sequence number rel_seq, acknowledging the SYN-ACK."""
        return self._frame((self.iss + 1 + rel_seq) & 0xffffffff, (self.irs + 1) & 0xffffffff,
                           flags, payload)

    def send(self, rel_seq, flags="A", payload=b""):
        self.ps.send(self.frame(rel_seq, flags, payload))

    def rel_ack(self, tcp):
        return (tcp.ack - self.iss - 1) & 0xffffffff

    def edge(self, tcp):
        """The right edge of the window a segment from the stack advertises (relative)."""
        return self.rel_ack(tcp) + (tcp.window << self.wscale)

    def from_stack(self, pred):
        return lambda f: TCP in f and f[TCP].sport == self.dport and \
            f[TCP].dport == SCAPY_PORT and pred(f[TCP])


def no_rst_rules():
    return ["tcp sport %d tcp flags & rst == rst drop" % SCAPY_PORT]


def test_data_past_the_window_trimmed_and_not_delivered(fresh_svc):
    """Our own handshake (no window scaling), then a segment that starts inside the
    advertised window and runs 900 bytes past it, and one wholly beyond it: the excess is
    dropped (tcp.data_past_window, tcp.out_of_window), and discard receives exactly the
    window once the hole below is filled."""
    s, d = fresh_svc, fresh_svc.daemon
    with nft_table(s.peer, "dpsnorst", output_rules=no_rst_rules()), \
            s.packet_socket() as ps:
        c = RawConn(s, ps, DISCARD)
        wnd = c.synack_window
        assert wnd > 2000, wnd
        topo.wait_until(lambda: service_row(d, DISCARD)["accepted"] == 1, timeout=10,
                        what="connection accepted")
        past = d.counter("tcp.data_past_window")
        outside = d.counter("tcp.out_of_window")

        c.send(wnd - 100, "PA", b"P" * 1000)      # 100 bytes inside the window, 900 past
        c.send(wnd + 10000, "PA", b"F" * 1000)    # wholly beyond it
        s.ping_ok()
        assert d.counter("tcp.data_past_window") > past
        assert d.counter("tcp.out_of_window") > outside

        # Fill the hole below: the stack then holds exactly wnd bytes.
        ps.send_many([c.frame(off, "A", b"D" * min(1000, wnd - 100 - off))
                      for off in range(0, wnd - 100, 1000)], pace_every=16, pace_s=0.005)
        got = ps.recv_until(c.from_stack(lambda t: c.rel_ack(t) == wnd), timeout=20)
        assert got is not None, "no ACK of the whole window"
        topo.wait_until(lambda: service_row(d, DISCARD)["bytes_in"] == wnd, timeout=10,
                        what="discard read the window")
        s.ping_ok()
        assert service_row(d, DISCARD)["bytes_in"] == wnd
        c.send(wnd, "R")
    wait_idle(d, DISCARD)
    s.ping_ok()


# RFC 6675 §2: an ACK that SACKs new data is a duplicate ACK whatever its window (Linux
# grows its window on almost every ACK); this once left every loss to the RTO.


@pytest.mark.parametrize("window_step", [0, 1000], ids=["same_window", "growing_window"])
def test_sack_acks_above_a_hole_trigger_fast_retransmit(fresh_svc, window_step):
    """We take chargen's first segments but leave a hole at the first, and send three ACKs
    each SACKing one more segment above it (as Linux does, with a window that grows by
    window_step each time): the stack must enter fast recovery and resend the hole,
    not wait for its retransmission timer (RFC 6675 §5)."""
    s, d = fresh_svc, fresh_svc.daemon
    rto_min = d.ctl("tcp", "params", json=True)["rto-min-ms"]
    d.ctl("tcp", "params", "rto-min-ms", 1000)   # time for Python to answer first
    with contextlib.ExitStack() as undo:
        undo.callback(d.ctl, "tcp", "params", "rto-min-ms", rto_min)
        undo.enter_context(nft_table(s.peer, "dpsnorst", output_rules=no_rst_rules()))
        ps = undo.enter_context(s.packet_socket())
        c = RawConn(s, ps, CHARGEN, syn_options=[("MSS", 1460), ("SAckOK", b""),
                                                  ("WScale", 0)], window=30000)
        seen = {}

        def data(t):
            if len(t.payload) > 0:
                seen[c.rel_seq(t)] = len(t.payload)
            return len(seen) >= 4

        assert ps.recv_until(c.from_stack(data), timeout=10), "fewer than 4 segments"
        mss = seen[0]
        fast, rto = d.counter("tcp.fast_retrans"), d.counter("tcp.rto")
        ps.send_many([c.ack_frame(0, sack=[(mss, (k + 2) * mss)],
                                  window=30000 + (k + 1) * window_step) for k in range(3)])
        resent = ps.recv_until(c.from_stack(lambda t: c.rel_seq(t) == 0 and
                                            len(t.payload) > 0), timeout=10)
        assert resent is not None, "the hole was not resent"
        after_fast, after_rto = d.counter("tcp.fast_retrans"), d.counter("tcp.rto")
        ps.send(c.frame(0, "R"))
    s.ping_ok()
    assert (after_fast - fast, after_rto - rto) == (1, 0), "(fast retransmits, timeouts)"


def test_receive_window_right_edge_never_moves_back(fresh_svc):
    """A sender that uses every byte of the advertised (scaled) window while echo's buffers
    fill up (our window is 0, so echo cannot send and stops reading): no ACK of the stack
    may advertise a right edge left of an earlier one (RFC 7323 §2.4), and nothing we send
    is trimmed. Rounding the window down to the scale unit used to move the edge back."""
    s, d = fresh_svc, fresh_svc.daemon
    delack = d.ctl("tcp", "params", json=True)["delack-ms"]
    d.ctl("tcp", "params", "delack-ms", 1)   # an ACK for every burst, at once
    past = d.counter("tcp.data_past_window")
    with contextlib.ExitStack() as undo:
        undo.callback(d.ctl, "tcp", "params", "delack-ms", delack)
        retractions = window_retractions(s, undo)
    s.ping_ok()
    assert retractions == [], "right edge moved back: (ack, window field, edge, earlier)"
    assert d.counter("tcp.data_past_window") == past


def window_retractions(s, undo):
    """Fills echo's buffers through a RawConn that uses every byte the stack's window
    allows; returns the ACKs whose right edge lay left of an earlier one."""
    retractions = []
    undo.enter_context(nft_table(s.peer, "dpsnorst", output_rules=no_rst_rules()))
    ps = undo.enter_context(s.packet_socket())
    c = RawConn(s, ps, ECHO, syn_options=[("MSS", 1460), ("WScale", 0)], window=0)
    assert c.wscale > 0, "the stack did not scale its window"
    state = {"max_edge": c.synack_window, "ack": 0}

    def note(t):
        if t.flags.A and not t.flags.S:
            edge = c.edge(t)
            if edge < state["max_edge"]:
                retractions.append((c.rel_ack(t), t.window, edge, state["max_edge"]))
            state["max_edge"] = max(state["max_edge"], edge)
            state["ack"] = c.rel_ack(t)
        return True

    # One segment at a time, each acknowledged on its own (delack-ms 1), of a size that is
    # no multiple of the scale unit: the window's rounding shows at once.
    snd = 0
    for _ in range(1000):
        room = state["max_edge"] - snd
        if room <= 0:
            break           # the window is closed: echo's buffers are full
        n = min(1459, room)
        ps.send(c.frame(snd, "A", b"w" * n))
        snd += n
        acked = ps.recv_until(c.from_stack(lambda t: note(t) and
                                           (state["ack"] == snd or bool(retractions))),
                              timeout=10)
        if retractions or acked is None:
            break
    c.send(state["ack"], "R")
    return retractions
