"""Fixtures of the integration tests: kernel peers in namespaces and dpstackd instances.

  one_port        (module)    one veth, peer 10.0.0.1/24 in a namespace, dpstackd on
                              net_af_xdp with 10.0.0.2/24; shared by the tests of a module
  fresh_one_port  (function)  the same, for a test that changes state others would see
  router          (module)    two veths: A 10.0.0.1/24 and B 10.0.1.1/24, each routing the
                              other subnet via dpstackd (10.0.0.2 / 10.0.1.2), A with a
                              default route via it too; the stack's route to 10.0.1.1/32
                              has mtu 1000
  fresh_router    (function)  the same, for a test that leaves state in the kernels (PMTU)
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


def _warm_topology(kind, name, request=None):
    """A lab holding one warmed-up topology of class kind; closed after the last use."""
    lab = topo.Lab(name)
    try:
        setup = kind(lab)
        setup.warm_up()
        yield setup
    finally:
        _close_lab(lab, request)


@pytest.fixture(scope="module")
def one_port():
    yield from _warm_topology(topo.SinglePort, "one_port")


@pytest.fixture
def fresh_one_port(request):
    yield from _warm_topology(topo.SinglePort, request.node.name[:40], request)


@pytest.fixture(scope="module")
def router():
    yield from _warm_topology(topo.Router, "router")


@pytest.fixture
def fresh_router(request):
    yield from _warm_topology(topo.Router, request.node.name[:40], request)


@pytest.fixture(scope="module")
def router6():
    yield from _warm_topology(topo.Router6, "router6")


@pytest.fixture
def fresh_router6(request):
    yield from _warm_topology(topo.Router6, request.node.name[:40], request)
