"""dpstackctl monitor: rates per port and worker computed from the daemon's counters, as JSON
lines (-j) and as a top-like screen in a real terminal (tmux), with the kernel peer's ping
flood as the traffic; bad arguments and a daemon that dies under it end it with a clear
error."""

import json
import os
import shutil
import signal
import socket
import subprocess
import threading

import pytest

import topo

MONITOR_TIMEOUT = 60.0


def monitor(d, *args, timeout=MONITOR_TIMEOUT):
    return d.ctl_result("monitor", *args, timeout=timeout)


def json_lines(out):
    return [json.loads(line) for line in out.splitlines()]


def worker0(line):
    (w,) = [w for w in line["workers"] if w["worker"] == 0]
    return w


def port0(line):
    (p,) = [p for p in line["ports"] if p["port"] == "port0"]
    return p


class PingFlood:
    """ping -f from the kernel peer for as long as the with-block lasts; the stack has
    answered some of it before the block starts."""

    def __init__(self, setup):
        self.setup = setup

    def __enter__(self):
        before = self.setup.daemon.counter("icmp.rx_echo")
        self.proc = subprocess.Popen(
            topo.dying_with_parent(["ip", "netns", "exec", self.setup.peer.ns, "ping", "-q",
                                    "-f", "-w", "600", self.setup.stack_ip]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        topo.wait_until(lambda: self.setup.daemon.counter("icmp.rx_echo") > before + 100,
                        timeout=20, what="ping flood reaching the stack")
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(topo.DEFAULT_TIMEOUT)


def test_monitor_json_rates_on_the_loaded_port_and_worker(one_port):
    d = one_port.daemon
    idle = json_lines(monitor(d, "-j", "interval", "0.5", "count", "3").out)
    with PingFlood(one_port):
        r = monitor(d, "-j", "interval", "0.5", "count", "3")
    assert r.rc == 0, r
    loaded = json_lines(r.out)
    assert len(loaded) == 3 and len(idle) == 3, (idle, loaded)
    for line in loaded:
        assert line["interval_s"] > 0 and line["time"].endswith("Z"), line
        p, w = port0(line), worker0(line)
        for rate in ("rx_pps", "rx_bps", "tx_pps", "tx_bps"):
            assert p[rate] > 0 and w[rate] > 0, (rate, line)
        assert w["lcore"] >= 0 and 0 <= w["busy_pct"] <= 100, line
        # ping flood: every echo request gets its reply
        assert p["rx_bps"] >= 8 * p["rx_pps"] * 60, line
    for line in idle:
        assert 0 <= worker0(line)["busy_pct"] <= 100, line
    mean = lambda lines: sum(worker0(l)["busy_pct"] for l in lines) / len(lines)
    assert mean(loaded) > mean(idle), (idle, loaded)


def test_monitor_json_counts_established_connections_and_udp_sockets(fresh_one_port):
    d = fresh_one_port.daemon
    d.ctl("service", "add", "echo", "tcp", "7")
    d.ctl("service", "add", "echo", "udp", "7")
    base = worker0(json_lines(monitor(d, "-j", "interval", "0.2", "count", "1").out)[0])
    assert base["tcp_established"] == 0 and base["tcp_conns"] >= 1, base
    assert base["udp_socks"] >= 1, base
    conn = topo.in_netns(fresh_one_port.peer.ns, lambda: socket.create_connection(
        (fresh_one_port.stack_ip, 7), timeout=10))
    try:
        conn.sendall(b"ping")
        assert conn.recv(4) == b"ping"
        # dpstackctl's own -j, before the command, works as the monitor's
        r = d.ctl_result("monitor", "interval", "0.2", "count", "1", json=True)
        w = worker0(json_lines(r.out)[0])
        assert w["tcp_established"] == 1, w
        assert w["tcp_conns"] == base["tcp_conns"] + 1, (base, w)
    finally:
        conn.close()


class MonitorStream:
    """dpstackctl monitor -j running until stopped, its lines gathered as they come."""

    def __init__(self, d, *args):
        self.proc = subprocess.Popen([topo.DPSTACKCTL, "-s", d.sock, "monitor", "-j"] +
                                     list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def wait_lines(self, n):
        topo.wait_until(lambda: len(self.lines) >= n, timeout=MONITOR_TIMEOUT, interval=0.05,
                        what="%d lines from the monitor" % n)

    def stop(self):
        """SIGTERM by PID, which the monitor takes as q: returns its exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
        rc = self.proc.wait(MONITOR_TIMEOUT)
        self.reader.join(MONITOR_TIMEOUT)
        self.err = self.proc.stderr.read()
        self.proc.stderr.close()
        return rc


def test_monitor_drop_rates_account_for_every_drop_by_reason(fresh_one_port):
    """Frames with a bad IP checksum while the monitor runs: ip.bad_checksum's rate, times
    each interval, adds up to the daemon's count, on the worker and in the total; only
    reasons with a non-zero rate are listed."""
    s = fresh_one_port
    m = MonitorStream(s.daemon, "interval", "0.3")
    try:
        m.wait_lines(1)
        frame = bytes(s.eth() / s.ip(chksum=0x1234) / (b"x" * 20))
        with s.packet_socket() as ps:
            ps.send_many([frame] * 1000, pace_every=100)
        s.ping_ok()  # one RX queue, in order: every frame before the pings is handled
        dropped = s.daemon.counter("ip.bad_checksum")
        assert dropped > 0
        # a line from a snapshot taken after the last drop
        m.wait_lines(len(m.lines) + 2)
    finally:
        rc = m.stop()
    assert rc == 0, m.err
    total = sum(round(l["drops_per_s"].get("ip.bad_checksum", 0) * l["interval_s"])
                for l in m.lines)
    on_worker = sum(round(worker0(l)["drops_per_s"].get("ip.bad_checksum", 0) *
                          l["interval_s"]) for l in m.lines)
    assert total == dropped and on_worker == dropped, (dropped, m.lines)
    for line in m.lines:
        assert all(v > 0 for v in line["drops_per_s"].values()), line
        assert all(v > 0 for v in worker0(line)["drops_per_s"].values()), line


def test_monitor_text_without_a_terminal_prints_frames_without_escapes(one_port):
    r = monitor(one_port.daemon, "interval", "0.2", "count", "2")
    assert r.rc == 0, r
    assert "\033" not in r.out, r.out
    assert r.out.count("PORT ") == 2 and r.out.count("WORKER ") == 2, r.out
    assert any(line.startswith("port0 ") for line in r.out.splitlines()), r.out


@pytest.mark.parametrize("args,message", [
    (("interval", "0"), "interval must be a number of seconds from 0.1 to 3600, not '0'"),
    (("interval", "abc"), "not 'abc'"),
    (("interval", "-1"), "not '-1'"),
    (("interval", "1e9"), "not '1e9'"),
    (("interval", "nan"), "not 'nan'"),
    (("interval",), "'interval' needs a value"),
    (("count", "0"), "count must be a whole number from 1, not '0'"),
    (("count", "3x"), "not '3x'"),
    (("count", "-2"), "not '-2'"),
    (("bogus",), "unknown argument 'bogus'"),
    (("-x",), "unknown argument '-x'"),
])
def test_monitor_bad_arguments_are_named(one_port, args, message):
    r = monitor(one_port.daemon, *args)
    assert r.rc == 2 and r.out == "", r
    assert message in r.err and "usage: dpstackctl monitor" in r.err, r


def test_monitor_without_a_daemon_says_so(lab):
    sock = os.path.join(lab.tmp, "none.sock")
    r = subprocess.run([topo.DPSTACKCTL, "-s", sock, "monitor", "-j", "count", "1"],
                       capture_output=True, text=True, timeout=MONITOR_TIMEOUT)
    assert r.returncode == 2 and r.stdout == "", r
    assert "cannot reach dpstackd at %s" % sock in r.stderr, r


def test_monitor_is_listed_by_help_and_sent_alone_points_to_dpstackctl(one_port):
    assert "monitor [-j] [interval SEC] [count N]" in one_port.ctl("help")
    # another client sending it as a daemon command
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(topo.DEFAULT_TIMEOUT)
        c.connect(one_port.daemon.sock)
        c.sendall(b"dpstack-ctl 1 text\nmonitor\n\n")
        reply = b""
        while True:
            got = c.recv(4096)
            if not got:
                break
            reply += got
    assert reply.startswith(b"error\n") and b"runs in dpstackctl" in reply, reply


def test_monitor_daemon_killed_mid_monitor_ends_with_an_error(lab):
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname))
    p = subprocess.Popen([topo.DPSTACKCTL, "-s", d.sock, "monitor", "-j", "interval", "0.2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        json.loads(first)
        d.kill()
        out, err = p.communicate(timeout=MONITOR_TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
    assert p.returncode == 2, (out, err)
    assert "dpstackctl: monitor: lost dpstackd: " in err, err
    for line in out.splitlines():
        json.loads(line)  # whole lines only


def test_monitor_daemon_stopped_mid_monitor_ends_with_an_error(lab):
    """A daemon that is there but does not answer (SIGSTOP) ends the monitor too, once its
    request has waited its bounded time, instead of freezing it."""
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname))
    m = MonitorStream(d, "interval", "0.2")
    try:
        m.wait_lines(1)
        topo.stop_process(d.proc.pid)
        rc = m.proc.wait(MONITOR_TIMEOUT)
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
        m.stop()
    assert rc == 2, m.err
    assert "lost dpstackd: no answer from dpstackd at %s (timed out)" % d.sock in m.err, m.err


# ---------------------------------------------------------------------------------------------
# The screen, in a real terminal: tmux on its own server socket, removed afterwards.

class Tmux:
    def __init__(self, tmp, width, height, command):
        self.sock = os.path.join(tmp, "tmux.sock")
        self.run("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "mon",
                 "sh", "-c", command)

    def run(self, *args):
        return topo.run(["tmux", "-S", self.sock] + list(args)).stdout

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "mon")

    def pane(self, fmt):
        return self.run("display-message", "-p", "-t", "mon", fmt).strip()

    def wait_screen(self, pred, what):
        topo.wait_until(lambda: pred(self.screen()), timeout=30, interval=0.1, what=what)
        return self.screen()

    def close(self):
        topo.run(["tmux", "-S", self.sock, "kill-server"], check=False)


@pytest.fixture
def tmux_factory(lab):
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed (./install-deps.sh)")
    made = []

    def make(width, height, command):
        t = Tmux(lab.tmp, width, height, command)
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


def monitor_shell(d, extra=""):
    """The monitor in a shell that, once it ends, prints its status and the terminal's
    mode (so the test sees that echo and line editing are back). The shell catches SIGINT,
    as an interactive one does, so Ctrl-C ends only the monitor."""
    return ("trap : INT; %s -s %s monitor interval 0.3 %s; echo monitor-exit=$?; echo modes: $(stty -a | "
            "tr ' ' '\\n' | grep -xE -- '-?(icanon|echo)'); sleep 600" %
            (topo.DPSTACKCTL, d.sock, extra))


def screen_shows_rows(screen):
    lines = screen.splitlines()
    return (any(l.startswith("PORT ") for l in lines) and
            any(l.startswith("port0 ") for l in lines) and
            any(l.startswith("WORKER ") for l in lines) and
            any(l.split()[:2] == ["0", "0"] or (l.split()[:1] == ["0"] and len(l.split()) > 5)
                for l in lines))


@pytest.mark.parametrize("key", ["q", "C-c"])
def test_monitor_screen_shows_ports_and_workers_and_the_key_ends_it(one_port, tmux_factory,
                                                                   key):
    t = tmux_factory(120, 40, monitor_shell(one_port.daemon))
    screen = t.wait_screen(screen_shows_rows, "the monitor's port and worker rows")
    assert "dpstack monitor" in screen.splitlines()[0], screen
    assert t.pane("#{alternate_on}") == "1", "the monitor draws on the alternate screen"
    t.run("send-keys", "-t", "mon", key)
    screen = t.wait_screen(lambda s: "modes:" in s, "the monitor ending")
    assert "monitor-exit=0" in screen, screen
    # the terminal as it was: main screen, cursor shown, echo and canonical mode back
    assert t.pane("#{alternate_on}") == "0" and t.pane("#{cursor_flag}") == "1"
    assert "modes: icanon echo" in screen, screen


def test_monitor_screen_fits_a_narrow_terminal(one_port, tmux_factory):
    t = tmux_factory(50, 12, monitor_shell(one_port.daemon))
    screen = t.wait_screen(screen_shows_rows, "the monitor's port and worker rows")
    lines = screen.splitlines()
    assert len(lines) <= 12 and all(len(l) <= 50 for l in lines), screen
    t.run("send-keys", "-t", "mon", "q")
    screen = t.wait_screen(lambda s: "modes:" in s, "the monitor ending")
    assert "monitor-exit=0" in screen, screen


def test_monitor_screen_daemon_killed_restores_the_terminal(lab, tmux_factory):
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname))
    t = tmux_factory(120, 40, monitor_shell(d))
    t.wait_screen(screen_shows_rows, "the monitor's port and worker rows")
    d.kill()
    screen = t.wait_screen(lambda s: "modes:" in s, "the monitor ending")
    assert "monitor-exit=2" in screen and "lost dpstackd" in screen, screen
    assert t.pane("#{alternate_on}") == "0" and t.pane("#{cursor_flag}") == "1"


def test_monitor_screen_ctrl_z_gives_the_terminal_back_and_fg_redraws(one_port, tmux_factory):
    """In an interactive shell: Ctrl-Z stops the monitor with the shell's screen back, fg
    brings the monitor's screen again, and q still ends it with status 0."""
    t = tmux_factory(120, 40, "bash --norc --noprofile")
    t.run("send-keys", "-t", "mon", "%s -s %s monitor interval 0.3" %
          (topo.DPSTACKCTL, one_port.daemon.sock), "Enter")
    t.wait_screen(screen_shows_rows, "the monitor's port and worker rows")
    t.run("send-keys", "-t", "mon", "C-z")
    topo.wait_until(lambda: t.pane("#{alternate_on}") == "0", timeout=30,
                    what="the shell's screen back after Ctrl-Z")
    t.wait_screen(lambda s: "Stopped" in s, "the shell reporting the stopped job")
    t.run("send-keys", "-t", "mon", "fg", "Enter")
    topo.wait_until(lambda: t.pane("#{alternate_on}") == "1", timeout=30,
                    what="the monitor's screen again after fg")
    t.wait_screen(screen_shows_rows, "the monitor's rows again")
    t.run("send-keys", "-t", "mon", "q")
    topo.wait_until(lambda: t.pane("#{alternate_on}") == "0", timeout=30,
                    what="the shell's screen back after q")
    t.run("send-keys", "-t", "mon", "echo monitor-exit=$?", "Enter")
    t.wait_screen(lambda s: "monitor-exit=0" in s, "the monitor's exit status")
