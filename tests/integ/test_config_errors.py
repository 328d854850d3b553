"""Config check and start-up errors that name their cause (issue 15).

`dpstackd --check-config FILE` reports every error of a file at its line without touching a
port; a config this machine cannot run fails before DPDK does, saying what would work, and
that figure is then tried and must work; the automatic EAL flags survive a memory option
in the `eal` line, so two daemons run side by side; `workers N` and a CPU list covering every
CPU start; a mistaken command blames the right word."""

import os
import re
import resource
import shutil
import subprocess

import pytest

import topo

PORT = "port add port0 net_af_xdp0,iface={iface}\n"
ADDR = "ip addr add 10.0.0.2/24 dev port0\n"


@pytest.fixture
def veth(lab):
    return lab.add_peer("10.0.0.1")


def check_config(lab, text, name="check.conf"):
    """Runs dpstackd --check-config on text; returns (status, stdout, stderr, path). It must
    leave no control socket and no DPDK files behind, and never crash."""
    path = os.path.join(lab.tmp, name)
    with open(path, "w") as f:
        f.write(text)
    sock = os.path.join(lab.tmp, "check-ctl.sock")
    before = topo.dpdk_runtime_files()
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False,
                 env=dict(os.environ, DPSTACK_CTL=sock,
                          DPSTACK_SOCK=os.path.join(lab.tmp, "check-app.sock")))
    assert not os.path.exists(sock)
    left = topo.dpdk_runtime_files() - before
    assert left == set(), "DPDK files left behind: %s" % left
    for marker in topo.CRASH_MARKERS:
        assert marker not in p.stderr + p.stdout, p
    return p.returncode, p.stdout, p.stderr, path


def start_to_exit(lab, name, config):
    """A daemon expected to give up at start: (status, output)."""
    d = topo.Daemon(os.path.join(lab.tmp, name), config)
    d.start(wait=False)
    lab.add_cleanup(d.stop_quietly)
    rc = d.wait_exit(timeout=30)
    log = d.log()
    for marker in topo.CRASH_MARKERS:
        assert marker not in log, log
    assert not os.path.exists(d.sock), "control socket left behind"
    return rc, log


def ours(log):
    """dpstackd's own lines of a log (not the EAL's or the PMDs')."""
    return "\n".join(line for line in log.splitlines() if line.startswith("dpstackd:"))


# --check-config

def test_check_config_reports_every_error_at_its_line_and_fails(lab):
    """Mistakes of every kind in one file, each reported as FILE:LINE: reason, in one run.
    The interface does not exist: the check touches no port."""
    text = "\n".join([
        "# every kind of mistake",                              # 1
        "workers %d" % (len(os.sched_getaffinity(0)) + 1),      # 2 more than the CPUs
        "eal --no-huge -m 16",                                  # 3 too little memory
        "mbufs 2047",                                           # 4 too few for af_xdp
        "port add port0 net_af_xdp0,iface=dpinonexistent0",     # 5
        "port add port/1 net_af_xdp1,iface=x",                  # 6 bad name
        "ip addr add 10.0.0.2/24 dev port0",                    # 7 good
        "ip stats",                                             # 8 no such subcommand
        "ip addr add 300.1.1.1/24 dev port0",                   # 9 bad address
        "ip route add 10.9.0.0/16 via 10.0.0.1",                # 10 good (needs line 7)
        "ip addr add 10.0.1.2/24 dev port9",                    # 11 no such port
        "mbufs 4096",                                           # 12 after a command
        "link set port0 mtu 99999",                             # 13 out of range
        "service add echo tcp 7",                               # 14 good
        "frobnicate",                                           # 15 unknown command
    ]) + "\n"
    rc, out, err, path = check_config(lab, text)
    assert rc == 1, (rc, out, err)
    expected = {
        2: r"workers \d+: this process may use \d+ CPU\(s\).*use 'workers \d+' or fewer",
        3: r"eal -m 16 is too little memory: .*use -m \d+ or more",
        4: r"mbufs 2047 is too few: each net_af_xdp queue takes 2048 mbufs .*use mbufs \d+",
        6: r"port name 'port/1'",
        8: r"unknown ip subcommand 'stats' \(valid: addr, route, forwarding, reassembly\)",
        9: r"'300\.1\.1\.1/24' is not an IPv4 address",
        11: r"no port named 'port9'",
        12: r"'mbufs' must come before the first command",
        13: r"mtu must be a number from 68 to \d+, not '99999'",
        15: r"unknown command 'frobnicate'",
    }
    for line, reason in expected.items():
        assert re.search(r"^%s:%d: %s" % (re.escape(path), line, reason), err, re.M), \
            "line %d: /%s/ not in:\n%s" % (line, reason, err)
    reported = [int(m) for m in re.findall(r"^%s:(\d+): " % re.escape(path), err, re.M)]
    assert reported == sorted(expected), (reported, err)     # all, in the file's order
    assert "%s: %d error(s)" % (path, len(expected)) in err
    assert "ok" not in out


