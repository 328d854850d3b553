"""The small profile of issue 18 (ANS's SoC case: 128 MB, 512 TCP connections, 8
applications; README "Small footprint", dist/dpstackd-small.conf): the config check accepts
`eal --no-huge -m 128` with `mbufs 4096` and a small route table, and the daemon started
with exactly that serves 512 connections from a kernel peer over 8 dps-echo applications,
every one echoing. The daemon's resident memory is printed; asserted are the echoes, the
check, and that the daemon's resident memory stays within the 128 MB."""

import contextlib
import re
import resource
import socket

import pytest

import topo
from test_examples import example, running
from test_memory import rss

CONNS = 512
APPS = 8
MEM_MB = 128
MBUFS = 4096
ROUTES = 256
BASE_PORT = 7100
HEAD = ["eal --no-huge --no-pci --no-shconf -m %d" % MEM_MB, "mbufs %d" % MBUFS,
        "routes %d" % ROUTES]


def test_small_profile_passes_the_config_check(tmp_path):
    path = tmp_path / "small.conf"
    path.write_text(topo.one_port_config("lo", head=HEAD))
    r = topo.run([topo.DPSTACKD, "--check-config", str(path)], check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_routes_below_the_minimum_names_it(tmp_path):
    path = tmp_path / "tiny.conf"
    path.write_text(topo.one_port_config("lo", head=["routes 8"]))
    r = topo.run([topo.DPSTACKD, "--check-config", str(path)], check=False)
    assert r.returncode == 1
    assert re.search(r"tiny\.conf:1: routes: '8' is not a count from (\d+) to \d+",
                     r.stdout + r.stderr), r.stdout + r.stderr


def test_small_profile_serves_512_connections_over_8_applications(lab, tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < CONNS + 256:
        pytest.skip("RLIMIT_NOFILE %d is too low for %d connections" % (hard, CONNS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        mem = MEM_MB
        st = topo.SinglePort(lab, head_config=HEAD)
        st.warm_up()
        idle_kb = rss(st.daemon) // 1024
        with contextlib.ExitStack() as apps:
            for i in range(APPS):
                apps.enter_context(running(st, [example("dps-echo"), "-p", str(BASE_PORT + i),
                                                "-m", "epoll-et"], BASE_PORT + i, tmp_path))

            def connect_all():
                socks = []
                for n in range(CONNS):
                    c = socket.create_connection((st.stack_ip, BASE_PORT + n % APPS), 10)
                    socks.append(c)
                return socks
            socks = topo.in_netns(st.peer.ns, connect_all, timeout=120)
            try:
                held_kb = rss(st.daemon) // 1024
                echoed = 0
                for n, c in enumerate(socks):
                    msg = b"%04d" % n
                    c.sendall(msg)
                    got = b""
                    while len(got) < len(msg):
                        part = c.recv(len(msg) - len(got))
                        assert part, "connection %d closed" % n
                        got += part
                    echoed += got == msg
                assert echoed == CONNS
            finally:
                for c in socks:
                    c.close()
        print("\nsmall profile: eal -m %d, mbufs %d, routes %d, %d connections over %d "
              "applications: dpstackd resident %.1f MB idle, %.1f MB with every connection "
              "open%s" % (mem, MBUFS, ROUTES, CONNS, APPS, idle_kb / 1024, held_kb / 1024,
               " (ASan build)" if topo.SANITIZED else ""))
        if not topo.SANITIZED:  # ASan's shadow memory and quarantine are not the daemon's
            assert held_kb < mem * 1024, "resident beyond the EAL's -m %d" % mem
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
