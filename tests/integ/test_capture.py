"""dpstackctl capture (issue 15): pcapng of a port's frames, both directions, read back by
tshark; tcpdump filters, count, snaplen, a live pipe into `tshark -r -`; bad input refused
with the reason; capture drops counted when the writer is held up, and neither a vanished
client nor the end of a capture leaves anything behind in the daemon."""

import os
import shutil
import signal
import subprocess

import pytest

import topo

ECHO_PORT = 7
CAPTURE_STATE_TIMEOUT = 10.0
IN, OUT = 1, 2   # pcapng EPB flags: the frame's direction (inbound, outbound)

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None,
                                reason="tshark not installed (./install-deps.sh)")


@pytest.fixture(scope="module")
def cap(one_port):
    """one_port with a TCP echo service for the kernel peer to talk to."""
    one_port.daemon.ctl("service", "add", "echo", "tcp", ECHO_PORT)
    yield one_port
    one_port.daemon.ctl("service", "del", "tcp", ECHO_PORT)


def capture_stats(d):
    return d.stats()["capture"]


def wait_running(d, n):
    """Waits until n captures run: a capture counts as running once every worker copies
    for it, so traffic sent afterwards is in it."""
    topo.wait_until(lambda: capture_stats(d)["running"] == n, CAPTURE_STATE_TIMEOUT,
                    what="%d captures running" % n)


def start_capture(d, *args, stdout=None):
    """dpstackctl capture ARGS... in the background, once it runs."""
    running = capture_stats(d)["running"]
    proc = subprocess.Popen(topo.dying_with_parent(
        [topo.DPSTACKCTL, "-s", d.sock, "capture"] + [str(a) for a in args]),
        stdout=stdout if stdout is not None else subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    try:
        wait_running(d, running + 1)
    except AssertionError:
        proc.kill()
        raise AssertionError("capture did not start: %s" % proc.communicate()[1].decode())
    return proc


def end_capture(proc, sig=signal.SIGINT):
    """Ctrl-C (or sig) to dpstackctl; returns (exit status, its stderr)."""
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=topo.DEFAULT_TIMEOUT)
    return proc.returncode, err.decode()


def tshark(path, *fields, filt=None):
    """The capture file's frames as tuples of the fields, as tshark reads them."""
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=|"]
    if filt:
        cmd += ["-Y", filt]
    for f in fields:
        cmd += ["-e", f]
    out = topo.run(cmd).stdout
    return [tuple(line.split("|")) for line in out.splitlines() if line]


def summary_packets(err):
    """The packets and drops of dpstackctl's closing line."""
    words = err.strip().splitlines()[-1].split()
    assert words[1:3] == ["packets", "captured,"] and words[4] == "dropped", err
    return int(words[0]), int(words[3])


def echo_over_tcp(peer, stack_ip, text="hello capture"):
    p = peer.run("sh", "-c", "printf '%s' | nc -N -w 5 %s %d" % (text, stack_ip, ECHO_PORT))
    assert p.stdout == text


def test_capture_has_ping_and_tcp_in_both_directions(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "all.pcapng")
    proc = start_capture(d, "port0", "-w", path)
    r = cap.peer.ping(cap.stack_ip, count=5, interval=0.05, wait=2)
    assert r.received == 5
    echo_over_tcp(cap.peer, cap.stack_ip)
    rc, err = end_capture(proc)
    assert rc == 0, err
    frames = tshark(path, "frame.packet_flags_direction", "icmp.type", "tcp.flags.syn",
                    "tcp.flags.ack", "tcp.payload")
    captured, dropped = summary_packets(err)
    assert captured == len(frames) and dropped == 0
    requests = [f for f in frames if f[1] == "8"]
    replies = [f for f in frames if f[1] == "0"]
    assert len(requests) == 5 and all(int(f[0], 0) == IN for f in requests)
    assert len(replies) == 5 and all(int(f[0], 0) == OUT for f in replies)
    syn = [f for f in frames if f[2] == "1" and f[3] == "0"]
    synack = [f for f in frames if f[2] == "1" and f[3] == "1"]
    assert len(syn) == 1 and int(syn[0][0], 0) == IN
    assert len(synack) == 1 and int(synack[0][0], 0) == OUT
    payload = "hello capture".encode().hex()
    data = [int(f[0], 0) for f in frames if f[4] == payload]
    assert sorted(data) == [IN, OUT], frames   # the text, and its echo
    assert capture_stats(d)["running"] == 0


