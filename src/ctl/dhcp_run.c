/* The ports' DHCP clients on the control thread (dhcp_run.h says why there): the socket on
 * port 68, messages in and out through the worker that owns it, and leases applied with the
 * commands an operator would type, so that everything those commands do (every worker's
 * tables, gratuitous ARP, the kernel interface's copy) happens for a lease too. */
#include "dhcp_run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_random.h>

#include "cmd.h"
#include "stack/steer.h"
#include "udp/udp.h"
#include "wire/ipv4.h"

#define DHCP_BCAST 0xffffffffu
#define DHCP_RX_BATCH 16
/* Larger messages than an Ethernet MTU carries are cut, and then refused as malformed: we
 * announce (option 57) no more than the port's MTU allows. */
#define DHCP_RX_MAX 1500
#define DHCP_UDP_IP_HDRS 28     /* IPv4 and UDP headers: option 57 counts them (RFC 2132) */

struct dhcp_run;

struct dhcp_port {
	struct dhcp_run *run;
	uint16_t port;
	bool active;
	struct dhcp_client c;
	uint16_t mtu_before;    /* the port's MTU before the lease set one; 0: untouched */
	uint32_t route_gw;      /* the default route the lease added; 0: none */
};

struct dhcp_rx {
	struct udp_rx_hdr h;
	bool trunc;
	uint32_t len;
	uint8_t b[DHCP_RX_MAX];
};

struct dhcp_run {
	struct daemon *d;
	int efd;                /* the worker's notify writes it: messages are waiting */
	atomic_bool pending;    /* a write is outstanding: later messages need none */
	unsigned owner;         /* the worker that owns UDP port 68 (steer.h) */
	struct udp_sock *sock;  /* 0.0.0.0:68 while a client runs */
	struct sock_owner sock_owner;
	unsigned nb_active;
	bool removing;          /* our own `ip addr del` runs: not the operator's */
	struct dhcp_port ports[NETCFG_MAX_PORTS];
	unsigned nb_rx;
	struct dhcp_rx rx[DHCP_RX_BATCH];
};

