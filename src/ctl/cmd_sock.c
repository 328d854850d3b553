/* sock show: an ss-like table of every TCP and UDP socket of every worker, with the process
 * that owns it (0: the daemon's built-in services; "ns:N" and JSON ns_pid: pid N in a PID
 * namespace the daemon cannot see into, as the process said when it attached). Each worker
 * lists its own sockets on its own thread; the rows are printed here. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

#define SOCK_ROWS_MAX (1u << 20)

struct sock_row {
	uint8_t proto;
	uint8_t worker;
	const char *state;
	struct inet_addr laddr, raddr;  /* either family, IPv4 mapped */
	uint16_t lport, rport;
	uint32_t rx_queued, tx_queued;
	int32_t pid, ns_pid;
};

struct sock_list {
	struct sock_row *rows;
	size_t n, cap;
	bool tcp, udp;
	unsigned worker;
};

static struct sock_row *sock_row_add(struct sock_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap == 0 ? 256 : l->cap * 2;
		if (cap > SOCK_ROWS_MAX)
			return NULL;
		struct sock_row *r = realloc(l->rows, cap * sizeof(*r));
		if (r == NULL)
			return NULL;
		l->rows = r;
		l->cap = cap;
	}
	return &l->rows[l->n++];
}

static int sock_tcp_row(const struct tcp_conn *c, void *arg)
{
	struct sock_list *l = arg;
	struct sock_row *r = sock_row_add(l);
	if (r == NULL)
		return 1;
	struct tcp_conn_info ti;
	tcp_conn_info(c, &ti);
	*r = (struct sock_row){.proto = IPPROTO_TCP, .worker = (uint8_t)l->worker,
			       .state = tcp_state_name(ti.state), .laddr = ti.laddr,
			       .raddr = ti.raddr, .lport = ti.lport, .rport = ti.rport,
			       .rx_queued = ti.rx_queued, .tx_queued = ti.tx_queued,
			       .pid = tcp_sock((struct tcp_conn *)c)->owner.pid,
			       .ns_pid = tcp_sock((struct tcp_conn *)c)->owner.ns_pid};
	return 0;
}

static int sock_udp_row(const struct udp_sock *u, void *arg)
{
	struct sock_list *l = arg;
	struct sock_row *r = sock_row_add(l);
	if (r == NULL)
		return 1;
	struct udp_sock_info ui;
	udp_sock_info(u, &ui);
	*r = (struct sock_row){.proto = IPPROTO_UDP, .worker = (uint8_t)l->worker,
			       .state = inet_addr_is_any(&ui.remote) ? "UNCONN" : "CONNECTED",
			       .laddr = ui.local, .raddr = ui.remote, .lport = ui.lport,
			       .rport = ui.rport,
			       .rx_queued = ui.rx_queued,
			       .pid = udp_sock((struct udp_sock *)u)->owner.pid,
			       .ns_pid = udp_sock((struct udp_sock *)u)->owner.ns_pid};
	return 0;
}

static int sock_collect(struct stack *s, void *arg)
{
	struct sock_list *l = arg;
	l->worker = s->id;
	if (l->tcp)
		tcp_walk(s, sock_tcp_row, l);
	if (l->udp)
		udp_walk(s, sock_udp_row, l);
	return 0;
}

/* ss's forms: 10.0.0.2:80, [2001:db8::2]:80, and for the wildcards *:80 (IPv4's) and
 * [::]:80 (IPv6's, which also hears IPv4 unless the socket is IPv6-only), so the two are
 * told apart. v6: the socket's family (a peer not yet known has the family's wildcard). */
static void sock_addr(char *buf, size_t len, const struct inet_addr *addr, uint16_t port,
		      bool v6)
{
	char ip[64] = "*", num[8] = "*";
	if (inet_addr_is_any(addr)) {
		if (v6)
			snprintf(ip, sizeof(ip), "[::]");
	} else {
		char text[48];
		inet_addr_format(addr, text, sizeof(text));
		snprintf(ip, sizeof(ip), inet_addr_is_v4(addr) ? "%s" : "[%s]", text);
	}
	if (port != 0)
		snprintf(num, sizeof(num), "%u", port);
	snprintf(buf, len, "%s:%s", ip, num);
}

int cmd_sock_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct sock_list l = {.tcp = true, .udp = true};
	if (argc > 1)
		return -1;
	if (argc == 1) {
		if (strcmp(argv[0], "tcp") == 0)
			l.udp = false;
		else if (strcmp(argv[0], "udp") == 0)
			l.tcp = false;
		else
			return -1;
	}
	daemon_each_worker(d, sock_collect, &l);
	if (o->json)
		json_arr_begin(o, NULL);
	else
		ctl_printf(o, "%-5s %-12s %8s %8s %-21s %-21s %7s %6s\n", "Proto", "State",
			   "Recv-Q", "Send-Q", "Local", "Peer", "Pid", "Worker");
	for (size_t i = 0; i < l.n; i++) {
		const struct sock_row *r = &l.rows[i];
		char local[72], peer[72];
		bool v6 = !inet_addr_is_v4(&r->laddr);
		sock_addr(local, sizeof(local), &r->laddr, r->lport, v6);
		sock_addr(peer, sizeof(peer), &r->raddr, r->rport, v6);
		const char *proto = r->proto == IPPROTO_TCP ? "tcp" : "udp";
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "proto", proto);
			json_str(o, "state", r->state);
			json_u64(o, "recv_q", r->rx_queued);
			json_u64(o, "send_q", r->tx_queued);
			json_str(o, "local", local);
			json_str(o, "peer", peer);
			json_u64(o, "pid", (uint64_t)r->pid);
			if (r->pid == 0 && r->ns_pid > 0)
				json_u64(o, "ns_pid", (uint64_t)r->ns_pid);
			json_u64(o, "worker", r->worker);
			json_obj_end(o);
		} else {
			char pid[16] = "-";
			if (r->pid > 0)
				snprintf(pid, sizeof(pid), "%d", r->pid);
			else if (r->ns_pid > 0) /* another container's: its own view */
				snprintf(pid, sizeof(pid), "ns:%d", r->ns_pid);
			ctl_printf(o, "%-5s %-12s %8" PRIu32 " %8" PRIu32 " %-21s %-21s %7s %6u\n",
				   proto, r->state, r->rx_queued, r->tx_queued, local, peer,
				   pid, r->worker);
		}
	}
	if (o->json)
		json_arr_end(o);
	free(l.rows);
	return 0;
}
