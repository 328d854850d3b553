"""Fixtures of the integration tests: kernel peers in namespaces and dpstackd instances.

  one_port        (module)    one veth, peer 10.0.0.1/24 in a namespace, dpstackd on
                              net_af_xdp with 10.0.0.2/24; shared by the tests of a module
  fresh_one_port  (function)  the same, for a test that changes state others would see
  router          (module)    two veths: A 10.0.0.1/24 and B 10.0.1.1/24, each routing the
                              other subnet via dpstackd (10.0.0.2 / 10.0.1.2); the route to
                              10.0.1.1/32 has mtu 1000
  lab             (function)  an empty topology for tests that build their own

Every topology is removed at teardown even when the test failed, and every dpstackd must then
exit 0 on SIGTERM, without a crash report and without leaving its control socket: a fixture
teardown error says when it did not.
"""

import os

import pytest

import topo


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than ~10 s")


@pytest.fixture(scope="session", autouse=True)
def environment():
    if os.geteuid() != 0:
        pytest.skip("integration tests need root (namespaces, veths, DPDK)")
    missing = topo.binaries_missing()
    if missing:
        pytest.skip("not built: %s (meson setup build && ninja -C build, or set "
                    "DPSTACK_BUILD)" % ", ".join(missing))
    topo.remove_stale()
    yield


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


class SinglePort:
    """One kernel peer and one dpstackd port. stack_ip/peer_ip are the two ends."""

    stack_ip = "10.0.0.2"
    peer_ip = "10.0.0.1"

    def __init__(self, lab, driver="net_af_xdp", extra_config=()):
        self.lab = lab
        self.peer = lab.add_peer(self.peer_ip, 24)
        self.daemon = lab.start_daemon(
            topo.one_port_config(self.peer.root_ifname, self.stack_ip + "/24", driver,
                                 extra_config))
        self.stack_mac = self.daemon.port_mac("port0")
        self.peer_mac = self.peer.mac

    def ctl(self, *args, json=False, timeout=topo.DEFAULT_TIMEOUT):
        return self.daemon.ctl(*args, json=json, timeout=timeout)

    def warm_up(self):
        """First pings: ARP both ways, and the PMD's first frames (which can be slow)."""
        topo.wait_until(lambda: self.peer.ping(self.stack_ip, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="first ping answered")


class Router:
    """Kernel A and kernel B on two ports of one dpstackd that routes between them."""

    a_ip, a_stack_ip = "10.0.0.1", "10.0.0.2"
    b_ip, b_stack_ip = "10.0.1.1", "10.0.1.2"
    small_mtu = 1000

    def __init__(self, lab):
        self.lab = lab
        self.a = lab.add_peer(self.a_ip, 24)
        self.b = lab.add_peer(self.b_ip, 24)
        self.a.run("ip", "route", "add", "10.0.1.0/24", "via", self.a_stack_ip)
        self.b.run("ip", "route", "add", "10.0.0.0/24", "via", self.b_stack_ip)
        config = "\n".join([
            "workers 1",
            "port add port0 net_af_xdp0,iface=%s" % self.a.root_ifname,
            "port add port1 net_af_xdp1,iface=%s" % self.b.root_ifname,
            "ip addr add %s/24 dev port0" % self.a_stack_ip,
            "ip addr add %s/24 dev port1" % self.b_stack_ip,
            "ip route add %s/32 dev port1 mtu %d" % (self.b_ip, self.small_mtu),
        ]) + "\n"
        self.daemon = lab.start_daemon(config)

    def ctl(self, *args, json=False, timeout=topo.DEFAULT_TIMEOUT):
        return self.daemon.ctl(*args, json=json, timeout=timeout)


def _close_lab(lab, request=None):
    failed = request is not None and getattr(getattr(request.node, "rep_call", None),
                                             "failed", False)
    if failed:
        for d in lab.daemons:
            print("---- dpstackd log (%s) ----\n%s" % (d.dir, d.log()[-4000:]))
    lab.close()


@pytest.fixture
def lab(request):
    lab = topo.Lab(request.node.name[:40])
    try:
        yield lab
    finally:
        _close_lab(lab, request)


@pytest.fixture(scope="module")
def one_port():
    lab = topo.Lab("one_port")
    try:
        setup = SinglePort(lab)
        setup.warm_up()
        yield setup
    finally:
        _close_lab(lab)


@pytest.fixture
def fresh_one_port(request):
    lab = topo.Lab(request.node.name[:40])
    try:
        setup = SinglePort(lab)
        setup.warm_up()
        yield setup
    finally:
        _close_lab(lab, request)


@pytest.fixture(scope="module")
def router():
    lab = topo.Lab("router")
    try:
        setup = Router(lab)
        topo.wait_until(lambda: setup.a.ping(setup.b_ip, count=1, wait=1).received == 1,
                        timeout=20, interval=0.1, what="first ping A -> B through dpstackd")
        yield setup
    finally:
        _close_lab(lab)
