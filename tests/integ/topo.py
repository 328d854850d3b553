"""Shared helpers of the integration tests: network namespaces and veths as kernel peers,
dpstackd processes, dpstackctl, raw frames from inside a namespace, and bounded waiting.

Everything that runs a program goes through run(), which always has a timeout. Every
namespace, veth and daemon made here is registered with a Lab, whose close() removes them in
reverse order even when a test failed; conftest.py owns the Labs.

Names: every namespace and interface name starts with "dpi" + the pid of the pytest process in
hex, so two runs (or two pytest processes) never clash, and a later run can recognise leftovers
of a dead one (see remove_stale).
"""

import contextlib
import ctypes
import json as jsonlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Absolute: programs the tests start may run elsewhere (LD_PRELOAD of a relative path is
# looked up from their working directory).
BUILD = os.path.abspath(os.environ.get("DPSTACK_BUILD", os.path.join(ROOT, "build")))
DPSTACKD = os.path.join(BUILD, "dpstackd")
DPSTACKCTL = os.path.join(BUILD, "tools", "dpstackctl", "dpstackctl")


def _sanitized(build):
    """The build's meson b_sanitize option is set (an ASan/UBSan daemon)."""
    try:
        with open(os.path.join(build, "meson-info", "intro-buildoptions.json")) as f:
            opts = jsonlib.load(f)
    except (OSError, ValueError):
        return False
    return any(o["name"] == "b_sanitize" and o["value"] != "none" for o in opts)


SANITIZED = _sanitized(BUILD)

PREFIX = "dpi"
PID_HEX = "%x" % os.getpid()

DEFAULT_TIMEOUT = 20.0          # any single helper program
DAEMON_START_TIMEOUT = 30.0     # dpstackd from exec to answering dpstackctl
DAEMON_STOP_TIMEOUT = 15.0      # SIGTERM to exit

# Messages in a daemon's output that mean it crashed or hit undefined behaviour, whatever its
# exit status.
CRASH_MARKERS = ("Segmentation fault", "AddressSanitizer", "runtime error:", "Aborted",
                 "PANIC", "core dumped", "stack smashing")


class CommandError(AssertionError):
    pass


def run(cmd, timeout=DEFAULT_TIMEOUT, check=True, input=None, env=None):
    """Runs cmd (a list) with a timeout; returns the CompletedProcess (text mode)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input,
                           env=env)
    except subprocess.TimeoutExpired as e:
        raise CommandError("timed out after %.0f s: %s\nstdout: %s\nstderr: %s" %
                           (timeout, " ".join(cmd), e.stdout, e.stderr)) from None
    if check and p.returncode != 0:
        raise CommandError("exit %d: %s\nstdout: %s\nstderr: %s" %
                           (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p


def wait_until(pred, timeout, interval=0.05, what="condition"):
    """Polls pred() until it returns a true value, which is returned; fails after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError("%s not reached within %.1f s (last: %r)" %
                                 (what, timeout, last))
        time.sleep(interval)


def stop_process(pid, timeout=10):
    """SIGSTOPs pid and returns once every one of its threads is stopped: the signal is
    delivered to each thread on its next way to user space, and a worker busy on the other
    core can finish a command first."""
    os.kill(pid, signal.SIGSTOP)

    def all_stopped():
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                continue
            if state not in ("T", "t"):
                return False
        return True
    wait_until(all_stopped, timeout, interval=0.01, what="every thread of %d stopped" % pid)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale():
    """Deletes namespaces, veths and temporary directories left by an earlier test run whose
    pytest process is dead. Only names of this suite's own pattern are touched."""
    ns_re = re.compile(r"^%s([0-9a-f]+)-[0-9a-z]+$" % PREFIX)
    link_re = re.compile(r"^%s([0-9a-f]+)[0-9a-z]{2}[rp]$" % PREFIX)
    out = run(["ip", "netns", "list"], check=False).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = ns_re.match(name)
        if m and not pid_alive(int(m.group(1), 16)):
            run(["ip", "netns", "del", name], check=False)
    tmp_re = re.compile(r"^dpstack-integ-([0-9a-f]+)-")
    for name in os.listdir(tempfile.gettempdir()):
        m = tmp_re.match(name)
        if m and not pid_alive(int(m.group(1), 16)):
            shutil.rmtree(os.path.join(tempfile.gettempdir(), name), ignore_errors=True)
    out = run(["ip", "-o", "link", "show"], check=False).stdout
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        name = parts[1].strip().split("@")[0]
        m = link_re.match(name)
        if m and not pid_alive(int(m.group(1), 16)):
            run(["ip", "link", "del", name], check=False)


# ---------------------------------------------------------------------------------------------
# Sockets inside a namespace

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def in_netns(ns, fn, timeout=10.0):
    """Calls fn() on a short-lived thread that has entered namespace ns and returns its
    result. A socket made there stays in ns after the thread is gone, so the test process
    can use it without entering the namespace itself."""
    result = {}

    def body():
        try:
            fd = os.open("/run/netns/%s" % ns, os.O_RDONLY | os.O_CLOEXEC)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, "setns(%s): %s" % (ns, os.strerror(err)))
            finally:
                os.close(fd)
            result["value"] = fn()
        except BaseException as e:  # handed to the caller
            result["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise AssertionError("in_netns(%s) did not finish within %.0f s" % (ns, timeout))
    if "error" in result:
        raise result["error"]
    return result["value"]


SO_TIMESTAMPNS = 35     # <asm-generic/socket.h>; also the SCM type of its control message


def _kernel_timestamp(ancdata):
    """The SCM_TIMESTAMPNS of a recvmsg() as seconds, or now if the kernel gave none."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec + nsec / 1e9
    return time.time()


class PacketSocket:
    """A raw AF_PACKET socket on an interface of a namespace: send frames built with scapy
    (or bytes) and receive the frames the kernel side sees, each call bounded. Each received
    frame carries in .time the kernel's receive timestamp (wall clock), and send() returns
    the wall-clock time just before its system call: a test that times the other side's
    answer measures the stack, not this process's scheduling or scapy's parsing."""

    def __init__(self, ns, ifname):
        def make():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.bind((ifname, 0))
            return s
        self.sock = in_netns(ns, make)
        self.ifname = ifname

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, frame):
        data = bytes(frame)
        sent_at = time.time()
        n = self.sock.send(data)
        assert n == len(data), "short send: %d of %d bytes" % (n, len(data))
        return sent_at

    def send_many(self, frames, pace_every=256, pace_s=0.002):
        """Sends frames, pausing a little every pace_every frames so that a burst does not
        overflow the veth and the PMD's RX ring (a frame lost there is counted only below
        the stack, in the port's lost counters, not where a test looks)."""
        for i, f in enumerate(frames):
            self.send(f)
            if pace_every and (i + 1) % pace_every == 0:
                time.sleep(pace_s)

    def recv_until(self, pred, timeout):
        """Returns the first received frame (scapy Ether) for which pred(frame) is true, or
        None after timeout. Outgoing frames (our own sends) are skipped."""
        from scapy.layers.l2 import Ether
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data, ancdata, _, addr = self.sock.recvmsg(65536, 64)
            except socket.timeout:
                return None
            if addr[2] == PACKET_OUTGOING:
                continue
            frame = Ether(data)
            frame.time = _kernel_timestamp(ancdata)
            if pred(frame):
                return frame


# ---------------------------------------------------------------------------------------------
# Namespaces and veths

class Peer:
    """The kernel end of a veth, inside its own namespace: the peer the stack talks to."""

    def __init__(self, ns, ifname, root_ifname, addr=None, plen=24):
        self.ns = ns
        self.ifname = ifname
        self.root_ifname = root_ifname
        self.addr = addr
        self.plen = plen

    def run(self, *cmd, timeout=DEFAULT_TIMEOUT, check=True):
        return run(["ip", "netns", "exec", self.ns] + [str(c) for c in cmd], timeout=timeout,
                   check=check)

    @property
    def mac(self):
        out = self.run("ip", "-j", "link", "show", "dev", self.ifname).stdout
        return jsonlib.loads(out)[0]["address"]

    def set_mac(self, mac):
        self.run("ip", "link", "set", "dev", self.ifname, "address", mac)

    def neigh(self, addr):
        """The kernel's neighbour entry for addr: {"dst", "lladdr", "state": [...]} or None."""
        out = self.run("ip", "-j", "neigh", "show", "to", addr, "dev", self.ifname).stdout
        rows = jsonlib.loads(out) if out.strip() else []
        return rows[0] if rows else None

    def ping(self, dst, count=1, size=None, interval=None, flood=False, wait=None,
             deadline=None, ttl=None, pmtu=None, timeout=None, extra=()):
        """Runs ping(8) in the namespace; returns a PingResult (never raises on loss)."""
        cmd = ["ping", "-n", "-c", str(count)]
        if size is not None:
            cmd += ["-s", str(size)]
        if interval is not None:
            cmd += ["-i", str(interval)]
        if flood:
            cmd += ["-f"]
        if wait is not None:
            cmd += ["-W", str(wait)]
        if deadline is not None:
            cmd += ["-w", str(deadline)]
        if ttl is not None:
            cmd += ["-t", str(ttl)]
        if pmtu is not None:
            cmd += ["-M", pmtu]
        cmd += list(extra) + [dst]
        if timeout is None:
            per_packet = 0.01 if flood else (interval or 1.0)
            timeout = (deadline or 0) + count * per_packet + (wait or 10) + 10
        return PingResult(self.run(*cmd, timeout=timeout, check=False))


class PingResult:
    _stats = re.compile(r"(\d+) packets transmitted, (\d+) received")

    def __init__(self, proc):
        self.proc = proc
        self.output = proc.stdout + proc.stderr
        m = self._stats.search(proc.stdout)
        self.transmitted = int(m.group(1)) if m else 0
        self.received = int(m.group(2)) if m else 0

    @property
    def lost(self):
        return self.transmitted - self.received

    @property
    def clean(self):
        """No reply was corrupted or duplicated, as ping(8) checks them."""
        return not any(m in self.output for m in ("wrong data byte", "BAD CHECKSUM", "(DUP!)",
                                                  "(truncated)"))

    def __repr__(self):
        return "PingResult(%d/%d, exit %d):\n%s" % (self.received, self.transmitted,
                                                   self.proc.returncode, self.output[-2000:])


class Lab:
    """Owns the namespaces, veths, daemons and temporary directories of one fixture; close()
    removes all of them, stopping at nothing, and reports what went wrong."""

    _counter = 0
    _lock = threading.Lock()

    def __init__(self, name="lab"):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:24]  # the socket path has 108 bytes
        self.tmp = tempfile.mkdtemp(prefix="dpstack-integ-%s-%s-" % (PID_HEX, name))
        self._cleanups = []
        self.daemons = []

    @classmethod
    def _next_id(cls):
        with cls._lock:
            n = cls._counter
            cls._counter += 1
        if n >= 36 * 36:
            raise AssertionError("more than 1296 veths in one run")
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"
        return digits[n // 36] + digits[n % 36]

    def add_cleanup(self, fn):
        self._cleanups.append(fn)

    def add_netns(self):
        """An empty network namespace with lo up and IPv6 off; returns its name."""
        ns = "%s%s-%s" % (PREFIX, PID_HEX, self._next_id())
        run(["ip", "netns", "add", ns])
        self.add_cleanup(lambda: run(["ip", "netns", "del", ns], check=False))
        run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"])
        run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
        run(["ip", "netns", "exec", ns, "sysctl", "-qw",
             "net.ipv6.conf.default.disable_ipv6=1"])
        return ns

    def add_peer(self, addr=None, plen=24, gw=None, sysctls=(), queues=1, root_ns=None):
        """A veth pair: the root end (for DPDK) up, the other end in a new namespace with
        addr/plen, tx checksum offload off, IPv6 off (so that no unrelated frames reach the
        stack) and lo up. gw: default route via it. queues: RX and TX queues of each end.
        root_ns: the namespace the root end goes to (a daemon's, made by add_netns), None for
        this one. Returns a Peer."""
        nid = self._next_id()
        base = "%s%s%s" % (PREFIX, PID_HEX, nid)
        root_if, peer_if = base + "r", base + "p"
        assert len(root_if) <= 15, root_if
        ns = "%s%s-%s" % (PREFIX, PID_HEX, nid)
        run(["ip", "netns", "add", ns])
        self.add_cleanup(lambda: run(["ip", "netns", "del", ns], check=False))
        q = ["numrxqueues", str(queues), "numtxqueues", str(queues)]
        run(["ip", "link", "add", root_if] + q + ["type", "veth", "peer", "name", peer_if] + q)
        # Deleting the namespace deletes the pair; this catches a failure before the move.
        self.add_cleanup(lambda: run(["ip", "link", "del", root_if], check=False)
                         if os.path.exists("/sys/class/net/" + root_if) else None)
        inside = ["ip", "netns", "exec", root_ns] if root_ns else []
        if root_ns:
            run(["ip", "link", "set", root_if, "netns", root_ns])
        run(inside + ["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % root_if])
        run(["ip", "link", "set", peer_if, "netns", ns])
        peer = Peer(ns, peer_if, root_if, addr, plen)
        peer.run("ip", "link", "set", "lo", "up")
        peer.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        peer.run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % peer_if)
        for s in sysctls:
            peer.run("sysctl", "-qw", s)
        peer.run("ethtool", "-K", peer_if, "tx", "off")
        if addr is not None:
            peer.run("ip", "addr", "add", "%s/%d" % (addr, plen), "dev", peer_if)
        peer.run("ip", "link", "set", peer_if, "up")
        run(inside + ["ip", "link", "set", root_if, "up"])
        if gw is not None:
            peer.run("ip", "route", "add", "default", "via", gw)
        return peer

    def start_daemon(self, config, name="d", wait=True, netns=None, pidns=False, wrap=(),
                     dad=False):
        """A dpstackd on config, in network namespace netns (None: this one), in a PID
        namespace of its own with pidns, its command line after wrap (setpriv ...); its
        ports skip Duplicate Address Detection unless dad (see without_dad)."""
        d = Daemon(os.path.join(self.tmp, name), config if dad else without_dad(config),
                   netns, pidns, wrap)
        self.daemons.append(d)
        self.add_cleanup(d.stop_quietly)
        d.start(wait=wait)
        return d

    def close(self):
        """Stops every daemon (asserting a clean exit) and removes everything else."""
        problems = []
        for d in list(self.daemons):
            if d.proc is not None and d.returncode is None:
                try:
                    d.stop()
                except AssertionError as e:
                    problems.append(str(e))
        for fn in reversed(self._cleanups):
            try:
                fn()
            except Exception as e:  # keep cleaning
                problems.append("cleanup: %r" % e)
        self._cleanups = []
        shutil.rmtree(self.tmp, ignore_errors=True)
        if problems:
            raise AssertionError("\n".join(problems))


# ---------------------------------------------------------------------------------------------
# dpstackd and dpstackctl

class CtlResult:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self):
        return "CtlResult(rc=%d, out=%r, err=%r)" % (self.rc, self.out[-500:], self.err[-500:])


def one_port_config(root_ifname, addr="10.0.0.2/24", driver="net_af_xdp", extra=(), head=()):
    """head: directives before the rest (an eal line, mbufs); extra: commands after."""
    return "\n".join(list(head) + ["workers 1",
                      "port add port0 %s0,iface=%s" % (driver, root_ifname),
                      "ip addr add %s dev port0" % addr] + list(extra)) + "\n"


def without_dad(config):
    """config with `ip -6 dad-transmits 0` for each port it adds, appended (line numbers
    stay those of the test's text): the kernel peers run nodad too, and a test that is not
    about DAD should not wait its second (RFC 4861 RetransTimer) at every start. A config
    that sets dad-transmits itself keeps its own, and so does a test that asks for DAD."""
    if not isinstance(config, str) or "dad-transmits" in config:
        return config
    ports = [line.split()[2] for line in config.splitlines()
             if len(line.split()) >= 4 and line.split()[:2] == ["port", "add"]]
    if not ports:
        return config
    tail = "" if config.endswith("\n") else "\n"
    return config + tail + "".join("ip -6 dad-transmits 0 dev %s\n" % p for p in ports)


def dying_with_parent(argv):
    """argv run so that it gets SIGTERM when the test process dies, and a killed test run
    leaves no daemon behind (Ctrl-C is handled by the fixtures' teardown instead). setpriv
    sets the signal and execs argv (same PID): a preexec_fn would run Python between fork
    and exec, which can deadlock when the test has threads (Python's subprocess warns so),
    and did: an application now and then never started."""
    return ["setpriv", "--pdeathsig", "TERM", "--"] + [str(a) for a in argv]


class NsProcess:
    """A peer's server (dnsmasq, radvd) run in namespace ns, its output appended to
    log_path, stopped by stop() or at the lab's close."""

    def __init__(self, lab, ns, argv, log_path):
        self.log_path = log_path
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen(dying_with_parent(["ip", "netns", "exec", ns] + list(argv)),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        lab.add_cleanup(self.stop)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None
        if not self.log.closed:
            self.log.close()

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


class Daemon:
    """One dpstackd with its own control socket in its own directory."""

    def __init__(self, workdir, config, netns=None, pidns=False, wrap=()):
        os.makedirs(workdir, exist_ok=True)
        self.dir = workdir
        self.netns = netns
        self.pidns = pidns
        self.wrap = list(wrap)
        self.config_path = os.path.join(workdir, "dpstackd.conf")
        self.sock = os.path.join(workdir, "ctl.sock")
        self.log_path = os.path.join(workdir, "dpstackd.log")
        with open(self.config_path, "wb") as f:
            f.write(config if isinstance(config, bytes) else config.encode())
        self.proc = None
        self.returncode = None
        self._log = None

    @property
    def env(self):
        env = dict(os.environ)
        env["DPSTACK_CTL"] = self.sock
        env["DPSTACK_SOCK"] = os.path.join(self.dir, "app.sock")
        env["DPSTACK_CLUSTER_SOCK"] = os.path.join(self.dir, "cluster.sock")
        return env

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def start(self, wait=True):
        self._log = open(self.log_path, "w")
        # ip netns exec enters the namespace and execs the rest: the PID stays dpstackd's.
        inside = ["ip", "netns", "exec", self.netns] if self.netns else []
        # unshare --fork: dpstackd is its child (PID 1 of the new namespace), signalled
        # directly (unshare does not pass SIGTERM on).
        if self.pidns:
            inside += ["unshare", "--pid", "--fork", "--kill-child=TERM", "--"]
        argv = inside + self.wrap + dying_with_parent([DPSTACKD, "-c", self.config_path])
        self.proc = subprocess.Popen(argv,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=DAEMON_START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            rc = self.proc.poll()
            if rc is not None:
                self.returncode = rc
                raise AssertionError("dpstackd exited with %d during start-up:\n%s" %
                                     (rc, self.log()[-3000:]))
            if os.path.exists(self.sock):
                r = self.ctl_result("link", "show", timeout=max(1.0, deadline -
                                                                 time.monotonic()))
                if r.rc == 0:
                    self._wait_dad(deadline)
                    return
            if time.monotonic() >= deadline:
                raise AssertionError("dpstackd not ready within %.0f s:\n%s" %
                                     (timeout, self.log()[-3000:]))
            time.sleep(0.05)

    def _wait_dad(self, deadline):
        """Until the start-up deadline at most: the addresses the config gave (the ports'
        link-local ones at least) finish Duplicate Address Detection, a second with one
        probe, so a test neither races it nor sees them change state under it (RFC 4862
        §5.4: a tentative address is not ours yet). A config that keeps one tentative
        longer gets it so."""
        while time.monotonic() < deadline:
            r = self.ctl_result("ip", "addr", "show")
            if r.rc != 0 or " tentative" not in r.out:
                return
            time.sleep(0.05)

    def wait_exit(self, timeout=DAEMON_START_TIMEOUT):
        """For a daemon expected to give up on its own: its exit status once it has. If it
        is still running after timeout, it is stopped and the test fails."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop_quietly()
            raise AssertionError("dpstackd still running after %.0f s:\n%s" %
                                 (timeout, self.log()[-3000:])) from None
        self.returncode = rc
        self._close_log()
        return rc

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ctl_result(self, *args, json=False, timeout=DEFAULT_TIMEOUT, sock=None):
        """Runs dpstackctl; returns a CtlResult whatever its exit status."""
        cmd = [DPSTACKCTL, "-s", sock or self.sock] + (["-j"] if json else [])
        cmd += [str(a) for a in args]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("dpstackctl %s: no answer within %.0f s (daemon %s)" %
                                 (" ".join(cmd[3:]), timeout,
                                  "alive" if self.alive() else "dead")) from None
        return CtlResult(p)

    def ctl(self, *args, json=False, timeout=DEFAULT_TIMEOUT):
        """Runs dpstackctl, which must succeed; returns its output, parsed when json."""
        r = self.ctl_result(*args, json=json, timeout=timeout)
        if r.rc != 0:
            raise AssertionError("dpstackctl %s failed (exit %d): %s%s" %
                                 (" ".join(map(str, args)), r.rc, r.err,
                                  "" if self.alive() else
                                  "\ndpstackd died:\n" + self.log()[-3000:]))
        return jsonlib.loads(r.out) if json else r.out

    # Views on the JSON output.
    def stats(self):
        return self.ctl("stats", json=True)

    def counter(self, name, stats=None):
        """An event or a drop counter by its name ("ip.forwarded", "ip.bad_checksum")."""
        s = stats if stats is not None else self.stats()
        if name in s["drops"]:
            return s["drops"][name]
        if name in s["events"]:
            return s["events"][name]
        raise KeyError("no counter named %r" % name)

    def mempool_in_use(self):
        return self.stats()["mempool"]["in_use"]

    def wait_counter(self, name, at_least, timeout=10.0):
        return wait_until(lambda: self.counter(name) >= at_least and self.counter(name),
                          timeout, what="%s >= %d" % (name, at_least))

    def wait_mempool(self, baseline, timeout=10.0):
        """Waits until the pool's in-use count is back at (or under) baseline."""
        return wait_until(lambda: self.mempool_in_use() <= baseline, timeout, interval=0.1,
                          what="mempool in_use <= %d" % baseline)

    def port_mac(self, port="port0"):
        return self.ctl("link", "show", port, json=True)[0]["address"]

    def neigh(self, dst):
        for row in self.ctl("neigh", "show", json=True):
            if row["dst"] == dst:
                return row
        return None

    def wait_neigh_state(self, dst, states, timeout=10.0):
        states = (states,) if isinstance(states, str) else tuple(states)
        return wait_until(lambda: (self.neigh(dst) or {}).get("state") in states and
                          self.neigh(dst), timeout, interval=0.02,
                          what="neigh %s in %s" % (dst, states))

    # Stopping.
    @property
    def pid(self):
        """dpstackd's PID here (in a PID namespace of its own: unshare's child)."""
        if not self.pidns:
            return self.proc.pid
        return wait_until(self._unshare_child, 10, what="dpstackd forked by unshare")

    def _unshare_child(self):
        try:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                pids = f.read().split()
        except FileNotFoundError:
            return None
        return int(pids[0]) if pids else None

    def _signal(self, sig):
        if not self.pidns:
            self.proc.send_signal(sig)
            return
        child = self._unshare_child()
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, sig)

    def stop(self):
        """SIGTERM by PID; asserts a clean exit: status 0, no crash report, socket removed."""
        if self.proc is None or self.returncode is not None:
            return self.returncode
        self._signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(DAEMON_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            rc = self.proc.wait(5)
            self.returncode = rc
            self._close_log()
            raise AssertionError("dpstackd (pid %d) ignored SIGTERM for %.0f s; killed:\n%s" %
                                 (self.proc.pid, DAEMON_STOP_TIMEOUT, self.log()[-3000:]))
        self.returncode = rc
        self._close_log()
        log = self.log()
        problems = []
        if rc != 0:
            problems.append("exit status %d%s" % (rc, " (signal %d)" % -rc if rc < 0 else ""))
        for marker in CRASH_MARKERS:
            if marker in log:
                problems.append("'%s' in its output" % marker)
        if os.path.exists(self.sock):
            problems.append("control socket %s left behind" % self.sock)
        if problems:
            raise AssertionError("dpstackd did not stop cleanly: %s\n%s" %
                                 ("; ".join(problems), log[-3000:]))
        return rc

    def kill(self):
        """SIGKILL by PID, as a crash would end it: nothing of its own cleanup runs, so the
        socket files it leaves are removed here."""
        self._signal(signal.SIGKILL)
        self.returncode = self.proc.wait(10)
        self._close_log()
        for path in (self.sock, self.env["DPSTACK_SOCK"]):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def stop_quietly(self):
        """Cleanup path: make sure the process is gone, by its PID, without asserting."""
        if self.proc is not None and self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(DAEMON_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.proc.wait(5)
        self._close_log()

    def _close_log(self):
        if self._log is not None:
            self._log.close()
            self._log = None


# ---------------------------------------------------------------------------------------------
# Topologies

class SinglePort:
    """One kernel peer (peer_ip, in a namespace) and one dpstackd port (stack_ip)."""

    stack_ip = "10.0.0.2"
    peer_ip = "10.0.0.1"

    def __init__(self, lab, driver="net_af_xdp", extra_config=(), peer_sysctls=(),
                 head_config=()):
        self.lab = lab
        self.peer = lab.add_peer(self.peer_ip, 24, sysctls=peer_sysctls)
        self.daemon = lab.start_daemon(
            one_port_config(self.peer.root_ifname, self.stack_ip + "/24", driver,
                            extra_config, head_config))
        self.stack_mac = self.daemon.port_mac("port0")
        self.peer_mac = self.peer.mac

    def ctl(self, *args, json=False, timeout=DEFAULT_TIMEOUT):
        return self.daemon.ctl(*args, json=json, timeout=timeout)

    def warm_up(self):
        """First pings: ARP both ways, and the PMD's first frames (which can be slow)."""
        wait_until(lambda: self.peer.ping(self.stack_ip, count=1, wait=1).received == 1,
                   timeout=20, interval=0.1, what="first ping answered")

    def ping_ok(self, count=3):
        """The stack still answers the kernel. Frames are handled in order on the one RX
        queue, so once the replies are in, every frame sent before has been handled."""
        r = self.peer.ping(self.stack_ip, count=count, interval=0.01, wait=2)
        assert r.received == count, "stack no longer answers pings: %r" % r
        return r

    def settled_mempool(self):
        """The pool's in-use count once the PMD has taken back what it transmitted: net_af_xdp
        returns sent mbufs only as later bursts reap its completion ring, so a short burst
        of small pings comes first."""
        self.peer.ping(self.stack_ip, count=64, interval=0.002, wait=1)
        time.sleep(0.1)
        return self.daemon.mempool_in_use()

    def wait_mempool_back(self, baseline, timeout=10.0):
        """Waits until the pool is back at baseline (pinging to reap TX completions)."""
        return wait_until(lambda: self.settled_mempool() <= baseline, timeout, interval=0.2,
                          what="mempool in_use back to %d" % baseline)

    # Frames from the peer to the stack (scapy), for the malformed-input tests.
    def eth(self, **kw):
        from scapy.layers.l2 import Ether
        kw.setdefault("src", self.peer_mac)
        kw.setdefault("dst", self.stack_mac)
        return Ether(**kw)

    def ip(self, **kw):
        from scapy.layers.inet import IP
        kw.setdefault("src", self.peer_ip)
        kw.setdefault("dst", self.stack_ip)
        return IP(**kw)

    def raw_ip(self, payload, proto=1, options=b"", ihl=None, total_len=None, flags_frag=0,
               ident=0x4242, ttl=64, src=None, dst=None, version=4, csum=None):
        """An Ethernet frame to the stack with an IPv4 header built by hand, so that any
        field can be wrong on purpose (scapy would fix them), then payload."""
        hdr_len = 20 + len(options)
        if ihl is None:
            ihl = hdr_len // 4
        if total_len is None:
            total_len = hdr_len + len(payload)
        src = [int(x) for x in (src or self.peer_ip).split(".")]
        dst = [int(x) for x in (dst or self.stack_ip).split(".")]
        hdr = struct.pack("!BBHHHBBH4B4B", version << 4 | ihl, 0, total_len, ident,
                          flags_frag, ttl, proto, 0, *src, *dst) + options
        if csum is None:
            csum = inet_csum(hdr)
        hdr = hdr[:10] + struct.pack("!H", csum) + hdr[12:]
        from scapy.packet import Raw
        return self.eth(type=0x0800) / Raw(hdr + bytes(payload))

    def packet_socket(self):
        return PacketSocket(self.peer.ns, self.peer.ifname)


class Router:
    """Kernel A and kernel B on two ports of one dpstackd that routes between them; the
    route to B's address has a small MTU. A also has a default route via the stack. IPv4
    here, IPv6 in Router6: one topology, the family's addresses."""

    family = 4
    a_ip, a_stack_ip = "10.0.0.1", "10.0.0.2"
    b_ip, b_stack_ip = "10.0.1.1", "10.0.1.2"
    plen, host_plen = 24, 32
    a_net = "10.0.0.0/24"
    small_mtu = 1000
    forwarding = "ip forwarding on"

    def __init__(self, lab):
        self.lab = lab
        self.a = self._peer(lab, self.a_ip)
        self.b = self._peer(lab, self.b_ip)
        self.a.run("ip", "-%d" % self.family, "route", "add", "default", "via", self.a_stack_ip)
        self.b.run("ip", "-%d" % self.family, "route", "add", self.a_net, "via", self.b_stack_ip)
        route = "ip route" if self.family == 4 else "ip -6 route"
        config = "\n".join([
            "workers 1",
            "port add port0 net_af_xdp0,iface=%s" % self.a.root_ifname,
            "port add port1 net_af_xdp1,iface=%s" % self.b.root_ifname,
            "ip addr add %s/%d dev port0" % (self.a_stack_ip, self.plen),
            "ip addr add %s/%d dev port1" % (self.b_stack_ip, self.plen),
            "%s add %s/%d dev port1 mtu %d" % (route, self.b_ip, self.host_plen, self.small_mtu),
            self.forwarding,
        ]) + "\n"
        self.daemon = lab.start_daemon(config)

    def _peer(self, lab, addr):
        return lab.add_peer(addr, self.plen)

    def ctl(self, *args, json=False, timeout=DEFAULT_TIMEOUT):
        return self.daemon.ctl(*args, json=json, timeout=timeout)

    def warm_up(self):
        wait_until(lambda: self.a.ping(self.b_ip, count=1, wait=1).received == 1,
                   timeout=20, interval=0.1, what="first ping A -> B through dpstackd")


class Router6(Router):
    """Router over IPv6 (`ip -6 forwarding on`): the kernels have IPv6 on, without DAD,
    Router Advertisements or solicitations (nothing but the tests' own traffic and ND);
    the small route MTU is IPv6's minimum."""

    family = 6
    a_ip, a_stack_ip = "2001:db8:a::1", "2001:db8:a::2"
    b_ip, b_stack_ip = "2001:db8:b::1", "2001:db8:b::2"
    plen, host_plen = 64, 128
    a_net = "2001:db8:a::/64"
    small_mtu = 1280
    forwarding = "ip -6 forwarding on"

    def _peer(self, lab, addr):
        p = lab.add_peer()
        for key in ("accept_dad=0", "accept_ra=0", "router_solicitations=0", "disable_ipv6=0"):
            p.run("sysctl", "-qw", "net.ipv6.conf.%s.%s" % (p.ifname, key))
        p.run("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
        p.run("ip", "-6", "addr", "add", "%s/%d" % (addr, self.plen), "dev", p.ifname, "nodad")
        p.addr, p.plen = addr, self.plen
        return p


def inet_csum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def counters_delta(before, after):
    """Every event and drop counter that changed, by name: {"ip.rx": 3, ...}."""
    out = {}
    for kind in ("events", "drops"):
        for k, v in after[kind].items():
            if v != before[kind].get(k, 0):
                out[k] = v - before[kind].get(k, 0)
    return out


def drops_delta(before, after):
    return {k: after["drops"][k] - before["drops"].get(k, 0) for k in after["drops"]
            if after["drops"][k] != before["drops"].get(k, 0)}


@contextlib.contextmanager
def single_port(name, extra_config=()):
    """A lab with one port, warmed up: a test module's daemon, torn down afterwards."""
    lab = Lab(name)
    try:
        s = SinglePort(lab, extra_config=extra_config)
        s.warm_up()
        yield s
    finally:
        lab.close()


def two_worker_config(root_ifname, driver="net_af_packet", queues=2, extra=()):
    """A daemon config with two workers on one port facing root_ifname (net_af_packet with
    `queues` queue pairs, or net_af_xdp with one), the stack at SinglePort.stack_ip. The
    workers and the control thread run on the CPUs this process may use: on a 2-CPU
    machine the control thread shares a CPU with worker 1 (it sleeps in poll())."""
    cpus = sorted(os.sched_getaffinity(0))
    first, second = cpus[0], cpus[1 % len(cpus)]
    qpairs = ",qpairs=%d" % queues if driver == "net_af_packet" else ""
    return "\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (first, first, second),
        "workers 2",
        "port add port0 %s0,iface=%s%s" % (driver, root_ifname, qpairs),
        "ip addr add %s/24 dev port0" % SinglePort.stack_ip,
    ] + list(extra)) + "\n"


def two_workers(lab, driver="net_af_packet", queues=2, extra_config=(), peer_sysctls=()):
    """A daemon of two_worker_config facing a kernel peer, warmed up: an object with peer,
    daemon, stack_ip and peer_ip."""
    peer = lab.add_peer(SinglePort.peer_ip, sysctls=peer_sysctls)
    d = lab.start_daemon(two_worker_config(peer.root_ifname, driver, queues, extra_config))
    wait_until(lambda: peer.ping(SinglePort.stack_ip, count=1, wait=1).received == 1,
               timeout=20, interval=0.1, what="first ping answered")
    return types.SimpleNamespace(peer=peer, daemon=d, stack_ip=SinglePort.stack_ip,
                                 peer_ip=SinglePort.peer_ip)


def apps_stats(d):
    return d.stats()["apps"]


def wait_apps_gone(d, timeout=30.0):
    """Every application, socket and socket buffer of the daemon reclaimed: the "apps"
    stats once they are."""
    last = {}

    def gone():
        last.update(apps_stats(d))
        return all(last[k] == 0 for k in ("live_apps", "live_socks", "arena_bytes"))

    try:
        wait_until(gone, timeout, interval=0.1, what="no application left")
    except AssertionError:
        raise AssertionError("applications not reclaimed within %.0f s: live_apps %d, "
                             "live_socks %d, arena_bytes %d\nsock show:\n%s" %
                             (timeout, last["live_apps"], last["live_socks"],
                              last["arena_bytes"], d.ctl("sock", "show"))) from None
    return last


def _live_unix_sockets():
    """Paths of the unix sockets some process still holds (/proc/net/unix)."""
    with open("/proc/net/unix") as f:
        next(f)
        return {fields[7] for fields in (line.split() for line in f) if len(fields) > 7}


def dpdk_runtime_files():
    """Files DPDK may leave behind: hugepage files on every hugetlbfs mount and the runtime
    directory (/run/dpdk). A daemon that failed must not add any. A socket a live process
    still holds is not left behind: other daemons on this machine (another test run) create
    and remove their telemetry sockets in the same shared runtime directory meanwhile."""
    roots = ["/run/dpdk", "/var/run/dpdk"]
    with open("/proc/mounts") as f:
        roots += [line.split()[1] for line in f if line.split()[2:3] == ["hugetlbfs"]]
    found = set()
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            found.update(os.path.join(dirpath, name) for name in files)
    # Read after the walk, so that a socket bound during it is seen live; and what another
    # daemon removed since the walk is not counted.
    live = _live_unix_sockets()
    return {p for p in found
            if p not in live and os.path.realpath(p) not in live and os.path.exists(p)}


def binaries_missing():
    return [p for p in (DPSTACKD, DPSTACKCTL) if not os.access(p, os.X_OK)]
