"""dpstackd's command line and config file: every bad config makes it exit non-zero with a
clear message (with the line number where there is one) and leave no control socket or DPDK
files behind; a good config with every directive starts; --help documents every directive."""

import os
import re
import socket

import pytest

import topo

PORT = "port add port0 net_af_xdp0,iface={iface}\n"
ADDR = "ip addr add 10.0.0.2/24 dev port0\n"

# (name, config (str.format'ed with iface, or bytes), expected message regex)
BAD_CONFIGS = [
    ("directive_after_command",
     "workers 1\n" + PORT + ADDR + "workers 1\n",
     r"dpstackd\.conf:4: 'workers' must come before the first command"),
    ("port_after_command",
     "workers 1\n" + PORT + ADDR + "port add port1 net_af_xdp1,iface=lo\n",
     r"dpstackd\.conf:4: 'port' must come before the first command"),
    ("workers_zero", "workers 0\n" + PORT, r"dpstackd\.conf:1: workers: '0' is not a count"),
    ("workers_not_a_number", "workers two\n" + PORT,
     r"dpstackd\.conf:1: workers: 'two' is not a count"),
    ("workers_negative", "workers -1\n" + PORT, r"dpstackd\.conf:1: workers: bad lcore list '-1'"),
    ("workers_reversed_range", "workers 3-1\n" + PORT,
     r"dpstackd\.conf:1: workers: bad lcore list '3-1'"),
    ("workers_missing_value", "workers\n" + PORT, r"dpstackd\.conf:1: usage: workers VALUE"),
    ("workers_lcore_twice", "workers 1,1\n" + PORT,
     r"dpstackd\.conf:1: workers: lcore 1 listed twice"),
    ("duplicate_port_name", "workers 1\n" + PORT + PORT.replace("af_xdp0", "af_xdp1"),
     r"dpstackd\.conf:3: port 'port0' defined twice"),
    ("duplicate_device", "workers 1\n" + PORT + PORT.replace("port0", "port1"),
     r"dpstackd\.conf:3: device 'net_af_xdp0' used twice"),
    ("port_bad_name", "port add port/0 net_af_xdp0,iface={iface}\n",
     r"dpstackd\.conf:1: port name 'port/0'"),
    ("port_missing_device", "port add port0\n", r"dpstackd\.conf:1: usage: port add NAME DEVICE"),
    ("eal_twice", "eal --no-huge\neal --no-huge\n" + PORT,
     r"dpstackd\.conf:2: 'eal' given twice \(first on line 1\)"),
    ("mbufs_too_few", "mbufs 10\n" + PORT, r"dpstackd\.conf:1: mbufs: '10' is not a count"),
    ("idle_sleep_not_a_number", "idle-sleep-us soon\n" + PORT,
     r"dpstackd\.conf:1: idle-sleep-us: 'soon' is not microseconds"),
    ("tcp_listeners_zero", "tcp-listeners 0\n" + PORT,
     r"dpstackd\.conf:1: tcp-listeners: '0' is not a count from 1 to 1048576"),
    ("tcp_listeners_beyond_limit", "tcp-listeners 1048577\n" + PORT,
     r"dpstackd\.conf:1: tcp-listeners: '1048577' is not a count from 1 to 1048576"),
    ("tcp_listeners_not_a_number", "tcp-listeners 16k\n" + PORT,
     r"dpstackd\.conf:1: tcp-listeners: '16k' is not a count"),
    ("tcp_listeners_negative", "tcp-listeners -5\n" + PORT,
     r"dpstackd\.conf:1: tcp-listeners: '-5' is not a count"),
    ("tcp_listeners_missing_value", "tcp-listeners\n" + PORT,
     r"dpstackd\.conf:1: usage: tcp-listeners VALUE"),
    ("tcp_connections_below_minimum", "tcp-connections 15\n" + PORT,
     r"dpstackd\.conf:1: tcp-connections: '15' is not a count from 16 to 4194304"),
    ("tcp_connections_beyond_limit", "tcp-connections 4194305\n" + PORT,
     r"dpstackd\.conf:1: tcp-connections: '4194305' is not a count from 16 to 4194304"),
    ("neighbours_below_minimum", "neighbours 7\n" + PORT,
     r"dpstackd\.conf:1: neighbours: '7' is not a count from 8 to 1048576"),
    ("reassembly_datagrams_zero", "reassembly-datagrams 0\n" + PORT,
     r"dpstackd\.conf:1: reassembly-datagrams: '0' is not a count from 1 to 1048576"),
    ("reassembly_memory_below_one_datagram", "reassembly-memory 65536\n" + PORT,
     r"dpstackd\.conf:1: reassembly-memory: '65536' is not a size in bytes from 131072 to"),
    ("tcp_listeners_after_command", "workers 1\n" + PORT + ADDR + "tcp-listeners 64\n",
     r"dpstackd\.conf:4: 'tcp-listeners' must come before the first command"),
    ("no_port", "workers 1\n# nothing else\n", r"no 'port add NAME DEVICE' line"),
    ("nul_byte", b"workers 1\nport add port0 net_af_xdp0\x00,iface=x\n",
     r"dpstackd\.conf:2: NUL byte in line"),
    ("line_of_10k", "workers 1\n# " + "x" * 10240 + "\n" + PORT,
     r"dpstackd\.conf:2: line longer than \d+ bytes"),
    ("too_many_words", "workers 1\n" + PORT + "ip " + "x " * 100 + "\n",
     r"dpstackd\.conf:3: more than \d+ words"),
    # Past the EAL and the ports: the commands of the file, with their file and line.
    ("bad_address_line", "workers 1\n" + PORT + ADDR + "ip addr add 300.1.1.1/24 dev port0\n",
     r"dpstackd\.conf:4: '300\.1\.1\.1/24' is not an IPv4 address"),
    ("unknown_command_line", "workers 1\n" + PORT + "\n# comment\nfrobnicate now\n",
     r"dpstackd\.conf:5: unknown command 'frobnicate'"),
    ("address_on_unknown_port", "workers 1\n" + PORT + "ip addr add 10.0.0.2/24 dev port7\n",
     r"dpstackd\.conf:3: no port named 'port7'"),
    ("route_host_bits", "workers 1\n" + PORT + ADDR + "ip route add 10.1.1.1/24 via 10.0.0.1\n",
     r"dpstackd\.conf:4: '10\.1\.1\.1/24' has host bits set"),
    ("apps_limit_beyond_bound", "workers 1\n" + PORT + "apps limits socks-per-app 99999999\n",
     r"dpstackd\.conf:3: socks-per-app must be a number from 0 to 262144, not '99999999'"),
    ("apps_limit_unknown", "workers 1\n" + PORT + "apps limits sockets 10\n",
     r"dpstackd\.conf:3: unknown limit 'sockets'"),
    ("apps_limit_missing_value", "workers 1\n" + PORT + "apps limits apps-per-user\n",
     r"dpstackd\.conf:3: usage: apps limits"),
    ("interface_missing", "workers 1\nport add port0 net_af_xdp0,iface=dpinonexist0\n",
     r"port port0: no DPDK device for 'net_af_xdp0,iface=dpinonexist0'"),
    ("unknown_driver", "workers 1\nport add port0 net_bogus0,iface=x\n",
     r"EAL init failed"),
    ("ring_peer_missing", "workers 1\nport add r1 net_ring1,peer=r0\n",
     r"dpstackd\.conf:2: port r1: peer 'r0' is not another net_ring port of this config"),
    ("ring_peer_not_a_ring", "workers 1\n" + PORT + "port add r1 net_ring1,peer=port0\n",
     r"dpstackd\.conf:3: port r1: peer 'port0' is not another net_ring port"),
    ("ring_peer_itself", "workers 1\nport add r1 net_ring1,peer=r1\n",
     r"dpstackd\.conf:2: port r1: peer 'r1' is not another net_ring port"),
    ("ring_peer_taken", "workers 1\nport add r0 net_ring0\nport add r1 net_ring1,peer=r0\n"
     "port add r2 net_ring2,peer=r0\n", r"dpstackd\.conf:4: port r2: r0 is already in a ring pair"),
    ("ring_pair_other_args", "workers 1\nport add r0 net_ring0,nodeaction=x:0:CREATE\n"
     "port add r1 net_ring1,peer=r0\n", r"dpstackd\.conf:3: port r1: a ring pair takes no other"),
    ("peer_on_other_driver", "workers 1\nport add p0 net_af_xdp0,iface={iface},peer=p1\n",
     r"dpstackd\.conf:2: port p0: peer= joins two net_ring ports only"),
]


