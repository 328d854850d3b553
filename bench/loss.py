#!/usr/bin/env python3
"""One TCP stream under random loss: dpstack sending (and receiving) against the Linux
kernel on the same path, in one invocation, alternating run by run, medians and ratios.

    dpstack send: iperf3 -c (LD_PRELOAD, dpstackd 1 worker, net_af_xdp on blos0)
                  --veth--> router (namespace blosm) --veth--> iperf3 -s (namespace blosr)
    kernel send:  iperf3 -c (namespace blosk) --veth--> router (blosm) --veth--> blosr
                  once with TSO/GSO/GRO off on its veth, once with the kernel's defaults
    dpstack recv: iperf3 -c (blosr) --> blosm --> iperf3 -s (LD_PRELOAD) on dpstackd
    kernel recv:  iperf3 -c (blosr) --> blosm --> iperf3 -s (namespace blosk)

The loss: nftables drops data segments (IP length above 200 bytes: no SYN, FIN or pure
ACK) at random (numgen random mod 1000 < 10 * percent): entering namespace blosr (input)
for the sending rows, in the router as they come from blosr (forward) for the receiving
rows; the rule is the same for both contenders. The router's veth towards blosr has TSO/GSO
off and blosr's veth has GSO off, so the kernel's 64 KB TSO bursts are cut into wire
segments before the rule sees them: each drop takes one segment, as on a wire, whatever the
sender's offloads. (Never in the sender's own output hook: TCP takes that for a local
error and sends again, no loss.)

Also: the time to move 20 MiB at 5 % loss (a one-shot receiver in blosr timing accept to
EOF; a small Python sender, preloaded on dpstack or in blosk on the kernel). After each
dpstack run the daemon's TCP loss counters (tcp.rto, tcp.retrans_segs, tcp.fast_retrans and
any named *rack*, *tlp*, *dsack*, *undo*) are read (dpstackctl -j stats) and their deltas
printed beside the throughput: RTOs against fast repairs.

Figures never fail anything: a run that fails or times out is left out (printed "-"), a
congestion control dpstack refuses prints "n/a".

Usage: bench/loss.py [--runs N] [--seconds S] [--loss 0.5,1,2,5] [--cc cubic,bbr]
                     [--bulk-mb 20] [--bulk-loss 5] [--json PATH]   (as root, after a build)
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
PRELOAD = os.path.join(BUILD, "lib", "preload", "libdpstack_preload.so")
DPSTACKD = os.path.join(BUILD, "dpstackd")
CTL = os.path.join(BUILD, "tools", "dpstackctl", "dpstackctl")

KNS, MNS, RNS = "blosk", "blosm", "blosr"   # kernel contender, router, kernel peer
NAMESPACES = (KNS, MNS, RNS)
ROOT_DEV = "blos0"                          # dpstackd's port (root namespace)
STACK_IP, STACK_GW = "10.93.1.2", "10.93.1.1"
KERNEL_IP, KERNEL_GW = "10.93.2.2", "10.93.2.1"
PEER_IP, PEER_GW = "10.93.3.2", "10.93.3.1"
IPERF_PORT, BULK_PORT = 5201, 5301
NFT_TABLE = "blosloss"
# Counters shown beside dpstack's figures: these, and every counter whose name has a word
# below (so counters added later, RACK-TLP's among them, show up without a change here).
LOSS_COUNTERS = ("tcp.rto", "tcp.retrans_segs", "tcp.fast_retrans")
LOSS_WORDS = ("rack", "tlp", "dsack", "undo")
RECV_WORDS = ("ooo",)                       # also shown when dpstack receives
# The kernel sender's own (its namespace's /proc/net/snmp and netstat), for comparison.
KERNEL_COUNTERS = ("TCPTimeouts", "RetransSegs", "TCPFastRetrans", "TCPSackRecovery",
                   "TCPLossProbes", "TCPLossProbeRecovery", "TCPDSACKRecv", "TCPDSACKUndo",
                   "TCPLossUndo")

# Arms of one (cc, loss) cell, in the order they alternate.
ARMS = ("dpstack_send", "kernel_send_nooffload", "kernel_send_defaults",
        "dpstack_recv", "kernel_recv")
ARM_TITLES = {
    "dpstack_send": "dpstack sends",
    "kernel_send_nooffload": "kernel sends, TSO/GSO/GRO off",
    "kernel_send_defaults": "kernel sends, offload defaults",
    "dpstack_recv": "dpstack receives",
    "kernel_recv": "kernel receives",
}

SENDER_PY = r"""# blos-loss sender
import socket, sys
ip, port, size, cc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket()
try:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
except OSError as e:
    print("cc refused: %s" % e)
    sys.exit(3)