def test_capture_filter_icmp_keeps_only_icmp_while_tcp_flows(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "icmp.pcapng")
    proc = start_capture(d, "port0", "filter", "icmp", "-w", path)
    echo_over_tcp(cap.peer, cap.stack_ip)
    assert cap.peer.ping(cap.stack_ip, count=4, interval=0.05, wait=2).received == 4
    echo_over_tcp(cap.peer, cap.stack_ip)
    rc, err = end_capture(proc)
    assert rc == 0, err
    frames = tshark(path, "frame.protocols", "frame.packet_flags_direction")
    assert len(frames) == 8 and summary_packets(err) == (8, 0)
    assert all(f[0].endswith(":ip:icmp:data") for f in frames), frames
    assert sorted(int(f[1], 0) for f in frames) == [IN] * 4 + [OUT] * 4


def test_capture_filter_tcp_port_keeps_only_that_port(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "tcp.pcapng")
    proc = start_capture(d, "port0", "filter", "tcp port %d" % ECHO_PORT, "-w", path)
    assert cap.peer.ping(cap.stack_ip, count=3, interval=0.05, wait=2).received == 3
    echo_over_tcp(cap.peer, cap.stack_ip)
    rc, err = end_capture(proc)
    assert rc == 0, err
    frames = tshark(path, "tcp.port")
    assert frames and all(str(ECHO_PORT) in f[0].split(",") for f in frames), frames
    assert not tshark(path, "frame.number", filt="icmp")


def test_capture_count_stops_by_itself(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "count.pcapng")
    proc = start_capture(d, "port0", "filter", "icmp", "count", 3, "-w", path)
    assert cap.peer.ping(cap.stack_ip, count=4, interval=0.05, wait=2).received == 4
    err = proc.communicate(timeout=topo.DEFAULT_TIMEOUT)[1].decode()
    assert proc.returncode == 0, err
    assert summary_packets(err) == (3, 0)
    assert len(tshark(path, "frame.number")) == 3
    topo.wait_until(lambda: capture_stats(d)["running"] == 0, CAPTURE_STATE_TIMEOUT,
                    what="capture ended")


def test_capture_snaplen_cuts_frames_but_keeps_their_length(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "snap.pcapng")
    proc = start_capture(d, "port0", "filter", "icmp", "snaplen", 60, "-w", path)
    assert cap.peer.ping(cap.stack_ip, count=2, size=1000, interval=0.05,
                         wait=2).received == 2
    rc, err = end_capture(proc)
    assert rc == 0, err
    frames = tshark(path, "frame.len", "frame.cap_len")
    assert frames == [("1042", "60")] * 4   # 14 + 20 + 8 + 1000 bytes on the wire


