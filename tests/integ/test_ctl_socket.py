"""A hostile client on the control socket: garbage, oversized requests, silence, clients
that vanish, hundreds of connections. The daemon answers each with an error or drops it,
keeps serving everyone else, and leaks no file descriptors."""

import os
import socket
import threading
import time

import pytest

import topo

GREETING = b"dpstack-ctl 1 text\n"


def raw_request(path, data, timeout=10.0, shut_write=False):
    """Sends data on a fresh connection and returns everything the daemon answers until it
    closes (a reset after the answer counts as the end)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        if data:
            s.sendall(data)
        if shut_write:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def request(*words):
    return GREETING + b"".join(w.encode() + b"\n" for w in words) + b"\n"


def test_valid_raw_request_answered(one_port):
    out = raw_request(one_port.daemon.sock, request("link", "show"))
    assert out.startswith(b"ok\n") and b"port0" in out, out


@pytest.mark.parametrize("data", [
    b"\x00\xff\xfe garbage \x01\x02\n\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\n\n",
    b"dpstack-ctl 2 text\nlink\nshow\n\n",
    b"dpstack-ctl 1 xml\nlink\nshow\n\n",
    GREETING + b"link\x00\nshow\n\n",
    b"\n\n",
], ids=["binary", "http", "wrong_version", "unknown_format", "nul_in_word", "empty"])
def test_garbage_request_gets_error_daemon_serves_next(one_port, data):
    out = raw_request(one_port.daemon.sock, data)
    assert out.startswith(b"error\n"), out
    assert len(out.splitlines()) == 2, out
    one_port.ctl("link", "show")


def test_request_over_8k_refused(one_port):
    data = GREETING + (b"x" * 100 + b"\n") * 90 + b"\n"  # 9 KB
    assert len(data) > 8192
    out = raw_request(one_port.daemon.sock, data)
    assert out.startswith(b"error\n") and b"too large" in out, out
    one_port.ctl("link", "show")


def test_unterminated_request_then_eof_gets_error(one_port):
    out = raw_request(one_port.daemon.sock, GREETING + b"link\nshow\n", shut_write=True)
    assert out.startswith(b"error\n"), out
    one_port.ctl("link", "show")


@pytest.mark.parametrize("send", [b"", GREETING + b"link\n"], ids=["nothing", "half_request"])
def test_silent_client_dropped_after_timeout_others_served(one_port, send):
    """The daemon serves one request at a time with a 2 s limit: a client that stalls delays
    the next one by at most that, and is itself told it timed out."""
    path = one_port.daemon.sock
    result = {}

    def silent():
        t0 = time.monotonic()
        result["answer"] = raw_request(path, send, timeout=10)
        result["seconds"] = time.monotonic() - t0

    t = threading.Thread(target=silent)
    t.start()
    time.sleep(0.2)  # let the silent client be accepted first
    t0 = time.monotonic()
    r = one_port.daemon.ctl_result("link", "show", timeout=15)
    waited = time.monotonic() - t0
    t.join(15)
    assert r.rc == 0, r
    assert waited < 5, "a silent client held the control socket for %.1f s" % waited
    assert not t.is_alive()
    assert result["answer"].startswith(b"error\n"), result
    assert 1.5 < result["seconds"] < 5, result


def test_200_connections_in_a_row_no_fd_leak(one_port):
    d = one_port.daemon
    fds = open_fds(d.pid)
    for _ in range(200):
        out = raw_request(d.sock, request("stats"))
        assert out.startswith(b"ok\n"), out
    for _ in range(200):  # connect and go away at once
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.sock)
        s.close()
    for _ in range(50):  # ask, and go away without reading the answer
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(d.sock)
        s.sendall(request("stats"))
        s.close()
    d.ctl("link", "show", timeout=30)
    topo.wait_until(lambda: open_fds(d.pid) <= fds, timeout=5,
                    what="dpstackd back to %d open fds" % fds)
    one_port.ping_ok()


def test_many_dpstackctl_processes_in_a_row(one_port):
    for _ in range(50):
        one_port.ctl("ip", "addr", "show", json=True)
