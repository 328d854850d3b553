"""Fairness and limits: what one application or one user may take of the daemon
(`apps limits`, src/chan/chan_limit.h). For each limit: the refusal has its errno and its
named counter in `stats`, the applications of others keep working, and the limit changes at
run time. Per-user limits are tried by applications running as unprivileged users (root and
the daemon's own user are exempt from them).

The program is tests/integ/apps/dps_limits.c (its header says what each subcommand
prints)."""

import contextlib
import os
import resource
import signal
import socket

import pytest

import topo
from topo import apps_stats, wait_apps_gone
from test_apps import App, kernel_server

LIMITS = os.path.join(topo.BUILD, "tests", "integ", "apps", "dps_limits")
NOBODY = 65534
OTHER_USER = 65533
BASE_PORT = 20000


@pytest.fixture(scope="module", autouse=True)
def program():
    if not os.access(LIMITS, os.X_OK):
        pytest.skip("not built: %s" % LIMITS)


@pytest.fixture(scope="module")
def st():
    with topo.single_port("limits") as s:
        # Unprivileged applications must reach the application socket in the daemon's
        # directory.
        path = s.daemon.dir
        while path != os.path.dirname(path):
            if os.stat(path).st_mode & 0o001 == 0:
                os.chmod(path, os.stat(path).st_mode | 0o711)
            path = os.path.dirname(path)
        yield s


@pytest.fixture
def d(st):
    """The daemon, with its default limits again after the test."""
    defaults = st.daemon.ctl("apps", "limits", json=True)["limits"]
    yield st.daemon
    args = [x for k, v in defaults.items() for x in (k, v)]
    st.daemon.ctl("apps", "limits", *args)
    wait_apps_gone(st.daemon)


def app(d, *args, uid=None):
    argv = [LIMITS] + [str(a) for a in args]
    if uid is not None:
        argv = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"] + argv
    return App(d, *argv, stdin=True)


def opened(a):
    """(sockets opened, the errno name of the refusal or None) once the program is ready."""
    a.expect("ready")
    refused = [l.split()[1] for l in a.seen if l.startswith("refused ")]
    n = int([l for l in a.seen if l.startswith("opened ")][-1].split()[1])
    return n, refused[0] if refused else None


def delta(before, after, name):
    return after[name] - before[name]


def test_one_user_with_1100_listeners_leaves_room_for_everyone_else(d):
    """The measured case: an unprivileged application listening on every port it can used
    to fill each worker's listener table (1024) and starve every other listen."""
    before = apps_stats(d)
    default = d.ctl("apps", "limits", json=True)["limits"]["listeners-per-user"]
    with app(d, "open", "tcp-listen", BASE_PORT, 1100, uid=NOBODY) as hog:
        assert opened(hog) == (default, "ENOBUFS")
        with app(d, "open", "tcp-listen", BASE_PORT + 2000, 100, uid=OTHER_USER) as other, \
                app(d, "open", "tcp-listen", BASE_PORT + 3000, 100) as root:
            assert opened(other) == (100, None)
            assert opened(root) == (100, None)
        users = {u["uid"]: u for u in apps_stats(d)["users"]}
        assert users[NOBODY]["listeners"] == default
        assert not users[NOBODY]["exempt"]
    assert delta(before, apps_stats(d), "listen_limit") >= 1


def test_five_users_at_their_listener_limit_leave_the_table_to_a_sixth(d):
    """With the defaults, five unprivileged users holding listeners-per-user each (1280
    listeners: more than the 1024-entry table of old held) are refused by that limit, not by
    the table, which has room; a sixth user still listens."""
    limit = d.ctl("apps", "limits", json=True)["limits"]["listeners-per-user"]
    worker = d.stats()["workers"][0]
    assert limit * 64 == worker["tcp_listeners_max"]  # 1/64 of the table
    before = d.stats()
    with contextlib.ExitStack() as held:
        for i in range(5):
            hog = held.enter_context(app(d, "open", "tcp-listen", BASE_PORT + i * 1000,
                                         limit + 10, uid=NOBODY - i))
            assert opened(hog) == (limit, "ENOBUFS")
        with app(d, "open", "tcp-listen", BASE_PORT + 6000, 100, uid=NOBODY - 5) as sixth:
            assert opened(sixth) == (100, None)
            after = d.stats()
            assert after["workers"][0]["tcp_listeners"] >= 5 * limit + 100
    assert delta(before["events"], after["events"], "tcp.listen_table_full") == 0
    assert delta(before["apps"], after["apps"], "listen_limit") >= 5


