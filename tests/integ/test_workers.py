"""Two workers on one port (net_af_packet with two queue pairs): each worker has its own
neighbour cache, and an ARP reply reaches only the worker its queue belongs to, so the
workers tell each other what they learn. Without that, a worker waiting for a reply that
landed on the other one never resolves its next hop."""

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