s.connect((ip, port))
buf = memoryview(bytearray(1 << 16))
left = size
while left:
    n = s.send(buf[:min(left, len(buf))])
    left -= n
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
s.close()
"""

RECEIVER_PY = r"""# blos-loss receiver
import socket, sys, time
port, size = int(sys.argv[1]), int(sys.argv[2])
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", port))
l.listen(1)
print("ready", flush=True)
c, _ = l.accept()
t0 = time.monotonic()
got = 0
buf = bytearray(1 << 18)
while True:
    n = c.recv_into(buf)
    if not n:
        break
    got += n
t = time.monotonic() - t0
c.close()
print("%d %.6f" % (got, t), flush=True)
"""


def sh(*cmd, check=True, timeout=60, env=None):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=check,
                          timeout=timeout, env=env)


def ns_argv(ns, argv):
    return ["ip", "netns", "exec", ns] + [str(a) for a in argv]


def run_to_end(argv, timeout, env=None):
    """Runs argv in its own session; kills the whole group at the timeout. Returns
    (returncode or None on timeout, stdout, stderr)."""
    p = subprocess.Popen([str(a) for a in argv], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    note_pid(p)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        kill_group(p)
        out, err = p.communicate()
        return None, out, err


def kill_group(p):
    if p.poll() is not None:
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


PIDFILE = "/tmp/dps-bench-loss.pids"   # what a run started, for the next to clean up


def note_pid(p):
    with open(PIDFILE, "a") as f:
        f.write("%d\n" % p.pid)


def kill_leftovers():
    """Ends the daemon and servers a killed run left (their process groups, by the PIDs it
    noted), when they still are what it started."""
    try:
        with open(PIDFILE) as f:
            pids = [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pids = []
    for pid in pids:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if ("dpstackd" in cmd and "dps-bench-loss." in cmd) or "# blos-loss" in cmd or \
                (cmd.startswith("iperf3 ") and str(IPERF_PORT) in cmd):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        os.unlink(PIDFILE)
    except OSError:
        pass


def remove_topology():
    """Removes what this benchmark creates, left over or not (names unique to it)."""
    sh("ip", "link", "del", ROOT_DEV, check=False)
    for ns in NAMESPACES:
        sh("ip", "netns", "del", ns, check=False)


class Lab:
    def __init__(self, work):
        self.work = work
        self.daemon = None
        self.servers = {}     # name -> Popen
        self.env = dict(os.environ, DPSTACK_CTL=os.path.join(work, "ctl.sock"),
                        DPSTACK_SOCK=os.path.join(work, "app.sock"))
        self.kernel_defaults = ""
        self.notes = []       # what went wrong on the way (dpstackd restarts)

    # -- topology ---------------------------------------------------------------------
    def topology(self):
        for ns in NAMESPACES:
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        links = (
            # (end A, namespace A or None for the root one, end B, namespace B)
            (ROOT_DEV, None, "blos0p", MNS),
            ("bloskv", KNS, "bloskm", MNS),
            ("blosrm", MNS, "blosrv", RNS),
        )
        for a, nsa, b, nsb in links:
            sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
            if nsa:
                sh("ip", "link", "set", a, "netns", nsa)
            sh("ip", "link", "set", b, "netns", nsb)
        for ns, dev, addr in ((MNS, "blos0p", STACK_GW), (MNS, "bloskm", KERNEL_GW),
                              (MNS, "blosrm", PEER_GW), (KNS, "bloskv", KERNEL_IP),
                              (RNS, "blosrv", PEER_IP)):
            sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "link", "set", ROOT_DEV, "up")
        sh("ip", "-n", KNS, "route", "add", "default", "via", KERNEL_GW)
        sh("ip", "-n", RNS, "route", "add", "default", "via", PEER_GW)
        sh("ip", "netns", "exec", MNS, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # Each kernel connection starts afresh, as dpstack's do: no ssthresh or RTT cached
        # from the previous (lossy) run towards the same address.
        for ns in (KNS, RNS):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        # dpstack receives through AF_XDP: the frames must carry their checksums.
        sh("ethtool", "-K", ROOT_DEV, "tx", "off")
        sh("ip", "netns", "exec", MNS, "ethtool", "-K", "blos0p", "tx", "off")
        # The wire: segments leave the router one by one, and blosr sends no GSO bursts,
        # so each drop in blosr takes one segment.
        sh("ip", "netns", "exec", MNS, "ethtool", "-K", "blosrm", "tso", "off", "gso", "off")
        sh("ip", "netns", "exec", RNS, "ethtool", "-K", "blosrv", "tso", "off", "gso", "off",
           "gro", "off")
        self.kernel_defaults = self.offloads()
        self.nft_setup()

    def offloads(self):
        out = sh("ip", "netns", "exec", KNS, "ethtool", "-k", "bloskv").stdout
        got = {}
        for key, name in (("tcp-segmentation-offload", "tso"),
                          ("generic-segmentation-offload", "gso"),
                          ("generic-receive-offload", "gro")):
            m = re.search(r"^%s: (on|off)" % key, out, re.M)
            if m:
                got[name] = m.group(1)
        return got

    def set_kernel_offloads(self, defaults):
        want = self.kernel_defaults if defaults else {"tso": "off", "gso": "off", "gro": "off"}
        args = [x for kv in want.items() for x in kv]
        if args:
            sh("ip", "netns", "exec", KNS, "ethtool", "-K", "bloskv", *args, check=False)

    # Where segments are dropped: entering blosr (blosr receives), and in the router as they
    # come from blosr (blosr sends). Not in the sender's own stack: a drop in its output
    # hook is a local error that TCP retries, not a loss.
    LOSS_CHAINS = ((RNS, "data_in", "input", ""),
                   (MNS, "data_fwd", "forward", 'iifname "blosrm" '))

    def nft_setup(self):
        for ns, chain, hook, _ in self.LOSS_CHAINS:
            self.nft(ns, "add table ip %s" % NFT_TABLE)
            self.nft(ns, "add chain ip %s %s { type filter hook %s priority 0 ; "
                     "policy accept ; }" % (NFT_TABLE, chain, hook))

    def nft(self, ns, rule):
        return sh("ip", "netns", "exec", ns, "nft", rule)

    def set_loss(self, percent):
        """Drops percent % of the data segments sent to and by blosr."""
        per_mille = int(round(percent * 10))
        for ns, chain, _, match in self.LOSS_CHAINS:
            self.nft(ns, "flush chain ip %s %s" % (NFT_TABLE, chain))
            if per_mille > 0:
                self.nft(ns, "add rule ip %s %s %smeta l4proto tcp ip length > 200 "
                         "numgen random mod 1000 < %d counter drop" % (NFT_TABLE, chain, match,
                                                                       per_mille))

    def nft_drops(self):
        total = 0
        for ns, _, _, _ in self.LOSS_CHAINS:
            out = sh("ip", "netns", "exec", ns, "nft", "list", "table", "ip", NFT_TABLE,
                     check=False).stdout
            total += sum(int(x) for x in re.findall(r"counter packets (\d+)", out))
        return total

    # -- dpstackd -----------------------------------------------------------------------
    def start_daemon(self):
        conf = os.path.join(self.work, "dpstackd.conf")
        cpu = sorted(os.sched_getaffinity(0))[0]
        with open(conf, "w") as f:
            f.write("eal --lcores=0@%d,1@%d\nworkers 1\n" % (cpu, cpu))
            f.write("port add port0 net_af_xdp0,iface=%s\n" % ROOT_DEV)
            f.write("ip addr add %s/24 dev port0\n" % STACK_IP)
            f.write("ip route add default via %s\n" % STACK_GW)
        log = open(os.path.join(self.work, "dpstackd.log"), "w")
        self.daemon = subprocess.Popen([DPSTACKD, "-c", conf], env=self.env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        note_pid(self.daemon)
        for _ in range(200):
            if sh(CTL, "stats", check=False, env=self.env).returncode == 0:
                break
            if self.daemon.poll() is not None:
                break
            time.sleep(0.05)
        else:
            sys.exit("dpstackd did not start; see %s/dpstackd.log" % self.work)
        if self.daemon.poll() is not None:
            sys.exit("dpstackd exited; see %s/dpstackd.log" % self.work)
        for ns in (RNS, KNS):
            for _ in range(50):
                r = sh("ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", STACK_IP,
                       check=False)
                if "1 received" in r.stdout:
                    break
            else:
                sys.exit("the stack does not answer pings from %s" % ns)

    def ensure_daemon(self):
        """Restarts dpstackd (and the iperf3 server on it) when it has died, noting its exit
        status and the end of its log; the run goes on."""
        if self.daemon is None or self.daemon.poll() is None:
            return
        rc = self.daemon.returncode
        try:
            with open(os.path.join(self.work, "dpstackd.log"), errors="replace") as f:
                tail = f.read()[-2000:]
        except OSError:
            tail = ""
        self.notes.append({"dpstackd_exit": rc, "log_tail": tail})
        print("  note: dpstackd exited (%s); restarted. Its log ends:\n    %s" % (
            "signal %d" % -rc if rc < 0 else "status %d" % rc,
            "\n    ".join(tail.strip().splitlines()[-5:])), flush=True)
        os.rename(os.path.join(self.work, "dpstackd.log"),
                  os.path.join(self.work, "dpstackd.log.%d" % len(self.notes)))
        p = self.servers.pop("dpstack", None)
        if p is not None:
            kill_group(p)
        self.daemon = None
        self.start_daemon()
        self.start_server("dpstack")

    def stop_daemon(self):
        if self.daemon is not None:
            kill_group(self.daemon)
            self.daemon = None

    def counters(self):
        """The daemon's TCP counters summed over workers, {} when unreadable."""
        r = sh(CTL, "-j", "stats", check=False, env=self.env, timeout=10)
        try:
            st = json.loads(r.stdout)
        except ValueError:
            return {}
        total = {}

        def walk(node, prefix):
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, prefix + "." + k if prefix else k)
            elif isinstance(node, (int, float)) and not isinstance(node, bool):
                if prefix.startswith("tcp."):
                    total[prefix] = total.get(prefix, 0) + node

        # The daemon's totals ("events"), else the sum of its workers'.
        if isinstance(st, dict) and isinstance(st.get("events"), dict):
            walk(st["events"], "")
        elif isinstance(st, dict):
            for w in st.get("workers", []):
                walk(w.get("events", {}), "")
        return total

    @staticmethod
    def kernel_counters(ns):
        """KERNEL_COUNTERS of namespace ns."""
        out = sh("ip", "netns", "exec", ns, "cat", "/proc/net/snmp", "/proc/net/netstat",
                 check=False).stdout.splitlines()
        got = {}
        for names, values in zip(out[::2], out[1::2]):
            for n, v in zip(names.split()[1:], values.split()[1:]):
                if n in KERNEL_COUNTERS and n not in got:
                    got[n] = int(v)
        return got

    # -- servers --------------------------------------------------------------------------
    def start_server(self, name):
        """iperf3 servers kept up across runs: "peer" in blosr, "kernel" in blosk,
        "dpstack" under the shim on dpstackd."""
        argv = ["iperf3", "-s", "-4", "-p", IPERF_PORT]
        env = None
        if name == "peer":
            argv = ns_argv(RNS, argv)
        elif name == "kernel":
            argv = ns_argv(KNS, argv)
        else:
            env = dict(self.env, LD_PRELOAD=PRELOAD)
        p = subprocess.Popen([str(a) for a in argv], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.servers[name] = p
        note_pid(p)
        time.sleep(0.5)

    def restart_server(self, name):
        p = self.servers.pop(name, None)
        if p is not None:
            kill_group(p)
        self.start_server(name)

    def close(self):
        for p in self.servers.values():
            kill_group(p)
        self.servers = {}
        self.stop_daemon()
        remove_topology()
        try:
            os.unlink(PIDFILE)
        except OSError:
            pass

    # -- one run --------------------------------------------------------------------------
    def iperf(self, arm, cc, secs):
        """One iperf3 run of arm; returns a record with Mbit/s (None on failure), "n/a" when
        the congestion control is refused, and dpstack's counter deltas."""
        client = ["iperf3", "-c", None, "-p", IPERF_PORT, "-t", secs, "-J", "-C", cc]
        env = None
        if arm == "dpstack_send":
            client[2] = PEER_IP
            env = dict(self.env, LD_PRELOAD=PRELOAD)
            server = "peer"
        elif arm.startswith("kernel_send"):
            self.set_kernel_offloads(arm.endswith("defaults"))
            client[2] = PEER_IP
            client = ns_argv(KNS, client)
            server = "peer"
        else:
            client[2] = STACK_IP if arm == "dpstack_recv" else KERNEL_IP
            client = ns_argv(RNS, client)
            server = "dpstack" if arm == "dpstack_recv" else "kernel"
        dp = arm.startswith("dpstack")
        if dp:
            self.ensure_daemon()
        kns = KNS if arm.startswith("kernel_send") else RNS
        before = self.counters() if dp else {}
        kbefore = self.kernel_counters(kns)
        drops0 = self.nft_drops()
        t0 = time.monotonic()
        rc, out, err = run_to_end(client, secs + 30, env=env)
        rec = {"mbps": None, "wall_s": round(time.monotonic() - t0, 3),
               "nft_drops": self.nft_drops() - drops0}
        if dp:
            after = self.counters()
            rec["counters"] = {k: after[k] - before.get(k, 0) for k in after
                               if after[k] != before.get(k, 0) or k in LOSS_COUNTERS}
        kafter = self.kernel_counters(kns)
        # The kernel sender's counters (in the receiving rows, the sender in blosr's).
        rec["kernel_counters"] = {k: kafter[k] - kbefore.get(k, 0) for k in kafter}
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        text = ((j.get("error") or "") + " " + err).strip()
        if "congestion" in text.lower():   # iperf3: "unable to set TCP_CONGESTION: ..."
            rec["mbps"] = "n/a"
            rec["error"] = text
            return rec
        try:
            if rc is None:
                raise KeyError("timed out")
            rec["mbps"] = j["end"]["sum_received"]["bits_per_second"] / 1e6
            rec["retransmits"] = j["end"]["sum_sent"].get("retransmits")
            rec["sender_cc"] = j["end"].get("sender_tcp_congestion")
            rec["receiver_cc"] = j["end"].get("receiver_tcp_congestion")
        except (KeyError, TypeError):
            rec["error"] = (text or ("timed out" if rc is None else "rc %s" % rc))[:300]
            self.restart_server(server)   # a failed test can leave a server busy
        return rec

    def bulk(self, side, cc, size, timeout):
        """Seconds to move size bytes (accept to EOF at the receiver in blosr), side
        "dpstack" or "kernel_nooffload" / "kernel_defaults"; "n/a" when the cc is refused."""
        recv = subprocess.Popen(ns_argv(RNS, [sys.executable, "-c", RECEIVER_PY, BULK_PORT,
                                              size]),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)
        note_pid(recv)
        rec = {"seconds": None}
        try:
            if recv.stdout.readline().strip() != "ready":
                return rec
            sender = [sys.executable, "-c", SENDER_PY, PEER_IP, BULK_PORT, size, cc]
            env = None
            if side == "dpstack":
                self.ensure_daemon()
                env = dict(self.env, LD_PRELOAD=PRELOAD)
                before = self.counters()
            else:
                self.set_kernel_offloads(side.endswith("defaults"))
                sender = ns_argv(KNS, sender)
                kbefore = self.kernel_counters(KNS)
            rc, out, err = run_to_end(sender, timeout, env=env)
            if side != "dpstack":
                kafter = self.kernel_counters(KNS)
                rec["kernel_counters"] = {k: kafter[k] - kbefore.get(k, 0) for k in kafter}
            if side == "dpstack":
                after = self.counters()
                rec["counters"] = {k: after[k] - before.get(k, 0) for k in after
                                   if after[k] != before.get(k, 0) or k in LOSS_COUNTERS}
            if rc == 3:
                rec["seconds"] = "n/a"
                rec["error"] = out.strip()
                return rec
            try:
                line, _ = recv.communicate(timeout=5 if rc is not None else 1)
                got, secs = line.split()
                if int(got) == size:
                    rec["seconds"] = float(secs)
                else:
                    rec["error"] = "received %s of %d bytes" % (got, size)
            except (subprocess.TimeoutExpired, ValueError):
                rec["error"] = "timed out" if rc is None else "rc %s %s" % (rc, err[-200:])
            return rec
        finally:
            kill_group(recv)


def median(vals):
    nums = [v for v in vals if isinstance(v, (int, float))]
    if nums:
        return statistics.median(nums)
    return "n/a" if any(v == "n/a" for v in vals) else None


def fmt(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return "%.*g" % (digits, x)


def ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return a / b
    return "n/a" if "n/a" in (a, b) else None


def shown_counters(names, receiving=False):
    words = LOSS_WORDS + (RECV_WORDS if receiving else ())
    pick = [n for n in LOSS_COUNTERS if n in names]
    pick += sorted(n for n in names if n not in pick and any(w in n for w in words))
    return pick


def counter_medians(recs, receiving=False):
    names = set()
    for r in recs:
        names.update(r.get("counters", {}))
    out = {}
    for n in shown_counters(names, receiving):
        vals = [r["counters"].get(n, 0) for r in recs
                if "counters" in r and isinstance(r.get("mbps", r.get("seconds")), float)]
        if vals:
            out[n] = statistics.median(vals)
    return out


def kernel_counter_medians(recs):
    out = {}
    for n in KERNEL_COUNTERS:
        vals = [r["kernel_counters"].get(n, 0) for r in recs if "kernel_counters" in r and
                isinstance(r.get("mbps", r.get("seconds")), float)]
        if vals:
            out[n] = statistics.median(vals)
    return out


def counters_text(meds):
    """The counters, those of the kernel at zero left out (but for the first two)."""
    return ", ".join("%s %s" % (k[4:] if k.startswith("tcp.") else k, fmt(v, 6))
                     for k, v in meds.items()
                     if v or k.startswith("tcp.") or k in KERNEL_COUNTERS[:2]) or "-"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--loss", default="0,0.5,1,2,5",
                    help="loss rates in percent (0: each stack's ceiling on this path)")
    ap.add_argument("--cc", default="cubic,bbr", help="congestion controls")
    ap.add_argument("--bulk-mb", type=int, default=20, help="MiB moved by the timed transfer")
    ap.add_argument("--bulk-loss", type=float, default=5.0, help="its loss rate, percent")
    ap.add_argument("--bulk-timeout", type=int, default=90, help="its timeout, seconds")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "out", "loss.json"))
    a = ap.parse_args()
    a.loss = [float(x) for x in a.loss.split(",") if x]
    a.cc = [x for x in a.cc.split(",") if x]
    return a


