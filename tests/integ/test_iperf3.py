"""The built-in iperf3 service (src/svc/svc_iperf3.c) against the Debian iperf3 client (3.12)
in the peer namespace: normal, reverse (-R) and parallel (-P) TCP tests and their byte counts
against the service's counters; refusals (-u, --bidir, a second client while busy) that the
client reports instead of hanging; and hostile control connections (garbage, oversized or
malformed parameters, a client that vanishes mid-test, a stuck handshake) after which the
next real test still runs."""

import json
import os
import shutil
import socket
import struct
import subprocess
import time

import pytest

import topo

PORT = 5201
COOKIE_SIZE = 37

# Control states of iperf 3.12 (iperf_api.h).
TEST_START, TEST_RUNNING, TEST_END = 1, 2, 4
PARAM_EXCHANGE, CREATE_STREAMS = 9, 10
EXCHANGE_RESULTS, DISPLAY_RESULTS, IPERF_DONE = 13, 14, 16
SERVER_ERROR = 0xFE
IERECVPARAMS = 114

pytestmark = pytest.mark.skipif(shutil.which("iperf3") is None,
                                reason="iperf3 is not installed (install-deps.sh)")


@pytest.fixture(scope="module")
def svc(one_port):
    """one_port with the iperf3 service on PORT; removed again at the end."""
    one_port.daemon.ctl("service", "add", "iperf3", "tcp", PORT)
    yield one_port
    one_port.daemon.ctl("service", "del", "tcp", PORT)


def service_row(d):
    for row in d.ctl("service", "show", json=True):
        if row["proto"] == "tcp" and row["port"] == PORT:
            return row
    return None


def wait_idle(d, timeout=15.0):
    """Waits until the service has no open connection (closes finish asynchronously)."""
    return topo.wait_until(lambda: service_row(d)["active"] == 0 and service_row(d), timeout,
                           what="no active connection on the iperf3 service")


def iperf3(s, *args, timeout=40):
    """Runs the iperf3 client in the peer's namespace against the service."""
    return s.peer.run("iperf3", "-c", s.stack_ip, "-p", PORT, *args, timeout=timeout,
                      check=False)


def iperf3_json(s, *args, timeout=40):
    p = iperf3(s, "-J", *args, timeout=timeout)
    assert p.returncode == 0, p
    out = json.loads(p.stdout)
    assert "error" not in out, out["error"]
    return out


def connect(s, timeout=10.0):
    return topo.in_netns(s.peer.ns, lambda: socket.create_connection((s.stack_ip, PORT),
                                                                      timeout=timeout))


def cookie(tag="a"):
    """A cookie as iperf3 makes them: 36 characters and a NUL."""
    return (tag * 36)[:36].encode() + b"\0"


def recv_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def send_json(sock, obj):
    body = json.dumps(obj).encode()
    sock.sendall(struct.pack("!I", len(body)) + body)


def closed_by_peer(sock, timeout=5.0):
    """Reads until the service closes (FIN or RST); returns what came before."""
    sock.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return got
            got += chunk
    except ConnectionResetError:
        return got


def assert_next_test_runs_without_idle(s):
    out = iperf3_json(s, "-t", "1")
    assert out["end"]["sum_received"]["bytes"] > 0


def assert_next_test_runs(s):
    assert_next_test_runs_without_idle(s)
    wait_idle(s.daemon)


# ---------------------------------------------------------------------------------------------
# tests that run

def test_normal_test_received_bytes_match_service_bytes_in(svc):
    d = svc.daemon
    before = wait_idle(d)
    out = iperf3_json(svc, "-t", "2")
    after = wait_idle(d)
    received = out["end"]["sum_received"]["bytes"]
    sent = out["end"]["sum_sent"]["bytes"]
    assert received > 0
    assert sent >= received
    # bytes_in also holds the cookies, the parameters and the client's results (< 4 KiB);
    # what arrived after TEST_END is read and counted by neither.
    bytes_in = after["bytes_in"] - before["bytes_in"]
    assert received <= bytes_in <= received + 4096, (received, bytes_in)
    assert after["requests"] - before["requests"] == 1
    assert after["accepted"] - before["accepted"] == 2
    assert after["errors"] == before["errors"]
    rx = out["end"]["streams"][0]["receiver"]
    assert rx["seconds"] > 1.5, rx