def test_check_config_good_file_passes_with_summary(lab):
    text = "\n".join([
        "eal --no-huge -m 512",
        "workers %d" % len(os.sched_getaffinity(0)),
        "port add port0 net_af_xdp0,iface=dpinonexistent0",
        "ip addr add 10.0.0.2/24 dev port0",
        "ip route add default via 10.0.0.1",
        "service add echo tcp 7",
        "tcp params rto-min-ms 200",
        "apps limits socks-per-app 4096",
        "link set port0 mtu 1500",
        "link show",
    ]) + "\n"
    rc, out, err, path = check_config(lab, text)
    assert rc == 0, (out, err)
    assert out == "%s: ok: 1 port(s), %d worker(s), 7 command(s)\n" % (
        path, len(os.sched_getaffinity(0))), out


def test_check_config_sees_earlier_lines(lab):
    """A route through a gateway needs the address of line 2 first; a removed address is
    gone for the lines after it."""
    text = PORT.format(iface="x") + "\n".join([
        "ip route add 10.9.0.0/16 via 10.0.0.1",
        ADDR.strip(),
        "ip route add 10.9.0.0/16 via 10.0.0.1",
        "ip addr del 10.0.0.2/24 dev port0",
        "ip addr del 10.0.0.2/24 dev port0",
    ]) + "\n"
    rc, out, err, path = check_config(lab, text)
    assert rc == 1
    reported = [int(m) for m in re.findall(r"^%s:(\d+): " % re.escape(path), err, re.M)]
    assert reported == [2, 6], err


def test_check_config_missing_file(lab):
    path = os.path.join(lab.tmp, "absent.conf")
    p = topo.run([topo.DPSTACKD, "--check-config", path], check=False)
    assert p.returncode == 1, p
    assert "%s: cannot open: No such file or directory" % path in p.stderr, p


@pytest.mark.parametrize("args", [["--check-config"], ["--check-config", "a", "-c", "b"]],
                         ids=["without_file", "with_config_too"])
def test_check_config_bad_command_line_exit_2(args):
    p = topo.run([topo.DPSTACKD] + args, check=False)
    assert p.returncode == 2, p
    assert "Usage: dpstackd" in p.stderr


def test_help_documents_check_config_and_its_examples_check_ok(lab):
    """--help documents --check-config, and its example config passes the check on this
    machine (a 2-CPU one in CI)."""
    help_text = topo.run([topo.DPSTACKD, "--help"]).stdout
    assert "--check-config FILE" in help_text
    m = re.search(r"^A config .*?\n((?:  \S.*\n)+)", help_text, re.M)
    assert m, help_text
    lines = [re.sub(r"\s+#.*", "", line).strip() for line in m.group(1).splitlines()]
    rc, out, err, _ = check_config(lab, "\n".join(lines) + "\n")
    assert rc == 0, (lines, err)
    alternative = [line.replace("workers 2", "workers 0,1") for line in lines]
    rc, out, err, _ = check_config(lab, "\n".join(alternative) + "\n")
    assert rc == 0, (alternative, err)


# Start-up errors: the cause and the fix, and the fix works.

def test_too_little_memory_names_the_minimum_which_starts(lab, veth):
    port = PORT.format(iface=veth.root_ifname)
    rc, log = start_to_exit(lab, "m24", "eal --no-huge -m 24\n" + port)
    assert rc == 1, log
    m = re.search(r"dpstackd\.conf:1: eal -m 24 is too little memory: 1 worker\(s\) need "
                  r"about (\d+) MB: \d+ MB for the daemon, \d+ MB for each worker's tables "
                  r"and \d+ MB for 'mbufs 16383'; use -m (\d+) or more", log)
    assert m, ours(log)
    assert "memory allocation failed" not in log
    d = lab.start_daemon("eal --no-huge -m %s\n" % m.group(2) + port + ADDR, name="minimum")
    assert veth.ping("10.0.0.2", count=1, wait=2).received == 1


