"""dpstackd as a container runs it (docs/containers.md): with exactly the capabilities its
ports need (setpriv --bounding-set, as a container runtime's --cap-drop=all --cap-add=...),
the daemon in a PID namespace of its own, applications in another one with no capability
attaching through the shared socket directory; `sock show` names them by their own pid.

The capabilities each port type needs were found the same way (src/ctl/port_caps.h); with
one missing the daemon refuses to start and names it.
"""

import os
import subprocess

import pytest

import topo

PRELOAD = os.path.join(topo.BUILD, "lib", "preload", "libdpstack_preload.so")

# Exactly what each port type needs (src/ctl/port_caps.c). net_af_xdp's CAP_IPC_LOCK is
# needed only while RLIMIT_MEMLOCK is below the mbuf pool (8 MB here: it is).
CAPS = {
    "net_af_xdp": ["net_raw", "net_admin", "sys_admin", "ipc_lock"],
    "net_af_packet": ["net_raw", "net_admin"],
}


def with_caps(caps):
    """A command prefix that leaves exactly caps (a root process gets its bounding set)."""
    return ["setpriv", "--bounding-set=-all" + "".join(",+" + c for c in caps), "--"]


@pytest.mark.parametrize("driver", sorted(CAPS))
def test_port_starts_with_exactly_its_capabilities_and_names_each_missing_one(lab, driver):
    peer = lab.add_peer(topo.SinglePort.peer_ip)
    config = topo.one_port_config(peer.root_ifname, driver=driver)
    for missing in CAPS[driver]:
        rest = [c for c in CAPS[driver] if c != missing]
        d = lab.start_daemon(config, name="without_" + missing, wait=False,
                             wrap=with_caps(rest))
        assert d.wait_exit() == 1
        assert "needs capabilities this process lacks: CAP_%s" % missing.upper() in d.log(), \
            d.log()
    d = lab.start_daemon(config, name="exact", wrap=with_caps(CAPS[driver]))
    topo.wait_until(lambda: peer.ping(topo.SinglePort.stack_ip, count=1, wait=1).received,
                    timeout=20, interval=0.1, what="ping answered")


def test_tap_needs_net_admin_memif_and_ring_need_nothing(lab):
    ns = lab.add_netns()
    tap = "%s%st" % (topo.PREFIX, topo.PID_HEX)
    config = "workers 1\nport add port0 net_tap0,iface=%s\n" % tap
    d = lab.start_daemon(config, name="tap_none", netns=ns, wait=False, wrap=with_caps([]))
    assert d.wait_exit() == 1
    assert "needs capabilities this process lacks: CAP_NET_ADMIN" in d.log(), d.log()
    lab.start_daemon(config, name="tap_admin", netns=ns, wrap=with_caps(["net_admin"]))
    sock = os.path.join(lab.tmp, "memif.sock")
    lab.start_daemon("workers 1\nport add port0 net_memif0,role=server,socket=%s,"
                     "socket-abstract=no\nport add r0 net_ring0\nport add r1 net_ring1,"
                     "peer=r0\n" % sock, name="memif_none", wrap=with_caps([]))


APP = r"""
import os, socket
s = socket.socket()
s.bind(("0.0.0.0", 7100))
s.listen(1)
print(os.getpid(), flush=True)
c, _ = s.accept()
c.sendall(c.recv(100))
c.close()
"""


def test_daemon_and_app_in_own_pid_namespaces_app_shown_by_its_own_pid(lab):
    """The recipe: the daemon in a PID namespace of its own with net_af_xdp's capabilities
    only; an application in another PID namespace, with none, attaches through the socket
    directory they share; the kernel peer talks to it; `sock show` cannot see its pid
    (SO_PEERCRED gives 0 across namespaces) and shows the one it has in its own."""
    peer = lab.add_peer(topo.SinglePort.peer_ip)
    d = lab.start_daemon(topo.one_port_config(peer.root_ifname), pidns=True,
                         wrap=with_caps(CAPS["net_af_xdp"]))
    script = os.path.join(lab.tmp, "app.py")
    with open(script, "w") as f:
        f.write(APP)
    env = dict(d.env, LD_PRELOAD=PRELOAD)
    # sh is PID 1 of the application's namespace and python3 its child: a pid other than 1.
    app = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--"] +
                           with_caps([]) + ["sh", "-c", "python3 %s; true" % script],
                           stdout=subprocess.PIPE, text=True, env=env)
    lab.add_cleanup(lambda: (app.kill(), app.wait(10)))
    own_pid = int(app.stdout.readline())
    assert own_pid > 1
    rows = [r for r in d.ctl("sock", "show", "tcp", json=True) if r["local"] == "*:7100"]
    assert len(rows) == 1 and rows[0]["pid"] == 0 and rows[0]["ns_pid"] == own_pid, rows
    assert "ns:%d" % own_pid in d.ctl("sock", "show", "tcp")
    out = peer.run("python3", "-c", "import socket; s = socket.create_connection(('%s', 7100),"
                   " timeout=10); s.sendall(b'hello'); print(s.recv(100).decode())" %
                   topo.SinglePort.stack_ip).stdout
    assert out.strip() == "hello"
    assert app.wait(20) == 0
