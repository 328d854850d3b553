"""Unmodified Debian programs on dpstack through libdpstack_preload.so (LD_PRELOAD), against
the Linux kernel in the peer's namespace and against each other over the stack:

1. nginx (master and two workers) serving kernel curl and wrk: keep-alive and
   `Connection: close`, a 1 MB file (sendfile) checked by SHA-256, https with a self-signed
   certificate; `nginx -s reload` under load with no failed request; `nginx -s quit`;
2. redis-server with kernel redis-cli (every value written read back) and redis-benchmark's
   default test set;
3. iperf3 server with a kernel client: TCP both ways and UDP;
4. curl and wrk on the stack against a kernel nginx;
5. both ends on the stack: redis-benchmark against redis-server, wrk against nginx, sockperf
   ping-pong (UDP and TCP);
6. the shim's edges: stack sockets above FD_SETSIZE given to select (EINVAL, no
   corruption), loopback addresses left to the kernel, DPSTACK_PRELOAD=kernel, a missing
   daemon (one clear line), DPSTACK_PRELOAD_LOG, dup/dup2/F_DUPFD numbers of one socket;
7. connections reset by a kernel peer or ended with their daemon (SIGKILL, SIGTERM), and
   UDP sockets of an ended daemon, against the same program on kernel sockets
   (apps/reset_probe.py).

Every program runs in its own session and is ended by PID (its process group: the programs
it forked) at the end of its test; each test then waits until the daemon has no application
left, so a leak shows in the test that made it."""

import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")
FDSET = os.path.join(topo.BUILD, "tests", "integ", "apps", "preload_fdset")
SIGNALS = os.path.join(topo.BUILD, "tests", "integ", "apps", "preload_signals")
FORKS = os.path.join(topo.BUILD, "tests", "integ", "apps", "preload_forks")
SHORT_TIMERS = ("tcp params time-wait-ms 200 fin-timeout-ms 1000",)
MB = 1 << 20


@pytest.fixture(scope="module", autouse=True)
def programs():
    if not os.access(PRELOAD, os.R_OK) or not os.access(FDSET, os.X_OK):
        pytest.skip("not built: %s" % PRELOAD)


def need(*names):
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        pytest.skip("not installed: %s" % ", ".join(missing))


@pytest.fixture(scope="module")
def st():
    with topo.single_port("preload", SHORT_TIMERS) as s:
        yield s


@pytest.fixture
def work(st, tmp_path):
    """A directory for the test's files; afterwards the daemon must have no application
    and no socket of one left."""
    yield tmp_path
    topo.wait_apps_gone(st.daemon)


def stack_env(st, **extra):
    env = st.daemon.env
    env["LD_PRELOAD"] = PRELOAD
    env.update(extra)
    return env


class Program:
    """A program in its own session (root namespace unless ns), output to a file."""

    def __init__(self, argv, env=None, ns=None, log=None):
        if ns is not None:
            argv = ["ip", "netns", "exec", ns] + list(argv)
        self.log_path = log
        self._log = open(log, "w") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen(topo.dying_with_parent(argv), env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def output(self):
        if not self.log_path:
            return ""
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """Ends the program and what it forked (its process group, which we made)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # forked children left behind
        if self._log is not subprocess.DEVNULL:
            self._log.close()


@contextlib.contextmanager
def program(argv, env=None, ns=None, log=None):
    p = Program(argv, env=env, ns=ns, log=log)
    try:
        yield p
    finally:
        p.stop()


def listening(ns, ip, port):
    """Someone accepts TCP connections at ip:port, as seen from namespace ns."""
    def probe():
        try:
            socket.create_connection((ip, port), timeout=1).close()
            return True
        except OSError:
            return False
    return topo.in_netns(ns, probe, timeout=5)


def stack_listening(st, port):
    """A stack socket listens on port: asked of the daemon, since the root namespace has no
    route to the stack's addresses of its own (a probe would leave by its default route)."""
    return re.search(r"LISTEN .*:%d\s" % port, st.daemon.ctl("sock", "show")) is not None


def wait_listening(st, port, prog, ns=None, ip=None):
    """prog listens on port: on the stack, or (ns, ip) for a kernel program."""
    ready = (lambda: listening(ns, ip, port)) if ns else (lambda: stack_listening(st, port))
    topo.wait_until(lambda: ready() or prog.proc.poll() is not None,
                    timeout=30, what="port %d listening" % port)
    assert prog.proc.poll() is None, "exited early:\n%s" % prog.output()


def peer_run(st, *cmd, timeout=60):
    return st.peer.run(*cmd, timeout=timeout, check=False)


def wrk_result(out):
    """Requests, non-2xx responses and socket errors from wrk's report."""
    m = re.search(r"(\d+) requests in", out)
    assert m, "no wrk report:\n%s" % out
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                     out)
    return (int(m.group(1)), int(non2xx.group(1)) if non2xx else 0,
            sum(map(int, errs.groups())) if errs else 0)


# ---------------------------------------------------------------------------------------------
# nginx

def write_site(root):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("hello from nginx\n")
    big = os.urandom(MB)
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(big)
    return hashlib.sha256(big).hexdigest()


