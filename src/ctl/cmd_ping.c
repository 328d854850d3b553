/* ping: echo requests from the stack itself (sent by worker 0, the reply taken by any), so the
 * stack's own output path — route, ARP or Neighbor Discovery, fragmentation — can be exercised
 * and measured from the command line, over ICMP (RFC 792) or ICMPv6 (RFC 4443 §4). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "cmd.h"
#include "ip6/ip6.h"
#include "wire/ipv4.h"

#define PING_MAX_COUNT 100000

struct ping_op {
	bool v6;
	uint32_t dst;
	struct ip6_addr dst6;
	uint16_t port;            /* a link-local destination's (`dev PORT`) */
	uint16_t id;
	uint16_t seq;
	uint32_t size;
	uint64_t sent_tsc;
	uint64_t reply_tsc;       /* the earliest any worker saw; 0: none yet */
	uint32_t reply_len;
};

static int ping_arm_on_worker(struct stack *s, void *arg)
{
	struct ping_op *op = arg;
	stack_ping_arm(s, op->id, op->seq);
	return 0;
}

static int ping_send_on_worker(struct stack *s, void *arg)
{
	struct ping_op *op = arg;
	int rc = op->v6 ? icmp6_ping_send(s, &op->dst6, op->port, op->id, op->seq, op->size)
			: stack_ping_send(s, op->dst, op->id, op->seq, op->size);
	op->sent_tsc = s->ping.sent_tsc;
	return rc;
}

/* The reply reaches whichever worker its hash picks. */
static int ping_check_on_worker(struct stack *s, void *arg)
{
	struct ping_op *op = arg;
	if (s->ping.reply_tsc != 0 && (op->reply_tsc == 0 || s->ping.reply_tsc < op->reply_tsc)) {
		op->reply_tsc = s->ping.reply_tsc;
		op->reply_len = s->ping.reply_len;
	}
	return 0;
}

static int ping_disarm_on_worker(struct stack *s, void *arg)
{
	s->ping.id = 0;
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ping [-6] ADDR [dev PORT] [count N] [size N] [interval-ms N] [timeout-ms N] */
int cmd_ping(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct ping_op op = {.size = 56, .port = NETCFG_PORT_ANY};
	if (argc >= 1 && strcmp(argv[0], "-6") == 0) {
		op.v6 = true;
		argc--;
		argv++;
	}
	if (argc < 1 || argc % 2 != 1)
		return -1;
	uint32_t count = 3, interval_ms = 100, timeout_ms = 1000;
	op.v6 = op.v6 || strchr(argv[0], ':') != NULL;
	if (op.v6 ? ip6_addr_parse(argv[0], &op.dst6) != 0 : ip4_addr_parse(argv[0], &op.dst) != 0)
		return ctl_error(o, "'%s' is not an IPv%c address", argv[0], op.v6 ? '6' : '4');
	uint32_t max_size = op.v6 ? UINT16_MAX - ICMP6_HDR_LEN : 65507;
	for (int i = 1; i < argc; i += 2) {
		int rc;
		if (strcmp(argv[i], "dev") == 0)
			rc = cmd_parse_port(d, argv[i + 1], &op.port, o);
		else if (strcmp(argv[i], "count") == 0)
			rc = cmd_parse_u32(argv[i + 1], 1, PING_MAX_COUNT, &count, "count", o);
		else if (strcmp(argv[i], "size") == 0)
			rc = cmd_parse_u32(argv[i + 1], 0, max_size, &op.size, "size", o);
		else if (strcmp(argv[i], "interval-ms") == 0)
			rc = cmd_parse_u32(argv[i + 1], 0, 60000, &interval_ms, "interval-ms", o);
		else if (strcmp(argv[i], "timeout-ms") == 0)
			rc = cmd_parse_u32(argv[i + 1], 1, 10000, &timeout_ms, "timeout-ms", o);
		else
			return ctl_error(o, "unknown ping option '%s'", argv[i]);
		if (rc != 0)
			return -1;
	}
	if (op.v6 && (ip6_is_link_local(&op.dst6) || ip6_is_multicast(&op.dst6)) &&
	    op.port == NETCFG_PORT_ANY)
		return ctl_error(o, "%s is link-scoped: say which port (dev PORT)", argv[0]);
	if (d->dry_run)
		return 0;
	struct worker *w = &d->workers[0];
	op.id = (uint16_t)(getpid() ^ now_us());
	op.id |= 1; /* never 0, which means "no ping" */
	uint32_t received = 0;
	double rtt_min = 0, rtt_max = 0, rtt_sum = 0;
	const double tsc_per_ms = (double)rte_get_tsc_hz() / 1000.0;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "dst", argv[0]);
		json_arr_begin(o, "replies");
	}
	uint32_t sent = 0;
	bool interrupted = false;
	for (uint32_t k = 0; k < count && !(interrupted = daemon_interrupted(d)); k++) {
		op.seq = (uint16_t)(k + 1);
		uint64_t start = now_us();
		op.reply_tsc = 0;
		daemon_each_worker(d, ping_arm_on_worker, &op);
		int rc = worker_call(w, ping_send_on_worker, &op);
		if (rc != 0) {
			if (!o->json)
				ctl_printf(o, "seq=%u: not sent: %s\n", op.seq, cmd_strerror(-rc));
		} else {
			sent++;
			/* Poll the worker for the reply until the timeout. */
			do {
				usleep(200);
				daemon_each_worker(d, ping_check_on_worker, &op);
			} while (op.reply_tsc == 0 && now_us() - start < timeout_ms * 1000ull &&
				 !daemon_interrupted(d));
		}
		if (rc == 0 && op.reply_tsc != 0) {
			double ms = op.reply_tsc > op.sent_tsc
					    ? (double)(op.reply_tsc - op.sent_tsc) / tsc_per_ms : 0;
			rtt_min = received == 0 || ms < rtt_min ? ms : rtt_min;
			rtt_max = ms > rtt_max ? ms : rtt_max;
			rtt_sum += ms;
			received++;
			if (o->json) {
				json_obj_begin(o, NULL);
				json_u64(o, "seq", op.seq);
				json_u64(o, "bytes", op.reply_len);
				json_u64(o, "rtt_us", (uint64_t)(ms * 1000));
				json_obj_end(o);
			} else {
				ctl_printf(o, "%u bytes from %s: seq=%u time=%.3f ms\n",
					   op.reply_len, argv[0], op.seq, ms);
			}
		} else if (rc == 0 && !o->json) {
			ctl_printf(o, "seq=%u: no reply within %u ms\n", op.seq, timeout_ms);
		}
		/* Sleep out the interval in short steps, so a signal or a vanished client
		 * ends the command within milliseconds. */
		while (k + 1 < count && now_us() - start < interval_ms * 1000ull &&
		       !daemon_interrupted(d))
			usleep(1000);
	}
	daemon_each_worker(d, ping_disarm_on_worker, NULL);
	if (o->json) {
		json_arr_end(o);
		json_u64(o, "transmitted", sent);
		json_u64(o, "received", received);
		json_obj_end(o);
	} else {
		if (interrupted)
			ctl_printf(o, "interrupted\n");
		ctl_printf(o, "%u transmitted, %u received", sent, received);
		if (received != 0)
			ctl_printf(o, ", rtt min/avg/max %.3f/%.3f/%.3f ms", rtt_min,
				   rtt_sum / received, rtt_max);
		ctl_printf(o, "\n");
	}
	if (received == 0) {
		/* Keep the per-request lines: they say why. */
		o->failed = true;
		return -1;
	}
	return 0;
}
