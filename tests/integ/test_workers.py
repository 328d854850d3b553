"""Two workers on one port (net_af_packet with two queue pairs): each worker has its own
neighbour cache, and an ARP reply reaches only the worker its queue belongs to, so the
workers tell each other what they learn. Without that, a worker waiting for a reply that
landed on the other one never resolves its next hop. Deleting one of a subnet's addresses
keeps the subnet and the neighbours of every worker. A UDP service answers every flow over
both families from the worker that owns its port."""

import os
import socket

import topo


def test_two_workers_answer_and_resolve_in_both_directions(lab):
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.two_worker_config(peer.root_ifname))
    assert [w["worker"] for w in d.stats()["workers"]] == [0, 1]
    r = peer.ping("10.0.0.2", count=50, interval=0.01, wait=2)
    assert r.received == 50, r
    # Kernel pings from eight addresses: the worker that takes an echo request must resolve
    # the sender to answer, and the kernel's ARP reply reaches whichever worker its hash
    # picks. Every ping must be answered, and every worker must end up knowing every
    # address, whichever worker heard it.
    addrs = ["10.0.0.%d" % (11 + i) for i in range(8)]
    for a in addrs:
        peer.run("ip", "addr", "add", a + "/24", "dev", peer.ifname)
    for a in addrs:
        r = peer.ping("10.0.0.2", count=5, interval=0.05, wait=2, extra=("-I", a))
        assert r.received == 5, (a, r)
    rows = d.ctl("neigh", "show", json=True)
    for a in addrs:
        knowing = {e["worker"] for e in rows if e["dst"] == a and "lladdr" in e}
        assert knowing == {0, 1}, (a, rows)


def test_two_workers_stack_ping_answered_whichever_worker_gets_the_reply(lab):
    """dpstackctl ping sends from worker 0; the reply's hash picks the worker that takes it."""
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.two_worker_config(peer.root_ifname))
    addrs = ["10.0.0.%d" % (11 + i) for i in range(8)]
    for a in addrs:
        peer.run("ip", "addr", "add", a + "/24", "dev", peer.ifname)
    for a in addrs:
        out = d.ctl("ping", a, "count", 2, "timeout-ms", 2000, json=True, timeout=30)
        assert out["received"] == 2, (a, out)


def echo_round_trip(conn, data):
    """data through the echo service on conn: what came back."""
    conn.sendall(data)
    got = bytearray()
    while len(got) < len(data):
        chunk = conn.recv(len(data) - len(got))
        if not chunk:
            break
        got += chunk
    return bytes(got)


def test_two_workers_deleting_one_of_two_subnet_addresses_keeps_traffic_flowing(lab):
    """10.0.0.2/24 and 10.0.0.3/24 on port0, connections to 10.0.0.3 on both workers.
    Deleting 10.0.0.2, which the subnet's connected route was made for, passes the route to
    10.0.0.3 (Linux keeps a prefix route while an address covers it) and leaves every
    worker's neighbours (Linux flushes them only with a device's last address): the
    connections carry on without a lost segment or a new ARP request, and the stack reaches
    the peer from 10.0.0.3. Deleting 10.0.0.3 then takes the route and the neighbours."""
    peer = lab.add_peer("10.0.0.1")
    d = lab.start_daemon(topo.two_worker_config(
        peer.root_ifname, extra=("ip addr add 10.0.0.3/24 dev port0", "service add echo tcp 7")))
    conns = [topo.in_netns(peer.ns, lambda: socket.create_connection(("10.0.0.3", 7),
                                                                     timeout=10))
             for _ in range(8)]
    try:
        for c in conns:
            data = os.urandom(64 * 1024)
            assert echo_round_trip(c, data) == data
        assert {r["worker"] for r in d.ctl("sock", "show", "tcp", json=True)
                if r["state"] == "ESTABLISHED"} == {0, 1}
        before = d.stats()
        d.ctl("ip", "addr", "del", "10.0.0.2/24", "dev", "port0")
        routes = d.ctl("ip", "route", "show", json=True)
        assert {"type": "connected", "dst": "10.0.0.0/24", "dev": "port0",
                "protocol": "kernel", "prefsrc": "10.0.0.3"} in routes, routes
        for i, c in enumerate(conns):
            data = os.urandom(64 * 1024)
            assert echo_round_trip(c, data) == data, "connection %d" % i
        after = d.stats()
        assert topo.drops_delta(before, after) == {}
        # No segment lost (neither RACK nor a timeout found one) and no neighbour asked for
        # again. A tail loss probe, which a busy machine can send without any loss, and the
        # kernel's own spurious resends (tcp.duplicate_segs) are not losses.
        for name in ("arp.tx_request", "tcp.rack_lost", "tcp.rto"):
            assert after["events"][name] == before["events"][name], (name, before, after)
        out = d.ctl("ping", "10.0.0.1", "count", 2, "timeout-ms", 2000, json=True, timeout=30)
        assert out["received"] == 2, out
    finally:
        for c in conns:
            c.close()
    d.ctl("ip", "addr", "del", "10.0.0.3/24", "dev", "port0")
    assert not [r for r in d.ctl("ip", "route", "show", json=True)
                if r["dst"].startswith("10.0.0.")]
    assert not [r for r in d.ctl("neigh", "show", json=True) if r["dst"] == "10.0.0.1"]