def nginx_conf(d, port, root, workers=2, ssl_port=None, daemon=False, listen_opts="",
               server_extra=""):
    """An nginx.conf under d serving root on port (with listen_opts such as "reuseport" and
    server_extra directives, and https on ssl_port)."""
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    ssl = ""
    if ssl_port is not None:
        key, crt = os.path.join(d, "key.pem"), os.path.join(d, "crt.pem")
        topo.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                  "-subj", "/CN=dpstack-test", "-keyout", key, "-out", crt])
        ssl = ("server { listen %d ssl; root %s; ssl_certificate %s; "
               "ssl_certificate_key %s; }" % (ssl_port, root, crt, key))
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""user root root;
worker_processes %d;
pid %s/nginx.pid;
error_log %s/logs/error.log info;
daemon %s;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    server { listen %d %s; root %s; %s }
    %s
}
""" % (workers, d, d, "on" if daemon else "off", port, listen_opts, root, server_extra, ssl))
    return conf


def nginx_argv(d, conf, *extra):
    return ["nginx", "-c", conf, "-p", d, "-e", os.path.join(d, "logs", "error.log")] + list(
        extra)


@contextlib.contextmanager
def nginx_running(st, work, port, kernel=False, **conf):
    """nginx serving the test site on port, on the stack (preloaded) or, with kernel, in the
    peer's namespace; yields (program, SHA-256 of big.bin) once it listens."""
    root = str(work / "www")
    digest = write_site(root)
    d = str(work / ("kngx" if kernel else "ngx"))
    argv = nginx_argv(d, nginx_conf(d, port, root, **conf))
    with program(argv, env=None if kernel else stack_env(st), ns=st.peer.ns if kernel else None,
                 log=str(work / "nginx.out")) as ngx:
        if kernel:
            wait_listening(st, port, ngx, ns=st.peer.ns, ip=st.peer_ip)
        else:
            wait_listening(st, port, ngx)
        yield ngx, digest


def test_nginx_two_workers_serve_kernel_curl_wrk_and_a_1mb_file(st, work):
    need("nginx", "wrk", "curl")
    with nginx_running(st, work, 80, ssl_port=443) as (ngx, digest):
        workers = topo.run(["pgrep", "-P", str(ngx.pid)]).stdout.split()
        assert len(workers) == 2, "master %d has workers %s" % (ngx.pid, workers)
        base = "http://%s" % st.stack_ip
        # Two requests on one keep-alive connection, then one with Connection: close.
        r = peer_run(st, "curl", "-sS", "-m", "20", "-w", "%{num_connects}\n",
                     base + "/index.html", base + "/index.html")
        assert r.returncode == 0 and r.stdout.count("hello from nginx") == 2, r
        assert r.stdout.split()[-1] == "0", "the second request opened a connection: %r" % r
        r = peer_run(st, "curl", "-sS", "-m", "20", "-H", "Connection: close",
                     base + "/index.html")
        assert r.stdout == "hello from nginx\n", r
        r = peer_run(st, "sh", "-c", "curl -sS -m 30 %s/big.bin | sha256sum" % base)
        assert r.stdout.split()[0] == digest, r
        r = peer_run(st, "curl", "-sSk", "-m", "20", "https://%s/index.html" % st.stack_ip)
        assert r.stdout == "hello from nginx\n", r
        out = peer_run(st, "wrk", "-t2", "-c32", "-d3s", base + "/index.html").stdout
        n, bad, _ = wrk_result(out)
        assert n > 1000 and bad == 0, out
        out = peer_run(st, "wrk", "-t2", "-c16", "-d2s", "-H", "Connection: close",
                       base + "/index.html").stdout
        n, bad, errs = wrk_result(out)
        assert n > 100 and bad == 0 and errs == 0, out
        assert ngx.proc.poll() is None, ngx.output()


def test_nginx_reuseport_workers_each_take_connections_on_two_stack_workers(lab, tmp_path):
    """nginx with `listen reuseport` and two worker processes on a daemon with two workers:
    each nginx worker has its own listener (SO_REUSEPORT) on every stack worker, and
    connections spread over both processes and both stack workers, none failing."""
    need("nginx", "wrk")
    s = topo.two_workers(lab, extra_config=SHORT_TIMERS)
    d = s.daemon
    with nginx_running(s, tmp_path, 80, listen_opts="reuseport",
                       server_extra="add_header X-Worker $pid;") as (ngx, _):
        workers = {int(p) for p in topo.run(["pgrep", "-P", str(ngx.pid)]).stdout.split()}
        assert len(workers) == 2, workers
        url = "http://%s/index.html" % s.stack_ip
        out = peer_run(s, "wrk", "-t2", "-c64", "-d3s", "-H", "Connection: close", url).stdout
        n, bad, errs = wrk_result(out)
        assert n > 100 and bad == 0 and errs == 0, out
        # nginx's master opens one listener per worker process, all on port 80; each
        # exists on both stack workers.
        rows = d.ctl("sock", "show", "tcp", json=True)
        listeners = sorted(r["worker"] for r in rows
                           if r["state"] == "LISTEN" and r["local"] == "*:80")
        assert listeners == [0, 0, 1, 1], rows
        # Each answer names the nginx worker that accepted its connection.
        out = peer_run(s, "sh", "-c", "for i in $(seq 60); do curl -s -m 10 -o /dev/null -D - "
                       "%s; done" % url).stdout
        served = {int(v) for v in re.findall(r"(?im)^x-worker: (\d+)", out)}
        assert served == workers, out
        opens = [w["events"]["tcp.passive_opens"] for w in d.stats()["workers"]]
        assert min(opens) > 0, opens
        assert ngx.proc.poll() is None, ngx.output()
    topo.wait_apps_gone(d)


def recv_to_end(c):
    """Everything socket c receives until the peer ends the stream."""
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            return data
        data += b


def http_get_close(ip, port, path="/index.html"):
    """One request on a new connection: the status line, or the error."""
    try:
        c = socket.create_connection((ip, port), timeout=10)
    except OSError as e:
        return "error: connect: %s" % e
    try:
        with c:
            c.sendall(("GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" %
                       path).encode())
            data = recv_to_end(c)
        return data.split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as e:
        return "error: %s" % e


