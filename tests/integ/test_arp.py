"""ARP between the kernel and the stack: replies with the port's MAC, learning on both
sides, gratuitous announcements, requests for other hosts, and spoofing of static entries."""

import re

from scapy.layers.l2 import ARP

import topo


def test_arping_from_kernel_gets_replies_with_port_mac(one_port):
    s = one_port
    before = s.daemon.counter("arp.tx_reply")
    r = s.peer.run("arping", "-c", "3", "-w", "5", "-I", s.peer.ifname, s.stack_ip,
                   check=False, timeout=15)
    assert r.returncode == 0, r
    macs = re.findall(r"reply from %s \[([0-9A-Fa-f:]+)\]" % re.escape(s.stack_ip), r.stdout)
    assert len(macs) == 3, r.stdout
    assert all(m.lower() == s.stack_mac for m in macs), (macs, s.stack_mac)
    assert s.daemon.counter("arp.tx_reply") - before == 3


def test_kernel_neighbour_table_learns_port_mac(one_port):
    s = one_port
    s.peer.run("ip", "neigh", "flush", "dev", s.peer.ifname)
    s.ping_ok(count=1)
    entry = s.peer.neigh(s.stack_ip)
    assert entry is not None and entry.get("lladdr") == s.stack_mac, entry


def test_stack_neigh_shows_kernel_reachable_after_traffic(fresh_one_port):
    """The kernel's request creates a stale entry; using it for the reply starts the
    delay/probe cycle, and the kernel's answer to the unicast probe makes it reachable."""
    s = fresh_one_port
    s.ctl("neigh", "params", "delay-ms", "300", "retrans-ms", "200")
    s.ctl("neigh", "flush")
    s.peer.run("ip", "neigh", "flush", "dev", s.peer.ifname)
    s.ping_ok(count=2)
    entry = s.daemon.neigh(s.peer_ip)
    assert entry is not None and entry["lladdr"] == s.peer_mac, entry
    assert entry["dev"] == "port0"
    entry = s.daemon.wait_neigh_state(s.peer_ip, "reachable", timeout=5)
    assert entry["lladdr"] == s.peer_mac


def test_arp_request_for_another_address_not_answered(one_port):
    s = one_port
    before = s.daemon.stats()
    r = s.peer.run("arping", "-c", "2", "-w", "2", "-I", s.peer.ifname, "10.0.0.99",
                   check=False, timeout=10)
    assert r.returncode != 0 and "Received 0 response" in r.stdout, r
    after = s.daemon.stats()
    assert topo.drops_delta(before, after) == {"arp.not_for_us": 2}
    assert s.daemon.counter("arp.tx_reply", after) == s.daemon.counter("arp.tx_reply", before)


def test_gratuitous_arp_sent_when_address_added(one_port):
    s = one_port
    addr = "10.0.0.3"
    before = s.daemon.counter("arp.tx_gratuitous")
    with s.packet_socket() as ps:
        s.ctl("ip", "addr", "add", addr + "/24", "dev", "port0")
        try:
            garp = ps.recv_until(lambda f: f.haslayer(ARP) and f[ARP].psrc == addr, timeout=3)
        finally:
            s.ctl("ip", "addr", "del", addr + "/24", "dev", "port0")
    assert garp is not None, "no gratuitous ARP for %s within 3 s" % addr
    assert garp.dst == "ff:ff:ff:ff:ff:ff"
    assert garp[ARP].op == 1 and garp[ARP].pdst == addr  # RFC 5227 announcement
    assert garp[ARP].hwsrc == s.stack_mac and garp.src == s.stack_mac
    assert s.daemon.counter("arp.tx_gratuitous") - before == 1


def test_added_address_answers_pings_and_deleted_one_does_not(one_port):
    s = one_port
    s.ctl("ip", "addr", "add", "10.0.0.4/24", "dev", "port0")
    try:
        r = s.peer.ping("10.0.0.4", count=3, interval=0.05, wait=2)
        assert r.received == 3, r
    finally:
        s.ctl("ip", "addr", "del", "10.0.0.4/24", "dev", "port0")
    s.peer.run("ip", "neigh", "flush", "dev", s.peer.ifname)
    r = s.peer.ping("10.0.0.4", count=1, wait=1)
    assert r.received == 0, r
    # The kernel keeps asking for 10.0.0.4 (3 probes, a second apart) after ping gave up:
    # its incomplete entry goes, or the next test sees those requests as arp.not_for_us.
    s.peer.run("ip", "neigh", "flush", "dev", s.peer.ifname)
    s.ping_ok()


def test_arp_reply_spoofing_static_entry_dropped(one_port):
    s = one_port
    victim, static_mac, evil_mac = "10.0.0.50", "02:00:00:00:00:50", "02:66:66:66:66:66"
    s.ctl("neigh", "add", victim, "lladdr", static_mac, "dev", "port0")
    try:
        baseline = s.settled_mempool()
        before = s.daemon.stats()
        with s.packet_socket() as ps:
            for op in (2, 2, 1):  # two replies to us, one gratuitous request
                ps.send(s.eth(src=evil_mac) /
                        ARP(op=op, hwsrc=evil_mac, psrc=victim,
                            hwdst=s.stack_mac if op == 2 else "00:00:00:00:00:00",
                            pdst=s.stack_ip if op == 2 else victim))
        s.ping_ok()
        after = s.daemon.stats()
        assert topo.drops_delta(before, after) == {"arp.static_conflict": 3}
        entry = s.daemon.neigh(victim)
        assert entry["lladdr"] == static_mac and entry["state"] == "permanent", entry
        s.wait_mempool_back(baseline)
    finally:
        s.ctl("neigh", "del", victim, "dev", "port0")


def test_arp_claiming_our_address_counted_as_conflict(one_port):
    s = one_port
    before = s.daemon.stats()
    with s.packet_socket() as ps:
        ps.send(s.eth(dst="ff:ff:ff:ff:ff:ff") /
                ARP(op=1, hwsrc=s.peer_mac, psrc=s.stack_ip, pdst=s.stack_ip))
    s.ping_ok()
    assert topo.drops_delta(before, s.daemon.stats()) == {"arp.addr_conflict": 1}


def test_arp_flood_from_thousands_of_senders_table_bounded(fresh_one_port):
    """3000 requests from distinct senders: each is answered, the neighbour table stays at
    its capacity, the real peer stays reachable both ways and no mbuf is kept."""
    s = fresh_one_port
    baseline = s.settled_mempool()
    frames = []
    for i in range(3000):
        ip = "10.1.%d.%d" % (i // 250, 1 + i % 250)
        mac = "02:00:00:00:%02x:%02x" % (i >> 8, i & 0xff)
        frames.append(s.eth(src=mac, dst="ff:ff:ff:ff:ff:ff") /
                      ARP(op=1, hwsrc=mac, psrc=ip, pdst=s.stack_ip))
    before = s.daemon.stats()
    with s.packet_socket() as ps:
        ps.send_many(frames)
    s.ping_ok()
    after = s.daemon.stats()
    assert s.daemon.counter("arp.rx_request", after) - \
        s.daemon.counter("arp.rx_request", before) == 3000
    assert s.daemon.counter("arp.tx_reply", after) - \
        s.daemon.counter("arp.tx_reply", before) == 3000
    entries = s.ctl("neigh", "show", json=True)
    assert 0 < len(entries) <= 1024, len(entries)
    r = s.daemon.ctl_result("ping", s.peer_ip, "count", 2, timeout=30)
    assert r.rc == 0, r
    s.wait_mempool_back(baseline)