def _run_to_exit(lab, name, config):
    """Starts dpstackd on config and waits for it to give up; returns (status, output)."""
    before = topo.dpdk_runtime_files()
    d = topo.Daemon(os.path.join(lab.tmp, name), config)
    d.start(wait=False)
    lab.add_cleanup(d.stop_quietly)
    rc = d.wait_exit(timeout=30)
    log = d.log()
    assert not os.path.exists(d.sock), "control socket left behind"
    assert topo.dpdk_runtime_files() - before == set(), "DPDK files left behind"
    for marker in topo.CRASH_MARKERS:
        assert marker not in log, log
    return rc, log


@pytest.fixture
def veth(lab):
    return lab.add_peer("10.0.0.1")


@pytest.mark.parametrize("name,config,message", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_exits_nonzero_with_clear_message(lab, veth, name, config, message):
    if isinstance(config, str):
        config = config.format(iface=veth.root_ifname)
    rc, log = _run_to_exit(lab, name, config)
    assert rc != 0 and rc > 0, (rc, log)
    assert re.search(message, log), "expected /%s/ in:\n%s" % (message, log[-3000:])


def test_missing_config_file(lab):
    path = os.path.join(lab.tmp, "absent.conf")
    p = topo.run([topo.DPSTACKD, "-c", path], check=False,
                 env=dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "ctl.sock")))
    assert p.returncode == 1, p
    assert "absent.conf: cannot open: No such file or directory" in p.stderr, p
    assert not os.path.exists(os.path.join(lab.tmp, "ctl.sock"))