def test_too_few_mbufs_for_af_xdp_names_the_minimum_which_starts(lab, veth):
    port = PORT.format(iface=veth.root_ifname)
    rc, log = start_to_exit(lab, "mbufs", "mbufs 2047\n" + port)
    assert rc == 1, log
    m = re.search(r"dpstackd\.conf:1: mbufs 2047 is too few: each net_af_xdp queue takes 2048 "
                  r"mbufs for its AF_XDP fill ring when it is set up \(2048 here, with port "
                  r"port0\); use mbufs (\d+) or more", log)
    assert m, ours(log)
    assert "Invalid argument" not in log
    lab.start_daemon("mbufs %s\n" % m.group(1) + port + ADDR, name="minimum")


@pytest.mark.parametrize("eal", ["--no-huge -m 512", "-m 512", "--file-prefix dpitest%x"],
                         ids=["no_huge_and_size", "size_only", "file_prefix"])
def test_memory_option_keeps_automatic_flags_two_daemons_side_by_side(lab, eal):
    """A memory option in the eal line used to drop the automatic --no-shconf, and the
    second daemon failed with "EAL init failed: Success"; --file-prefix without hugepages
    failed on hugepage information. Both daemons must now run and answer."""
    if "%x" in eal:
        eal = eal % os.getpid()
        lab.add_cleanup(lambda: shutil.rmtree("/var/run/dpdk/dpitest%x" % os.getpid(),
                                              ignore_errors=True))
    a, b = lab.add_peer("10.0.0.1"), lab.add_peer("10.0.0.1")
    if "file-prefix" in eal:
        # Daemons of one prefix share its config: the second has its own prefix.
        eal_b = eal + "b"
        lab.add_cleanup(lambda: shutil.rmtree("/var/run/dpdk/dpitest%xb" % os.getpid(),
                                              ignore_errors=True))
    else:
        eal_b = eal
    da = lab.start_daemon("eal %s\n" % eal + PORT.format(iface=a.root_ifname) + ADDR, name="a")
    db = lab.start_daemon("eal %s\n" % eal_b + PORT.format(iface=b.root_ifname) + ADDR,
                          name="b")
    assert a.ping("10.0.0.2", count=1, wait=2).received == 1
    assert b.ping("10.0.0.2", count=1, wait=2).received == 1
    assert da.alive() and db.alive()


def test_second_daemon_on_the_same_file_prefix_names_the_holder(lab):
    prefix = "dpitest%xs" % os.getpid()
    lab.add_cleanup(lambda: shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True))
    a, b = lab.add_peer("10.0.0.1"), lab.add_peer("10.0.0.1")
    first = lab.start_daemon("eal --file-prefix %s\n" % prefix +
                             PORT.format(iface=a.root_ifname), name="first")
    rc, log = start_to_exit(lab, "second", "eal --file-prefix %s\n" % prefix +
                            PORT.format(iface=b.root_ifname))
    assert rc == 1
    assert "EAL init failed: Success" not in log
    assert ("dpstackd: process %d, another DPDK primary process, holds the EAL's shared "
            "config of --file-prefix %s: give each daemon its own --file-prefix, or add "
            "--no-shconf" % (first.proc.pid, prefix)) in log, ours(log)
    assert first.alive()


def free_hugepages():
    with open("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") as f:
        return int(f.read())


def test_hugepages_asked_but_none_free_names_the_fix(lab, veth):
    """--socket-mem asks for hugepages: without any free, say how to reserve them or to run
    without, instead of the EAL's "Cannot get hugepage information"."""
    if free_hugepages() != 0:
        pytest.skip("this machine has free hugepages")
    rc, log = start_to_exit(lab, "hugepages", "eal --socket-mem=512\n" +
                            PORT.format(iface=veth.root_ifname))
    assert rc == 1
    assert re.search(r"dpstackd\.conf:1: the eal line asks for hugepages but none are free: "
                     r"reserve them \(echo \d+ > /proc/sys/vm/nr_hugepages\) or add --no-huge",
                     log), ours(log)
    assert "Cannot get hugepage information" not in log


def test_eal_failure_says_more_than_success(lab, veth):
    rc, log = start_to_exit(lab, "bogus", "port add port0 net_bogus0,iface=x\n")
    assert rc == 1
    assert re.search(r"dpstackd: EAL init failed: \S", log), ours(log)
    assert "EAL init failed: Success" not in log