class DaemonNginx:
    """nginx as it runs in production: daemonized (its own session), on the stack."""

    def __init__(self, st, work, port):
        root = str(work / "www")
        write_site(root)
        self.st, self.port = st, port
        self.dir = str(work / "ngx")
        self.conf = nginx_conf(self.dir, port, root, daemon=True)
        self.env = stack_env(st)
        self.seen = set()               # every nginx process seen, for the cleanup

    def pid_file(self, old=False):
        return os.path.join(self.dir, "nginx.pid.oldbin" if old else "nginx.pid")

    def ctl(self, *extra):
        # By absolute path: a binary upgrade (USR2) execs argv[0] as given.
        topo.run([shutil.which("nginx")] + nginx_argv(self.dir, self.conf, *extra)[1:],
                 env=self.env)

    def master(self, old=False):
        """The master's PID from its pid file (the old binary's with old), or None."""
        try:
            pid = int(open(self.pid_file(old)).read())
        except (OSError, ValueError):
            return None
        self.seen.add(pid)
        return pid

    def workers(self, master):
        pids = set(topo.run(["pgrep", "-P", str(master)], check=False).stdout.split())
        self.seen |= {int(p) for p in pids}
        return pids

    def start(self):
        self.ctl()
        topo.wait_until(lambda: self.master() is not None, timeout=20, what="nginx.pid")
        topo.wait_until(lambda: stack_listening(self.st, self.port), timeout=20,
                        what="nginx listening")
        topo.wait_until(lambda: len(self.workers(self.master())) == 2, timeout=20,
                        what="nginx workers")

    def kill_all(self):
        # Every process seen, by PID: a worker whose master died first has another parent.
        for master in list(self.seen):
            self.workers(master)
        for pid in self.seen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def daemon_nginx(st, work, port=8080):
    need("nginx")
    ngx = DaemonNginx(st, work, port)
    try:
        ngx.start()
        yield ngx
    finally:
        ngx.kill_all()


def requests_during(st, port, action, clients=4):
    """HTTP requests (one connection each) from the peer's namespace by several clients, for a
    second before action() and a second after it returns; returns every answer's first line
    (or the error)."""
    results, stop = [], threading.Event()

    def client():
        while not stop.is_set():
            results.append(http_get_close(st.stack_ip, port))

    def load():
        ts = [threading.Thread(target=client) for _ in range(clients)]
        for t in ts:
            t.start()
        try:
            time.sleep(1.0)
            action()
            time.sleep(1.0)
        finally:
            stop.set()
            for t in ts:
                t.join()

    topo.in_netns(st.peer.ns, load, timeout=90)
    return results


def assert_all_served(results):
    failed = [r for r in results if not r.startswith("HTTP/1.1 200")]
    assert len(results) > 50 and not failed, "%d requests, failed: %s" % (
        len(results), failed[:5])


def test_nginx_reload_under_load_fails_no_request_and_quit_exits_cleanly(st, work):
    with daemon_nginx(st, work) as ngx:
        master = ngx.master()
        old_workers = ngx.workers(master)

        def reload():
            ngx.ctl("-s", "reload")
            # Old workers finish their connections, then exit.
            topo.wait_until(lambda: not old_workers & ngx.workers(master), timeout=20,
                            what="old workers gone")

        assert_all_served(requests_during(st, 8080, reload))
        assert len(ngx.workers(master)) == 2
        ngx.ctl("-s", "quit")
        topo.wait_until(lambda: not topo.pid_alive(master), timeout=20,
                        what="nginx master exits on quit")
        assert not os.path.exists(ngx.pid_file())


def test_nginx_binary_upgrade_usr2_under_load_fails_no_request(st, work):
    """nginx's binary upgrade: USR2 makes the master exec a new master that inherits the
    listening stack sockets (their numbers in $NGINX); WINCH retires the old workers, QUIT
    the old master. Not one request fails throughout, and the new master serves on alone."""
    with daemon_nginx(st, work) as ngx:
        old = ngx.master()
        old_workers = ngx.workers(old)

        def upgrade():
            os.kill(old, signal.SIGUSR2)
            topo.wait_until(lambda: ngx.master(old=True) == old and ngx.master() not in
                            (None, old), timeout=20, what="a new master")
            new = ngx.master()
            topo.wait_until(lambda: len(ngx.workers(new)) == 2, timeout=20,
                            what="the new master's workers")
            os.kill(old, signal.SIGWINCH)
            # (The new master is a child of the old one too.)
            topo.wait_until(lambda: not old_workers & ngx.workers(old), timeout=20,
                            what="the old workers gone")
            os.kill(old, signal.SIGQUIT)
            topo.wait_until(lambda: not topo.pid_alive(old), timeout=20,
                            what="the old master gone")

        assert_all_served(requests_during(st, 8080, upgrade))
        new = ngx.master()
        assert new != old and len(ngx.workers(new)) == 2
        r = topo.run(["ip", "netns", "exec", st.peer.ns, "curl", "-sS", "-m", "10",
                      "http://%s:8080/index.html" % st.stack_ip], check=False)
        assert r.stdout == "hello from nginx\n", r
        ngx.ctl("-s", "quit")
        topo.wait_until(lambda: not topo.pid_alive(new), timeout=20,
                        what="the new master exits on quit")


# ---------------------------------------------------------------------------------------------
# redis, iperf3, sockperf

