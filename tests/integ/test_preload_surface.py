"""The socket surface beyond data that real programs use, through libdpstack_preload.so, held
against the Linux kernel: tests/integ/apps/preload_surface.c runs once under the shim (stack
sockets, root namespace) and, where the same question can be put to the kernel, once more
without it in the peer's namespace; both print "key value" lines that must agree.

1. IP-level options: IP_TTL/IP_TOS defaults, checks and getsockopt truncation as Linux; the
   values reach the wire (a kernel receiver's IP_RECVTTL/IP_RECVTOS, a capture of a TCP
   connection set up as BIRD does); IP_PKTINFO/IP_RECVTTL/IP_RECVTOS ancillary data with
   MSG_CTRUNC; IP_RECVERR read back, MSG_ERRQUEUE empty (EAGAIN); sendmsg's IP_TTL, IP_TOS
   and IP_PKTINFO (source address) control messages, and the errnos of bad ones.
2. Broadcasts (RFC 919/922): EACCES without SO_BROADCAST for the limited and a directed
   broadcast (sendto and connect); with it a DHCP-like exchange with a kernel server, the
   stack's datagrams in Ethernet broadcast frames and the server's broadcast answer received
   by a socket bound to 0.0.0.0; a broadcast reaches the sender's own sockets too.
3. What a socket says it is: fstat's S_IFSOCK (the library's placeholder descriptor is a dead
   kernel socket), SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ACCEPTCONN.
4. close_range (CLOSE_RANGE_CLOEXEC, bad arguments, closing) and closefrom over stack
   sockets, a pipe and an unbound socket: closed on the stack (the port is free again);
   sendmmsg/recvmmsg: counts, lengths, partial batches, MSG_WAITFORONE, timeout, errors.
5. Interface ioctls on a stack socket answer with the stack's ports and addresses (as
   `dpstackctl link show` / `ip addr show` list them), with the kernel's errnos.
6. Bad pointers: every call given NULL with a length, an unmapped page or a read-only page
   for what it writes says what the kernel says (EFAULT, or its result), a partial fault
   loses and repeats no byte, and the program goes on; a program's own SIGSEGV handler sees
   its own faults as on the kernel (siginfo, oldact, signal(), SA_RESETHAND, the default
   action, SIG_IGN across exec) and never the library's.
"""

import contextlib
import json
import os
import re
import socket
import subprocess
import time

import pytest

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")
SURFACE = os.path.join(topo.BUILD, "tests", "integ", "apps", "preload_surface")
# <linux/in.h>; Python's socket module does not name them all.
IP_TOS, IP_TTL, IP_PKTINFO, IP_RECVTTL, IP_RECVTOS = 1, 2, 8, 12, 13


@pytest.fixture(scope="module", autouse=True)
def programs():
    if not os.access(PRELOAD, os.R_OK) or not os.access(SURFACE, os.X_OK):
        pytest.skip("not built: %s" % SURFACE)


@pytest.fixture(scope="module")
def st():
    with topo.single_port("surface") as s:
        yield s


@pytest.fixture(autouse=True)
def no_app_left(st):
    """Afterwards the daemon has no application and no socket of one left."""
    yield
    topo.wait_apps_gone(st.daemon)


def stack_env(st):
    env = st.daemon.env
    env["LD_PRELOAD"] = PRELOAD
    return env


def on_stack(st, *args, timeout=30):
    """preload_surface under the shim; its output (it must exit 0)."""
    r = topo.run([SURFACE] + [str(a) for a in args], env=stack_env(st), timeout=timeout)
    return r.stdout


def on_kernel(st, *args, timeout=30):
    """preload_surface on the kernel, in the peer's namespace."""
    return st.peer.run(SURFACE, *args, timeout=timeout).stdout


@contextlib.contextmanager
def running(argv, env=None, ns=None):
    """A program that prints "ready" once it is set up; yields its Popen (text stdout)."""
    if ns is not None:
        argv = ["ip", "netns", "exec", ns] + argv
    p = subprocess.Popen(topo.dying_with_parent(argv), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        before = []
        for line in p.stdout:
            if line.strip() == "ready":
                break
            before.append(line)
        else:
            raise AssertionError("not ready: %s" % "".join(before))
        yield p
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 15)
        p.wait(10)


def finished(p, timeout=30):
    out, _ = p.communicate(timeout=timeout)
    assert p.returncode == 0, out
    return out


def peer_ifindex(st):
    out = st.peer.run("ip", "-j", "link", "show", "dev", st.peer.ifname).stdout
    return json.loads(out)[0]["ifindex"]