def available_cc(wanted):
    """The congestion controls the kernel has (loading tcp_<cc> when it can); notes the rest."""
    ok = []
    for cc in wanted:
        if shutil.which("modprobe"):
            sh("modprobe", "tcp_" + cc, check=False)
        try:
            with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
                have = f.read().split()
        except OSError:
            have = []
        if cc in have:
            ok.append(cc)
        else:
            print("note: the kernel has no %s (modprobe tcp_%s failed); skipped" % (cc, cc))
    return ok


def main():
    a = parse_args()
    for prog in ("iperf3", "nft", "ethtool", "ip"):
        if shutil.which(prog) is None:
            sys.exit("bench/loss.py: %s is not installed (./install-deps.sh)" % prog)
    if not os.access(PRELOAD, os.R_OK) or not os.access(DPSTACKD, os.X_OK):
        sys.exit("bench/loss.py: build first (make build)")
    ccs = available_cc(a.cc)
    work = tempfile.mkdtemp(prefix="dps-bench-loss.")
    kill_leftovers()    # left over by a killed run
    remove_topology()
    lab = Lab(work)

    def on_signal(signum, frame):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)   # a second Ctrl-C must not stop the cleanup
        raise KeyboardInterrupt
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    raw = {}          # "cc/loss/arm" -> [records]
    bulk = {}         # "cc/side" -> [records]
    size = a.bulk_mb << 20
    started = time.monotonic()
    try:
        lab.topology()
        lab.start_daemon()
        for name in ("peer", "kernel", "dpstack"):
            lab.start_server(name)
        print("one TCP stream under random loss, Mbit/s; medians of %d alternating runs of "
              "%d s" % (a.runs, a.seconds), flush=True)
        for cc in ccs:
            for loss in a.loss:
                lab.set_loss(loss)
                cell = {arm: raw.setdefault("%s/%g/%s" % (cc, loss, arm), []) for arm in ARMS}
                refused = set()
                for _ in range(a.runs):
                    for arm in ARMS:
                        if arm in refused:
                            cell[arm].append({"mbps": "n/a"})
                            continue
                        rec = lab.iperf(arm, cc, a.seconds)
                        if rec["mbps"] is None:   # once more: a run can be disturbed
                            rec = dict(lab.iperf(arm, cc, a.seconds), first_try=rec)
                        if rec["mbps"] == "n/a":
                            refused.add(arm)
                        cell[arm].append(rec)
                print_cell(cc, loss, cell)
            lab.set_loss(a.bulk_loss)
            for _ in range(a.runs):
                for side in ("dpstack", "kernel_nooffload", "kernel_defaults"):
                    recs = bulk.setdefault("%s/%s" % (cc, side), [])
                    if recs and recs[-1].get("seconds") == "n/a":
                        recs.append({"seconds": "n/a"})
                        continue
                    rec = lab.bulk(side, cc, size, a.bulk_timeout)
                    if rec["seconds"] is None and "timed out" not in rec.get("error", ""):
                        rec = dict(lab.bulk(side, cc, size, a.bulk_timeout), first_try=rec)
                    recs.append(rec)
            print_bulk(cc, a, {s: bulk["%s/%s" % (cc, s)]
                               for s in ("dpstack", "kernel_nooffload", "kernel_defaults")})
    except KeyboardInterrupt:
        print("interrupted; cleaning up", file=sys.stderr)
    finally:
        lab.close()
        shutil.rmtree(work, ignore_errors=True)
    summary = print_summary(ccs, a, raw, bulk)
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"runs": a.runs, "seconds": a.seconds, "loss_percent": a.loss, "cc": ccs,
                   "bulk_mib": a.bulk_mb, "bulk_loss_percent": a.bulk_loss,
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "wall_seconds": round(time.monotonic() - started),
                   "summary": summary, "notes": lab.notes, "runs_raw": raw,
                   "bulk_raw": bulk}, f, indent=1)
    print("ratios dpstack/kernel (above 1: dpstack better); loss counters are dpstack's "
          "medians per run; JSON in %s (%d s)" % (a.json, time.monotonic() - started))