@pytest.mark.parametrize("args", [[], ["-c"], ["--bogus"], ["-c", "a.conf", "extra"]],
                         ids=["no_args", "c_without_file", "unknown_option", "extra_arg"])
def test_bad_command_line_exit_2_with_usage(lab, args):
    p = topo.run([topo.DPSTACKD] + args, check=False,
                 env=dict(os.environ, DPSTACK_CTL=os.path.join(lab.tmp, "ctl.sock")))
    assert p.returncode == 2, p
    assert "Usage: dpstackd" in p.stderr


def test_workers_more_than_cpus_clear_message(lab, veth):
    """More workers than lcores: the daemon should say so, not dump the EAL's usage."""
    config = "workers %d\n" % (os.cpu_count() + 6) + PORT.format(iface=veth.root_ifname)
    rc, log = _run_to_exit(lab, "workers_too_many", config)
    assert rc != 0
    ours = [line for line in log.splitlines() if line.startswith("dpstackd:")]
    assert any(re.search(r"worker|lcore", line) for line in ours), \
        "no dpstackd message about the workers:\n%s" % "\n".join(ours)
    assert "EAL common options" not in log and "Usage:" not in log, \
        "the EAL's usage text instead of a message:\n%s" % log[-1500:]


def test_help_documents_every_directive():
    p = topo.run([topo.DPSTACKD, "--help"])
    help_text = p.stdout
    # The directives config.c accepts, read from its source so that the test follows it.
    with open(os.path.join(topo.ROOT, "src", "ctl", "config.c")) as f:
        src = f.read()
    directives = set(re.findall(r'strcmp\(kw, "([a-z-]+)"\)', src))
    directives |= set(re.findall(r'^\t\{"([a-z-]+)", "', src, re.M))  # config_numbers
    assert {"eal", "workers", "port", "mbufs", "tcp-listeners"} <= directives, directives
    for kw in directives:
        assert re.search(r"^\s+%s\b" % re.escape(kw), help_text, re.M), \
            "directive '%s' not documented in --help:\n%s" % (kw, help_text)
    assert "port add NAME DEVICE" in help_text
    assert "dpstackctl command" in help_text
    for word in ("DPSTACK_CTL", "DPSTACK_SOCK", "SIGTERM", "--config", "--help"):
        assert word in help_text, word


def test_listener_table_size_from_config_refuses_beyond_it_counted(lab, veth):
    """`tcp-listeners 3`: each worker's listener table holds three addresses (the built-in
    services listen there too); a fourth listen is refused with ENOBUFS and counted, stats
    shows the use, and a closed listener gives its entry back. listeners-per-user's default
    follows the table (1/64 of it, at least one)."""
    d = lab.start_daemon("tcp-listeners 3\n" + PORT.format(iface=veth.root_ifname) + ADDR)
    for port in (7, 9, 19):
        d.ctl("service", "add", "echo", "tcp", port)
    worker = d.stats()["workers"][0]
    assert (worker["tcp_listeners"], worker["tcp_listeners_max"]) == (3, 3)
    assert "listener 3 of 3" in d.ctl("stats")
    r = d.ctl_result("service", "add", "echo", "tcp", 80)
    assert r.rc != 0 and "No buffer space available" in r.err, r
    st = d.stats()
    assert st["events"]["tcp.listen_table_full"] == 1
    assert st["workers"][0]["tcp_listeners"] == 3
    assert d.ctl("apps", "limits", json=True)["limits"]["listeners-per-user"] == 1
    d.ctl("service", "del", "tcp", 19)
    d.ctl("service", "add", "echo", "tcp", 80)
    assert d.stats()["workers"][0]["tcp_listeners"] == 3