def stack_ifindex(st):
    return st.daemon.ctl("link", "show", "port0", json=True)[0]["ifindex"]


# --- 1. IP-level options ---------------------------------------------------------------------

def test_ip_options_defaults_checks_and_truncation_match_the_kernel(st):
    stack = on_stack(st, "ipopts")
    kernel = on_kernel(st, "ipopts")
    assert "tcp.ttl.default 64" in stack and "udp.tos.after 195" in stack, stack
    assert stack == kernel


def udp_exchange(st, receiver_on_stack, ttl, tos):
    """preload_surface udprecv on one side, udpsend (twice) from the other; the receiver's
    output with its own address and interface index replaced by ADDR and IFINDEX."""
    port = 4700
    if receiver_on_stack:
        recv_argv, recv_env, recv_ns = [SURFACE, "udprecv", str(port)], stack_env(st), None
        dst, own, ifindex = st.stack_ip, st.stack_ip, stack_ifindex(st)
    else:
        recv_argv, recv_env, recv_ns = [SURFACE, "udprecv", str(port)], None, st.peer.ns
        dst, own, ifindex = st.peer_ip, st.peer_ip, peer_ifindex(st)
    with running(recv_argv, env=recv_env, ns=recv_ns) as p:
        for _ in range(2):
            if receiver_on_stack:
                out = on_kernel(st, "udpsend", dst, port, ttl, tos)
            else:
                out = on_stack(st, "udpsend", dst, port, ttl, tos)
            assert out == "ttl 0\ntos 0\nsendto %d\n" % len("ttl %d tos %d" % (ttl, int(tos, 0))), out
        out = finished(p)
    return (out.replace(" %s" % own, " ADDR")
               .replace("ifindex %d " % ifindex, "ifindex IFINDEX "))


def test_udp_ttl_tos_reach_the_kernel_and_ancillary_data_is_the_kernels(st):
    # The stack sends with TTL 7 and TOS 0x2a; the kernel's IP_RECVTTL/IP_RECVTOS see them.
    kernel_side = udp_exchange(st, receiver_on_stack=False, ttl=7, tos="0x2a")
    assert "full.ttl 7\nfull.tos 42\n" in kernel_side, kernel_side
    # The kernel sends the same; the stack socket's ancillary data must read the same way,
    # a too short control buffer included (MSG_CTRUNC, what fitted).
    stack_side = udp_exchange(st, receiver_on_stack=True, ttl=7, tos="0x2a")
    assert "full.pktinfo ifindex IFINDEX spec_dst ADDR addr ADDR" in stack_side, stack_side
    assert stack_side == kernel_side


def test_tcp_ttl_255_tos_0xc0_set_before_connect_are_on_every_segment(st):
    """BIRD's BGP session (RFC 5082 GTSM: TTL 255; DSCP CS6): set before connect, carried by
    the SYN and the data, read back once connected."""
    from scapy.layers.inet import IP, TCP  # before the first frame is dissected
    port = 4179

    def listen():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((st.peer_ip, port))
        s.listen(1)
        s.settimeout(20)
        return s

    ls = topo.in_netns(st.peer.ns, listen)
    with ls, topo.PacketSocket(st.peer.ns, st.peer.ifname) as cap:
        p = subprocess.Popen([SURFACE, "tcpconnect", st.peer_ip, str(port), "255", "0xc0"],
                             env=stack_env(st), stdout=subprocess.PIPE, text=True)
        c, _ = ls.accept()
        with c:
            c.settimeout(20)
            assert c.recv(16) == b"hello\n"
        out = finished(p)
        assert out.splitlines() == ["ttl 0", "tos 0", "connect 0", "ttl.connected 255",
                                    "tos.connected 192", "send 6", "recv 0"], out
        seen = []

        def from_stack(f):
            if IP in f and TCP in f and f[TCP].dport == port:
                seen.append((f[IP].ttl, f[IP].tos, str(f[TCP].flags), len(f[TCP].payload)))
            return any(s[3] > 0 for s in seen) and any("F" in s[2] for s in seen)

        assert cap.recv_until(from_stack, timeout=10) is not None, seen
    assert any("S" in s[2] for s in seen), seen
    assert all(s[0] == 255 and s[1] == 0xc0 for s in seen), seen