def test_listener_limit_changed_at_run_time_applies_to_the_next_listen(d):
    with app(d, "open", "tcp-listen", BASE_PORT, 10, uid=NOBODY) as a:
        assert opened(a) == (10, None)
        d.ctl("apps", "limits", "listeners-per-user", 12)
        with app(d, "open", "tcp-listen", BASE_PORT + 100, 10, uid=NOBODY) as b:
            assert opened(b) == (2, "ENOBUFS")
        # Lowered below what is held: what is held stays, nothing more is given.
        d.ctl("apps", "limits", "listeners-per-user", 5)
        with app(d, "open", "tcp-listen", BASE_PORT + 200, 1, uid=NOBODY) as c:
            assert opened(c) == (0, "ENOBUFS")
        a.send_line("close")
        a.expect("closed 10")
        with app(d, "open", "tcp-listen", BASE_PORT + 300, 10, uid=NOBODY) as e:
            assert opened(e) == (5, "ENOBUFS")


@contextlib.contextmanager
def second_of_user_held_others_served(d, n, second_gets, root_n, other_n):
    """While a first application of NOBODY holds its share: a second one of NOBODY asks for n
    UDP sockets and gets second_gets (count, errno); root's (root_n) and OTHER_USER's
    (other_n) get all they ask for. Yields while the three hold theirs."""
    with app(d, "open", "udp", BASE_PORT + 100, n, uid=NOBODY) as b, \
            app(d, "open", "udp", BASE_PORT + 200, root_n) as root, \
            app(d, "open", "udp", BASE_PORT + 300, other_n, uid=OTHER_USER) as other:
        assert opened(b) == second_gets
        assert opened(root) == (root_n, None)
        assert opened(other) == (other_n, None)
        yield


def test_sockets_per_application_refused_with_emfile_others_unaffected(d):
    before = apps_stats(d)
    d.ctl("apps", "limits", "socks-per-app", 5)
    with app(d, "open", "udp", BASE_PORT, 8) as a, app(d, "open", "udp", BASE_PORT + 100, 5) as b:
        assert opened(a) == (5, "EMFILE")
        assert opened(b) == (5, None)
    assert delta(before, apps_stats(d), "sock_limit") >= 1


def test_sockets_per_user_shared_by_its_applications_root_exempt(d):
    before = apps_stats(d)
    d.ctl("apps", "limits", "socks-per-user", 6)
    with app(d, "open", "udp", BASE_PORT, 4, uid=NOBODY) as a:
        assert opened(a) == (4, None)
        with second_of_user_held_others_served(d, 4, (2, "EMFILE"), 8, 4):
            assert delta(before, apps_stats(d), "user_sock_limit") >= 1


def test_applications_per_user_refused_with_eusers_until_one_exits(d):
    before = apps_stats(d)
    d.ctl("apps", "limits", "apps-per-user", 2)
    with app(d, "open", "udp", BASE_PORT, 1, uid=NOBODY) as a, \
            app(d, "open", "udp", BASE_PORT + 1, 1, uid=NOBODY) as b:
        assert opened(a) == (1, None)
        assert opened(b) == (1, None)
        with app(d, "open", "udp", BASE_PORT + 2, 1, uid=NOBODY) as c, \
                app(d, "open", "udp", BASE_PORT + 3, 1) as root:
            assert opened(c) == (0, "EUSERS")
            assert opened(root) == (1, None)
        assert delta(before, apps_stats(d), "app_limit") == 1
        a.close()
        topo.wait_until(lambda: {u["uid"]: u for u in apps_stats(d)["users"]}
                        .get(NOBODY, {}).get("apps") == 1, timeout=10, what="one app left")
        with app(d, "open", "udp", BASE_PORT + 4, 1, uid=NOBODY) as e:
            assert opened(e) == (1, None)