def test_redis_server_values_read_back_and_benchmark_default_set(st, work):
    need("redis-server", "redis-cli", "redis-benchmark")
    argv = ["redis-server", "--port", "6379", "--bind", "0.0.0.0", "--protected-mode", "no",
            "--save", "", "--appendonly", "no", "--dir", str(work)]
    with program(argv, env=stack_env(st), log=str(work / "redis.out")) as srv:
        wait_listening(st, 6379, srv)
        cmds = "".join("SET key:%d %s\n" % (i, hashlib.sha1(b"%d" % i).hexdigest())
                       for i in range(500))
        r = topo.run(["ip", "netns", "exec", st.peer.ns, "redis-cli", "-h", st.stack_ip],
                     input=cmds, timeout=60)
        assert r.stdout.split() == ["OK"] * 500, r.stdout[-300:]
        gets = "".join("GET key:%d\n" % i for i in range(500))
        r = topo.run(["ip", "netns", "exec", st.peer.ns, "redis-cli", "-h", st.stack_ip],
                     input=gets, timeout=60)
        assert r.stdout.split() == [hashlib.sha1(b"%d" % i).hexdigest() for i in range(500)]
        r = peer_run(st, "redis-benchmark", "-h", st.stack_ip, "-q", "-n", "2000", "-c", "20",
                     timeout=300)
        done = re.findall(r"^([A-Z_]+[^:]*): [\d.]+ requests per second", r.stdout.replace(
            "\r", "\n"), re.M)
        assert r.returncode == 0 and len(done) >= 15 and "SET" in done and "GET" in done, (
            r.stdout[-500:], r.stderr[-300:])
        assert srv.proc.poll() is None, srv.output()


def iperf3_json(out):
    import json
    return json.loads(out)


def test_iperf3_server_tcp_both_ways_and_udp(st, work):
    need("iperf3")
    with program(["iperf3", "-s", "-4", "-p", "5201"], env=stack_env(st),
                 log=str(work / "iperf3.out")) as srv:
        wait_listening(st, 5201, srv)
        for extra in ([], ["-R"]):
            r = peer_run(st, "iperf3", "-c", st.stack_ip, "-t", "2", "-J", *extra)
            res = iperf3_json(r.stdout)
            assert "error" not in res, res.get("error")
            end = res["end"]
            assert end["sum_received"]["bytes"] > 10 * MB, end["sum_received"]
        r = peer_run(st, "iperf3", "-c", st.stack_ip, "-t", "2", "-u", "-b", "50M", "-J")
        res = iperf3_json(r.stdout)
        assert "error" not in res, res.get("error")
        s = res["end"]["sum"]
        assert s["packets"] > 1000 and s["lost_percent"] < 5, s
        assert srv.proc.poll() is None, srv.output()


@pytest.mark.parametrize("proto", ["udp", "tcp"])
def test_sockperf_ping_pong_both_ends_on_the_stack(st, work, proto):
    need("sockperf")
    env = stack_env(st)
    args, port = ([], 11111) if proto == "udp" else (["--tcp"], 11112)
    with program(["sockperf", "server", *args, "-i", st.stack_ip, "-p", port], env=env,
                 log=str(work / "sockperf-server.out")) as srv:
        time.sleep(0.5) if not args else wait_listening(st, port, srv)
        r = topo.run(["sockperf", "ping-pong", *args, "-i", st.stack_ip, "-p", str(port),
                      "-t", "2"], env=env, timeout=60, check=False)
        m = re.search(r"Summary: Latency is ([\d.]+) usec", r.stdout)
        assert r.returncode == 0 and m and float(m.group(1)) > 0, (r.stdout[-800:],
                                                                   srv.output())


# ---------------------------------------------------------------------------------------------
# clients on the stack; both ends on the stack

def test_curl_and_wrk_on_the_stack_against_kernel_nginx(st, work):
    need("nginx", "wrk", "curl")
    with nginx_running(st, work, 8081, kernel=True, workers=1) as (_, digest):
        env = stack_env(st)
        base = "http://%s:8081" % st.peer_ip
        r = topo.run(["sh", "-c", "curl -sS -m 30 %s/big.bin | sha256sum" % base], env=env,
                     timeout=60)
        assert r.stdout.split()[0] == digest, r
        r = topo.run(["wrk", "-t2", "-c16", "-d2s", base + "/index.html"], env=env, timeout=60)
        n, bad, errs = wrk_result(r.stdout)
        assert n > 100 and bad == 0 and errs == 0, r.stdout
        before = st.daemon.counter("tcp.active_opens")
        assert before >= 17  # curl's and wrk's connections went through the stack


def test_both_ends_on_the_stack_redis_benchmark_and_wrk_nginx(st, work):
    need("nginx", "wrk", "redis-server", "redis-benchmark")
    env = stack_env(st)
    argv = ["redis-server", "--port", "6390", "--bind", "0.0.0.0", "--protected-mode", "no",
            "--save", "", "--appendonly", "no", "--dir", str(work)]
    with program(argv, env=env, log=str(work / "redis.out")) as srv:
        wait_listening(st, 6390, srv)
        r = topo.run(["redis-benchmark", "-h", st.stack_ip, "-p", "6390", "-q", "-n", "5000",
                      "-t", "set,get,incr,lpush,lpop"], env=env, timeout=120, check=False)
        done = re.findall(r"^(\w+): [\d.]+ requests per second", r.stdout.replace("\r", "\n"),
                          re.M)
        assert sorted(done) == ["GET", "INCR", "LPOP", "LPUSH", "SET"], r.stdout[-500:]
    with nginx_running(st, work, 8082):
        r = topo.run(["wrk", "-t2", "-c16", "-d2s", "http://%s:8082/index.html" % st.stack_ip],
                     env=env, timeout=60)
        n, bad, errs = wrk_result(r.stdout)
        assert n > 100 and bad == 0 and errs == 0, r.stdout


