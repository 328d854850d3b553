/* stats: per-port, per-worker and per-reason counters, summed over the workers. The workers
 * write their counters without atomics; aligned 64-bit loads here may see a value a few
 * packets old, never a torn one. */
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>

#include "cmd.h"
#include "ip6/ip6.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

#define STATS_WORKER_COLUMNS 8 /* the text output shows each worker's count up to this many */

struct stats_sum {
	uint64_t events[STACK_EV_COUNT];
	uint64_t drops[STACK_DROP_COUNT];
	struct stack_port_counters ports[NETCFG_MAX_PORTS];
};

static void stats_sum(const struct daemon *d, struct stats_sum *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned w = 0; w < d->nb_workers; w++) {
		const struct stack *s = d->workers[w].stack;
		for (unsigned i = 0; i < STACK_EV_COUNT; i++)
			sum->events[i] += s->events[i];
		for (unsigned i = 0; i < STACK_DROP_COUNT; i++)
			sum->drops[i] += s->drops[i];
		for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
			cmd_port_counters_add(&sum->ports[p], &s->ports[p]);
	}
}

/* A worker's cycles by what they were spent on (struct worker_cycles), for both outputs. */
static const struct {
	const char *name;
	size_t off;
} worker_cycle_kinds[] = {
	{"ports", offsetof(struct worker_cycles, ports)},
	{"apps", offsetof(struct worker_cycles, apps)},
	{"timers", offsetof(struct worker_cycles, timers)},
	{"tx", offsetof(struct worker_cycles, tx)},
	{"polling", offsetof(struct worker_cycles, polling)},
	{"asleep", offsetof(struct worker_cycles, asleep)},
};
#define WORKER_CYCLE_KINDS (sizeof(worker_cycle_kinds) / sizeof(worker_cycle_kinds[0]))

static uint64_t worker_cycles_of(const struct worker *wk, unsigned kind)
{
	return *(const uint64_t *)((const char *)&wk->cycles + worker_cycle_kinds[kind].off);
}

/* "12.3% ports, 4.0% apps, ...": the share of the loop's time each kind took. */
static void worker_cycles_text(struct ctl_out *o, const struct worker *wk)
{
	uint64_t total = 0;
	for (unsigned k = 0; k < WORKER_CYCLE_KINDS; k++)
		total += worker_cycles_of(wk, k);
	ctl_printf(o, "    time:");
	for (unsigned k = 0; k < WORKER_CYCLE_KINDS; k++)
		ctl_printf(o, "%s %.1f%% %s", k == 0 ? "" : ",",
			   total == 0 ? 0.0 : 100.0 * (double)worker_cycles_of(wk, k) / (double)total,
			   worker_cycle_kinds[k].name);
	ctl_printf(o, "\n");
}

/* The application channel's counters, by name, for both outputs. */
#define APP_STATS_LIST(X) \
	X(srv, attaches, "application processes attached") \
	X(srv, joins, "forked children that joined their parent's application") \
	X(srv, refused, "attaches or joins refused") \
	X(srv, procs_gone, "processes that exited, crashed or were disconnected") \
	X(srv, apps_freed, "applications whose last process went") \
	X(srv, bad_msgs, "malformed messages (the sender is disconnected)") \
	X(wk, bad_cmds, "invalid ring commands (the sender is disconnected)") \
	X(wk, cmds, "ring commands run by workers") \
	X(wk, calls, "socket calls (connect, listen, bind, options ...) answered by workers") \
	X(srv, app_limit, "attaches refused: the user holds apps-per-user (EUSERS)") \
	X(wk, sock_limit, "sockets refused: the application holds socks-per-app (EMFILE)") \
	X(wk, user_sock_limit, "sockets refused: the user holds socks-per-user (EMFILE)") \
	X(wk, listen_limit, "listens refused: the user holds listeners-per-user (ENOBUFS)") \
	X(wk, arena_limit, "socket buffers refused: the application holds arena-mb-per-app") \
	X(wk, user_arena_limit, "socket buffers refused: the user holds arena-mb-per-user") \
	X(wk, bind_limit, "binds refused: the application holds binds-per-app (ENOBUFS)") \
	X(wk, budget_yields, "UDP send FIFOs left for the next round: the burst's budget ran out") \
	X(wk, accepts, "connections handed to applications' accept rings") \
	X(wk, accept_no_sock, "accepts deferred: the application has no free socket") \
	X(wk, events, "socket events queued to applications") \
	X(wk, wakes, "sleeping application processes woken") \
	X(wk, udp_tx, "datagrams sent from applications' send FIFOs") \
	X(wk, udp_tx_err, "datagrams from applications that could not be sent") \
	X(srv, live_apps, "application segments alive (apps, and closed ones still sending)") \
	X(srv, live_socks, "application sockets open") \
	X(srv, arena_bytes, "bytes of socket buffers in applications' segments")