def print_cell(cc, loss, cell):
    med = {arm: median([r.get("mbps") for r in recs]) for arm, recs in cell.items()}
    print("  %-5s %4g%%  send: dpstack %7s  kernel off %7s (%s)  defaults %7s (%s) | "
          "recv: dpstack %7s  kernel %7s (%s)" % (
              cc, loss, fmt(med["dpstack_send"]), fmt(med["kernel_send_nooffload"]),
              fmt(ratio(med["dpstack_send"], med["kernel_send_nooffload"]), 3),
              fmt(med["kernel_send_defaults"]),
              fmt(ratio(med["dpstack_send"], med["kernel_send_defaults"]), 3),
              fmt(med["dpstack_recv"]), fmt(med["kernel_recv"]),
              fmt(ratio(med["dpstack_recv"], med["kernel_recv"]), 3)), flush=True)
    for arm, receiving in (("dpstack_send", False), ("dpstack_recv", True)):
        meds = counter_medians(cell[arm], receiving)
        if meds:
            print("         %s, counters per run: %s" % (ARM_TITLES[arm], counters_text(meds)),
                  flush=True)
    for arm, title in (("kernel_send_nooffload", ARM_TITLES["kernel_send_nooffload"]),
                       ("kernel_send_defaults", ARM_TITLES["kernel_send_defaults"]),
                       ("dpstack_recv", "kernel sends to dpstack"),
                       ("kernel_recv", "kernel sends to the kernel")):
        meds = kernel_counter_medians(cell[arm])
        if meds:
            print("         %s, per run: %s" % (title, counters_text(meds)), flush=True)


