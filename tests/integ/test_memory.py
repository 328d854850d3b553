"""Memory comes back after a storm of connections: the daemon's resident size, measured
before, at the height of and after storms of thousands of kernel clients (each sends 16 KB
and holds its connection until all are open), returns to within half again of where it
started, storm after storm, for the stack's own sockets (a built-in service, FIFOs on the
heap: src/ctl/mem_trim.h) and for an application's (FIFOs in its segment: punched out by
src/chan/chan_arena.c). Bounds on memory only, with generous margins; never on time."""

import os
import resource
import select
import socket
import subprocess
import time

import pytest

import topo
from topo import wait_apps_gone

CONNS = 4000
PAYLOAD = 16384
ROUNDS = 2
GROWTH_MIN = 20 << 20       # a storm that did not grow the daemon by this proves nothing

# ASan keeps freed memory in its quarantine and its own allocator: what the daemon gives
# back is measured by the run against the release build.
pytestmark = pytest.mark.skipif(topo.SANITIZED, reason="sanitized daemon: freed memory stays "
                                "in ASan's quarantine")


@pytest.fixture(scope="module")
def st():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < CONNS + 1024:
        pytest.skip("RLIMIT_NOFILE %d is too low for %d connections" % (hard, CONNS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        with topo.single_port("memory", ("service add discard tcp 9",
                                         "tcp params time-wait-ms 200 fin-timeout-ms 1000")) as s:
            yield s
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def rss(d):
    with open("/proc/%d/status" % d.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for dpstackd")


def storm(s, port, echo):
    """CONNS connections from the peer, each sending PAYLOAD bytes (and reading them back
    when echo); returns the daemon's resident size with all of them open, then closes them
    (FIN: the client read everything)."""
    def connect_all():
        socks = []
        for _ in range(CONNS):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex((s.stack_ip, port))
            socks.append(c)
        return socks
    socks = topo.in_netns(s.peer.ns, connect_all, timeout=60)
    try:
        # fd -> [socket, bytes to send, bytes to read back]
        pending = {c.fileno(): [c, PAYLOAD, PAYLOAD if echo else 0] for c in socks}
        poller = select.poll()
        for f in pending:
            poller.register(f, select.POLLOUT)
        data = b"x" * PAYLOAD
        deadline = time.monotonic() + 120
        while pending and time.monotonic() < deadline:
            for f, ev in poller.poll(1000):
                c, left, unread = pending[f]
                try:
                    if ev & select.POLLOUT and left > 0:
                        pending[f][1] -= c.send(data[:left])
                    if ev & select.POLLIN and unread > 0:
                        pending[f][2] -= len(c.recv(65536))
                except (BlockingIOError, InterruptedError):
                    continue
                if pending[f][1] <= 0 and pending[f][2] <= 0:
                    poller.unregister(f)
                    del pending[f]
                elif pending[f][1] <= 0:
                    poller.modify(f, select.POLLIN)
        assert not pending, "%d connections did not carry their bytes" % len(pending)
        return rss(s.daemon)
    finally:
        for c in socks:
            c.close()


def storms(s, port, echo):
    d = s.daemon
    before = rss(d)
    for r in range(ROUNDS):
        during = storm(s, port, echo)
        assert during - before >= GROWTH_MIN, (before, during)
        bound = before * 3 // 2
        last = []

        def back():
            last[:] = [rss(d)]
            return last[0] <= bound
        try:
            topo.wait_until(back, timeout=60, interval=0.5, what="memory back")
        except AssertionError:
            raise AssertionError("round %d: resident %d MB before, %d MB at the height, still "
                                 "%d MB after (bound %d MB)" % (r, before >> 20, during >> 20,
                                                               last[0] >> 20, bound >> 20))
        print("round %d: resident %d MB before, %d MB during, %d MB after" %
              (r, before >> 20, during >> 20, last[0] >> 20))


def test_storms_on_a_builtin_service_give_the_heap_back(st):
    storms(st, 9, echo=False)
    # The FIFOs' data went back at their free (mmap); the trim of what the heap kept comes
    # from the control thread's once-a-second look at the fallen connection count.
    topo.wait_until(lambda: st.daemon.stats()["memory"]["heap_trims"] >= 1, timeout=10,
                    what="a heap trim after the storms")


def test_storms_on_an_application_give_its_segment_back(st):
    d = st.daemon
    app = subprocess.Popen(topo.dying_with_parent(
        [os.path.join(topo.BUILD, "examples", "dps-echo"), "-m", "epoll-et", "-p", "7100"]),
        env=d.env, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        topo.wait_until(lambda: d.stats()["apps"]["live_socks"] >= 1, timeout=10,
                        what="dps-echo listening")
        storms(st, 7100, echo=True)
    finally:
        app.kill()
        app.wait(10)
    wait_apps_gone(d)