def test_both_ends_on_the_stack_iperf3_both_ways_and_curl_of_nginx(st, work):
    """Bulk transfer between two programs of one daemon, where receive autotuning moves
    receive FIFOs while they stream: iperf3 each way, and curl gets nginx's file intact
    (iperf3's counts differ by what was still buffered when its timer ended the test)."""
    need("iperf3", "nginx", "curl")
    env = stack_env(st)
    with program(["iperf3", "-s", "-4", "-p", "5202"], env=env,
                 log=str(work / "iperf3.out")) as srv:
        wait_listening(st, 5202, srv)
        for extra in ([], ["-R"]):
            r = topo.run(["iperf3", "-c", st.stack_ip, "-p", "5202", "-t", "2", "-J", *extra],
                         env=env, timeout=60, check=False)
            res = iperf3_json(r.stdout)
            assert "error" not in res, res.get("error")
            end = res["end"]
            assert end["sum_received"]["bytes"] > 10 * MB, end["sum_received"]
    with nginx_running(st, work, 8083, workers=1) as (_, digest):
        r = topo.run(["sh", "-c", "curl -sS -m 30 http://%s:8083/big.bin | sha256sum" %
                      st.stack_ip], env=env, timeout=60)
        assert r.stdout.split()[0] == digest, r


# ---------------------------------------------------------------------------------------------
# the shim's edges

def test_select_with_stack_sockets_above_fd_setsize_fails_cleanly(st, work):
    r = topo.run([FDSET, "1100"], env=stack_env(st), timeout=60, check=False)
    lines = r.stdout.split("\n")
    assert r.returncode == 0 and "select -1 EINVAL" in lines and "ok" in lines, r
    maxfd = int(re.search(r"maxfd (\d+)", r.stdout).group(1))
    assert maxfd > 1024, r.stdout


def test_loopback_and_kernel_mode_go_to_the_kernel(st, work):
    need("curl")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    def answer():
        for _ in range(2):
            c, _ = srv.accept()
            c.recv(4096)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\n"
                      b"kernel")
            c.close()

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        url = "http://127.0.0.1:%d/" % port
        r = topo.run(["curl", "-sS", "-m", "10", url], env=stack_env(st, DPSTACK_PRELOAD_LOG="1"))
        assert r.stdout == "kernel" and "moves to the kernel" in r.stderr, r
        before = topo.apps_stats(st.daemon)["attaches"]
        r = topo.run(["curl", "-sS", "-m", "10", url], env=stack_env(st, DPSTACK_PRELOAD="kernel"))
        assert r.stdout == "kernel", r
        assert topo.apps_stats(st.daemon)["attaches"] == before, "kernel mode attached"
    finally:
        t.join(5)
        srv.close()


def test_missing_daemon_is_one_clear_line_and_log_shows_calls(st, work):
    need("curl")
    env = stack_env(st, DPSTACK_SOCK=str(work / "no-daemon.sock"))
    r = topo.run(["curl", "-sS", "-m", "5", "http://%s:1/" % st.stack_ip], env=env,
                 check=False)
    told = [l for l in r.stderr.splitlines() if l.startswith("dpstack: cannot reach the daemon")]
    assert r.returncode != 0 and len(told) == 1 and "no-daemon.sock" in told[0], r
    r = topo.run(["curl", "-sS", "-m", "5", "http://%s:1/" % st.stack_ip],
                 env=stack_env(st, DPSTACK_PRELOAD_LOG="1"), check=False)
    assert re.search(r"dpstack\[\d+\]: socket\(tcp\) = \d+", r.stderr), r.stderr
    assert re.search(r"connect\(\d+\) = -1", r.stderr), r.stderr


DUP_CLIENT = r"""
import fcntl, os, socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
a = os.dup(s.fileno())
os.dup2(s.fileno(), 900)
c = fcntl.fcntl(a, fcntl.F_DUPFD, 950)
os.write(a, b"dup ")
os.write(900, b"dup2 ")
s.close()                   # the first number goes; the socket stays open
os.write(c, b"F_DUPFD ")
os.close(a)
os.close(c)
os.write(900, b"last\n")
print("numbers", c >= 950)
os.close(900)               # the last number: now the peer sees the end
"""


def test_dup_numbers_share_one_socket_closed_by_the_last(st, work):
    ls = topo.in_netns(st.peer.ns, lambda: socket.create_server((st.peer_ip, 0)), timeout=5)
    try:
        port = ls.getsockname()[1]
        got = {}

        def serve():
            ls.settimeout(20)
            c, _ = ls.accept()
            c.settimeout(20)
            got["data"] = recv_to_end(c)
            c.close()

        t = threading.Thread(target=serve)
        t.start()
        r = topo.run(["python3", "-c", DUP_CLIENT, st.peer_ip, str(port)],
                     env=stack_env(st), timeout=60, check=False)
        t.join(30)
        assert r.returncode == 0 and "numbers True" in r.stdout, r
        assert got.get("data") == b"dup dup2 F_DUPFD last\n", got
    finally:
        ls.close()


UDP_REFUSED_CLIENT = r"""
import socket, sys
refused = 0
for i in range(int(sys.argv[3])):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.connect((sys.argv[1], int(sys.argv[2])))
    u.settimeout(5)
    u.send(b"anyone?")
    try:
        u.recv(100)
    except ConnectionRefusedError:
        refused += 1
    except OSError as e:
        print("socket", i, "got", e)
    u.close()
print("refused", refused)
"""