def print_bulk(cc, a, sides):
    med = {s: median([r.get("seconds") for r in recs]) for s, recs in sides.items()}
    print("  %-5s %d MiB at %g%% loss, seconds: dpstack %s  kernel off %s (%s)  defaults %s "
          "(%s)" % (cc, a.bulk_mb, a.bulk_loss, fmt(med["dpstack"]),
                    fmt(med["kernel_nooffload"]),
                    fmt(ratio(med["kernel_nooffload"], med["dpstack"]), 3),
                    fmt(med["kernel_defaults"]),
                    fmt(ratio(med["kernel_defaults"], med["dpstack"]), 3)), flush=True)
    meds = counter_medians(sides["dpstack"])
    if meds:
        print("         dpstack sends, counters per transfer: %s" % counters_text(meds),
              flush=True)
    meds = kernel_counter_medians(sides["kernel_nooffload"])
    if meds:
        print("         kernel sends (offloads off), per transfer: %s" % counters_text(meds),
              flush=True)


def print_kept(ccs, a, rows):
    """What loss recovery is worth apart from the path: each sender's figure under loss as a
    share of its own figure without loss (the 0 % row), dpstack's beside the kernel's."""
    if 0 not in a.loss:
        return
    print("share of its own 0 % figure kept under loss (sending): dpstack / kernel, "
          "offloads off / kernel, defaults")
    for cc in ccs:
        base = next((r["mbps"] for r in rows if r["cc"] == cc and r["loss_percent"] == 0), None)
        if base is None:
            continue
        for r in rows:
            if r["cc"] != cc or r["loss_percent"] == 0:
                continue
            kept = {arm: ratio(r["mbps"][arm], base[arm]) for arm in
                    ("dpstack_send", "kernel_send_nooffload", "kernel_send_defaults")}
            r["kept"] = kept
            print("  %-5s %4g%%: %s / %s / %s" % (
                cc, r["loss_percent"], fmt(kept["dpstack_send"], 3),
                fmt(kept["kernel_send_nooffload"], 3), fmt(kept["kernel_send_defaults"], 3)))


