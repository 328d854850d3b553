"""AF_INET6 through the preload shim: unmodified programs listening on :: and connecting to
IPv6 addresses run on the stack, against the Linux kernel over IPv6 and IPv4 at once.

1. nginx with a dual-stack `listen [::]:80` (IPv4 clients shown as ::ffff:a.b.c.d in its
   log) and an IPv6-only `listen [::]:81 ipv6only=on` beside `listen 81`, curl -6 and -4;
2. iperf3 -s (no -4) with a kernel client over IPv6 both ways, and iperf3 -c on the stack
   against a kernel server;
3. redis-server on :: (IPv6-only, as redis binds it) beside 0.0.0.0, with kernel redis-cli
   over both families;
4. a probe program (apps/sock6_probe.py) that prints names and errors: getpeername of IPv4
   peers on a dual-stack listener, IPV6_V6ONLY refusing IPv4, a dual-stack datagram socket
   answering both families, the option checks (compared
   with the same program on kernel sockets), and two programs talking over the stack's own
   IPv6 address (app to app), while ::1 stays on the kernel;
5. a big transfer between two unmodified nc on the stack over its own IPv6 address: the
   loopback path both families share (segments up to 64 KB, payload lent, no checksums)."""

import hashlib
import json
import os
import socket
import sys
import threading

import pytest

import topo
from test_ipv6 import PEER6, STACK6, v6_port
from test_offload import transfer  # nc through the shim, the receiver's SHA-256
# test_preload's fixtures: programs (skips when the shim is not built), work (no
# application may be left after a test).
from test_preload import (MB, iperf3_json, need, nginx_argv, nginx_conf, peer_run, program,
                          programs, stack_env, wait_listening, work, write_site)

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apps", "sock6_probe.py")


@pytest.fixture(scope="module")
def st():
    with v6_port("pre6") as s:
        yield s


def url(addr, port, path="/index.html"):
    host = "[%s]" % addr if ":" in addr else addr
    return "http://%s:%d%s" % (host, port, path)


def lines(prog, n):
    """The first n JSON lines of a probe, once it has printed them."""
    topo.wait_until(lambda: len(prog.output().splitlines()) >= n or prog.proc.poll() is not None,
                    timeout=30, what="%d lines from the probe" % n)
    got = [json.loads(x) for x in prog.output().splitlines()[:n]]
    assert len(got) == n, prog.output()
    return got


def kernel_connect(st, addr, port):
    """A kernel connection from the peer to addr:port that sends a line and reads the echo;
    the errno name when it fails."""
    def go():
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        host, _, ifname = addr.partition("%")  # a link-local address's interface
        try:
            s.connect((host, port, 0, socket.if_nametoindex(ifname)) if ifname else (addr, port))
            s.sendall(b"kernel\n")
            return s.makefile("rb").readline().decode().strip()
        except OSError as e:
            return os.strerror(e.errno) if e.errno else str(e)
        finally:
            s.close()
    return topo.in_netns(st.peer.ns, go, timeout=30)


# ---------------------------------------------------------------------------------------------
# unmodified programs

def test_nginx_dual_stack_and_v6only_listeners_serve_curl_over_both_families(st, work):
    need("nginx", "curl")
    root = str(work / "www")
    digest = write_site(root)
    d = str(work / "ngx")
    # 8080: IPv4 only (nginx_conf's own listen); 80: one dual-stack socket; 81: an
    # IPv6-only socket beside an IPv4 one on the same port.
    conf = nginx_conf(d, 8080, root, workers=2, server_extra=(
        "listen [::]:80 ipv6only=off; listen [::]:81 ipv6only=on; listen 81;"))
    with open(conf) as f:
        text = f.read().replace("access_log off;", "log_format peer '$remote_addr $server_port';"
                                " access_log %s/peers.log peer;" % d)
    with open(conf, "w") as f:
        f.write(text)
    with program(nginx_argv(d, conf), env=stack_env(st), log=str(work / "nginx.out")) as ngx:
        for port in (80, 81, 8080):
            wait_listening(st, port, ngx)
        for addr, port in ((STACK6, 80), (st.stack_ip, 80), (STACK6, 81), (st.stack_ip, 81)):
            r = peer_run(st, "curl", "-sS", "-m", "20", url(addr, port))
            assert r.stdout == "hello from nginx\n", (addr, port, r, ngx.output())
        r = peer_run(st, "sh", "-c", "curl -6 -sS -m 30 %s | sha256sum" % url(STACK6, 80,
                                                                           "/big.bin"))
        assert r.stdout.split()[0] == digest, r
        r = peer_run(st, "curl", "-sS", "-m", "10", url(STACK6, 8080))
        assert r.returncode != 0, "an IPv4-only listener answered IPv6: %r" % r
    with open(os.path.join(d, "peers.log")) as f:
        seen = f.read().split("\n")
    # The dual-stack socket shows its IPv4 client as a mapped address (RFC 3493 §3.7); the
    # IPv4 socket of port 81 shows it as itself.
    assert "::ffff:%s 80" % st.peer_ip in seen, seen
    assert "%s 80" % PEER6 in seen and "%s 81" % PEER6 in seen, seen
    assert "%s 81" % st.peer_ip in seen, seen