def test_icmp_port_unreachable_reaches_each_connected_udp_socket_on_two_workers(lab, work):
    """Connected UDP sockets on the stack's ephemeral ports, which the two workers own in
    turn, each get ECONNREFUSED from the kernel's port unreachable: the ICMP error reaches
    the worker that owns the flow it quotes, whichever queue it arrived on."""
    s = topo.two_workers(lab, extra_config=SHORT_TIMERS,
                         peer_sysctls=("net.ipv4.icmp_ratelimit=0",))
    count = 16
    r = topo.run(["python3", "-c", UDP_REFUSED_CLIENT, s.peer_ip, "9", str(count)],
                 env=stack_env(s), timeout=120, check=False)
    assert r.returncode == 0 and "refused %d" % count in r.stdout, r
    per_worker = [w["events"]["udp.out_datagrams"] for w in s.daemon.stats()["workers"]]
    assert min(per_worker) > 0, per_worker
    topo.wait_apps_gone(s.daemon)


EPOLL_BEFORE_CONNECT = r"""
import select, socket, sys
s = socket.socket()
s.setblocking(False)
ep = select.epoll()
ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLIN)   # before connect, as nginx does
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))              # a kernel address: moves
except BlockingIOError:
    pass
print("out", any(ev & select.EPOLLOUT for _, ev in ep.poll(5)))
s.send(b"ping")
ep.modify(s.fileno(), select.EPOLLIN)
print("in", any(ev & select.EPOLLIN for _, ev in ep.poll(5)), s.recv(16))
"""


def test_socket_in_epoll_before_moving_to_the_kernel_is_watched_there(st, work):
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def answer():
        c, _ = srv.accept()
        c.recv(16)
        c.sendall(b"pong")
        c.close()

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        r = topo.run(["python3", "-c", EPOLL_BEFORE_CONNECT, str(port)],
                     env=stack_env(st, DPSTACK_PRELOAD_LOG="1"), timeout=30, check=False)
        assert r.returncode == 0 and "out True" in r.stdout and "in True b'pong'" in r.stdout, r
        assert "moves to the kernel" in r.stderr, r.stderr
    finally:
        t.join(5)
        srv.close()


BLOCKED_EVERYWHERE = r"""
import select, socket, sys, threading, time
peer, port = sys.argv[1], int(sys.argv[2])
lst = socket.socket()
lst.bind(("0.0.0.0", 7190))
lst.listen(8)
quiet = socket.create_connection((peer, port))      # the peer never writes
full = socket.create_connection((peer, port))       # nor reads: our sends fill up
full.setblocking(False)
try:
    while True:
        full.send(b"x" * 65536)
except BlockingIOError:
    pass
full.setblocking(True)
ep = select.epoll()
ep.register(lst.fileno(), select.EPOLLIN)
ep.register(quiet.fileno(), select.EPOLLIN)
pl = select.poll()
pl.register(quiet.fileno(), select.POLLIN)

out = threading.Lock()

def report(name, call):
    try:
        r = call()
    except OSError as e:
        r = "errno %s" % e.errno
    with out:
        print("ret", name, r, flush=True)

calls = {
    "accept": lambda: lst.accept(),
    "recv": lambda: quiet.recv(16),
    "send": lambda: full.sendall(b"y" * (1 << 20)),
    "epoll": lambda: ep.poll(),
    "poll": lambda: pl.poll(),
    "select": lambda: select.select([quiet], [], []),
}
for name, call in calls.items():
    threading.Thread(target=report, args=(name, call), daemon=True).start()
time.sleep(0.5)
print("blocked", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_daemon_end_wakes_every_blocked_call_promptly(lab, tmp_path, sig):
    """Threads blocked in accept, recv, send, epoll, poll and select on stack sockets all
    return within seconds of the daemon's end, however it ends."""
    s = topo.SinglePort(lab)
    s.warm_up()
    srv = Program(["python3", "-c", "import socket, time\n"
                   "l = socket.create_server(('0.0.0.0', 7191))\n"
                   "c = [l.accept() for _ in range(2)]\ntime.sleep(120)"], ns=s.peer.ns)
    try:
        topo.wait_until(lambda: listening(s.peer.ns, s.peer_ip, 7191), timeout=10,
                        what="peer server")
        log = tmp_path / "blocked.log"
        env = dict(s.daemon.env, LD_PRELOAD=PRELOAD)
        with program(["python3", "-c", BLOCKED_EVERYWHERE, s.peer_ip, "7191"], env=env,
                     log=str(log)) as p:
            topo.wait_until(lambda: "blocked" in p.output(), timeout=20,
                            what="all threads blocked:\n" + p.output())
            assert "ret " not in p.output(), p.output()
            if sig == "SIGKILL":
                s.daemon.kill()
            else:
                s.daemon.stop()
            t0 = time.monotonic()
            topo.wait_until(lambda: p.output().count("ret ") == 6, timeout=10,
                            what="every blocked call returned:\n" + p.output())
            assert time.monotonic() - t0 < 5, p.output()
    finally:
        srv.stop()