def test_connection_and_neighbour_tables_sized_by_config_refuse_beyond_counted(lab, veth):
    """`tcp-connections 16` and `neighbours 8`: the tables hold that many and no more. The
    17th connection's SYN is dropped and counted (the kernel client never gets an answer)
    while 16 stay up, and a closed one gives its entry back; a 9th static neighbour is
    refused with the table's error. stats shows both tables' use."""
    d = lab.start_daemon("tcp-connections 16\nneighbours 8\n" +
                         PORT.format(iface=veth.root_ifname) + ADDR)
    d.ctl("service", "add", "echo", "tcp", 7)

    def connect(timeout):
        def make():
            c = socket.create_connection(("10.0.0.2", 7), timeout=timeout)
            c.settimeout(10)
            return c
        return topo.in_netns(veth.ns, make, timeout=timeout + 5)

    held = [connect(10) for _ in range(16)]
    try:
        for i, c in enumerate(held):
            c.sendall(b"x%d" % i)
            assert c.recv(16) == b"x%d" % i
        worker = d.stats()["workers"][0]
        assert (worker["tcp_conn_table"], worker["tcp_conn_table_max"]) == (16, 16)
        assert "connection 16 of 16" in d.ctl("stats")
        with pytest.raises(OSError):
            held.append(connect(2))
        assert d.stats()["events"]["tcp.conn_table_full"] >= 1
        held.pop().close()
        topo.wait_until(lambda: d.stats()["workers"][0]["tcp_conn_table"] == 15, 10,
                        what="the closed connection's entry back")
        c = connect(10)
        held.append(c)
        c.sendall(b"again")
        assert c.recv(16) == b"again"
    finally:
        for c in held:
            c.close()
    # The peer's own entry (it answered the SYN-ACKs) leaves seven more.
    used = d.stats()["workers"][0]["neighbours"]
    for i in range(8 - used):
        d.ctl("neigh", "add", "10.0.0.%d" % (100 + i), "lladdr", "02:00:00:00:01:%02x" % i,
              "dev", "port0")
    r = d.ctl_result("neigh", "add", "10.0.0.99", "lladdr", "02:00:00:00:01:99",
                     "dev", "port0")
    assert r.rc != 0 and "neigh add 10.0.0.99" in r.err, r
    worker = d.stats()["workers"][0]
    assert (worker["neighbours"], worker["neighbours_max"]) == (8, 8)


def test_reassembly_sized_by_config_still_takes_a_64k_datagram(lab, veth):
    """`reassembly-memory` at its minimum and `reassembly-datagrams 1` still reassemble
    the largest datagram (a 65507-byte ping whose reply comes back whole)."""
    d = lab.start_daemon("reassembly-memory 131072\nreassembly-datagrams 1\n" +
                         PORT.format(iface=veth.root_ifname) + ADDR)
    r = veth.ping("10.0.0.2", count=2, size=65507 - 8, interval=0.2, wait=3)
    assert r.received == 2, r
    st = d.stats()["reassembly"]
    assert (st["max_datagrams"], st["max_bytes"]) == (1, 131072)
    assert st["verdicts"]["done"] >= 2


def test_version():
    p = topo.run([topo.DPSTACKD, "--version"])
    assert re.match(r"dpstackd \d+\.\d+", p.stdout), p.stdout


def test_config_with_every_directive_comments_and_blank_lines_starts(lab, veth):
    config = "\n".join([
        "# a full config",
        "",
        "eal --log-level=pmd.net.af_xdp:notice   # EAL words",
        "workers 1",
        "mbufs 4095",
        "idle-sleep-us 50",
        "tcp-listeners 65536",
        "   port add   port0   net_af_xdp0,iface=%s  " % veth.root_ifname,
        "",
        "ip addr add 10.0.0.2/24 dev port0 # trailing comment",
        "ip route add 10.8.0.0/16 via 10.0.0.1",
        "neigh add 10.0.0.7 lladdr 02:00:00:00:00:07 dev port0",
        "neigh params reachable-ms 20000",
    ]) + "\n"
    d = lab.start_daemon(config)
    st = d.stats()
    assert st["mempool"]["size"] == 4095
    assert st["workers"][0]["tcp_listeners_max"] == 65536
    assert any(r["dst"] == "10.8.0.0/16" for r in d.ctl("ip", "route", "show", json=True))
    assert d.neigh("10.0.0.7")["state"] == "permanent"
    assert d.ctl("neigh", "params", json=True)["reachable-ms"] == 20000
    r = veth.ping("10.0.0.2", count=3, interval=0.05, wait=2)
    assert r.received == 3, r
