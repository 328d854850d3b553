"""The built-in services of dpstackd (src/svc) against kernel clients in the peer namespace:
echo, discard and chargen (RFC 862-864) over TCP and UDP, and the http service with curl and
raw sockets (keep-alive, HEAD, pipelining, error statuses); `service add|del|show` and their
refusals; services from the config file."""

import hashlib
import os
import re
import socket
import threading
import time
import types

import pytest

import topo

# The services every test of this module may use (one daemon for the module).
SERVICES = [
    ("echo", "tcp", 7), ("echo", "udp", 7),
    ("discard", "tcp", 9), ("discard", "udp", 9),
    ("chargen", "tcp", 19), ("chargen", "udp", 19),
    ("http", "tcp", 80),
]
HTTP_SIZED_PORT = 8080
HTTP_SIZED_BYTES = 1000000
CHARGEN_SIZED_PORT = 1919
CHARGEN_SIZED_BYTES = 300000
HELLO = b"Hello from dpstack\n"
MB = 1 << 20


def chargen_pattern(n, offset=0):
    """RFC 864's rotating pattern: 72 printable characters per line, each line starting one
    character later, CR LF after each; it repeats every 95 lines."""
    period = bytearray()
    for line in range(95):
        period += bytes(32 + (line + col) % 95 for col in range(72)) + b"\r\n"
    reps = (offset + n) // len(period) + 1
    return bytes((period * reps)[offset:offset + n])


@pytest.fixture(scope="module")
def svc(one_port):
    """one_port with the module's services; they are removed again at the end."""
    d = one_port.daemon
    for kind, proto, port in SERVICES:
        d.ctl("service", "add", kind, proto, port)
    d.ctl("service", "add", "http", "tcp", HTTP_SIZED_PORT, "size", HTTP_SIZED_BYTES)
    d.ctl("service", "add", "chargen", "tcp", CHARGEN_SIZED_PORT, "size", CHARGEN_SIZED_BYTES)
    yield one_port
    for _kind, proto, port in SERVICES:
        d.ctl("service", "del", proto, port)
    d.ctl("service", "del", "tcp", HTTP_SIZED_PORT)
    d.ctl("service", "del", "tcp", CHARGEN_SIZED_PORT)


def service_row(d, proto, port):
    for row in d.ctl("service", "show", json=True):
        if row["proto"] == proto and row["port"] == port:
            return row
    return None


def wait_idle(d, proto, port, timeout=10.0):
    """Waits until the service has no open connection (closes finish asynchronously)."""
    return topo.wait_until(lambda: service_row(d, proto, port)["active"] == 0 and
                           service_row(d, proto, port), timeout,
                           what="no active connection on %s %d" % (proto, port))


def tcp_connect(s, port, timeout=10.0):
    """A TCP socket in the peer's namespace, connected to the stack's port."""
    return topo.in_netns(s.peer.ns, lambda: socket.create_connection((s.stack_ip, port),
                                                                      timeout=timeout))


def udp_socket(s, timeout=3.0):
    def make():
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((s.peer_ip, 0))
        u.settimeout(timeout)
        return u
    return topo.in_netns(s.peer.ns, make)


def recv_all(sock, limit=None):
    """Reads until the peer closes (or limit bytes); returns the bytes."""
    out = bytearray()
    while limit is None or len(out) < limit:
        chunk = sock.recv(min(1 << 16, limit - len(out)) if limit else 1 << 16)
        if not chunk:
            break
        out += chunk
    return bytes(out)


def curl(s, *args, timeout=20):
    return s.peer.run("curl", "-sS", "-m", "10", *args, timeout=timeout, check=False)


# ---------------------------------------------------------------------------------------------
# echo

def test_echo_tcp_nc_round_trip(svc):
    p = svc.peer.run("sh", "-c", "printf 'hello dpstack\\n' | nc -N -w 5 %s 7" % svc.stack_ip,
                     check=False)
    assert p.returncode == 0, p
    assert p.stdout == "hello dpstack\n", p


def test_echo_tcp_10mb_sha256_matches(svc):
    d = svc.daemon
    before = service_row(d, "tcp", 7)
    data = os.urandom(10 * MB)
    sock = tcp_connect(svc, 7, timeout=30)
    errors = []

    def send():
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError as e:
            errors.append(e)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    h = hashlib.sha256()
    got = 0
    try:
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            h.update(chunk)
            got += len(chunk)
    finally:
        sender.join(30)
        sock.close()
    assert not errors, errors
    assert got == len(data)
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
    after = wait_idle(d, "tcp", 7)
    assert after["accepted"] - before["accepted"] == 1
    assert after["bytes_in"] - before["bytes_in"] == len(data)
    assert after["bytes_out"] - before["bytes_out"] == len(data)
    assert after["errors"] == before["errors"]