def cpu_seconds(pid):
    """User and system CPU time pid has used so far, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_nginx_workers_idle_after_the_daemon_is_killed_and_quit_still_ends(lab, tmp_path):
    """After a kill -9 of the daemon, nginx's connections end as if reset and its listeners
    are dead: its workers sleep (well under a fifth of a core over 2 s each, a check that
    they are idle, not a speed) and `nginx -s quit` still ends it."""
    need("nginx")
    s = topo.SinglePort(lab)
    s.warm_up()
    ngx = DaemonNginx(s, tmp_path, 8080)
    try:
        ngx.start()
        master = ngx.master()
        workers = [int(p) for p in ngx.workers(master)]

        def idle_keepalive_connections():
            conns = []
            for _ in range(4):
                c = socket.create_connection((s.stack_ip, 8080), timeout=10)
                c.sendall(b"GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n")
                assert c.recv(4096).startswith(b"HTTP/1.1 200")
                conns.append(c)
            return conns
        conns = topo.in_netns(s.peer.ns, idle_keepalive_connections)
        s.daemon.kill()
        time.sleep(0.5)
        before = {p: cpu_seconds(p) for p in workers}
        time.sleep(2.0)
        used = {p: cpu_seconds(p) - before[p] for p in workers}
        assert all(u < 0.4 for u in used.values()), "CPU seconds in 2 s: %s" % used
        ngx.ctl("-s", "quit")
        topo.wait_until(lambda: not topo.pid_alive(master), timeout=20,
                        what="nginx master exits on quit")
        for c in conns:
            c.close()
    finally:
        ngx.kill_all()


RESET_PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apps",
                           "reset_probe.py")
# What Linux shows of a connection its peer reset (net/ipv4/tcp_input.c tcp_reset): the error
# once, in ERR and the first recv or SO_ERROR that takes it (sock_error); then the socket is
# shut both ways: end of file, EPIPE with SIGPIPE, IN|OUT|HUP|RDHUP (tcp_poll).
LINUX_RESET = {
    "recv-first": ["connected", "poll IN|OUT|ERR|HUP|RDHUP"] + ["epoll IN|OUT|ERR|HUP|RDHUP"] * 2 +
                  ["recv ECONNRESET", "poll IN|OUT|HUP|RDHUP"] +
                  ["epoll IN|OUT|HUP|RDHUP"] * 2 +
                  ["recv 0", "SO_ERROR 0", "send EPIPE", "send EPIPE sigpipe yes",
                   "new epoll IN|OUT|HUP|RDHUP"],
    "soerror-first": ["connected", "SO_ERROR ECONNRESET"] +
                     (["poll IN|OUT|HUP|RDHUP"] + ["epoll IN|OUT|HUP|RDHUP"] * 2 +
                      ["recv 0"]) * 2 +
                     ["SO_ERROR 0", "send EPIPE", "send EPIPE sigpipe yes",
                      "new epoll IN|OUT|HUP|RDHUP"],
    # A UDP socket is never reset: one that stops for good is shut down both ways
    # (inet_shutdown; datagram_poll, __skb_wait_for_more_packets).
    "udp": ["connected", "poll IN|OUT|HUP|RDHUP"] + ["epoll IN|OUT|HUP|RDHUP"] * 2 +
           ["recv EAGAIN", "recv 0", "SO_ERROR 0", "send EPIPE sigpipe no"],
    # An RST answering the SYN: tcp_reset's ECONNREFUSED, once.
    "connecting": ["connect EINPROGRESS", "poll IN|OUT|ERR|HUP|RDHUP", "SO_ERROR ECONNREFUSED",
                   "SO_ERROR 0", "recv 0", "send EPIPE"],
}


class ResetProbe:
    """reset_probe.py (see there) as a program of its own; env with LD_PRELOAD puts its
    socket on the stack."""

    def __init__(self, mode, ip, port, *extra, env=None):
        self.proc = subprocess.Popen(
            topo.dying_with_parent([sys.executable, RESET_PROBE, mode, ip, str(port)] +
                                   list(extra)), env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True)
        self.first = self.proc.stdout.readline().strip()

    def rest(self):
        """Tells it the connection is reset: the lines it prints then."""
        out, _ = self.proc.communicate("go\n", timeout=30)
        assert self.proc.returncode == 0, out
        return [self.first] + out.splitlines()


def kernel_reset_sequence(mode):
    """The probe on a kernel socket (loopback, no shim) after its peer's RST, or, connecting,
    after the RST that refused its SYN."""
    with socket.create_server(("127.0.0.1", 0)) as lst:
        port = lst.getsockname()[1]
        if mode == "connecting":
            lst.close()
            p = ResetProbe(mode, "127.0.0.1", port)
        else:
            p = ResetProbe(mode, "127.0.0.1", port)
            c, _ = lst.accept()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            c.close()   # linger 0: an RST
        time.sleep(0.2)
        return p.rest()


# A kernel server that takes connections until the file argv[2] exists, then resets them all
# (linger 0) and says so.
RESETTING_SERVER = """
import os, socket, struct, sys, time
l = socket.create_server(("0.0.0.0", int(sys.argv[1])))
l.settimeout(0.1)
conns = []
while not os.path.exists(sys.argv[2]):
    try:
        conns.append(l.accept()[0])
    except socket.timeout:
        pass
l.setblocking(False)
try:
    while True:
        conns.append(l.accept()[0])
except BlockingIOError:
    pass