def print_summary(ccs, a, raw, bulk):
    """The final table; returns its figures for the JSON."""
    rows = []
    print()
    print("%-5s %5s | %9s %9s %6s %9s %6s | %9s %9s %6s | %s" % (
        "cc", "loss", "dps send", "krn nooff", "ratio", "krn dflt", "ratio", "dps recv",
        "krn recv", "ratio", "dpstack send: loss counters per run (medians)"))
    for cc in ccs:
        for loss in a.loss:
            cell = {arm: raw.get("%s/%g/%s" % (cc, loss, arm), []) for arm in ARMS}
            med = {arm: median([r.get("mbps") for r in recs]) for arm, recs in cell.items()}
            row = {"cc": cc, "loss_percent": loss, "mbps": med,
                   "ratio_send_nooffload": ratio(med["dpstack_send"],
                                                 med["kernel_send_nooffload"]),
                   "ratio_send_defaults": ratio(med["dpstack_send"],
                                                med["kernel_send_defaults"]),
                   "ratio_recv": ratio(med["dpstack_recv"], med["kernel_recv"]),
                   "dpstack_send_counters": counter_medians(cell["dpstack_send"]),
                   "dpstack_recv_counters": counter_medians(cell["dpstack_recv"], True),
                   "kernel_send_nooffload_counters":
                       kernel_counter_medians(cell["kernel_send_nooffload"]),
                   "kernel_send_defaults_counters":
                       kernel_counter_medians(cell["kernel_send_defaults"]),
                   "kernel_sender_to_dpstack_counters":
                       kernel_counter_medians(cell["dpstack_recv"]),
                   "kernel_sender_to_kernel_counters":
                       kernel_counter_medians(cell["kernel_recv"])}
            rows.append(row)
            print("%-5s %4g%% | %9s %9s %6s %9s %6s | %9s %9s %6s | %s" % (
                cc, loss, fmt(med["dpstack_send"]), fmt(med["kernel_send_nooffload"]),
                fmt(row["ratio_send_nooffload"], 3), fmt(med["kernel_send_defaults"]),
                fmt(row["ratio_send_defaults"], 3), fmt(med["dpstack_recv"]),
                fmt(med["kernel_recv"]), fmt(row["ratio_recv"], 3),
                counters_text(row["dpstack_send_counters"])))
    print("(Mbit/s; ratio = dpstack / kernel)")
    print_kept(ccs, a, rows)
    for cc in ccs:
        sides = {s: bulk.get("%s/%s" % (cc, s), []) for s in
                 ("dpstack", "kernel_nooffload", "kernel_defaults")}
        if any(sides.values()):
            print_bulk(cc, a, sides)
            med = {s: median([r.get("seconds") for r in recs]) for s, recs in sides.items()}
            rows.append({"cc": cc, "bulk_seconds": med,
                         "bulk_ratio_nooffload": ratio(med["kernel_nooffload"],
                                                       med["dpstack"]),
                         "bulk_ratio_defaults": ratio(med["kernel_defaults"], med["dpstack"]),
                         "dpstack_counters": counter_medians(sides["dpstack"])})
    print("(%d MiB: seconds; ratio = kernel / dpstack, above 1: dpstack faster)" % a.bulk_mb)
    return rows


if __name__ == "__main__":
    main()