static void stats_apps(struct daemon *d, struct ctl_out *o)
{
	if (d->chan == NULL)
		return;
	struct chan_server_stats srv;
	struct chan_worker_stats wk;
	chan_stats(d->chan, &srv, &wk);
	if (o->json) {
		json_obj_begin(o, "apps");
#define APP_JSON(src, name, text) json_u64(o, #name, src.name);
		APP_STATS_LIST(APP_JSON)
#undef APP_JSON
		cmd_apps_limits_out(d, o);
		json_obj_end(o);
		return;
	}
	ctl_printf(o, "Applications:\n");
#define APP_TEXT(src, name, text) \
	ctl_printf(o, "  app.%-20s %12" PRIu64 "  %s\n", #name, src.name, text);
	APP_STATS_LIST(APP_TEXT)
#undef APP_TEXT
	cmd_apps_limits_out(d, o);
}

/* One family's reassembly tables, summed over the workers, as the JSON object key. */
static void stats_reass_json(struct daemon *d, struct ctl_out *o, const char *key, bool v6)
{
	json_obj_begin(o, key);
	struct reass_stats rs, total = {0};
	for (unsigned w = 0; w < d->nb_workers; w++) {
		const struct stack *st = d->workers[w].stack;
		reass_stats_get(v6 ? st->ip6->reass : st->reass, &rs);
		total.datagrams += rs.datagrams;
		total.bytes += rs.bytes;
		for (unsigned v = 0; v < REASS_VERDICT_COUNT; v++)
			total.verdicts[v] += rs.verdicts[v];
	}
	json_u64(o, "datagrams", total.datagrams);
	json_u64(o, "bytes", total.bytes);
	/* Each worker's table's limits (`reassembly-datagrams`, `reassembly-memory`). */
	json_u64(o, "max_datagrams", d->stack_params.reass.max_datagrams);
	json_u64(o, "max_bytes", d->stack_params.reass.max_bytes);
	json_obj_begin(o, "verdicts");
	static const char *const verdict_names[] = {
#define VERDICT_NAME(id, text) [REASS_##id] = #id,
		REASS_VERDICT_LIST(VERDICT_NAME)
#undef VERDICT_NAME
	};
	for (unsigned v = 0; v < REASS_VERDICT_COUNT; v++) {
		char name[32];
		size_t k = 0;
		for (; verdict_names[v][k] != '\0' && k + 1 < sizeof(name); k++)
			name[k] = (char)tolower((unsigned char)verdict_names[v][k]);
		name[k] = '\0';
		json_u64(o, name, total.verdicts[v]);
	}
	json_obj_end(o);
	json_obj_end(o);
}

static void stats_json(struct daemon *d, const struct stats_sum *sum, struct ctl_out *o)
{
	json_obj_begin(o, NULL);
	json_u64(o, "tsc_hz", rte_get_tsc_hz()); /* the unit of the workers' cycles */
	json_obj_begin(o, "ports");
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		if (!d->master.ifaces[p].present)
			continue;
		json_obj_begin(o, d->master.ifaces[p].name);
		json_u64(o, "rx_packets", sum->ports[p].rx_packets);
		json_u64(o, "rx_bytes", sum->ports[p].rx_bytes);
		json_u64(o, "tx_packets", sum->ports[p].tx_packets);
		json_u64(o, "tx_bytes", sum->ports[p].tx_bytes);
		struct stack_port_counters sc;
		struct port_dev_counters dc;
		cmd_port_counters_get(d, (uint16_t)p, &sc, &dc);
		cmd_port_losses_json(o, &sum->ports[p], &dc); /* tx_dropped and the device's */
		cmd_port_kernel_json(o, d, (uint16_t)p, &sum->ports[p]);
		json_obj_end(o);
	}
	json_obj_end(o);
	json_arr_begin(o, "workers");
	for (unsigned w = 0; w < d->nb_workers; w++) {
		const struct worker *wk = &d->workers[w];
		json_obj_begin(o, NULL);
		json_u64(o, "worker", w);
		json_u64(o, "lcore", wk->lcore);
		json_u64(o, "polls", wk->polls);
		json_u64(o, "busy_polls", wk->busy_polls);
		json_u64(o, "idle_sleeps", wk->idle_sleeps);
		json_obj_begin(o, "cycles");
		for (unsigned k = 0; k < WORKER_CYCLE_KINDS; k++)
			json_u64(o, worker_cycle_kinds[k].name, worker_cycles_of(wk, k));
		json_obj_end(o);
		json_u64(o, "busy_cycles", wk->busy_cycles);
		/* The worker's share of the ports' counters, and its sockets (`monitor`). */
		struct stack_port_counters pc = {0};
		for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
			cmd_port_counters_add(&pc, &wk->stack->ports[p]);
		json_u64(o, "rx_packets", pc.rx_packets);
		json_u64(o, "rx_bytes", pc.rx_bytes);
		json_u64(o, "tx_packets", pc.tx_packets);
		json_u64(o, "tx_bytes", pc.tx_bytes);
		json_u64(o, "tcp_conns", tcp_conn_count(wk->stack));
		json_u64(o, "tcp_established", tcp_estab_count(wk->stack));
		json_u64(o, "udp_socks", udp_sock_count(wk->stack));
		json_u64(o, "rx_frames", wk->stack->events[STACK_EV_ETH_RX]);
		json_u64(o, "handoff_full", wk->handoff_full);
		json_u64(o, "neigh_news_lost", wk->neigh_news_lost);
		json_u64(o, "tcp_listeners", tcp_listen_used(wk->stack));
		json_u64(o, "tcp_listeners_max", tcp_listen_capacity(wk->stack));
		json_u64(o, "tcp_conn_table", tcp_conn_used(wk->stack));
		json_u64(o, "tcp_conn_table_max", tcp_conn_capacity(wk->stack));
		json_u64(o, "neighbours", neigh_count(wk->stack->neigh));
		json_u64(o, "neighbours_max", neigh_capacity(wk->stack->neigh));
		json_obj_begin(o, "events");
		for (unsigned i = 0; i < STACK_EV_COUNT; i++)
			json_u64(o, stack_event_info[i].name, wk->stack->events[i]);
		json_obj_end(o);
		json_obj_begin(o, "drops");
		for (unsigned i = 0; i < STACK_DROP_COUNT; i++)
			json_u64(o, stack_drop_info[i].name, wk->stack->drops[i]);
		json_obj_end(o);
		json_obj_end(o);
	}
	json_arr_end(o);
	json_obj_begin(o, "events");
	for (unsigned i = 0; i < STACK_EV_COUNT; i++)
		json_u64(o, stack_event_info[i].name, sum->events[i]);
	json_obj_end(o);
	json_obj_begin(o, "drops");
	for (unsigned i = 0; i < STACK_DROP_COUNT; i++)
		json_u64(o, stack_drop_info[i].name, sum->drops[i]);
	json_obj_end(o);
	stats_reass_json(d, o, "reassembly", false);
	stats_reass_json(d, o, "reassembly6", true);
	json_obj_begin(o, "mempool");
	json_u64(o, "size", d->pool->size);
	json_u64(o, "in_use", rte_mempool_in_use_count(d->pool));
	json_obj_end(o);
	json_obj_begin(o, "memory");
	json_u64(o, "heap_trims", d->mem.trims);
	json_obj_end(o);
	stats_apps(d, o);
	cmd_capture_stats(d, o);
	json_obj_end(o);
}