def test_sendmsg_control_messages_set_ttl_tos_and_source_and_bad_ones_fail_as_linux(st):
    port = 4900
    st.ctl("ip", "addr", "add", "10.0.9.2/24", "dev", "port0")
    st.peer.run("ip", "addr", "add", "10.0.9.1/24", "dev", st.peer.ifname)
    try:
        def receiver():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
            s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
            s.bind(("0.0.0.0", port))
            s.settimeout(10)
            return s

        rx = topo.in_netns(st.peer.ns, receiver)
        with rx:
            stack = on_stack(st, "sendcmsg", st.peer_ip, port, "10.0.9.2")
            got = {}
            for _ in range(3):
                data, anc, _, src = rx.recvmsg(64, 256)
                ip = {t: d for _, t, d in anc}
                got[data.decode()] = (src[0], ip[IP_TTL][0], ip[IP_TOS][0])
        kernel = on_kernel(st, "sendcmsg", st.stack_ip, port, "10.0.9.1")
    finally:
        st.peer.run("ip", "addr", "del", "10.0.9.1/24", "dev", st.peer.ifname, check=False)
        st.ctl("ip", "addr", "del", "10.0.9.2/24", "dev", "port0")
    assert stack == kernel, (stack, kernel)
    assert got == {"ttl9.tos16.from_src": ("10.0.9.2", 9, 16),
                   "plain": (st.stack_ip, 64, 0),
                   "other_level_skipped": (st.stack_ip, 64, 0)}, got


# --- 2. Broadcasts ---------------------------------------------------------------------------

@contextlib.contextmanager
def default_routes(st):
    """The limited broadcast leaves by the route that covers 255.255.255.255, on Linux and on
    the stack: a default route on both sides for the length of a test."""
    st.ctl("ip", "route", "add", "default", "via", st.peer_ip)
    st.peer.run("ip", "route", "add", "default", "via", st.stack_ip)
    try:
        yield
    finally:
        st.peer.run("ip", "route", "del", "default", check=False)
        st.ctl("ip", "route", "del", "default")


def test_broadcast_needs_so_broadcast_and_a_dhcp_like_exchange_works(st):
    from scapy.layers.inet import IP, UDP  # before the first frame is dissected
    sport, cport = 4767, 4768
    subnet_bcast = "10.0.0.255"
    with default_routes(st):
        # The kernel answers the same questions the same way (no server, no reply awaited).
        kernel = on_kernel(st, "bcast", sport + 100, cport + 100, subnet_bcast, 0)
        assert kernel.splitlines()[1:4] == ["limited.nobcast EACCES", "directed.nobcast EACCES",
                                            "connect.nobcast EACCES"], kernel

        def server_socket():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
            s.bind(("0.0.0.0", sport))
            s.settimeout(20)
            return s

        srv = topo.in_netns(st.peer.ns, server_socket)
        with srv, topo.PacketSocket(st.peer.ns, st.peer.ifname) as cap:
            p = subprocess.Popen([SURFACE, "bcast", str(sport), str(cport), subnet_bcast, "1"],
                                 env=stack_env(st), stdout=subprocess.PIPE, text=True)
            got = []
            for _ in range(3):
                data, anc, _, src = srv.recvmsg(64, 256)
                dst = socket.inet_ntoa(anc[0][2][8:12])  # struct in_pktinfo's ipi_addr
                got.append((data, dst, src))
                if data == b"discover":
                    srv.sendto(b"offer", ("255.255.255.255", cport))
            out = finished(p)
            frames = []

            def to_server(f):
                if UDP in f and f[UDP].dport == sport:
                    frames.append((f.dst, f[IP].dst, bytes(f[UDP].payload)))
                return len(frames) == 3

            cap.recv_until(to_server, timeout=10)
    assert out.replace("reply offer to 255.255.255.255\n", "") == kernel, out
    assert "reply offer to 255.255.255.255" in out, out
    assert [(d, a) for d, a, _ in got] == [(b"discover", "255.255.255.255"),
                                           (b"request", subnet_bcast),
                                           (b"connected", "255.255.255.255")], got
    assert all(s == (st.stack_ip, cport) for _, _, s in got), got
    assert all(mac == "ff:ff:ff:ff:ff:ff" for mac, _, _ in frames) and len(frames) == 3, frames


def test_a_socket_hears_its_own_broadcasts_as_on_the_kernel(st):
    with default_routes(st):
        stack = on_stack(st, "bcastself", 4769, "10.0.0.255")
        kernel = on_kernel(st, "bcastself", 4769, "10.0.0.255")
    assert "heard limited to 255.255.255.255" in stack.splitlines(), stack
    assert stack == kernel


# --- 3. What a socket is ---------------------------------------------------------------------

def test_fstat_and_so_type_domain_protocol_say_socket_as_on_the_kernel(st):
    stack = on_stack(st, "fstat")
    assert "tcp.fstat.issock 1" in stack and "listen.so_acceptconn 1" in stack, stack
    assert stack == on_kernel(st, "fstat")