def test_iperf3_default_server_over_ipv6_both_ways_and_client_on_the_stack(st, work):
    need("iperf3")
    with program(["iperf3", "-s", "-p", "5201", "--forceflush"], env=stack_env(st),
                 log=str(work / "iperf3.out")) as srv:
        wait_listening(st, 5201, srv)
        for k, extra in enumerate(([], ["-R"])):
            # iperf3 listens again after each test: wait for its word that it does.
            topo.wait_until(lambda: srv.output().count("Server listening") > k,
                            timeout=30, what="iperf3 listening for test %d" % (k + 1))
            r = peer_run(st, "iperf3", "-6", "-c", STACK6, "-t", "2", "-J", *extra)
            res = iperf3_json(r.stdout)
            assert "error" not in res, res.get("error")
            assert res["end"]["sum_received"]["bytes"] > 10 * MB, res["end"]["sum_received"]
        assert srv.proc.poll() is None, srv.output()
    with program(["iperf3", "-s", "-p", "5203"], ns=st.peer.ns,
                 log=str(work / "kiperf3.out")) as ksrv:
        wait_listening(st, 5203, ksrv, ns=st.peer.ns, ip=PEER6)
        r = topo.run(["iperf3", "-c", PEER6, "-p", "5203", "-t", "2", "-J"],
                     env=stack_env(st), timeout=60, check=False)
        res = iperf3_json(r.stdout)
        assert "error" not in res, res.get("error")
        assert res["end"]["sum_received"]["bytes"] > 10 * MB, res["end"]["sum_received"]


def test_redis_server_on_ipv6_wildcard_answers_kernel_redis_cli(st, work):
    need("redis-server", "redis-cli")
    argv = ["redis-server", "--port", "6379", "--bind", "::", "0.0.0.0", "--protected-mode", "no",
            "--save", "", "--appendonly", "no", "--dir", str(work)]
    with program(argv, env=stack_env(st), log=str(work / "redis.out")) as srv:
        wait_listening(st, 6379, srv)
        cmds = "".join("SET k%d v%d\n" % (i, i) for i in range(200))
        gets = "".join("GET k%d\n" % i for i in range(200))
        for host in (STACK6, st.stack_ip):
            r = topo.run(["ip", "netns", "exec", st.peer.ns, "redis-cli", "-h", host],
                         input=cmds, timeout=60)
            assert r.stdout.split() == ["OK"] * 200, (host, r.stdout[-300:], r.stderr[-300:],
                                                      srv.output()[-500:])
            r = topo.run(["ip", "netns", "exec", st.peer.ns, "redis-cli", "-h", host],
                         input=gets, timeout=60)
            assert r.stdout.split() == ["v%d" % i for i in range(200)], r.stdout[-300:]
        assert srv.proc.poll() is None, srv.output()


# ---------------------------------------------------------------------------------------------
# names, IPV6_V6ONLY, options: the probe

def probe(st, *args, log):
    return program([sys.executable, PROBE, *args], env=stack_env(st), log=log)


def test_dual_stack_listener_shows_ipv4_peers_as_mapped_addresses(st, work):
    with probe(st, "serve", "::", "7001", "0", "3", log=str(work / "p.out")) as p:
        first = lines(p, 1)[0]
        assert first["listening"][:2] == ["::", 7001] and first["v6only"] == 0, first
        assert kernel_connect(st, st.stack_ip, 7001) == "kernel"
        assert kernel_connect(st, STACK6, 7001) == "kernel"
        assert kernel_connect(st, "%s%%%s" % (st.stack_ll, st.peer.ifname), 7001) == "kernel"
        v4, v6, ll = lines(p, 4)[1:]
    assert v4["peer"][0] == "::ffff:" + st.peer_ip, v4
    assert v4["name"][:2] == ["::ffff:" + st.stack_ip, 7001], v4
    assert v6["peer"][0] == PEER6 and v6["name"][:2] == [STACK6, 7001], v6
    # Link-local: both names carry the port's interface index (1: port0) as sin6_scope_id
    # (the probe's text adds %<name of that index in its own namespace>).
    assert ll["peer"][0].split("%")[0] == st.peer_ll and ll["peer"][3] == 1, ll
    assert ll["name"][0].split("%")[0] == st.stack_ll and ll["name"][3] == 1, ll