def udp_exchange_all(peer, dst, port, n):
    """n datagrams to dst:port from n sockets of the peer's kernel (n source ports, so RSS
    spreads them over the queues); how many came back whole from dst:port."""
    def go():
        fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
        socks = [socket.socket(fam, socket.SOCK_DGRAM) for _ in range(n)]
        answered = 0
        try:
            for i, s in enumerate(socks):
                s.settimeout(5)
                s.sendto(b"flow %d" % i, (dst, port))
            for i, s in enumerate(socks):
                try:
                    data, src = s.recvfrom(64)
                except socket.timeout:
                    continue
                answered += data == b"flow %d" % i and src[:2] == (dst, port)
        finally:
            for s in socks:
                s.close()
        return answered
    return topo.in_netns(peer.ns, go, timeout=60)


def test_two_workers_udp_services_answer_every_flow_over_both_families(lab):
    """A UDP service is added on every worker, but the datagrams to a port all go to the
    worker that owns the port (steer_udp_owner), whichever queue RSS gives them: the other
    workers have no socket for it. Echo on two ports (one per worker) answers every flow,
    over IPv4 and IPv6."""
    stack6, peer6 = "2001:db8::2", "2001:db8::1"
    s = topo.two_workers(lab, extra_config=(
        "ip addr add %s/64 dev port0" % stack6, "service add echo udp 7",
        "service add echo udp 8"))
    p = s.peer
    for k in ("accept_dad=0", "accept_ra=0", "disable_ipv6=0"):
        p.run("sysctl", "-qw", "net.ipv6.conf.%s.%s" % (p.ifname, k))
    p.run("ip", "-6", "addr", "add", peer6 + "/64", "dev", p.ifname, "nodad")
    topo.wait_until(lambda: p.ping(stack6, count=1, wait=1).received == 1, timeout=20,
                    interval=0.1, what="first ping6 answered")
    rows = {(r["proto"], r["port"]) for r in s.daemon.ctl("service", "show", json=True)}
    assert {("udp", 7), ("udp", 8)} <= rows, rows
    for port in (7, 8):
        for dst in (s.stack_ip, stack6):
            assert udp_exchange_all(p, dst, port, 32) == 32, (dst, port)
    # One socket per service, on the worker owning its port; here one on each.
    rows = s.daemon.ctl("sock", "show", "udp", json=True)
    owners = {r["local"]: r["worker"] for r in rows}
    assert sorted(owners) == ["[::]:7", "[::]:8"] and set(owners.values()) == {0, 1}, rows
    # Taken twice is refused (by the owner); deleted, it is gone from every worker.
    again = s.daemon.ctl_result("service", "add", "echo", "udp", 7)
    assert again.rc != 0 and "in use" in again.err, (again.rc, again.err)
    for port in (7, 8):
        s.daemon.ctl("service", "del", "udp", port)
    assert s.daemon.ctl("sock", "show", "udp", json=True) == []
