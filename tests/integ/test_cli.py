"""dpstackctl against a running daemon: every refused command is one line on stderr, exit 1,
and changes nothing; client-side errors exit 2; good commands round-trip; JSON parses."""

import pytest

import topo

BAD_COMMANDS = [
    ("addr_octet_over_255", ["ip", "addr", "add", "300.1.1.1/24", "dev", "port0"]),
    ("addr_prefix_over_32", ["ip", "addr", "add", "10.0.0.5/33", "dev", "port0"]),
    ("addr_unknown_port", ["ip", "addr", "add", "10.0.0.5/24", "dev", "port9"]),
    ("addr_missing_dev", ["ip", "addr", "add", "10.0.0.5/24"]),
    ("addr_missing_args", ["ip", "addr", "add"]),
    ("addr_duplicate", ["ip", "addr", "add", "10.0.0.2/24", "dev", "port0"]),
    ("addr_network_address", ["ip", "addr", "add", "10.0.0.0/24", "dev", "port0"]),
    ("addr_broadcast_address", ["ip", "addr", "add", "10.0.0.255/24", "dev", "port0"]),
    ("addr_loopback", ["ip", "addr", "add", "127.0.0.5/8", "dev", "port0"]),
    ("addr_multicast", ["ip", "addr", "add", "224.0.0.5/24", "dev", "port0"]),
    ("addr_del_not_configured", ["ip", "addr", "del", "10.0.0.77/24", "dev", "port0"]),
    ("addr_octal_looking", ["ip", "addr", "add", "010.0.0.5/24", "dev", "port0"]),
    ("route_host_bits", ["ip", "route", "add", "10.9.9.1/24", "via", "10.0.0.1"]),
    ("route_bad_gateway", ["ip", "route", "add", "10.9.0.0/16", "via", "300.0.0.1"]),
    ("route_gateway_not_connected", ["ip", "route", "add", "10.9.0.0/16", "via", "10.77.0.1"]),
    ("route_no_via_no_dev", ["ip", "route", "add", "10.9.0.0/16"]),
    ("route_unknown_option", ["ip", "route", "add", "10.9.0.0/16", "via", "10.0.0.1",
                              "color", "red"]),
    ("route_mtu_too_big", ["ip", "route", "add", "10.9.0.0/16", "dev", "port0", "mtu",
                           "99999"]),
    ("route_src_not_ours", ["ip", "route", "add", "10.9.0.0/16", "dev", "port0", "src",
                            "10.0.0.9"]),
    ("route_del_missing", ["ip", "route", "del", "10.99.0.0/16"]),
    ("route_dangling_option", ["ip", "route", "add", "10.9.0.0/16", "via"]),
    ("neigh_multicast_mac", ["neigh", "add", "10.0.0.9", "lladdr", "01:00:5e:00:00:01",
                             "dev", "port0"]),
    ("neigh_bad_mac", ["neigh", "add", "10.0.0.9", "lladdr", "zz:00:00:00:00:01", "dev",
                       "port0"]),
    ("neigh_bad_addr", ["neigh", "add", "10.0.0.999", "lladdr", "02:00:00:00:00:01", "dev",
                        "port0"]),
    ("neigh_del_missing", ["neigh", "del", "10.0.0.99", "dev", "port0"]),
    ("neigh_params_unknown", ["neigh", "params", "bogus-ms", "5"]),
    ("neigh_params_zero", ["neigh", "params", "reachable-ms", "0"]),
    ("neigh_params_missing_value", ["neigh", "params", "reachable-ms"]),
    ("neigh_params_not_a_number", ["neigh", "params", "delay-ms", "soon"]),
    ("tcp_params_unknown", ["tcp", "params", "bogus", "5"]),
    ("tcp_params_zero_retries", ["tcp", "params", "retries", "0"]),
    ("tcp_params_delack_too_long", ["tcp", "params", "delack-ms", "500"]),
    ("tcp_params_missing_value", ["tcp", "params", "retries"]),
    ("tcp_params_unknown_cc", ["tcp", "params", "cc", "bbr9"]),
    ("tcp_params_syncookies_two", ["tcp", "params", "syncookies", "2"]),
    ("link_unknown_port", ["link", "show", "port9"]),
    ("link_mtu_too_small", ["link", "set", "port0", "mtu", "10"]),
    ("link_set_bogus", ["link", "set", "port0", "sideways"]),
    ("forwarding_bad_value", ["ip", "forwarding", "maybe"]),
    ("forwarding_extra_word", ["ip", "forwarding", "on", "now"]),
    ("forwarding6_bad_value", ["ip", "-6", "forwarding", "yes"]),
    ("unknown_command", ["frobnicate"]),
    ("unknown_subcommand", ["ip", "addr", "frob"]),
    ("stats_extra_word", ["stats", "now"]),
    ("lcore_extra_word", ["lcore", "show", "now"]),
    ("ping_missing_addr", ["ping"]),
    ("ping_bad_addr", ["ping", "10.0.0.300"]),
    ("ping_count_zero", ["ping", "10.0.0.1", "count", "0"]),
    ("ping_size_too_big", ["ping", "10.0.0.1", "size", "65508"]),
    ("ping_unknown_option", ["ping", "10.0.0.1", "ttl", "3"]),
    ("ping6_bad_addr", ["ping", "-6", "2001:db8::zz"]),
    ("ping6_link_local_without_dev", ["ping", "fe80::1"]),
    ("ping6_size_too_big", ["ping", "2001:db8::1", "size", "65528"]),
    ("autoconf_bad_word", ["ip", "-6", "autoconf", "maybe", "dev", "port0"]),
    ("autoconf_unknown_port", ["ip", "-6", "autoconf", "on", "dev", "port9"]),
    ("dad_transmits_too_many", ["ip", "-6", "dad-transmits", "256", "dev", "port0"]),
    ("dad_transmits_no_dev", ["ip", "-6", "dad-transmits", "1"]),
]