def test_sockets_per_application_raised_in_the_config_or_at_run_time(lab):
    """socks-per-app is raised as the other limits are, in the config file and with
    dpstackctl: an application that attaches afterwards gets a segment with room for the new
    limit and opens more sockets than the 16384 of the default, up to the limit (EMFILE)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    raised = 16400
    if hard < raised + 1024:
        pytest.skip("RLIMIT_NOFILE %d is too low for %d sockets" % (hard, raised))
    peer = lab.add_peer(topo.SinglePort.peer_ip)
    d = lab.start_daemon("\n".join([
        "tcp-listeners 32768",  # listeners are the cheapest sockets: room for all of them
        "workers 1",
        "port add port0 net_af_xdp0,iface=%s" % peer.root_ifname,
        "apps limits socks-per-app %d" % (raised - 10),
    ]) + "\n")
    assert apps_stats(d)["limits"]["socks-per-app"] == raised - 10
    d.ctl("apps", "limits", "socks-per-app", raised)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        with app(d, "open", "tcp-listen", 1024, raised + 10) as a:
            assert opened(a) == (raised, "EMFILE")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert apps_stats(d)["sock_limit"] == 1
    wait_apps_gone(d)


def test_socket_buffers_per_application_refused_with_enomem(d):
    """A UDP socket's two FIFOs take 512 KiB of blocks, and the application a 4 KiB page
    of FIFO positions: with 2 MiB, the fourth socket is refused."""
    before = apps_stats(d)
    d.ctl("apps", "limits", "arena-mb-per-app", 2)
    with app(d, "open", "udp", BASE_PORT, 5) as a, app(d, "open", "udp", BASE_PORT + 100, 2) as b:
        assert opened(a) == (3, "ENOMEM"), a.output()
        assert opened(b) == (2, None)
    assert delta(before, apps_stats(d), "arena_limit") >= 1


def test_socket_buffers_per_user_shared_by_its_applications_root_exempt(d):
    """A UDP socket's two FIFOs take 512 KiB of blocks, and each application a 4 KiB page
    of FIFO positions: with 2 MiB for the user, the first application's three sockets leave
    the second too little for one (ENOMEM), while root and another user are not held; the
    user's memory comes back as its sockets close."""
    before = apps_stats(d)
    d.ctl("apps", "limits", "arena-mb-per-user", 2)
    users = lambda: {u["uid"]: u for u in apps_stats(d)["users"]}
    with app(d, "open", "udp", BASE_PORT, 3, uid=NOBODY) as a:
        assert opened(a) == (3, None)
        with second_of_user_held_others_served(d, 3, (0, "ENOMEM"), 3, 3):
            assert users()[NOBODY]["arena_bytes"] <= 2 << 20
        assert delta(before, apps_stats(d), "user_arena_limit") >= 1
        a.send_line("close")
        a.expect("closed 3")
        topo.wait_until(lambda: users().get(NOBODY, {}).get("arena_bytes", 0) <= 4096,
                        timeout=10, what="the user's socket buffers freed")
        with app(d, "open", "udp", BASE_PORT + 400, 2, uid=NOBODY) as c:
            assert opened(c) == (2, None)


HELD_CONNS = 10000


