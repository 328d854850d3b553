"""TCP over IPv6 against the Linux kernel (issue 17): the built-in services, which listen on
:: and so answer both families, reached with curl -6, iperf3 and Python sockets; the
connection's segments carry the options IPv4's do (SACK, timestamps, window scaling) and an
MSS from the IPv6 MTU; a closed port answers with a reset; and one service is reached over
both families at once."""

import hashlib
import json
import os
import shutil
import socket
import threading

import pytest

import topo
from test_ipv6 import PEER6, STACK6, v6_port

HELLO = b"Hello from dpstack\n"
ECHO_PORT = 7
HTTP_PORT = 80
IPERF_PORT = 5201
MB = 1 << 20


@pytest.fixture(scope="module")
def v6():
    with v6_port("inet6", [("service", "add", "echo", "tcp", ECHO_PORT),
                           ("service", "add", "http", "tcp", HTTP_PORT),
                           ("service", "add", "iperf3", "tcp", IPERF_PORT)]) as setup:
        yield setup


def connect6(s, port, timeout=10.0):
    """A TCP socket in the peer's namespace, connected to the stack's IPv6 address."""
    def make():
        c = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        c.settimeout(timeout)
        c.connect((STACK6, port))
        return c
    return topo.in_netns(s.peer.ns, make)


def curl(s, *args):
    return s.peer.run("curl", "-sS", "-m", "10", *args, timeout=20, check=False)


def test_http_service_answers_curl_over_ipv6(v6):
    before = v6.daemon.counter("ip6.delivered")
    p = curl(v6, "-6", "http://[%s]/" % STACK6)
    assert p.returncode == 0, p.stderr
    assert p.stdout == HELLO.decode()
    assert v6.daemon.counter("ip6.delivered") > before


def test_tcp_options_and_mss_over_ipv6(v6):
    """The kernel's view of the connection: window scaling and timestamps negotiated, and
    the stack's MSS the IPv6 one (1500 - 40 - 20)."""
    c = connect6(v6, ECHO_PORT)
    try:
        c.sendall(b"x")
        assert c.recv(1) == b"x"
        ss = v6.peer.run("ss", "-6", "-t", "-i", "-n", "-e", "dst",
                         "[%s]:%d" % (STACK6, ECHO_PORT))
        info = ss.stdout
        assert "wscale:" in info, info
        # The stack announced 1440 (1500 - 40 - 20); with timestamps in every segment the
        # kernel's payload per segment is 12 bytes less.
        assert " mss:1428 " in info, info
    finally:
        c.close()


def test_echo_10mb_round_trip_over_ipv6_sha256_matches(v6):
    data = os.urandom(10 * MB)
    c = connect6(v6, ECHO_PORT, timeout=30)
    got = bytearray()

    def reader():
        while len(got) < len(data):
            chunk = c.recv(1 << 16)
            if not chunk:
                break
            got.extend(chunk)

    t = threading.Thread(target=reader)
    t.start()
    try:
        c.sendall(data)
        t.join(60)
    finally:
        c.close()
    assert not t.is_alive()
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()


def test_closed_port_refuses_over_ipv6(v6):
    before = v6.daemon.counter("tcp.out_rsts")
    with pytest.raises(ConnectionRefusedError):
        connect6(v6, 9)
    assert v6.daemon.counter("tcp.out_rsts") > before


def test_dual_stack_service_serves_both_families_at_once(v6):
    """The http service listens on ::, which takes IPv4 as mapped peers (RFC 3493 §3.7):
    curl over IPv4 and over IPv6 at the same time, both answered."""
    urls = ["http://%s/" % v6.stack_ip, "http://[%s]/" % STACK6]
    results = [None, None]

    def get(i):
        results[i] = curl(v6, "--parallel-max", "1", *([urls[i]] * 20))

    threads = [threading.Thread(target=get, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for r in results:
        assert r is not None and r.returncode == 0, r and r.stderr
        assert r.stdout == HELLO.decode() * 20


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
def test_iperf3_over_ipv6_moves_data(v6):
    p = v6.peer.run("iperf3", "-6", "-c", STACK6, "-p", str(IPERF_PORT), "-t", "2", "-J",
                    timeout=40, check=False)
    assert p.returncode == 0, p.stdout
    r = json.loads(p.stdout)
    assert r["end"]["sum_received"]["bytes"] > 1 * MB
    assert PEER6 in p.stdout