def test_reverse_test_receives_and_service_sends(svc):
    d = svc.daemon
    before = wait_idle(d)
    out = iperf3_json(svc, "-t", "2", "-R")
    after = wait_idle(d)
    received = out["end"]["sum_received"]["bytes"]
    sent = out["end"]["sum_sent"]["bytes"]
    assert received > 0
    assert sent >= received, (sent, received)
    bytes_out = after["bytes_out"] - before["bytes_out"]
    assert bytes_out >= sent, (bytes_out, sent)
    assert after["requests"] - before["requests"] == 1
    assert after["errors"] == before["errors"]
    # We are the sender: our retransmission count reaches the client.
    assert "retransmits" in out["end"]["sum_sent"], out["end"]["sum_sent"]


@pytest.mark.parametrize("reverse", [False, True], ids=["normal", "reverse"])
def test_four_parallel_streams_all_carry_data(svc, reverse):
    d = svc.daemon
    before = wait_idle(d)
    out = iperf3_json(svc, "-t", "2", "-P", "4", *(["-R"] if reverse else []))
    after = wait_idle(d)
    streams = out["end"]["streams"]
    assert len(streams) == 4
    for st in streams:
        assert st["receiver"]["bytes"] > 0, st
    assert out["end"]["sum_received"]["bytes"] > 0
    assert after["accepted"] - before["accepted"] == 5
    assert after["requests"] - before["requests"] == 1
    assert after["errors"] == before["errors"]


def test_block_length_and_byte_count_end_condition(svc):
    """-n: the client ends the test once 4 MB went through, with 8 KiB blocks (-l)."""
    out = iperf3_json(svc, "-n", "4M", "-l", "8K", "-R")
    assert out["end"]["sum_received"]["bytes"] >= 4 * 1024 * 1024
    wait_idle(svc.daemon)


def test_plain_text_output_reports_receiver(svc):
    p = iperf3(svc, "-t", "1")
    assert p.returncode == 0, p
    assert "receiver" in p.stdout and "iperf Done." in p.stdout, p.stdout
    wait_idle(svc.daemon)


def test_omitted_seconds_not_counted(svc):
    """-O 1: like iperf3, the service counts from the end of the omitted second, so the
    receiver's bytes stay close to the sender's (which omits the same second)."""
    out = iperf3_json(svc, "-t", "2", "-O", "1")
    sent = out["end"]["sum_sent"]["bytes"]
    received = out["end"]["sum_received"]["bytes"]
    assert 0 < received <= sent * 1.2, (sent, received)
    assert 1.5 < out["end"]["sum_received"]["seconds"] < 2.5, out["end"]["sum_received"]
    wait_idle(svc.daemon)