uint64_t dhcp_run_now_ms(void)
{
	/* BOOTTIME counts a suspended host's sleep: a lease runs out while the host sleeps. */
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs one command line as the config file would, logging why it failed. */
static int dhcp_cmd(struct daemon *d, const char *port_name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int dhcp_cmd(struct daemon *d, const char *port_name, const char *fmt, ...)
{
	char line[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	char *argv[16];
	int argc = 0;
	for (char *save = NULL, *w = strtok_r(line, " ", &save); w != NULL && argc < 16;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	struct ctl_out o;
	ctl_out_init(&o, false);
	int rc = cmd_exec(d, argc, argv, &o);
	if (rc != 0)
		fprintf(stderr, "dpstackd: dhcp %s: %s\n", port_name, o.buf != NULL ? o.buf : "failed");
	ctl_out_fini(&o);
	return rc;
}

static const char *dhcp_port_name(const struct dhcp_port *dp)
{
	return dp->run->d->master.ifaces[dp->port].name;
}

/* Worker side: the socket, messages out and in. */

static void dhcp_sock_notify(struct sock *sk, uint32_t events)
{
	struct dhcp_run *r = sk->owner.ctx;
	/* One wake-up per batch: the control thread clears pending before it drains. */
	if ((events & SOCK_EV_IN) && !atomic_exchange(&r->pending, true)) {
		uint64_t one = 1;
		if (write(r->efd, &one, sizeof(one)) < 0)
			atomic_store(&r->pending, false);
	}
}

static int dhcp_open_on_worker(struct stack *s, void *arg)
{
	struct dhcp_run *r = arg;
	int rc = udp_bind(s, 0, DHCP_CLIENT_PORT, 0, 0, &r->sock_owner, &r->sock);
	if (rc == 0)
		udp_set_broadcast(r->sock, true);
	return rc;
}

static int dhcp_close_on_worker(struct stack *s, void *arg)
{
	struct dhcp_run *r = arg;
	(void)s;
	udp_close(r->sock);
	r->sock = NULL;
	return 0;
}

static int dhcp_recv_on_worker(struct stack *s, void *arg)
{
	struct dhcp_run *r = arg;
	(void)s;
	for (r->nb_rx = 0; r->nb_rx < DHCP_RX_BATCH; r->nb_rx++) {
		struct dhcp_rx *x = &r->rx[r->nb_rx];
		ssize_t n = udp_recvmsg(r->sock, x->b, sizeof(x->b), &x->h, &x->trunc);
		if (n < 0)
			break;
		x->len = (uint32_t)n;
	}
	return 0;
}

struct dhcp_tx {
	struct udp_sock *sock;
	const uint8_t *msg;
	size_t len;
	uint32_t src, dst;
	uint16_t port;
};

static int dhcp_send_on_worker(struct stack *s, void *arg)
{
	struct dhcp_tx *t = arg;
	(void)s;
	struct udp_send_opts o = {.src = t->src, .bcast_on_port = t->dst == DHCP_BCAST,
				  .port = t->port};
	ssize_t n = udp_sendmsg(t->sock, t->msg, t->len, t->dst, DHCP_SERVER_PORT, &o);
	return n < 0 ? (int)n : 0;
}

struct dhcp_flag {
	uint16_t port;
	bool on;
};

static int dhcp_flag_on_worker(struct stack *s, void *arg)
{
	struct dhcp_flag *f = arg;
	s->dhcp_client[f->port] = f->on;
	return 0;
}

/* The client's callbacks. */

static void dhcp_send(void *ctx, const uint8_t *msg, size_t len, uint32_t src, uint32_t dst)
{
	struct dhcp_port *dp = ctx;
	struct dhcp_run *r = dp->run;
	struct dhcp_tx t = {.sock = r->sock, .msg = msg, .len = len, .src = src, .dst = dst,
			    .port = dp->port};
	int rc = worker_call(&r->d->workers[r->owner], dhcp_send_on_worker, &t);
	if (rc != 0)
		fprintf(stderr, "dpstackd: dhcp %s: not sent: %s\n", dhcp_port_name(dp),
			strerror(-rc));
}

/* Takes back what the lease set: its default route (if still the one it added), its
 * address (unless the operator removed it already) and the MTU it changed. */
static void dhcp_unapply(struct dhcp_port *dp, const struct dhcp_lease *l)
{
	struct daemon *d = dp->run->d;
	const char *name = dhcp_port_name(dp);
	char a[16];
	if (dp->route_gw != 0) {
		const struct route *rt = route_lookup4(d->master.routes, 0);
		if (rt != NULL && rt->plen == 0 && rt->type == ROUTE_GATEWAY &&
		    route_gateway4(rt) == dp->route_gw)
			dhcp_cmd(d, name, "ip route del default");
		dp->route_gw = 0;
	}
	const struct route *lr = route_lookup4(d->master.routes, l->addr);
	if (lr != NULL && lr->type == ROUTE_LOCAL && lr->port == dp->port && lr->plen == 32) {
		dp->run->removing = true;
		dhcp_cmd(d, name, "ip addr del %s/%u dev %s",
			 ip4_addr_format(l->addr, a, sizeof(a)), l->plen, name);
		dp->run->removing = false;
	}
	if (dp->mtu_before != 0) {
		dhcp_cmd(d, name, "link set %s mtu %u", name, dp->mtu_before);
		dp->mtu_before = 0;
	}
}

static void dhcp_remove(void *ctx, const struct dhcp_lease *l)
{
	struct dhcp_port *dp = ctx;
	char a[16];
	dhcp_unapply(dp, l);
	fprintf(stderr, "dpstackd: dhcp %s: gave up %s (%s)\n", dhcp_port_name(dp),
		ip4_addr_format(l->addr, a, sizeof(a)), dhcp_state_str(dp->c.state));
}

static int dhcp_apply(void *ctx, const struct dhcp_lease *old, const struct dhcp_lease *l)
{
	struct dhcp_port *dp = ctx;
	struct daemon *d = dp->run->d;
	const char *name = dhcp_port_name(dp);
	char a[16], gw[16];
	bool same_addr = old != NULL && old->addr == l->addr && old->plen == l->plen;
	if (old != NULL && !same_addr)
		dhcp_unapply(dp, old);
	if (!same_addr && dhcp_cmd(d, name, "ip addr add %s/%u dev %s",
				   ip4_addr_format(l->addr, a, sizeof(a)), l->plen, name) != 0)
		return -EADDRNOTAVAIL;
	/* The server's MTU (RFC 2132 §5.1) before the route, which takes the port's. */
	uint16_t mtu = d->master.ifaces[dp->port].mtu;
	if (l->mtu != 0 && l->mtu != mtu) {
		if (dhcp_cmd(d, name, "link set %s mtu %u", name, l->mtu) == 0 && dp->mtu_before == 0)
			dp->mtu_before = mtu;
	} else if (l->mtu == 0 && dp->mtu_before != 0) {
		dhcp_cmd(d, name, "link set %s mtu %u", name, dp->mtu_before);
		dp->mtu_before = 0;
	}
	if (dp->route_gw != 0 && dp->route_gw != l->router) {
		dhcp_cmd(d, name, "ip route del default");
		dp->route_gw = 0;
	}
	/* An operator's default route stays: the command refuses a second one. */
	if (l->router != 0 && dp->route_gw == 0 &&
	    dhcp_cmd(d, name, "ip route add default via %s dev %s",
		     ip4_addr_format(l->router, gw, sizeof(gw)), name) == 0)
		dp->route_gw = l->router;
	fprintf(stderr, "dpstackd: dhcp %s: bound %s/%u from %s, lease %u s\n", name,
		ip4_addr_format(l->addr, a, sizeof(a)), l->plen,
		ip4_addr_format(l->server, gw, sizeof(gw)), l->lease_s);
	return 0;
}

static uint32_t dhcp_random(void *ctx)
{
	(void)ctx;
	return (uint32_t)rte_rand();
}

static struct dhcp_run *dhcp_run_get(struct daemon *d)
{
	if (d->dhcp != NULL)
		return d->dhcp;
	struct dhcp_run *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0) {
		free(r);
		return NULL;
	}
	r->d = d;
	r->owner = steer_udp_owner(&d->steer, DHCP_CLIENT_PORT);
	r->sock_owner = (struct sock_owner){.notify = dhcp_sock_notify, .ctx = r};
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++)
		r->ports[p] = (struct dhcp_port){.run = r, .port = p};
	d->dhcp = r;
	return r;
}

static void dhcp_set_flag(struct daemon *d, uint16_t port, bool on)
{
	struct dhcp_flag f = {.port = port, .on = on};
	daemon_each_worker(d, dhcp_flag_on_worker, &f);
}

int dhcp_run_start(struct daemon *d, uint16_t port)
{
	struct dhcp_run *r = dhcp_run_get(d);
	if (r == NULL)
		return -ENOMEM;
	struct dhcp_port *dp = &r->ports[port];
	if (dp->active)
		return -EALREADY;
	if (r->sock == NULL) {
		int rc = worker_call(&d->workers[r->owner], dhcp_open_on_worker, r);
		if (rc != 0)
			return rc;
	}
	dhcp_set_flag(d, port, true);
	const struct netcfg_iface *i = &d->master.ifaces[port];
	uint32_t max_msg = i->mtu - DHCP_UDP_IP_HDRS;
	static const struct dhcp_client_ops ops = {.send = dhcp_send, .apply = dhcp_apply,
						   .remove = dhcp_remove, .random = dhcp_random};
	struct dhcp_client_ops o = ops;
	o.ctx = dp;
	dhcp_client_init(&dp->c, &i->mac, (uint16_t)(max_msg > DHCP_RX_MAX ? DHCP_RX_MAX : max_msg),
			 &o);
	dp->active = true;
	r->nb_active++;
	dhcp_client_start(&dp->c, dhcp_run_now_ms());
	return 0;
}

int dhcp_run_stop(struct daemon *d, uint16_t port)
{
	struct dhcp_run *r = d->dhcp;
	if (r == NULL || !r->ports[port].active)
		return -ESRCH;
	struct dhcp_port *dp = &r->ports[port];
	dhcp_client_stop(&dp->c, dhcp_run_now_ms(), true);
	dp->active = false;
	dhcp_set_flag(d, port, false);
	if (--r->nb_active == 0)
		worker_call(&d->workers[r->owner], dhcp_close_on_worker, r);
	return 0;
}

bool dhcp_run_addr_del(struct daemon *d, uint16_t port, uint32_t addr)
{
	struct dhcp_run *r = d->dhcp;
	if (r == NULL || r->removing || !r->ports[port].active)
		return false;
	const struct dhcp_client *c = &r->ports[port].c;
	if ((c->state != DHCP_ST_BOUND && c->state != DHCP_ST_RENEWING &&
	     c->state != DHCP_ST_REBINDING) || c->lease.addr != addr)
		return false;
	dhcp_run_stop(d, port);
	return true;
}

const struct dhcp_client *dhcp_run_client(const struct daemon *d, uint16_t port)
{
	if (d->dhcp == NULL || !d->dhcp->ports[port].active)
		return NULL;
	return &d->dhcp->ports[port].c;
}

int dhcp_run_fd(const struct daemon *d)
{
	return d->dhcp != NULL && d->dhcp->nb_active != 0 ? d->dhcp->efd : -1;
}

int dhcp_run_timeout_ms(const struct daemon *d, int max_ms)
{
	const struct dhcp_run *r = d->dhcp;
	if (r == NULL || r->nb_active == 0)
		return max_ms;
	uint64_t now = dhcp_run_now_ms(), wait = (uint64_t)max_ms;
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct dhcp_port *dp = &r->ports[p];
		uint64_t left = dp->c.next_ms > now ? dp->c.next_ms - now : 0;
		if (dp->active && left < wait)
			wait = left;
	}
	return (int)wait;
}

/* Gives each received message to its port's client. A port without one saw another
 * exchange on its segment: no client's business, and no bad input either. */
static void dhcp_dispatch(struct dhcp_run *r, uint64_t now)
{
	for (unsigned k = 0; k < r->nb_rx; k++) {
		const struct dhcp_rx *x = &r->rx[k];
		unsigned port = x->h.ifindex - 1u; /* netcfg_ifindex */
		if (port >= NETCFG_MAX_PORTS || !r->ports[port].active)
			continue;
		struct dhcp_client *c = &r->ports[port].c;
		struct dhcp_repr m;
		if (x->trunc || dhcp_parse(x->b, x->len, &m) != WIRE_OK)
			dhcp_client_count_bad(c);
		else
			dhcp_client_input(c, now, &m);
	}
}

void dhcp_run_poll(struct daemon *d)
{
	struct dhcp_run *r = d->dhcp;
	if (r == NULL || r->nb_active == 0)
		return;
	uint64_t v;
	bool woken = read(r->efd, &v, sizeof(v)) == (ssize_t)sizeof(v);
	if (woken)
		atomic_store(&r->pending, false);
	while (woken && r->sock != NULL) {
		r->nb_rx = 0;
		if (worker_call(&d->workers[r->owner], dhcp_recv_on_worker, r) != 0)
			break;
		dhcp_dispatch(r, dhcp_run_now_ms());
		if (r->nb_rx < DHCP_RX_BATCH)
			break;
	}
	uint64_t now = dhcp_run_now_ms();
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		if (r->ports[p].active)
			dhcp_client_tick(&r->ports[p].c, now);
}

void dhcp_run_fini(struct daemon *d)
{
	struct dhcp_run *r = d->dhcp;
	if (r == NULL)
		return;
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++)
		if (r->ports[p].active)
			dhcp_run_stop(d, p);
	close(r->efd);
	free(r);
	d->dhcp = NULL;
}