def test_capture_streams_live_into_tshark(cap):
    """`-w -` into `tshark -r -`: tshark prints the frames as they come, before the end."""
    d = cap.daemon
    ctl = start_capture(d, "port0", "filter", "icmp", "-w", "-", stdout=subprocess.PIPE)
    reader = subprocess.Popen(topo.dying_with_parent(
        ["tshark", "-n", "-l", "-r", "-", "-T", "fields", "-e", "icmp.type"]),
        stdin=ctl.stdout, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    ctl.stdout.close()   # tshark's now: it sees the end when dpstackctl ends
    try:
        assert cap.peer.ping(cap.stack_ip, count=1, wait=2).received == 1
        # Both frames reach tshark while the capture still runs.
        assert reader.stdout.readline().strip() == "8"
        assert reader.stdout.readline().strip() == "0"
    finally:
        rc, err = end_capture(ctl)
        out = reader.communicate(timeout=topo.DEFAULT_TIMEOUT)[0]
    assert rc == 0 and summary_packets(err) == (2, 0), err
    assert reader.returncode == 0 and out == ""
    topo.wait_until(lambda: capture_stats(d)["running"] == 0, CAPTURE_STATE_TIMEOUT,
                    what="capture ended")


BAD = [
    ("bad_filter", ["port0", "filter", "tcp prot 80"], "bad filter 'tcp prot 80'"),
    ("filter_unknown_protocol", ["port0", "filter", "nosuchproto"], "bad filter"),
    ("filter_too_long", ["port0", "filter", "tcp or " * 200 + "udp"],
     "filter longer than 1023 bytes"),
    ("unknown_port", ["port9"], "no port named 'port9'"),
    ("count_zero", ["port0", "count", "0"], "count must be a number from 1"),
    ("count_not_a_number", ["port0", "count", "lots"], "count must be a number"),
    ("snaplen_zero", ["port0", "snaplen", "0"], "snaplen must be a number from 1"),
    ("snaplen_too_big", ["port0", "snaplen", "262145"], "snaplen must be a number"),
    ("unknown_option", ["port0", "colour", "red"], "unknown capture option 'colour'"),
    ("filter_not_quoted", ["port0", "filter", "tcp", "port", "80"],
     "a filter of several words is one argument: filter \"tcp port ...\""),
    ("dangling_option", ["port0", "count"], "usage: capture PORT"),
    ("no_port", [], "usage: capture PORT"),
]


@pytest.mark.parametrize("args,message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_capture_bad_input_refused_with_the_reason(cap, lab, args, message):
    d = cap.daemon
    path = os.path.join(lab.tmp, "bad.pcapng")
    r = d.ctl_result("capture", *args, "-w", path)
    assert r.rc == 1 and message in r.err, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert capture_stats(d)["running"] == 0
    cap.ping_ok()


@pytest.mark.parametrize("args,message", [
    (["port0", "-w", "/nonexistent-dir/x.pcapng"], "cannot write /nonexistent-dir/x.pcapng"),
    (["port0", "-w"], "-w needs a file name or -"),
    (["port0", "-w", "a", "-w", "b"], "-w given twice"),
], ids=["unwritable_file", "w_without_file", "w_twice"])
def test_capture_bad_output_refused_by_dpstackctl(cap, args, message):
    r = cap.daemon.ctl_result("capture", *args)
    assert r.rc == 2 and message in r.err, r
    assert capture_stats(cap.daemon)["running"] == 0


@pytest.mark.skipif(shutil.which("script") is None, reason="script(1) not installed")
def test_capture_to_a_terminal_refused(cap):
    """pcapng is no text for a terminal: without -w, stdout must be a file or a pipe."""
    cmd = "%s -s %s capture port0; echo status=$?" % (topo.DPSTACKCTL, cap.daemon.sock)
    out = topo.run(["script", "-qec", cmd, "/dev/null"]).stdout
    assert "capture writes pcapng, not text: give -w FILE" in out and "status=2" in out, out
    assert capture_stats(cap.daemon)["running"] == 0


def test_capture_from_the_config_file_refused():
    """The config file has no client to stream to."""
    lab = topo.Lab("capture_config")
    try:
        peer = lab.add_peer("10.0.0.1", 24)
        d = lab.start_daemon(topo.one_port_config(peer.root_ifname, extra=["capture port0"]),
                             wait=False)
        assert d.wait_exit() != 0
        assert "capture streams to dpstackctl" in d.log()
    finally:
        lab.close()


def test_second_capture_of_a_port_refused_first_goes_on(cap, lab):
    d = cap.daemon
    path = os.path.join(lab.tmp, "first.pcapng")
    proc = start_capture(d, "port0", "filter", "icmp", "-w", path)
    r = d.ctl_result("capture", "port0", "-w", os.path.join(lab.tmp, "second.pcapng"))
    assert r.rc == 1 and "a capture is already running on port0" in r.err, r
    assert "Capture: 1 running" in d.ctl("stats")
    assert d.stats()["capture"]["captures"][0]["filter"] == "icmp"
    assert cap.peer.ping(cap.stack_ip, count=1, wait=2).received == 1
    rc, err = end_capture(proc)
    assert rc == 0 and summary_packets(err) == (2, 0), err
    assert len(tshark(path, "frame.number")) == 2


def test_captures_of_two_ports_at_once(router, lab):
    d = router.daemon
    paths = [os.path.join(lab.tmp, "p%d.pcapng" % i) for i in (0, 1)]
    procs = [start_capture(d, "port%d" % i, "filter", "icmp", "-w", paths[i])
             for i in (0, 1)]
    assert router.a.ping(router.b_ip, count=3, interval=0.05, wait=2).received == 3
    for proc in procs:
        rc, err = end_capture(proc)
        assert rc == 0 and summary_packets(err) == (6, 0), err
    # A's requests come in on port0 and go out on port1; B's replies the other way.
    def seen(path):
        return sorted((int(f[0], 0), f[1]) for f in
                      tshark(path, "frame.packet_flags_direction", "icmp.type"))
    assert seen(paths[0]) == [(IN, "8")] * 3 + [(OUT, "0")] * 3
    assert seen(paths[1]) == [(IN, "0")] * 3 + [(OUT, "8")] * 3


def flood(s, count=20000):
    """Ping flood from the peer: more frames than the capture ring and both buffers hold."""
    s.peer.ping(s.stack_ip, count=count, size=1000, flood=True, wait=1)


def test_capture_drops_counted_when_the_writer_is_held_up(fresh_one_port, lab):
    """Nobody reads dpstackctl's output for a while: the socket fills, the writer waits, the
    ring overflows; the workers count the frames they could not queue and go on."""
    s = fresh_one_port
    d = s.daemon
    baseline = s.settled_mempool()
    proc = start_capture(d, "port0", "filter", "icmp", "-w", "-", stdout=subprocess.PIPE)
    flood(s)
    topo.wait_until(lambda: capture_stats(d)["dropped"] > 0, CAPTURE_STATE_TIMEOUT,
                    what="capture drops counted")
    s.ping_ok()                                   # the stack is not held up
    path = os.path.join(lab.tmp, "held.pcapng")
    with open(path, "wb") as f:
        proc.send_signal(signal.SIGINT)
        shutil.copyfileobj(proc.stdout, f)        # now read: the stream ends cleanly
    err = proc.communicate(timeout=topo.DEFAULT_TIMEOUT)[1].decode()
    assert proc.returncode == 0, err
    captured, dropped = summary_packets(err)
    assert dropped > 0 and captured == len(tshark(path, "frame.number"))
    st = capture_stats(d)
    assert st["running"] == 0 and st["dropped"] == dropped and st["packets"] == captured
    s.wait_mempool_back(baseline)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_client_gone_ends_capture_and_copying_stops(fresh_one_port, sig):
    """Whether dpstackctl ends cleanly (SIGTERM) or is killed with its output unread, the
    daemon takes the capture out of the workers, frees it, and copies nothing more."""
    s = fresh_one_port
    d = s.daemon
    baseline = s.settled_mempool()
    proc = start_capture(d, "port0", "filter", "icmp", "-w", "-", stdout=subprocess.PIPE)
    flood(s, 5000)
    proc.send_signal(sig)
    if sig == signal.SIGTERM:
        proc.stdout.read()                        # the rest of the stream, then its end
    proc.communicate(timeout=topo.DEFAULT_TIMEOUT)
    assert proc.returncode == (0 if sig == signal.SIGTERM else -signal.SIGKILL)
    topo.wait_until(lambda: capture_stats(d)["running"] == 0, CAPTURE_STATE_TIMEOUT,
                    what="capture ended")
    before = capture_stats(d)
    flood(s, 2000)
    s.ping_ok()
    after = capture_stats(d)
    assert (after["packets"], after["dropped"]) == (before["packets"], before["dropped"])
    s.wait_mempool_back(baseline)


def test_daemon_stopping_ends_a_running_capture(lab):
    """SIGTERM to dpstackd while a client captures: the daemon exits cleanly (the lab
    checks), and dpstackctl says the capture ended without its summary."""
    peer = lab.add_peer("10.0.0.1", 24)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname))
    proc = start_capture(d, "port0", "-w", "-", stdout=subprocess.PIPE)
    d.stop()
    proc.stdout.read()
    err = proc.communicate(timeout=topo.DEFAULT_TIMEOUT)[1].decode()
    assert proc.returncode == 1 and "ended without its summary" in err, err