def test_one_application_holds_10000_connections_on_one_worker(st, d):
    """A server's load: one application (on the daemon's one worker) with 10,000 established
    connections to kernel clients, each passing 4 bytes both ways. A connection's two
    default FIFOs take exactly their 256 KiB each of the arena; with each FIFO's positions
    in its block, every FIFO took a block twice its size and the arena (4 GiB then) ran out
    after about 4,000 connections (ENOMEM)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < HELD_CONNS + 1024:
        pytest.skip("RLIMIT_NOFILE %d is too low for %d connections" % (hard, HELD_CONNS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        with kernel_server(st) as port, app(d, "hold", st.peer_ip, port, HELD_CONNS) as a:
            a.expect("opened ", timeout=300)
            echoed = a.expect("echoed ", timeout=300)
            assert opened(a) == (HELD_CONNS, None), a.output()
            assert echoed == "echoed %d" % HELD_CONNS
            per_conn = apps_stats(d)["arena_bytes"] / HELD_CONNS
            assert per_conn <= (512 + 4) << 10, per_conn
            a.send_line("close")
            a.expect("closed ", timeout=120)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_limits_shown_in_stats_and_bad_values_refused(d):
    text = d.ctl("stats")
    for name in ("apps-per-user", "socks-per-app", "socks-per-user", "listeners-per-user",
                 "arena-mb-per-app", "arena-mb-per-user", "binds-per-app", "app.app_limit",
                 "app.listen_limit", "app.user_arena_limit"):
        assert name in text, name
    limits = apps_stats(d)["limits"]
    assert limits["socks-per-app"] == 16384
    assert 0 < limits["apps-per-user"] < 256
    for args, message in ((("socks-per-app", "262145"), "from 0 to 262144"),
                          (("apps-per-user", "-1"), "apps-per-user must be a number"),
                          (("bogus", "1"), "unknown limit 'bogus'"),
                          (("socks-per-app",), "usage: apps limits")):
        r = d.ctl_result("apps", "limits", *args)
        assert r.rc != 0 and message in r.err, (args, r.err)
    # Nothing of a refused command was applied.
    r = d.ctl_result("apps", "limits", "socks-per-app", "7", "binds-per-app", "x")
    assert r.rc != 0
    assert apps_stats(d)["limits"]["socks-per-app"] == 16384


def test_udp_blast_from_one_app_leaves_room_for_another_apps_round_trips(st, d):
    """One application keeps a 4 MB UDP send FIFO full; each KICK sends at most a budget of
    its datagrams per round, the rest next round, so another application's TCP round trips
    go on (progress is asserted, not speed)."""
    def sink():
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("0.0.0.0", 0))
        return u
    u = topo.in_netns(st.peer.ns, sink)
    before = apps_stats(d)
    try:
        with kernel_server(st) as port, \
                app(d, "udp-blast", st.peer_ip, u.getsockname()[1], 4 << 20) as blaster:
            blaster.expect("blasting")
            with app(d, "ping-pong", st.peer_ip, port, 2000) as pp:
                pp.expect("done 2000", timeout=120)
            blaster.proc.stdin.close()
            blaster.expect("sent ")
            assert blaster.wait() == 0, blaster.output()
    finally:
        u.close()
    after = apps_stats(d)
    assert delta(before, after, "budget_yields") > 0
    assert delta(before, after, "udp_tx_err") == 0


def test_udp_close_with_a_full_send_fifo_sends_every_datagram_a_budget_per_round(st, d):
    """An application fills its UDP send FIFO while the daemon is stopped (so nothing is
    sent meanwhile), closes the socket and exits. The worker sends the queue at a KICK's
    pace, at most CHAN_UDP_BUDGET (64) datagrams a round, the rest in later rounds, and
    every datagram reaches the kernel peer, in order; the socket and the segment go with
    the last one."""
    budget = 64
    so_rcvbufforce = 33  # Linux; Python does not name it. Beyond net.core.rmem_max: root

    def sink():
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.setsockopt(socket.SOL_SOCKET, so_rcvbufforce, 16 << 20)
        u.bind(("0.0.0.0", 0))
        return u
    u = topo.in_netns(st.peer.ns, sink)
    u.settimeout(10)
    try:
        with app(d, "udp-fill-close", st.peer_ip, u.getsockname()[1]) as a:
            a.expect("ready")
            assert u.recv(100)[:4] == (0).to_bytes(4, "big")  # the neighbour is known
            before = apps_stats(d)
            topo.stop_process(d.proc.pid)
            try:
                a.send_line("go")
                queued = int(a.expect("queued ").split()[1])
                assert a.wait() == 0, a.output()
            finally:
                os.kill(d.proc.pid, signal.SIGCONT)
            got = [int.from_bytes(u.recv(100)[:4], "big") for _ in range(queued - 1)]
        assert got == list(range(1, queued))
    finally:
        u.close()
    wait_apps_gone(d)
    after = apps_stats(d)
    assert queued > 20 * budget  # a default SO_SNDBUF of 64-byte datagrams
    assert delta(before, after, "udp_tx") == queued - 1
    assert delta(before, after, "udp_tx_err") == 0
    # Each round that leaves datagrams over counts a yield: at most a budget went per round.
    assert delta(before, after, "budget_yields") >= (queued - 1) // budget - 1


def test_call_to_a_stopped_daemon_times_out_and_its_late_answer_is_dropped(st, d):
    """A daemon that does not answer (stopped here) ends a call with ETIMEDOUT after
    DPSTACK_CALL_TIMEOUT_MS. Its slot waits for the late answer: the listener that answer
    made is closed, and later calls get their own answers."""
    with App(d, "env", "DPSTACK_CALL_TIMEOUT_MS=1000", LIMITS, "late-call", BASE_PORT,
             stdin=True) as a:
        a.expect("attached")
        a.send_line("bind")
        assert a.expect("bind ") == "bind 0"
        topo.stop_process(d.proc.pid)
        try:
            a.send_line("listen")
            assert a.expect("listen ", timeout=30) == "listen ETIMEDOUT"
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)
        for _ in range(3):
            a.send_line("bind")
            assert a.expect("bind ") == "bind 0"
            a.send_line("listen")
            assert a.expect("listen ") == "listen 0"
        # The three listeners, not the one whose caller gave up.
        topo.wait_until(lambda: apps_stats(d)["live_socks"] == 3, timeout=10,
                        what="the late listener closed")
        assert sum(1 for l in d.ctl("sock", "show").splitlines() if "LISTEN" in l) == 3


def test_commands_to_a_stopped_daemon_time_out_when_the_ring_is_full(st, d):
    """A process that finds its command ring full (the daemon stopped, so nothing takes
    them) waits for room no longer than DPSTACK_CALL_TIMEOUT_MS: ETIMEDOUT, as a call.
    Once the daemon runs again the ring drains and commands go through."""
    n = 3000  # more than a ring holds (CHAN_CMD_RING, 1024)
    with App(d, "env", "DPSTACK_CALL_TIMEOUT_MS=1000", LIMITS, "flood", BASE_PORT, n,
             stdin=True) as a:
        a.expect("ready")
        topo.stop_process(d.proc.pid)
        try:
            a.send_line("go")
            line = a.expect("flood ", timeout=30)
        finally:
            os.kill(d.proc.pid, signal.SIGCONT)
        assert line.startswith("flood ETIMEDOUT after "), line
        assert 1000 <= int(line.split()[-1]) < n, line
        a.send_line("go")
        assert a.expect("flood ", timeout=30) == "flood 0"