static void stats_text(struct daemon *d, const struct stats_sum *sum, struct ctl_out *o)
{
	ctl_printf(o, "Ports:\n");
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		if (!d->master.ifaces[p].present)
			continue;
		const struct stack_port_counters *pc = &sum->ports[p];
		ctl_printf(o, "  %-10s rx %" PRIu64 " packets %" PRIu64 " bytes, tx %" PRIu64
			      " packets %" PRIu64 " bytes (%" PRIu64 " not sent: tx_dropped)\n",
			   d->master.ifaces[p].name, pc->rx_packets, pc->rx_bytes, pc->tx_packets,
			   pc->tx_bytes, pc->tx_dropped);
		struct stack_port_counters sc;
		struct port_dev_counters dc;
		cmd_port_counters_get(d, (uint16_t)p, &sc, &dc);
		cmd_port_losses_text(o, "             ", pc, &dc);
		cmd_port_kernel_text(o, "             ", d, (uint16_t)p, pc);
	}
	ctl_printf(o, "Workers:\n");
	for (unsigned w = 0; w < d->nb_workers; w++) {
		const struct worker *wk = &d->workers[w];
		ctl_printf(o, "  worker %u (lcore %u): %" PRIu64 " frames, %" PRIu64 " polls, %" PRIu64
			      " busy, %" PRIu64 " idle sleeps\n",
			   w, wk->lcore, wk->stack->events[STACK_EV_ETH_RX], wk->polls,
			   wk->busy_polls, wk->idle_sleeps);
		ctl_printf(o, "    tables: listener %u of %u, connection %u of %u, neighbour %zu of"
			      " %u\n", tcp_listen_used(wk->stack), tcp_listen_capacity(wk->stack),
			   tcp_conn_used(wk->stack), tcp_conn_capacity(wk->stack),
			   neigh_count(wk->stack->neigh), neigh_capacity(wk->stack->neigh));
		if (wk->handoff_full != 0 || wk->neigh_news_lost != 0)
			ctl_printf(o, "    lost: %" PRIu64 " frames (a peer's tx_in ring was full, in"
				      " tx.queue_full), %" PRIu64 " ARP news (a peer's ring was full)\n",
				   wk->handoff_full, wk->neigh_news_lost);
		worker_cycles_text(o, wk);
	}
	/* With a few workers each one's count follows the total, so an uneven spread shows. */
	unsigned cols = d->nb_workers > 1 && d->nb_workers <= STATS_WORKER_COLUMNS ? d->nb_workers
										     : 0;
	ctl_printf(o, "Events:%s\n", cols != 0 ? " (total, then each worker's)" : "");
	for (unsigned i = 0; i < STACK_EV_COUNT; i++) {
		ctl_printf(o, "  %-24s %12" PRIu64, stack_event_info[i].name, sum->events[i]);
		for (unsigned w = 0; w < cols; w++)
			ctl_printf(o, " %10" PRIu64, d->workers[w].stack->events[i]);
		ctl_printf(o, "  %s\n", stack_event_info[i].text);
	}
	ctl_printf(o, "Drops (non-zero):\n");
	for (unsigned i = 0; i < STACK_DROP_COUNT; i++) {
		if (sum->drops[i] == 0)
			continue;
		ctl_printf(o, "  %-24s %12" PRIu64, stack_drop_info[i].name, sum->drops[i]);
		for (unsigned w = 0; w < cols; w++)
			ctl_printf(o, " %10" PRIu64, d->workers[w].stack->drops[i]);
		ctl_printf(o, "  %s\n", stack_drop_info[i].text);
	}
	ctl_printf(o, "Mempool: %u of %u mbufs in use\n", rte_mempool_in_use_count(d->pool),
		   d->pool->size);
	ctl_printf(o, "Memory: %" PRIu64 " heap trims after storms of connections\n",
		   d->mem.trims);
	stats_apps(d, o);
	cmd_capture_stats(d, o);
}

int cmd_stats_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	if (d->dry_run)
		return 0;
	struct stats_sum sum;
	stats_sum(d, &sum);
	if (o->json)
		stats_json(d, &sum, o);
	else
		stats_text(d, &sum, o);
	return 0;
}