def test_capture_with_two_workers_has_every_frame(lab, tmp_path):
    """Two workers, each with its RX queue and TX queue on the port: both copy into the
    one capture, and both stop when it ends."""
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.two_worker_config(peer.root_ifname))
    addrs = ["10.0.0.%d" % (11 + i) for i in range(8)]
    for a in addrs:
        peer.run("ip", "addr", "add", a + "/24", "dev", peer.ifname)
    path = str(tmp_path / "two.pcapng")
    proc = start_capture(d, "port0", "filter", "icmp", "-w", path)
    for a in addrs:   # eight sources: their hashes spread them over both workers
        assert peer.ping("10.0.0.2", count=2, interval=0.05, wait=2,
                         extra=("-I", a)).received == 2
    rc, err = end_capture(proc)
    assert rc == 0 and summary_packets(err) == (32, 0), err
    frames = tshark(path, "ip.src", "icmp.type", "frame.packet_flags_direction",
                    "frame.interface_queue")
    for a in addrs:
        assert sorted((f[1], int(f[2], 0)) for f in frames if a in f[0].split(",")) == \
            [("8", IN)] * 2, a
    assert sum(1 for f in frames if f[1] == "0" and int(f[2], 0) == OUT) == 16
    # Each worker receives on its own queue and answers on its own queue.
    assert {f[3] for f in frames} == {"0", "1"}, frames
