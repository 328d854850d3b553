"""The example programs on libdpstack (examples/) against kernel clients in the peer
namespace: dps-http and dps-https with curl (files checked by SHA-256, keep-alive seen in
curl's trace, HEAD, errors), dps-udp-echo with a kernel UDP socket. Each program runs with
the module daemon's DPSTACK_SOCK and is killed by PID at the end of its test."""

import contextlib
import hashlib
import os
import signal
import socket
import subprocess

import pytest

import topo

EXAMPLES = os.path.abspath(os.path.join(topo.BUILD, "examples"))


def example(name):
    path = os.path.join(EXAMPLES, name)
    if not os.access(path, os.X_OK):
        pytest.skip("not built: %s" % path)
    return path


@pytest.fixture(scope="module")
def st():
    lab = topo.Lab("examples")
    try:
        s = topo.SinglePort(lab)
        s.warm_up()
        yield s
    finally:
        lab.close()


def listening(st, port, pid):
    """The application's listener (TCP) or bound socket (UDP) shows in `sock show`."""
    return any(r["local"].endswith(":%d" % port) and r["pid"] == pid
               for r in st.ctl("sock", "show", json=True))


@contextlib.contextmanager
def running(st, argv, port, tmp_path):
    """Starts an example with the daemon's DPSTACK_SOCK; yields it once it is bound."""
    log = open(tmp_path / (os.path.basename(argv[0]) + ".log"), "w+")
    p = subprocess.Popen(argv, env=st.daemon.env, stdout=log, stderr=subprocess.STDOUT,
                         cwd=str(tmp_path))
    try:
        topo.wait_until(lambda: listening(st, port, p.pid) or p.poll() is not None, timeout=10,
                        what="%s bound to port %d" % (argv[0], port))
        log.seek(0)
        assert p.poll() is None, "%s exited: %s" % (argv[0], log.read())
        yield p
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()
    st.ping_ok()


@pytest.fixture
def docroot(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_bytes(b"<h1>dpstack</h1>\n")
    blob = os.urandom(5 << 20)
    (root / "big.bin").write_bytes(blob)
    return root, hashlib.sha256(blob).hexdigest()


def curl(st, *args, timeout=30):
    return st.peer.run("curl", "-sS", "-m", str(timeout - 5), *args, timeout=timeout)


def test_http_serves_files_with_keepalive(st, docroot, tmp_path):
    root, sha = docroot
    base = "http://%s:8081" % st.stack_ip
    with running(st, [example("dps-http"), "-p", "8081", "-d", str(root)], 8081, tmp_path):
        r = curl(st, "-v", base + "/", base + "/index.html")
        assert r.stdout == "<h1>dpstack</h1>\n" * 2
        assert "Re-using existing connection" in r.stderr or "Reusing existing" in r.stderr
        out = tmp_path / "got.bin"
        curl(st, "-o", str(out), base + "/big.bin")
        assert hashlib.sha256(out.read_bytes()).hexdigest() == sha


def test_http_head_and_errors(st, docroot, tmp_path):
    root, _ = docroot
    base = "http://%s:8082" % st.stack_ip
    with running(st, [example("dps-http"), "-p", "8082", "-d", str(root)], 8082, tmp_path):
        head = curl(st, "-I", base + "/big.bin").stdout
        assert head.startswith("HTTP/1.1 200")
        assert "Content-Length: %d" % (5 << 20) in head
        assert curl(st, "-o", "/dev/null", "-w", "%{http_code}", base + "/nope").stdout == "404"
        assert curl(st, "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is",
                    base + "/../etc/passwd").stdout in ("400", "403", "404")
        assert curl(st, "-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE",
                    base + "/").stdout == "405"
        # Garbage instead of a request: an error status, then the server still serves.
        bad = st.peer.run("sh", "-c", "printf 'garbage\\r\\n\\r\\n' | nc -N -w 5 %s 8082"
                          % st.stack_ip, check=False).stdout
        assert bad.startswith("HTTP/1.1 400")
        assert curl(st, base + "/").stdout == "<h1>dpstack</h1>\n"


def test_https_serves_files_over_tls(st, docroot, tmp_path):
    root, sha = docroot
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    topo.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=dpstack",
              "-days", "1", "-keyout", str(key), "-out", str(cert)])
    base = "https://%s:8443" % st.stack_ip
    with running(st, [example("dps-https"), "-p", "8443", "-d", str(root), "-c", str(cert),
                      "-k", str(key)], 8443, tmp_path):
        r = curl(st, "-k", "-v", base + "/", base + "/index.html")
        assert r.stdout == "<h1>dpstack</h1>\n" * 2
        assert "SSL connection using TLS" in r.stderr
        out = tmp_path / "got.bin"
        curl(st, "-k", "-o", str(out), base + "/big.bin")
        assert hashlib.sha256(out.read_bytes()).hexdigest() == sha


def test_udp_echo_returns_each_datagram(st, tmp_path):
    with running(st, [example("dps-udp-echo"), "-p", "7070"], 7070, tmp_path):
        def exchange():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(5)
            got = []
            for size in (1, 1400, 8000, 65507):
                payload = os.urandom(size)
                s.sendto(payload, (st.stack_ip, 7070))
                data, src = s.recvfrom(65535)
                got.append((data == payload, src[1]))
            s.close()
            return got
        assert topo.in_netns(st.peer.ns, exchange, timeout=30) == [(True, 7070)] * 4