def snapshot(d):
    """Everything a command could change, as the JSON views show it."""
    links = d.ctl("link", "show", json=True)
    for link in links:
        link.pop("stats", None)
    neigh = [n for n in d.ctl("neigh", "show", json=True) if n["state"] == "permanent"]
    return {
        "links": links,
        "addrs": d.ctl("ip", "addr", "show", json=True),
        "routes": d.ctl("ip", "route", "show", json=True),
        "static_neigh": neigh,
        "neigh_params": d.ctl("neigh", "params", json=True),
        "tcp_params": d.ctl("tcp", "params", json=True),
        "forwarding": d.ctl("ip", "forwarding", json=True),
    }


@pytest.mark.parametrize("name,args", BAD_COMMANDS, ids=[c[0] for c in BAD_COMMANDS])
def test_bad_command_one_error_line_exit_1_nothing_changed(one_port, name, args):
    d = one_port.daemon
    before = snapshot(d)
    for json in (False, True):
        r = d.ctl_result(*args, json=json)
        assert r.rc == 1, r
        assert r.out == "", r
        lines = r.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("dpstackctl: ") and \
            len(lines[0]) > len("dpstackctl: ") + 5, r
    assert snapshot(d) == before


def test_duplicate_route_refused_and_first_kept(one_port):
    d = one_port.daemon
    d.ctl("ip", "route", "add", "10.9.0.0/16", "via", "10.0.0.1")
    try:
        before = snapshot(d)
        r = d.ctl_result("ip", "route", "add", "10.9.0.0/16", "via", "10.0.0.1")
        assert r.rc == 1 and len(r.err.splitlines()) == 1, r
        assert snapshot(d) == before
    finally:
        d.ctl("ip", "route", "del", "10.9.0.0/16")


@pytest.mark.parametrize("args", [[], [""], ["ip", "addr\nadd"], ["x"] * 70],
                         ids=["no_command", "empty_word", "newline_in_word", "too_many_words"])
def test_client_side_usage_error_exit_2_nothing_changed(one_port, args):
    d = one_port.daemon
    before = snapshot(d)
    r = d.ctl_result(*args)
    assert r.rc == 2, r
    assert r.err.strip(), r
    assert snapshot(d) == before


def test_missing_socket_exit_2(one_port, tmp_path):
    r = one_port.daemon.ctl_result("link", "show", sock=str(tmp_path / "none.sock"))
    assert r.rc == 2, r
    assert r.out == "" and len(r.err.splitlines()) == 1 and "none.sock" in r.err, r


def test_socket_from_environment(one_port):
    env = dict(topo.os.environ, DPSTACK_CTL=one_port.daemon.sock)
    p = topo.run([topo.DPSTACKCTL, "-j", "link", "show"], env=env)
    assert topo.jsonlib.loads(p.stdout)[0]["ifname"] == "port0"