for c in conns:
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
print("reset", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("end", ["SIGKILL", "SIGTERM", "peer RST"])
@pytest.mark.parametrize("mode", ["recv-first", "soerror-first", "connecting"])
def test_reset_connections_read_as_linux_ones_also_when_the_daemon_ends(lab, tmp_path, mode,
                                                                          end):
    """A program's connection (or connect in progress) on the stack, reset by its kernel peer
    or ended with its daemon: the same poll, epoll, recv, SO_ERROR and send results, in the
    same order, as a kernel socket whose peer reset it (pinned first on the kernel,
    LINUX_RESET). One mechanism: the daemon's end makes each socket one that was reset."""
    assert kernel_reset_sequence(mode) == LINUX_RESET[mode]
    s = topo.SinglePort(lab)
    s.warm_up()
    port, flag = 7193, tmp_path / "reset-now"
    srv = Program(["python3", "-c", RESETTING_SERVER, str(port), str(flag)], ns=s.peer.ns,
                  log=str(tmp_path / "server.log"))
    try:
        topo.wait_until(lambda: listening(s.peer.ns, s.peer_ip, port), timeout=10,
                        what="peer server")
        if mode == "connecting" and end != "peer RST":
            # The peer drops the SYN: the connect stays in progress until the daemon ends.
            s.peer.run("nft", "add table ip reset_probe")
            s.peer.run("nft", "add chain ip reset_probe in "
                       "{ type filter hook input priority 0 ; }")
            s.peer.run("nft", "add rule ip reset_probe in tcp dport %d drop" % port)
        # Refused: a port nobody listens on.
        to = port + 1 if mode == "connecting" and end == "peer RST" else port
        probe = ResetProbe(mode, s.peer_ip, to, env=dict(s.daemon.env, LD_PRELOAD=PRELOAD))
        assert probe.first == LINUX_RESET[mode][0], probe.first
        if end == "SIGKILL":
            s.daemon.kill()
        elif end == "SIGTERM":
            s.daemon.stop()
        else:
            flag.touch()
            topo.wait_until(lambda: "reset" in srv.output(), timeout=10,
                            what="peer reset its connections")
        time.sleep(0.5)     # the RST on its way (as in kernel_reset_sequence)
        assert probe.rest() == LINUX_RESET[mode]
    finally:
        srv.stop()


@pytest.mark.parametrize("end", ["SIGKILL", "SIGTERM"])
def test_udp_socket_of_an_ended_daemon_reads_as_a_linux_one_shut_down(lab, end):
    """A connected UDP socket on the stack, its daemon ended: the same results as a kernel
    UDP socket shut down both ways (pinned first on the kernel, LINUX_RESET["udp"]): hung
    up without an error, no datagram, end of file for a blocking read, EPIPE for a send."""
    kernel = ResetProbe("udp", "127.0.0.1", 9, "shutdown")
    assert kernel.rest() == LINUX_RESET["udp"]
    s = topo.SinglePort(lab)
    s.warm_up()
    probe = ResetProbe("udp", s.peer_ip, 9, env=dict(s.daemon.env, LD_PRELOAD=PRELOAD))
    assert probe.first == "connected", probe.first
    if end == "SIGKILL":
        s.daemon.kill()
    else:
        s.daemon.stop()
    assert probe.rest() == LINUX_RESET["udp"]


# The peer of preload_signals: 'r' → a byte back after a second; 's' → after a second, read
# until the end, through a small receive buffer (so that the sender's path fills up).
SIGNALS_PEER = """
import socket, sys, threading, time
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
l.bind((sys.argv[1], int(sys.argv[2])))
l.listen(64)
def serve(c):
    what = c.recv(1)
    time.sleep(1)
    try:
        if what == b"r":
            c.sendall(b"x")
            c.recv(1)
        else:
            while c.recv(65536):
                pass
    except OSError:
        pass
    c.close()
while True:
    threading.Thread(target=serve, args=(l.accept()[0],), daemon=True).start()
"""


def test_signals_meet_blocking_calls_as_on_the_kernel(st, work):
    """SA_RESTART resumes a blocking recv, send or accept and its absence ends them with
    EINTR; a timeout (SO_RCVTIMEO) or a poll/select/epoll wait ends with EINTR either way;
    ppoll, pselect and epoll_pwait install their mask atomically with the sleep. The same
    program gives the same lines on the kernel (in the peer's namespace, over its loopback)
    and on the stack (under the shim)."""
    peer = Program(["python3", "-c", SIGNALS_PEER, "0.0.0.0", "7193"], ns=st.peer.ns)
    try:
        topo.wait_until(lambda: listening(st.peer.ns, st.peer_ip, 7193), timeout=10,
                        what="signals peer")
        kernel = topo.run(["ip", "netns", "exec", st.peer.ns, SIGNALS, "127.0.0.1", "7193",
                           "127.0.0.1", "7194"], timeout=60).stdout
        env = dict(st.daemon.env, LD_PRELOAD=PRELOAD)
        stack = topo.run([SIGNALS, st.peer_ip, "7193", st.stack_ip, "7194"], env=env,
                         timeout=60).stdout
    finally:
        peer.stop()
    assert kernel.endswith("done\n"), kernel
    assert "recv norestart: -1 EINTR" in kernel and "recv restart: positive" in kernel, kernel
    assert stack == kernel, "kernel:\n%s\nstack:\n%s" % (kernel, stack)


MLOCKED = """
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
assert libc.mlockall(3) == 0, ctypes.get_errno()   # MCL_CURRENT | MCL_FUTURE
s = socket.socket()                                 # attaches: the segment is mapped now
s.close()
status = open("/proc/self/status").read()
print([l for l in status.splitlines() if l.startswith("VmRSS")][0].split()[1])
"""


def test_mlockall_locks_only_the_memory_in_use(st, work):
    """A program that called mlockall(MCL_FUTURE) before it attached brings in and locks
    the pages of its shared segment as it uses them, not the whole reservation (gigabytes
    of arenas, which took seconds to fault in)."""
    r = topo.run(["python3", "-c", MLOCKED], env=stack_env(st), timeout=60)
    resident_kb = int(r.stdout.split()[-1])
    assert resident_kb < 256 * 1024, (resident_kb, r.stdout)


def test_fork_while_other_threads_set_options_of_new_sockets_never_hangs_the_child(st, work):
    """The shim's record of sockets not bound yet is changed by every socket, setsockopt
    and close: a fork while another thread is in the middle of that must leave the child a
    table it can use (its close of a new socket returns)."""
    env = dict(st.daemon.env, LD_PRELOAD=PRELOAD)
    r = topo.run([FORKS, "400"], env=env, timeout=120, check=False)
    assert r.stdout == "forks 400\n", r.stdout + r.stderr
