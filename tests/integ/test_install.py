"""`meson install` of the build under test into a staging directory (DESTDIR): programs,
libraries, public headers, the pkg-config file, the systemd unit and the sample config land
under the build's prefix; a program built from examples/udp_echo.c with nothing but
`pkg-config --cflags --libs dpstack` runs on the installed libdpstack and echoes a kernel
peer's datagrams through the daemon; systemd-analyze accepts the unit."""

import json
import os
import shutil
import socket
import types

import pytest

import topo
from test_examples import running


def _build_dirs():
    """The build's installation directories: meson's prefix, bindir, libdir, ..., and the
    unit's (meson_options.txt: PREFIX/lib/systemd/system unless systemdunitdir says)."""
    with open(os.path.join(topo.BUILD, "meson-info", "intro-buildoptions.json")) as f:
        opts = {o["name"]: o["value"] for o in json.load(f)}
    prefix = opts["prefix"]
    dirs = {k: os.path.join(prefix, opts[k])
            for k in ("bindir", "libdir", "includedir", "sysconfdir")}
    dirs["unitdir"] = opts["systemdunitdir"] or os.path.join(prefix, "lib", "systemd", "system")
    dirs["prefix"] = prefix
    return dirs


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The staged tree; its attributes are the directories inside it, .dirs the real ones."""
    dest = str(tmp_path_factory.mktemp("destdir"))
    topo.run(["meson", "install", "-C", topo.BUILD, "--no-rebuild", "--quiet",
              "--destdir", dest], timeout=120)
    dirs = _build_dirs()
    return types.SimpleNamespace(dest=dest, dirs=dirs, **{k: dest + v for k, v in dirs.items()})


def test_install_puts_programs_libraries_headers_unit_and_sample_in_place(installed):
    i = installed
    for path in [os.path.join(i.bindir, "dpstackd"), os.path.join(i.bindir, "dpstackctl"),
                 os.path.join(i.libdir, "libdpstack.so"),
                 os.path.join(i.libdir, "libdpstack_preload.so"),
                 os.path.join(i.includedir, "dpstack", "dpstack.h"),
                 os.path.join(i.includedir, "dpstack", "ctl.h"),
                 os.path.join(i.libdir, "pkgconfig", "dpstack.pc"),
                 os.path.join(i.sysconfdir, "dpstack", "dpstackd.conf.sample")]:
        assert os.path.exists(path), path
    unit = os.path.join(i.unitdir, "dpstackd.service")
    with open(unit) as f:
        text = f.read()
    conf = os.path.join(i.dirs["sysconfdir"], "dpstack", "dpstackd.conf")
    assert "ExecStart=%s -c %s\n" % (os.path.join(i.dirs["bindir"], "dpstackd"), conf) in text
    assert topo.run([os.path.join(i.bindir, "dpstackd"), "--help"]).returncode == 0
    assert topo.run([os.path.join(i.bindir, "dpstackctl"), "-h"]).returncode == 0


def test_sample_config_passes_the_check(installed):
    sample = os.path.join(installed.sysconfdir, "dpstack", "dpstackd.conf.sample")
    r = topo.run([os.path.join(installed.bindir, "dpstackd"), "--check-config", sample])
    assert r.stdout.startswith(sample + ": ok: 1 port(s), 1 worker(s)"), r.stdout


def test_systemd_analyze_accepts_the_unit(installed, tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze")
    prefix = installed.dirs["prefix"]
    with open(os.path.join(installed.unitdir, "dpstackd.service")) as f:
        # The unit names the installed paths, and verify checks that its programs exist:
        # the copy it reads points into the staging directory.
        text = f.read().replace(prefix + "/", installed.dest + prefix + "/")
    copy = tmp_path / "dpstackd.service"
    copy.write_text(text)
    r = topo.run(["systemd-analyze", "verify", "--man=no", str(copy)], check=False)
    assert (r.returncode, r.stdout + r.stderr) == (0, "")


@pytest.fixture(scope="module")
def st():
    lab = topo.Lab("install")
    try:
        s = topo.SinglePort(lab)
        s.warm_up()
        yield s
    finally:
        lab.close()


def test_pkg_config_builds_an_application_on_the_installed_library(installed, st, tmp_path):
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=installed.dest,
               PKG_CONFIG_LIBDIR=os.path.join(installed.libdir, "pkgconfig"))
    flags = topo.run(["pkg-config", "--cflags", "--libs", "dpstack"], env=env).stdout.split()
    assert "-ldpstack" in flags
    # A sanitized build's library needs its runtime in the program, as meson gives it.
    san = ["-fsanitize=address,undefined"] if topo.SANITIZED else []
    exe = str(tmp_path / "udp-echo")
    topo.run(["cc", "-O2", "-o", exe, os.path.join(topo.ROOT, "examples", "udp_echo.c")] +
             san + flags, timeout=120)
    libpath = "LD_LIBRARY_PATH=" + installed.libdir
    ldd = topo.run(["env", libpath, "ldd", exe]).stdout
    assert os.path.join(installed.libdir, "libdpstack.so") in ldd, ldd
    with running(st, ["env", libpath, exe, "-p", "7071"], 7071, tmp_path):
        def exchange():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(5)
            s.sendto(b"installed", (st.stack_ip, 7071))
            data, src = s.recvfrom(100)
            s.close()
            return data, src[1]
        assert topo.in_netns(st.peer.ns, exchange) == (b"installed", 7071)
