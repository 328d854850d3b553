"""The small profile of issue 18 (ANS's SoC case: 512 TCP connections, 8 applications) at the
least EAL memory dpstackd accepts today. 128 MB is refused by the config check, which states
the minimum (each rte_lpm route table takes 64 MB, README "Small footprint"); at that minimum
8 dps-echo applications serve 512 connections from a kernel peer, every one echoing. The
daemon's resident memory is printed; asserted are only the echoes, the refusal with its
minimum, and that the daemon's resident memory stays within that EAL memory."""

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
MBUFS = 4096
BASE_PORT = 7100


def head(mem_mb):
    return ["eal --no-huge --no-pci --no-shconf -m %d" % mem_mb, "mbufs %d" % MBUFS]


def least_memory_mb(tmp_path):
    """The config check refuses 128 MB and says how much it needs."""
    path = tmp_path / "small.conf"
    path.write_text(topo.one_port_config("lo", head=head(128)))
    r = topo.run([topo.DPSTACKD, "--check-config", str(path)], check=False)
    m = re.search(r"use -m (\d+) or more", r.stdout + r.stderr)
    assert r.returncode == 1 and m, r.stdout + r.stderr
    return int(m.group(1))


def test_small_profile_serves_512_connections_over_8_applications(lab, tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < CONNS + 256:
        pytest.skip("RLIMIT_NOFILE %d is too low for %d connections" % (hard, CONNS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        mem = least_memory_mb(tmp_path)
        st = topo.SinglePort(lab, head_config=head(mem))
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
        print("\nsmall profile: eal -m %d, mbufs %d, %d connections over %d applications: "
              "dpstackd resident %.1f MB idle, %.1f MB with every connection open%s" %
              (mem, MBUFS, CONNS, APPS, idle_kb / 1024, held_kb / 1024,
               " (ASan build)" if topo.SANITIZED else ""))
        if not topo.SANITIZED:  # ASan's shadow memory and quarantine are not the daemon's
            assert held_kb < mem * 1024, "resident beyond the EAL's -m %d" % mem
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