def test_help_lists_every_command(one_port):
    out = one_port.ctl("help")
    for usage in ("link show", "link set", "ip addr add", "ip addr del", "ip addr show",
                  "ip route add", "ip route del", "ip route show", "ip forwarding",
                  "ip -6 forwarding", "neigh show", "neigh add",
                  "neigh del", "neigh flush", "neigh params", "stats", "lcore show", "ping",
                  "capture", "ip -6 autoconf", "ip -6 dad-transmits"):
        assert any(line.startswith(usage) for line in out.splitlines()), usage


@pytest.mark.parametrize("args", [["link", "show"], ["ip", "addr", "show"],
                                  ["ip", "route", "show"], ["neigh", "show"], ["stats"],
                                  ["neigh", "params"], ["ip", "forwarding"],
                                  ["ip", "-6", "forwarding"],
                                  ["tcp", "params"], ["lcore", "show"]],
                         ids=lambda a: "_".join(a))
def test_show_commands_give_valid_json(one_port, args):
    out = one_port.ctl(*args, json=True)
    assert isinstance(out, (list, dict))


def test_stats_json_names_every_counter(one_port):
    st = one_port.ctl("stats", json=True)
    for key in ("events", "drops", "ports", "workers", "mempool"):
        assert key in st, key
    for name in ("ip.bad_checksum", "ip.reass_overlap", "arp.static_conflict",
                 "neigh.failed", "eth.vlan"):
        assert name in st["drops"], name
    for name in ("ip.forwarded", "icmp.tx_time_exceeded", "icmp.tx_echo_reply"):
        assert name in st["events"], name
    assert st["mempool"]["size"] > st["mempool"]["in_use"] > 0
    assert "port0" in st["ports"]


def test_address_route_neigh_round_trip(one_port):
    d = one_port.daemon
    before = snapshot(d)
    d.ctl("ip", "addr", "add", "10.0.0.20/24", "dev", "port0")
    d.ctl("ip", "route", "add", "10.20.0.0/16", "via", "10.0.0.1", "mtu", "1400")
    d.ctl("neigh", "add", "10.0.0.21", "lladdr", "02:00:00:00:00:21", "dev", "port0")
    try:
        addrs = d.ctl("ip", "addr", "show", json=True)[0]["addr_info"]
        assert {"family": "inet", "local": "10.0.0.20", "prefixlen": 24} in addrs
        routes = d.ctl("ip", "route", "show", json=True)
        assert {"type": "gateway", "dst": "10.20.0.0/16", "gateway": "10.0.0.1",
                "dev": "port0", "mtu": 1400} in routes, routes
        assert "10.20.0.0/16 via 10.0.0.1 dev port0" in d.ctl("ip", "route", "show")
        entry = d.neigh("10.0.0.21")
        assert entry["lladdr"] == "02:00:00:00:00:21" and entry["state"] == "permanent"
        d.ctl("neigh", "flush")
        assert d.neigh("10.0.0.21") is not None, "flush removed a static entry"
    finally:
        d.ctl("neigh", "del", "10.0.0.21", "dev", "port0")
        d.ctl("ip", "route", "del", "10.20.0.0/16")
        d.ctl("ip", "addr", "del", "10.0.0.20/24", "dev", "port0")
    assert snapshot(d) == before
    one_port.ping_ok()


def test_link_down_stops_answering_and_up_restores(one_port):
    s = one_port
    before = s.daemon.stats()
    s.ctl("link", "set", "port0", "down")
    try:
        assert s.ctl("link", "show", "port0", json=True)[0]["admin_up"] is False
        r = s.peer.ping(s.stack_ip, count=2, interval=0.1, wait=1)
        assert r.received == 0, r
        assert topo.drops_delta(before, s.daemon.stats()).get("eth.port_down", 0) >= 2
    finally:
        s.ctl("link", "set", "port0", "up")
    assert s.ctl("link", "show", "port0", json=True)[0]["admin_up"] is True
    s.ping_ok()


def test_tcp_params_set_show_and_restore(fresh_one_port):
    d = fresh_one_port.daemon
    before = d.ctl("tcp", "params", json=True)
    assert before["cc"] == "cubic"
    assert set(before["cc_available"]) == {"bbr", "cubic", "newreno", "vegas"}
    d.ctl("tcp", "params", "retries", "3", "time-wait-ms", "1000", "cc", "newreno")
    after = d.ctl("tcp", "params", json=True)
    assert after["retries"] == 3 and after["time-wait-ms"] == 1000
    assert after["cc"] == "newreno"
    assert after["syn-retries"] == before["syn-retries"]
    d.ctl("tcp", "params", "retries", str(before["retries"]), "time-wait-ms",
          str(before["time-wait-ms"]), "cc", "cubic")
    assert d.ctl("tcp", "params", json=True) == before