def test_workers_on_every_cpu_start_and_answer(lab, veth):
    """`workers N` with N the CPUs this process may use, and the list of those CPUs: the
    control thread shares a worker's CPU (the help's examples, on a 2-CPU machine)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    port = PORT.format(iface=veth.root_ifname)
    for name, workers in (("count", str(len(cpus))), ("list", ",".join(map(str, cpus)))):
        d = lab.start_daemon("workers %s\n" % workers + port + ADDR, name=name)
        shown = d.ctl("lcore", "show", json=True)
        assert len(shown["workers"]) == len(cpus), shown
        assert veth.ping("10.0.0.2", count=3, interval=0.05, wait=2).received == 3
        d.stop()


def test_workers_beyond_cpus_says_what_works(lab, veth):
    n = len(os.sched_getaffinity(0))
    rc, log = start_to_exit(lab, "toomany", "workers %d\n" % (n + 1) +
                            PORT.format(iface=veth.root_ifname))
    assert rc == 1
    assert ("dpstackd.conf:1: workers %d: this process may use %d CPU(s), one for each "
            "worker: use 'workers %d' or fewer" % (n + 1, n, n)) in log, ours(log)


def test_worker_cpu_not_available_says_which(lab, veth):
    absent = max(os.sched_getaffinity(0)) + 1
    rc, log = start_to_exit(lab, "badcpu", "workers %d,\n" % absent +
                            PORT.format(iface=veth.root_ifname))
    assert rc == 1
    assert re.search(r"dpstackd\.conf:1: workers: CPU %d is not one this process may use "
                     r"\(\d+ available" % absent, log), ours(log)


# Command errors blame the right word.

@pytest.mark.parametrize("words,message", [
    (["ip", "stats"], "unknown ip subcommand 'stats' (valid: addr, route, forwarding, "
                      "reassembly)"),
    (["ip", "addr", "flush"], "unknown ip addr subcommand 'flush' (valid: add, del, show, dhcp)"),
    (["ip", "route", "flush"], "unknown ip route subcommand 'flush' (valid: add, del, show)"),
    (["neigh", "frob"], "unknown neigh subcommand 'frob' (valid: show, add, del, flush, "
                        "params)"),
    (["ip"], "'ip' needs a subcommand (valid: addr, route, forwarding, reassembly)"),
    (["frobnicate"], "unknown command 'frobnicate' (valid: help, link, ip, neigh, stats,"),
], ids=["ip_stats", "ip_addr_flush", "ip_route_flush", "neigh_frob", "ip_alone", "unknown"])
def test_mistaken_command_blames_the_right_word(one_port, words, message):
    d = one_port.daemon
    for json in (False, True):
        r = d.ctl_result(*words, json=json)
        assert r.rc != 0, r
        assert message in r.err, r
    assert d.ctl("ip", "addr", "show")   # and the daemon still serves


# The kernel end of a veth with TX checksum offload on.

def test_veth_peer_with_tx_offload_in_this_namespace_warned_at_start(lab):
    """Both ends here: the daemon asks the kernel end (ETHTOOL_GTXCSUM) and names the fix."""
    base = "dpi%xo" % os.getpid()
    dpdk_end, kernel_end = base + "d", base + "k"
    topo.run(["ip", "link", "add", dpdk_end, "type", "veth", "peer", "name", kernel_end])
    lab.add_cleanup(lambda: topo.run(["ip", "link", "del", dpdk_end], check=False))
    topo.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % dpdk_end])
    topo.run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % kernel_end])
    topo.run(["ethtool", "-K", kernel_end, "tx", "on"])
    for ifname in (kernel_end, dpdk_end):
        topo.run(["ip", "link", "set", ifname, "up"])
    d = lab.start_daemon(PORT.format(iface=dpdk_end) + ADDR)
    assert ("dpstackd: port port0: %s, the kernel end of veth %s, has TX checksum offload "
            "on: its TCP and UDP frames arrive with partial checksums, which the stack "
            "drops; run 'ethtool -K %s tx off'" % (kernel_end, dpdk_end, kernel_end)) \
        in d.log(), ours(d.log())
    topo.run(["ethtool", "-K", kernel_end, "tx", "off"])
    d.stop()
    d = lab.start_daemon(PORT.format(iface=dpdk_end) + ADDR, name="fixed")
    assert "checksum offload" not in d.log(), ours(d.log())


def test_veth_peer_with_tx_offload_elsewhere_warned_at_first_bad_checksum(lab, veth):
    """The kernel end in its own namespace cannot be asked: its first TCP segments fail the
    checksum (counted), the daemon warns once with the fix, and the fix makes TCP work."""
    veth.run("ethtool", "-K", veth.ifname, "tx", "on")
    d = lab.start_daemon(PORT.format(iface=veth.root_ifname) + ADDR +
                         "service add echo tcp 7\n")
    assert veth.ping("10.0.0.2", count=1, wait=2).received == 1   # ICMP is not offloaded
    hello = "import socket; s = socket.create_connection(('10.0.0.2', 7), timeout=3); " \
            "s.sendall(b'hi'); print(s.recv(2).decode())"
    r = veth.run("/usr/bin/python3", "-c", hello, check=False)
    assert r.returncode != 0, r                  # the SYNs were dropped
    assert d.counter("tcp.bad_checksum") > 0
    topo.wait_until(lambda: "dropped for a bad checksum" in d.log(), timeout=10,
                    what="the checksum warning")
    assert re.search(r"dpstackd: \d+ TCP/UDP segment\(s\) dropped for a bad checksum; port "
                     r"port0 is on veth %s, whose kernel end \(ifindex \d+ in another "
                     r"network namespace\) may have TX checksum offload on \(partial "
                     r"checksums\): run 'ethtool -K <that interface> tx off' in its "
                     r"namespace" % veth.root_ifname, d.log()), ours(d.log())
    veth.run("ethtool", "-K", veth.ifname, "tx", "off")
    assert veth.run("/usr/bin/python3", "-c", hello).stdout.strip() == "hi"
    assert ours(d.log()).count("dropped for a bad checksum") == 1


# Capabilities: the missing one named, before any driver fails.

def start_without_caps(lab, name, config, drop):
    """A daemon run by capsh with the capabilities drop (comma-separated) gone from every
    set; returns the Daemon, started (not waited for)."""
    d = topo.Daemon(os.path.join(lab.tmp, name), config)
    d._log = open(d.log_path, "w")
    d.proc = subprocess.Popen(
        topo.dying_with_parent(["capsh", "--drop=" + drop, "--", "-c", 'exec "$0" -c "$1"',
                                topo.DPSTACKD, d.config_path]),
        stdout=d._log, stderr=subprocess.STDOUT, env=d.env, start_new_session=True)
    lab.daemons.append(d)
    lab.add_cleanup(d.stop_quietly)
    return d


@pytest.mark.parametrize("driver,drop,named", [
    ("net_af_xdp", "cap_sys_admin", "CAP_SYS_ADMIN"),
    ("net_af_xdp", "cap_net_raw,cap_net_admin", "CAP_NET_RAW, CAP_NET_ADMIN"),
    ("net_af_xdp", "cap_ipc_lock", "CAP_IPC_LOCK"),
    ("net_af_packet", "cap_net_raw", "CAP_NET_RAW"),
    ("net_af_packet", "cap_net_admin", "CAP_NET_ADMIN"),
], ids=["xdp_sys_admin", "xdp_net_raw_admin", "xdp_ipc_lock", "packet_net_raw",
        "packet_net_admin"])
def test_missing_capability_named(lab, veth, driver, drop, named):
    config = "port add port0 %s0,iface=%s\n" % (driver, veth.root_ifname) + ADDR
    d = start_without_caps(lab, "nocap", config, drop)
    rc = d.wait_exit(timeout=30)
    log = d.log()
    assert rc == 1, log
    assert ("dpstackd.conf:1: port port0 (%s0) needs capabilities this process lacks: %s; "
            "run as root or grant them" % (driver, named)) in log, ours(log)
    assert "queue 0 setup" not in log and "no DPDK device" not in log, log
    for marker in topo.CRASH_MARKERS:
        assert marker not in log, log


def test_af_xdp_without_ipc_lock_runs_when_memlock_holds_the_pool(lab, veth):
    """Without CAP_IPC_LOCK the UMEM must fit under RLIMIT_MEMLOCK: a pool that does starts
    and answers."""
    memlock = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    if memlock == resource.RLIM_INFINITY:
        pytest.skip("RLIMIT_MEMLOCK is unlimited")
    mbufs = memlock // 2560
    if mbufs < 2048:
        pytest.skip("RLIMIT_MEMLOCK holds too few mbufs for af_xdp")
    d = start_without_caps(lab, "memlock", "mbufs %d\n" % mbufs +
                           PORT.format(iface=veth.root_ifname) + ADDR, "cap_ipc_lock")
    d.wait_ready()
    assert veth.ping("10.0.0.2", count=1, wait=2).received == 1