def test_service_del_mid_test_tells_the_client(svc):
    """`service del` during a test: the client stops at once (SERVER_TERMINATE, or its streams
    reset)."""
    d = svc.daemon
    wait_idle(d)
    client = subprocess.Popen(["ip", "netns", "exec", svc.peer.ns, "iperf3", "-c",
                               svc.stack_ip, "-p", str(PORT), "-t", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        topo.wait_until(lambda: service_row(d)["requests"] > 0 and
                        service_row(d)["active"] >= 2, 10, what="the test running")
        d.ctl("service", "del", "tcp", PORT)
        out, err = client.communicate(timeout=10)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        d.ctl("service", "add", "iperf3", "tcp", PORT)
    assert client.returncode != 0
    # The service sends SERVER_TERMINATE, then closes the test's streams; data the client
    # still had in flight meets a closed socket and is reset (RFC 1122 §4.2.2.13, as from
    # an iperf3 server on Linux). Whichever the client notices first ends it at once.
    assert ("the server has terminated" in out + err or
            "unable to write to stream socket" in err), (out, err)
    assert_next_test_runs(svc)


# ---------------------------------------------------------------------------------------------
# refusals

@pytest.mark.parametrize("args, message", [
    (("-u",), "protocol does not exist"),
    (("--bidir",), "not implemented"),
    (("-R", "-b", "10M"), "not implemented"),
], ids=["udp", "bidir", "reverse_bitrate"])
def test_unsupported_test_refused_cleanly(svc, args, message):
    d = svc.daemon
    before = wait_idle(d)
    t0 = time.monotonic()
    p = iperf3(svc, "-t", "1", *args, timeout=20)
    assert time.monotonic() - t0 < 10, "the refusal took too long"
    assert p.returncode != 0, p
    assert message in p.stdout + p.stderr, p
    after = wait_idle(d)
    assert after["errors"] - before["errors"] == 1
    assert after["requests"] == before["requests"]
    assert_next_test_runs(svc)


def test_second_client_while_busy_gets_access_denied(svc):
    d = svc.daemon
    wait_idle(d)
    first = subprocess.Popen(["ip", "netns", "exec", svc.peer.ns, "iperf3", "-c", svc.stack_ip,
                              "-p", str(PORT), "-t", "4", "-J"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        topo.wait_until(lambda: service_row(d)["active"] >= 2, 10,
                        what="the first test running")
        p = iperf3(svc, "-t", "1", timeout=20)
        assert p.returncode != 0, p
        assert "busy" in p.stdout + p.stderr, p
        out, err = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, (out, err)
    assert json.loads(out)["end"]["sum_received"]["bytes"] > 0
    wait_idle(d)


def test_refused_with_two_workers(lab):
    """A test's connections must meet on one worker, and RSS spreads them: the service is
    refused on a daemon with two workers instead of failing tests at random."""
    peer = lab.add_peer("10.0.0.1")
    cpus = sorted(os.sched_getaffinity(0))
    first, second = cpus[0], cpus[1 % len(cpus)]
    d = lab.start_daemon("\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (first, first, second),
        "workers 2",
        "port add port0 net_af_packet0,iface=%s,qpairs=2" % peer.root_ifname,
        "ip addr add 10.0.0.2/24 dev port0",
    ]) + "\n")
    r = d.ctl_result("service", "add", "iperf3", "tcp", PORT)
    assert r.rc != 0, r
    assert "workers 1" in r.out + r.err, r
    assert d.ctl("service", "show", json=True) == []


# ---------------------------------------------------------------------------------------------
# misbehaving clients

def test_garbage_on_the_control_port_is_dropped(svc):
    d = svc.daemon
    before = wait_idle(d)
    sock = connect(svc)
    try:
        sock.sendall(os.urandom(4096))
        got = closed_by_peer(sock)
    finally:
        sock.close()
    assert got == b"", got   # not an iperf3 cookie: no answer
    after = wait_idle(d)
    assert after["errors"] - before["errors"] == 1
    assert_next_test_runs(svc)


def test_oversized_parameter_length_gets_server_error(svc):
    sock = connect(svc)
    try:
        sock.sendall(cookie("b"))
        assert recv_exact(sock, 1) == bytes([PARAM_EXCHANGE])
        sock.sendall(struct.pack("!I", 0x7fffffff))
        got = closed_by_peer(sock)
    finally:
        sock.close()
    assert got[:1] == bytes([SERVER_ERROR]), got
    assert struct.unpack("!ii", got[1:9])[0] == IERECVPARAMS, got
    wait_idle(svc.daemon)
    assert_next_test_runs(svc)


@pytest.mark.parametrize("body", [b"{", b"{\"tcp\":true,}", b"[1,2]", b"{\"parallel\":\"x\"}",
                                  b"{\"tcp\":tru}", b"\0\0\0\0"],
                         ids=["truncated", "trailing_comma", "array", "string_parallel",
                              "bad_literal", "nul_bytes"])
def test_malformed_parameters_get_server_error(svc, body):
    sock = connect(svc)
    try:
        sock.sendall(cookie("c"))
        assert recv_exact(sock, 1) == bytes([PARAM_EXCHANGE])
        sock.sendall(struct.pack("!I", len(body)) + body)
        got = closed_by_peer(sock)
    finally:
        sock.close()
    assert got[:1] == bytes([SERVER_ERROR]), got
    assert struct.unpack("!ii", got[1:9])[0] == IERECVPARAMS, got
    wait_idle(svc.daemon)


def test_client_vanishing_mid_test_frees_the_service(svc):
    """A hand-made client: parameters, one stream, TEST_RUNNING, then both connections reset
    (SO_LINGER 0). The service must close everything and take the next test."""
    d = svc.daemon
    before = wait_idle(d)
    ctl = connect(svc)
    stream = None
    try:
        ctl.sendall(cookie("d"))
        assert recv_exact(ctl, 1) == bytes([PARAM_EXCHANGE])
        send_json(ctl, {"tcp": True, "omit": 0, "time": 10, "num": 0, "blockcount": 0,
                        "parallel": 1, "len": 131072, "client_version": "3.12"})
        assert recv_exact(ctl, 1) == bytes([CREATE_STREAMS])
        stream = connect(svc)
        stream.sendall(cookie("d"))
        assert recv_exact(ctl, 2) == bytes([TEST_START, TEST_RUNNING])
        stream.sendall(os.urandom(1 << 20))
        topo.wait_until(lambda: service_row(d)["requests"] > before["requests"], 5,
                        what="the test counted")
    finally:
        for s in (ctl, stream):
            if s is not None:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
    after = wait_idle(d)
    assert after["errors"] > before["errors"]
    assert_next_test_runs(svc)


def test_full_exchange_by_hand_reports_stream_ids_and_bytes(svc):
    """The whole control protocol step by step, with two streams: the results name the
    streams 1 and 3 (iperf3's numbering) with the bytes each one sent."""
    d = svc.daemon
    wait_idle(d)
    ctl = connect(svc)
    streams = []
    try:
        ctl.sendall(cookie("e"))
        assert recv_exact(ctl, 1) == bytes([PARAM_EXCHANGE])
        send_json(ctl, {"tcp": True, "time": 1, "parallel": 2, "len": 1000})
        assert recv_exact(ctl, 1) == bytes([CREATE_STREAMS])
        for _ in range(2):
            s = connect(svc)
            s.sendall(cookie("e"))
            streams.append(s)
        assert recv_exact(ctl, 2) == bytes([TEST_START, TEST_RUNNING])
        streams[0].sendall(b"x" * 100000)
        streams[1].sendall(b"y" * 30000)
        topo.wait_until(lambda: service_row(d)["bytes_in"] >= 130000, 5, what="data read")
        ctl.sendall(bytes([TEST_END]))
        assert recv_exact(ctl, 1) == bytes([EXCHANGE_RESULTS])
        send_json(ctl, {"cpu_util_total": 0, "cpu_util_user": 0, "cpu_util_system": 0,
                        "sender_has_retransmits": 0,
                        "streams": [{"id": 1, "bytes": 100000}, {"id": 3, "bytes": 30000}]})
        (n,) = struct.unpack("!I", recv_exact(ctl, 4))
        results = json.loads(recv_exact(ctl, n))
        assert recv_exact(ctl, 1) == bytes([DISPLAY_RESULTS])
        ctl.sendall(bytes([IPERF_DONE]))
        assert closed_by_peer(ctl) == b""
    finally:
        for s in [ctl] + streams:
            s.close()
    for key in ("cpu_util_total", "cpu_util_user", "cpu_util_system",
                "sender_has_retransmits"):
        assert key in results, results
    assert results["sender_has_retransmits"] == -1
    got = {st["id"]: st["bytes"] for st in results["streams"]}
    assert got == {1: 100000, 3: 30000}, results
    for st in results["streams"]:
        for key in ("retransmits", "jitter", "errors", "packets", "start_time", "end_time"):
            assert key in st, st
    wait_idle(d)


def test_partial_cookie_does_not_block_a_test(svc):
    """A connection that never finishes its cookie is not a client yet: others are served."""
    sock = connect(svc)
    try:
        sock.sendall(b"abc")
        assert_next_test_runs_without_idle(svc)
    finally:
        sock.close()
    wait_idle(svc.daemon)


@pytest.mark.slow
def test_stuck_handshake_is_ended_when_the_next_client_comes(svc):
    """A client that sends its cookie and then nothing holds the service (the next one is
    refused as busy) only until the handshake limit (10 s): then the next one takes over."""
    d = svc.daemon
    before = wait_idle(d)
    sock = connect(svc)
    try:
        sock.sendall(cookie("f"))
        assert recv_exact(sock, 1) == bytes([PARAM_EXCHANGE])
        p = iperf3(svc, "-t", "1", timeout=20)
        assert p.returncode != 0 and "busy" in p.stdout + p.stderr, p
        time.sleep(10.5)
        assert_next_test_runs_without_idle(svc)
        assert closed_by_peer(sock) == b""
    finally:
        sock.close()
    after = wait_idle(d)
    assert after["errors"] - before["errors"] >= 2   # the refusal and the eviction