def test_v6only_listener_refuses_ipv4_and_shares_the_port_with_an_ipv4_socket(st, work):
    with probe(st, "serve", "::", "7002", "1", "1", log=str(work / "p.out")) as p:
        assert lines(p, 1)[0]["v6only"] == 1
        assert kernel_connect(st, st.stack_ip, 7002) == os.strerror(111)  # ECONNREFUSED
        # An IPv4 socket takes the same port beside it (Linux's inet6_bind_conflict).
        srv4 = [sys.executable, "-c", (
            "import socket; s = socket.socket(); s.bind(('0.0.0.0', 7002)); s.listen(1);"
            "print('bound', flush=True); c, a = s.accept(); c.sendall(c.recv(64)); c.close()")]
        with program(srv4, env=stack_env(st), log=str(work / "v4.out")) as p4:
            topo.wait_until(lambda: "bound" in p4.output() or p4.proc.poll() is not None,
                            timeout=30, what="the IPv4 socket bound")
            assert "bound" in p4.output(), p4.output()
            assert kernel_connect(st, st.stack_ip, 7002) == "kernel"
        assert kernel_connect(st, STACK6, 7002) == "kernel"
        assert lines(p, 2)[1]["peer"][0] == PEER6


def kernel_datagram(st, addr, port, data):
    """A datagram from the peer's kernel to addr:port, and the answer to it."""
    def go():
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(10)
        try:
            s.sendto(data, (addr, port))
            return s.recv(2048)
        except OSError as e:
            return str(e)
        finally:
            s.close()
    return topo.in_netns(st.peer.ns, go, timeout=30)


def test_dual_stack_datagram_socket_answers_both_families(st, work):
    with probe(st, "udp", "::", "7004", "2", log=str(work / "p.out")) as p:
        assert lines(p, 1)[0]["bound"][:2] == ["::", 7004]
        assert kernel_datagram(st, STACK6, 7004, b"six") == b"six"
        assert kernel_datagram(st, st.stack_ip, 7004, b"four") == b"four"
        six, four = lines(p, 3)[1:]
    assert six["from"][0] == PEER6 and six["data"] == "six", six
    assert four["from"][0] == "::ffff:" + st.peer_ip and four["data"] == "four", four


def test_ipv6_options_and_errors_match_the_kernel(st, work):
    kernel = topo.run([sys.executable, PROBE, "options"], timeout=30).stdout
    stack = topo.run([sys.executable, PROBE, "options"], env=stack_env(st), timeout=30).stdout
    assert stack == kernel


def test_two_programs_talk_over_the_stacks_ipv6_address_and_loopback_stays_on_the_kernel(
        st, work):
    with probe(st, "serve", STACK6, "7003", "0", "1", log=str(work / "p.out")) as p:
        lines(p, 1)
        r = topo.run([sys.executable, PROBE, "connect", STACK6, "7003"], env=stack_env(st),
                     timeout=60)
        got = json.loads(r.stdout)
        assert got["echo"] == "probe" and got["peer"][:2] == [STACK6, 7003], got
        assert got["name"][0] == STACK6, got
        assert lines(p, 2)[1]["peer"] == got["name"], p.output()
    # ::1 is the kernel's, as 127.0.0.1 is: a kernel listener there answers the shim's client.
    srv = socket.socket(socket.AF_INET6)
    srv.bind(("::1", 0))
    srv.listen(1)
    try:
        port = srv.getsockname()[1]
        env = stack_env(st, DPSTACK_PRELOAD_LOG="1")
        t = threading.Thread(target=_echo_once, args=(srv,), daemon=True)
        t.start()
        r = topo.run([sys.executable, PROBE, "connect", "::1", str(port)], env=env, timeout=60)
        t.join(10)
        assert json.loads(r.stdout.splitlines()[-1])["echo"] == "probe", r
        assert "moves to the kernel" in r.stderr, r.stderr
    finally:
        srv.close()


def _echo_once(srv):
    c, _ = srv.accept()
    c.sendall(c.makefile("rb").readline())
    c.close()


def test_two_nc_move_16_mb_over_the_stacks_ipv6_address_in_segments_above_the_port_mtu(
        st, work):
    need("nc")
    data = os.urandom(16 << 20)
    before = st.daemon.stats()
    digest, n = transfer(st.daemon, st.daemon, STACK6, 7011, data)
    assert n == len(data) and digest == hashlib.sha256(data).hexdigest()
    delta = topo.counters_delta(before, st.daemon.stats())
    # Port-sized segments (MSS 1440) would take 11651 for the data alone, ACKs besides:
    # the loopback path sends what the writer wrote, up to 64 KB a segment.
    assert delta.get("tcp.out_segs", 0) < (16 << 20) // 1440 // 2, delta
    assert delta.get("ip.loopback_full", 0) == 0, delta
    assert not any(k.startswith("ip6.") and k in st.daemon.stats()["drops"] for k in delta), delta
