/* ip addr dhcp [del] dev PORT, and the lease as `ip addr show` prints it (iproute2's
 * "dynamic", valid_lft and preferred_lft, then the client's own line). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "dhcp_run.h"
#include "wire/ipv4.h"

int cmd_addr_dhcp(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	bool del = argc >= 1 && strcmp(argv[0], "del") == 0;
	if (del) {
		argc--;
		argv++;
	}
	uint16_t port;
	if (argc != 2 || strcmp(argv[0], "dev") != 0)
		return -1;
	if (cmd_parse_port(d, argv[1], &port, o) != 0)
		return -1;
	if (d->dry_run)
		return 0;
	int rc = del ? dhcp_run_stop(d, port) : dhcp_run_start(d, port);
	if (rc == -EALREADY)
		return ctl_error(o, "a DHCP client runs on %s already", argv[1]);
	if (rc == -ESRCH)
		return ctl_error(o, "no DHCP client runs on %s", argv[1]);
	if (rc == -EADDRINUSE)
		return ctl_error(o, "ip addr dhcp dev %s: UDP port 68 is taken by a socket",
				 argv[1]);
	if (rc != 0)
		return ctl_error(o, "ip addr dhcp dev %s: %s", argv[1], cmd_strerror(-rc));
	return 0;
}

static bool cmd_dhcp_holds(const struct dhcp_client *c)
{
	return c != NULL && (c->state == DHCP_ST_BOUND || c->state == DHCP_ST_RENEWING ||
			     c->state == DHCP_ST_REBINDING);
}

/* Seconds from now until t (0 once passed); UINT64_MAX stays "forever". */
static uint64_t cmd_dhcp_left_s(uint64_t t, uint64_t now)
{
	if (t == DHCP_NEVER)
		return UINT64_MAX;
	return t > now ? (t - now) / 1000 : 0;
}

static void cmd_dhcp_lft_text(struct ctl_out *o, const char *key, uint64_t s)
{
	if (s == UINT64_MAX)
		ctl_printf(o, " %s forever", key);
	else
		ctl_printf(o, " %s %" PRIu64 "sec", key, s);
}

void cmd_dhcp_addr_show(struct daemon *d, uint16_t port, uint32_t addr, struct ctl_out *o)
{
	const struct dhcp_client *c = dhcp_run_client(d, port);
	if (!cmd_dhcp_holds(c) || c->lease.addr != addr)
		return;
	/* As iproute2 shows a DHCP address: valid and preferred for the rest of the lease. */
	uint64_t left = cmd_dhcp_left_s(c->lease.expiry_ms, dhcp_run_now_ms());
	if (o->json) {
		json_bool(o, "dynamic", true);
		json_u64(o, "valid_life_time", left == UINT64_MAX ? UINT32_MAX : left);
		json_u64(o, "preferred_life_time", left == UINT64_MAX ? UINT32_MAX : left);
		return;
	}
	ctl_printf(o, " dynamic\n      ");
	cmd_dhcp_lft_text(o, "valid_lft", left);
	cmd_dhcp_lft_text(o, "preferred_lft", left);
}

static void cmd_dhcp_json(struct ctl_out *o, const struct dhcp_client *c, uint64_t now)
{
	char a[16];
	json_obj_begin(o, "dhcp");
	json_str(o, "state", dhcp_state_str(c->state));
	if (cmd_dhcp_holds(c)) {
		const struct dhcp_lease *l = &c->lease;
		json_str(o, "server", ip4_addr_format(l->server, a, sizeof(a)));
		if (l->router != 0)
			json_str(o, "router", ip4_addr_format(l->router, a, sizeof(a)));
		if (l->mtu != 0)
			json_u64(o, "mtu", l->mtu);
		json_arr_begin(o, "dns");
		for (unsigned k = 0; k < l->nb_dns; k++)
			json_str(o, NULL, ip4_addr_format(l->dns[k], a, sizeof(a)));
		json_arr_end(o);
		json_u64(o, "lease_time", l->lease_s);
		/* UINT32_MAX: forever, as iproute2's JSON writes an infinite lifetime. */
		static const char *const keys[] = {"renew_in", "rebind_in", "expires_in"};
		const uint64_t at[] = {l->t1_ms, l->t2_ms, l->expiry_ms};
		for (unsigned k = 0; k < 3; k++) {
			uint64_t s = cmd_dhcp_left_s(at[k], now);
			json_u64(o, keys[k], s == UINT64_MAX ? UINT32_MAX : s);
		}
	}
	json_obj_begin(o, "counters");
	for (unsigned k = 0; k < DHCP_C_COUNT; k++)
		json_u64(o, dhcp_counter_str(k), c->counters[k]);
	json_obj_end(o);
	json_obj_end(o);
}

void cmd_dhcp_port_show(struct daemon *d, uint16_t port, struct ctl_out *o)
{
	const struct dhcp_client *c = dhcp_run_client(d, port);
	if (c == NULL)
		return;
	uint64_t now = dhcp_run_now_ms();
	if (o->json) {
		cmd_dhcp_json(o, c, now);
		return;
	}
	char a[16];
	ctl_printf(o, "    dhcp %s", dhcp_state_str(c->state));
	if (cmd_dhcp_holds(c)) {
		const struct dhcp_lease *l = &c->lease;
		ctl_printf(o, " server %s", ip4_addr_format(l->server, a, sizeof(a)));
		if (l->router != 0)
			ctl_printf(o, " router %s", ip4_addr_format(l->router, a, sizeof(a)));
		if (l->mtu != 0)
			ctl_printf(o, " mtu %u", l->mtu);
		for (unsigned k = 0; k < l->nb_dns; k++)
			ctl_printf(o, " dns %s", ip4_addr_format(l->dns[k], a, sizeof(a)));
		ctl_printf(o, " lease %usec\n     ", l->lease_s);
		cmd_dhcp_lft_text(o, "renew", cmd_dhcp_left_s(l->t1_ms, now));
		cmd_dhcp_lft_text(o, "rebind", cmd_dhcp_left_s(l->t2_ms, now));
		cmd_dhcp_lft_text(o, "expires", cmd_dhcp_left_s(l->expiry_ms, now));
	}
	ctl_printf(o, "\n     ");
	for (unsigned k = 0; k < DHCP_C_COUNT; k++)
		ctl_printf(o, " %s %" PRIu64, dhcp_counter_str(k), c->counters[k]);
	ctl_printf(o, "\n");
}