# --- 4. Ranges of descriptors, batches of messages --------------------------------------------

def test_close_range_and_closefrom_close_stack_sockets_as_the_kernel(st):
    stack = on_stack(st, "closerange", 4800)
    assert stack.count("port free again") == 2 and "closed.listener EBADF" in stack, stack
    assert stack == on_kernel(st, "closerange", 4800)
    assert not re.search(r":4800\s", st.daemon.ctl("sock", "show")), "a socket is left"


def test_sendmmsg_recvmmsg_counts_waitforone_timeout_as_the_kernel(st):
    stack = on_stack(st, "mmsg", st.stack_ip, 4810)
    assert "recv3 3" in stack and "recv.waitforone 2" in stack, stack
    assert stack == on_kernel(st, "mmsg", st.peer_ip, 4810)


# --- 5. Interface ioctls ---------------------------------------------------------------------

def test_interface_ioctls_answer_with_the_stacks_ports_as_the_kernel_does_with_its_own(st):
    link = st.daemon.ctl("link", "show", "port0", json=True)[0]
    out = on_stack(st, "ifioctl", "port0")
    lines = out.splitlines()
    assert lines[:3] == ["conf.count 1", "conf.short 0", "conf port0 2 %s" % st.stack_ip], out
    assert "hwaddr 1 %s" % link["address"] in lines, out
    for want in ("index.ok 1", "name.roundtrip 1", "addr 2 10.0.0.2", "netmask 2 255.255.255.0",
                 "brdaddr 2 10.0.0.255", "flags.up_broadcast_running 1",
                 "mtu %d" % link["mtu"], "conf.null EFAULT"):
        assert want in lines, (want, out)
    # The kernel, asked the same of its own interface: the same keys, the same errnos.
    kernel = on_kernel(st, "ifioctl", st.peer.ifname).splitlines()
    keys = lambda ls: [l.split()[0] for l in ls if not l.startswith("conf ")]
    assert keys(lines) == keys(kernel), (out, kernel)
    errors = lambda ls: [l for l in ls if l.startswith("unknown.") or l.startswith("conf.null")]
    assert errors(lines) == errors(kernel) and "unknown.mtu ENODEV" in lines, (out, kernel)
    # A second address: listed, while the interface's own address stays the first.
    st.ctl("ip", "addr", "add", "10.0.9.2/24", "dev", "port0")
    try:
        out = on_stack(st, "ifioctl", "port0")
    finally:
        st.ctl("ip", "addr", "del", "10.0.9.2/24", "dev", "port0")
    assert "conf.count 2" in out and "conf port0 2 10.0.9.2" in out, out
    assert "addr 2 10.0.0.2" in out.splitlines(), out


def test_a_running_program_sees_an_address_added_to_the_stack(st):
    """The library asks for the table again when worker 0 says it changed (links_gen)."""
    p = subprocess.Popen([SURFACE, "ifwatch"], env=stack_env(st), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "conf.count 1\n"
        st.ctl("ip", "addr", "add", "10.0.9.2/24", "dev", "port0")
        try:
            p.stdin.write("again\n")
            p.stdin.flush()
            assert p.stdout.readline() == "conf.count 2\n"
        finally:
            st.ctl("ip", "addr", "del", "10.0.9.2/24", "dev", "port0")
        p.stdin.write("again\n")
        p.stdin.flush()
        assert p.stdout.readline() == "conf.count 1\n"
    finally:
        p.stdin.close()
        assert p.wait(10) == 0


# --- 6. Bad pointers ---------------------------------------------------------------------------

def test_bad_pointers_give_the_kernels_efault_on_every_call(st):
    stack = on_stack(st, "efault", st.stack_ip, 4850)
    assert "recv.readonly EFAULT" in stack and "epoll_wait.bad EFAULT" in stack, stack
    assert "recv.partial.consistent 1" in stack and "udp.recv.after_fault EAGAIN" in stack, stack
    assert stack == on_kernel(st, "efault", st.peer_ip, 4850)


def test_a_programs_own_sigsegv_handler_behaves_as_on_the_kernel(st):
    stack = on_stack(st, "segv", st.stack_ip, 4860)
    assert "recv.badbuf EFAULT" in stack and "handler.calls_after_efault 1" in stack, stack
    assert "child.termsig 11" in stack and "exec.sigsegv_ignored 1" in stack, stack
    assert stack == on_kernel(st, "segv", st.peer_ip, 4860)