def test_echo_tcp_client_that_does_not_read_is_paused_not_dropped(svc):
    """Backpressure: the client writes 4 MB before reading anything; echo must stop reading
    when it cannot write, then deliver every byte once the client reads."""
    data = os.urandom(4 * MB)
    sock = tcp_connect(svc, 7, timeout=30)
    sent = threading.Event()

    def send():
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        sent.set()

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    time.sleep(1.0)  # the windows fill: the sender blocks, nothing is lost
    got = recv_all(sock)
    sender.join(30)
    sock.close()
    assert sent.is_set()
    assert got == data


def test_echo_tcp_several_clients_at_once(svc):
    blobs = [os.urandom(256 * 1024) for _ in range(8)]
    results = [None] * len(blobs)

    def one(i):
        sock = tcp_connect(svc, 7, timeout=30)
        t = threading.Thread(target=lambda: (sock.sendall(blobs[i]),
                                             sock.shutdown(socket.SHUT_WR)), daemon=True)
        t.start()
        results[i] = recv_all(sock)
        t.join(30)
        sock.close()

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(blobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [r == b for r, b in zip(results, blobs)] == [True] * len(blobs)


@pytest.mark.parametrize("size", [1, 100, 1472, 8000])
def test_echo_udp_datagram_returned(svc, size):
    u = udp_socket(svc)
    try:
        payload = os.urandom(size)
        u.sendto(payload, (svc.stack_ip, 7))
        data, addr = u.recvfrom(65536)
    finally:
        u.close()
    assert data == payload
    assert addr == (svc.stack_ip, 7)


def test_echo_udp_counts_datagrams(svc):
    d = svc.daemon
    before = service_row(d, "udp", 7)
    u = udp_socket(svc)
    try:
        for i in range(20):
            u.sendto(b"x%d" % i, (svc.stack_ip, 7))
            assert u.recvfrom(100)[0] == b"x%d" % i
    finally:
        u.close()
    after = service_row(d, "udp", 7)
    assert after["datagrams"] - before["datagrams"] == 20
    assert after["bytes_out"] - before["bytes_out"] == sum(len(b"x%d" % i) for i in range(20))


def test_echo_udp_from_a_service_port_not_answered(svc):
    """No answer to a datagram from port 19 (chargen): two services must not bounce
    datagrams between them forever (RFC 864)."""
    def make():
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((svc.peer_ip, 19))
        u.settimeout(0.5)
        return u
    u = topo.in_netns(svc.peer.ns, make)
    try:
        u.sendto(b"loop?", (svc.stack_ip, 7))
        with pytest.raises(socket.timeout):
            u.recvfrom(100)
    finally:
        u.close()


# ---------------------------------------------------------------------------------------------
# discard

def test_discard_tcp_accepts_10mb_and_closes_after_eof(svc):
    d = svc.daemon
    before = service_row(d, "tcp", 9)
    sock = tcp_connect(svc, 9, timeout=30)
    try:
        block = os.urandom(MB)
        for _ in range(10):
            sock.sendall(block)
        sock.shutdown(socket.SHUT_WR)
        assert recv_all(sock) == b""  # nothing comes back; the server closes
    finally:
        sock.close()
    after = wait_idle(d, "tcp", 9)
    assert after["bytes_in"] - before["bytes_in"] == 10 * MB
    assert after["bytes_out"] == before["bytes_out"]


def test_discard_udp_counts_and_answers_nothing(svc):
    d = svc.daemon
    before = service_row(d, "udp", 9)
    u = udp_socket(svc, timeout=0.5)
    try:
        for _ in range(10):
            u.sendto(b"y" * 100, (svc.stack_ip, 9))
        with pytest.raises(socket.timeout):
            u.recvfrom(100)
    finally:
        u.close()
    after = topo.wait_until(lambda: (lambda r: r["datagrams"] - before["datagrams"] >= 10 and r)(
        service_row(d, "udp", 9)), 5, what="10 datagrams counted")
    assert after["bytes_in"] - before["bytes_in"] == 1000


# ---------------------------------------------------------------------------------------------
# chargen

def test_chargen_tcp_first_bytes_follow_the_pattern(svc):
    sock = tcp_connect(svc, 19)
    try:
        got = recv_all(sock, limit=200000)
    finally:
        sock.close()
    assert len(got) == 200000
    assert got == chargen_pattern(200000)


def test_chargen_tcp_size_sends_exactly_that_and_closes(svc):
    sock = tcp_connect(svc, CHARGEN_SIZED_PORT, timeout=20)
    try:
        got = recv_all(sock)
    finally:
        sock.close()
    assert got == chargen_pattern(CHARGEN_SIZED_BYTES)


def test_chargen_tcp_client_close_ends_it(svc):
    d = svc.daemon
    sock = tcp_connect(svc, 19)
    assert len(recv_all(sock, limit=10000)) == 10000
    sock.close()
    wait_idle(d, "tcp", 19)


def test_chargen_udp_answer_is_a_pattern_prefix_of_0_to_512(svc):
    u = udp_socket(svc)
    lengths = set()
    try:
        for _ in range(20):
            u.sendto(b"", (svc.stack_ip, 19))
            data, _ = u.recvfrom(65536)
            assert len(data) <= 512
            assert data == chargen_pattern(len(data))
            lengths.add(len(data))
    finally:
        u.close()
    assert len(lengths) > 1, "every answer had the same length: %r" % lengths


# ---------------------------------------------------------------------------------------------
# http

def test_http_curl_get_body(svc):
    p = curl(svc, "http://%s/" % svc.stack_ip)
    assert p.returncode == 0, p
    assert p.stdout == HELLO.decode()


def test_http_curl_two_urls_share_one_connection(svc):
    d = svc.daemon
    before = service_row(d, "tcp", 80)
    p = curl(svc, "-v", "http://%s/a" % svc.stack_ip, "http://%s/b" % svc.stack_ip)
    assert p.returncode == 0, p
    assert p.stdout == HELLO.decode() * 2
    assert re.search(r"Re-?using existing connection", p.stderr), p.stderr
    after = wait_idle(d, "tcp", 80)
    assert after["accepted"] - before["accepted"] == 1
    assert after["requests"] - before["requests"] == 2


def test_http_curl_head_has_headers_and_no_body(svc):
    p = curl(svc, "-I", "http://%s/" % svc.stack_ip)
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()   # text mode: CR LF arrives as "\n"
    assert lines[0] == "HTTP/1.1 200 OK", p.stdout
    assert "Content-Length: %d" % len(HELLO) in lines
    assert "Server: dpstack" in lines
    assert not any(line.lower().startswith("date:") for line in lines)
    assert p.stdout.endswith("\n\n"), "HEAD answered with a body: %r" % p.stdout


def test_http_curl_http_1_0_closes(svc):
    p = curl(svc, "-0", "-i", "http://%s/" % svc.stack_ip)
    assert p.returncode == 0, p
    assert "Connection: close" in p.stdout
    assert p.stdout.endswith(HELLO.decode())


def test_http_sized_body_is_the_pattern(svc):
    p = svc.peer.run("sh", "-c", "curl -sS -m 20 http://%s:%d/ | sha256sum" %
                     (svc.stack_ip, HTTP_SIZED_PORT), timeout=30)
    assert p.stdout.split()[0] == hashlib.sha256(chargen_pattern(HTTP_SIZED_BYTES)).hexdigest()


def raw_http(s, request, port=80):
    """Sends request bytes at once and returns everything until the server closes."""
    sock = tcp_connect(s, port)
    try:
        sock.sendall(request)
        return recv_all(sock)
    finally:
        sock.close()


def split_responses(data, heads=()):
    """Splits concatenated HTTP/1.1 answers by their Content-Length: [(status, headers,
    body)]. heads: indices of answers to HEAD requests, which have no body."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, "truncated answer: %r" % data[:200]
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        n = 0 if len(out) in heads else int(headers["content-length"])
        out.append((status, headers, rest[:n]))
        data = rest[n:]
    return out


def test_http_pipelined_requests_answered_in_order(svc):
    req = b"".join(b"GET /%d HTTP/1.1\r\nHost: x\r\n\r\n" % i for i in range(5))
    req += b"HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n"
    req += b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    answers = split_responses(raw_http(svc, req), heads=(5,))
    assert [(a[0], a[2]) for a in answers] == [(200, HELLO)] * 5 + [(200, b""), (200, HELLO)]
    assert answers[5][1]["content-length"] == str(len(HELLO))
    assert [a[1]["connection"] for a in answers] == ["keep-alive"] * 6 + ["close"]


def test_http_post_gets_405_and_body_is_skipped(svc):
    req = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello=world"
           b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answers = split_responses(raw_http(svc, req))
    assert [a[0] for a in answers] == [405, 200]
    assert answers[0][1]["allow"] == "GET, HEAD"
    assert answers[1][2] == HELLO


@pytest.mark.parametrize("request_bytes,status", [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\n\r\n", 400),                       # no Host
    (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),           # space before the colon
    (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431),
], ids=["garbage", "no_host", "space_before_colon", "http2", "head_too_long"])
def test_http_bad_request_answered_and_closed(svc, request_bytes, status):
    d = svc.daemon
    before = service_row(d, "tcp", 80)
    answers = split_responses(raw_http(svc, request_bytes))
    assert [a[0] for a in answers] == [status]
    assert answers[0][1]["connection"] == "close"
    after = wait_idle(d, "tcp", 80)
    assert after["errors"] - before["errors"] == 1


def test_http_request_split_in_small_pieces(svc):
    sock = tcp_connect(svc, 80)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for b in b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n":
            sock.send(bytes([b]))
            time.sleep(0.002)
        answers = split_responses(recv_all(sock))
    finally:
        sock.close()
    assert answers == [(200, answers[0][1], HELLO)]


# ---------------------------------------------------------------------------------------------
# service show / add / del

def test_service_show_lists_every_service_in_text_and_json(svc):
    rows = svc.daemon.ctl("service", "show", json=True)
    listed = {(r["kind"], r["proto"], r["port"]) for r in rows}
    assert set(SERVICES) <= listed
    sized = [r for r in rows if r["port"] == HTTP_SIZED_PORT][0]
    assert sized["size"] == HTTP_SIZED_BYTES and sized["backlog"] == 1024
    for r in rows:
        for k in ("accepted", "active", "bytes_in", "bytes_out", "requests", "datagrams",
                  "errors"):
            assert isinstance(r[k], int), (k, r)
    text = svc.daemon.ctl("service", "show")
    assert text.splitlines()[0].split()[:3] == ["proto", "port", "kind"]
    assert re.search(r"^tcp\s+80\s+http\s", text, re.M), text
    assert re.search(r"^udp\s+19\s+chargen\s", text, re.M), text


def test_service_show_counters_increase(svc):
    d = svc.daemon
    before = service_row(d, "tcp", 80)
    for _ in range(3):
        assert curl(svc, "http://%s/" % svc.stack_ip).returncode == 0
    after = wait_idle(d, "tcp", 80)
    assert after["accepted"] - before["accepted"] == 3
    assert after["requests"] - before["requests"] == 3
    assert after["bytes_in"] > before["bytes_in"]
    assert after["bytes_out"] > before["bytes_out"]


def test_service_del_stops_listening_and_add_again_works(svc):
    d = svc.daemon
    d.ctl("service", "add", "echo", "tcp", 7007, "backlog", 16)
    try:
        sock = tcp_connect(svc, 7007)
        sock.sendall(b"ping")
        assert sock.recv(4) == b"ping"
        d.ctl("service", "del", "tcp", 7007)
        # An open connection is closed with the service.
        assert recv_all(sock) == b""
        sock.close()
        assert service_row(d, "tcp", 7007) is None
        with pytest.raises(ConnectionRefusedError):
            tcp_connect(svc, 7007).close()
        d.ctl("service", "add", "discard", "tcp", 7007)
        assert service_row(d, "tcp", 7007)["kind"] == "discard"
    finally:
        d.ctl_result("service", "del", "tcp", 7007)


BAD_SERVICE_COMMANDS = [
    ("unknown_kind", ["service", "add", "gopher", "tcp", "70"]),
    ("http_over_udp", ["service", "add", "http", "udp", "80"]),
    ("port_zero", ["service", "add", "echo", "tcp", "0"]),
    ("port_too_big", ["service", "add", "echo", "tcp", "65536"]),
    ("port_not_a_number", ["service", "add", "echo", "tcp", "seven"]),
    ("port_negative", ["service", "add", "echo", "tcp", "-7"]),
    ("unknown_proto", ["service", "add", "echo", "sctp", "7"]),
    ("already_present", ["service", "add", "echo", "tcp", "7"]),
    ("already_present_other_kind", ["service", "add", "discard", "udp", "19"]),
    ("missing_port", ["service", "add", "echo", "tcp"]),
    ("missing_everything", ["service", "add"]),
    ("size_on_echo", ["service", "add", "echo", "tcp", "77", "size", "5"]),
    ("backlog_on_udp", ["service", "add", "echo", "udp", "77", "backlog", "5"]),
    ("backlog_zero", ["service", "add", "http", "tcp", "81", "backlog", "0"]),
    ("size_dangling", ["service", "add", "http", "tcp", "81", "size"]),
    ("size_twice", ["service", "add", "http", "tcp", "81", "size", "1", "size", "2"]),
    ("unknown_option", ["service", "add", "http", "tcp", "81", "colour", "red"]),
    ("chargen_udp_size_too_big", ["service", "add", "chargen", "udp", "119", "size",
                                  "70000"]),
    ("del_missing", ["service", "del", "tcp", "4444"]),
    ("del_missing_udp", ["service", "del", "udp", "80"]),
    ("del_missing_port", ["service", "del", "tcp"]),
    ("del_bad_proto", ["service", "del", "icmp", "7"]),
    ("show_extra_word", ["service", "show", "now"]),
]


def service_set(d):
    return sorted((r["proto"], r["port"], r["kind"], r.get("size"), r.get("backlog"))
                  for r in d.ctl("service", "show", json=True))


@pytest.mark.parametrize("name,args", BAD_SERVICE_COMMANDS,
                         ids=[c[0] for c in BAD_SERVICE_COMMANDS])
def test_bad_service_command_one_error_line_exit_1_nothing_changed(svc, name, args):
    d = svc.daemon
    before = service_set(d)
    for json in (False, True):
        r = d.ctl_result(*args, json=json)
        assert r.rc == 1, r
        assert r.out == "", r
        lines = r.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("dpstackctl: "), r
    assert service_set(d) == before


def test_help_lists_service_commands(one_port):
    out = one_port.ctl("help")
    for usage in ("service add", "service del", "service show"):
        assert any(line.startswith(usage) for line in out.splitlines()), usage


# ---------------------------------------------------------------------------------------------
# config file

def test_services_from_config_file(lab):
    s = topo.SinglePort(lab, extra_config=["service add echo tcp 7",
                                           "service add http tcp 80 size 100"])
    s.warm_up()
    assert {(r["kind"], r["port"]) for r in s.ctl("service", "show", json=True)} == \
        {("echo", 7), ("http", 80)}
    assert raw_http(s, b"GET / HTTP/1.0\r\n\r\n").endswith(b"\r\n\r\n" + chargen_pattern(100))


def test_bad_service_line_in_config_stops_the_daemon(lab):
    peer = lab.add_peer("10.0.0.1")
    config = topo.one_port_config(peer.root_ifname, extra=["service add http udp 80"])
    d = topo.Daemon(os.path.join(lab.tmp, "bad"), config)
    d.start(wait=False)
    lab.add_cleanup(d.stop_quietly)
    rc = d.wait_exit(timeout=30)
    assert rc != 0
    assert re.search(r"dpstackd\.conf:4: http runs over tcp only", d.log()), d.log()[-2000:]


# ---------------------------------------------------------------------------------------------
# several workers

def test_two_workers_each_serve_and_show_sums_them(lab):
    """Every worker listens; connections land on the worker their hash picks, and
    `service show` adds the workers' counters up."""
    peer = lab.add_peer("10.0.0.1")
    cpus = sorted(os.sched_getaffinity(0))
    first, second = cpus[0], cpus[1 % len(cpus)]
    d = lab.start_daemon("\n".join([
        "eal --lcores=0@%d,1@%d,2@%d" % (first, first, second),
        "workers 2",
        "port add port0 net_af_packet0,iface=%s,qpairs=2" % peer.root_ifname,
        "ip addr add 10.0.0.2/24 dev port0",
        "service add echo tcp 7",
        "service add http tcp 80",
    ]) + "\n")
    s = types.SimpleNamespace(peer=peer, stack_ip="10.0.0.2")
    topo.wait_until(lambda: peer.ping("10.0.0.2", count=1, wait=1).received == 1, timeout=20,
                    interval=0.1, what="first ping")
    n = 16
    p = peer.run("curl", "-sS", "-m", "10", "--parallel", "--parallel-max", "4",
                 *["http://10.0.0.2/%d" % i for i in range(n)], "-H", "Connection: close",
                 timeout=30, check=False)
    assert p.returncode == 0, p
    assert p.stdout == HELLO.decode() * n
    for i in range(n):
        sock = tcp_connect(s, 7)
        sock.sendall(b"w%d" % i)
        sock.shutdown(socket.SHUT_WR)
        assert recv_all(sock) == b"w%d" % i
        sock.close()
    http = wait_idle(d, "tcp", 80)
    echo = wait_idle(d, "tcp", 7)
    assert http["accepted"] == n and http["requests"] == n
    assert echo["accepted"] == n and echo["bytes_in"] == sum(len(b"w%d" % i) for i in range(n))
