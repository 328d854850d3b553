/* capture PORT [filter EXPR] [count N] [snaplen N]: pcapng of a port's frames, both
 * directions, streamed to dpstackctl (src/capture). One capture per port; captures of
 * different ports run at once, each with its own writer thread, so the control thread
 * stays free. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>

#include "cmd.h"

#define CAPTURE_MAX_COUNT 1000000000u

_Static_assert(WORKER_MAX <= CAPTURE_MAX_WORKERS, "a capture counts for every worker");

struct capture_publish {
	struct worker *w;
	uint16_t port;
	struct capture *c;
};

static int capture_publish_on_worker(struct stack *s, void *arg)
{
	struct capture_publish *p = arg;
	capture_taps_set(&p->w->taps, p->port, p->c);
	return 0;
}

/* Shows c to (or, c NULL, takes the port's capture from) every worker, on its own thread:
 * when this returns, every worker uses the new state (worker_call waits for each). */
static void capture_publish(struct daemon *d, uint16_t port, struct capture *c)
{
	for (unsigned i = 0; i < d->nb_workers; i++) {
		struct capture_publish p = {.w = &d->workers[i], .port = port, .c = c};
		worker_call(&d->workers[i], capture_publish_on_worker, &p);
	}
}

/* Called by the capture's writer thread when it ends. */
static void capture_unpublish(struct capture *c, void *ctx)
{
	capture_publish(ctx, c->port, NULL);
}

/* Frees the captures whose writers have finished, adding their numbers to the totals. */
static void capture_reap(struct daemon *d)
{
	struct capture_registry *r = &d->captures;
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		struct capture *c = r->on[p];
		if (c == NULL || !atomic_load(&c->finished))
			continue;
		r->packets += atomic_load(&c->written);
		r->dropped += capture_dropped(c);
		capture_destroy(c);
		r->on[p] = NULL;
	}
}

void cmd_capture_fini(struct daemon *d)
{
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		struct capture *c = d->captures.on[p];
		if (c == NULL)
			continue;
		capture_stop(c);
		capture_destroy(c);
		d->captures.on[p] = NULL;
	}
}

int cmd_capture(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc < 1 || argc % 2 != 1)
		return -1;
	uint16_t port;
	if (cmd_parse_port(d, argv[0], &port, o) != 0)
		return -1;
	uint32_t count = 0, snaplen = CAPTURE_SNAPLEN_MAX;
	const char *filter = NULL;
	for (int i = 1; i < argc; i += 2) {
		int rc = 0;
		if (strcmp(argv[i], "filter") == 0)
			filter = argv[i + 1];
		else if (strcmp(argv[i], "count") == 0)
			rc = cmd_parse_u32(argv[i + 1], 1, CAPTURE_MAX_COUNT, &count, "count", o);
		else if (strcmp(argv[i], "snaplen") == 0)
			rc = cmd_parse_u32(argv[i + 1], 1, CAPTURE_SNAPLEN_MAX, &snaplen, "snaplen",
					   o);
		else if (filter != NULL)
			return ctl_error(o, "unknown capture option '%s' (a filter of several words "
					    "is one argument: filter \"%s %s ...\")", argv[i],
					 filter, argv[i]);
		else
			return ctl_error(o, "unknown capture option '%s'", argv[i]);
		if (rc != 0)
			return -1;
	}
	if (d->client_fd < 0)
		return ctl_error(o, "capture streams to dpstackctl: not a config-file command");
	capture_reap(d);
	if (d->captures.on[port] != NULL)
		return ctl_error(o, "a capture is already running on %s (one per port)", argv[0]);
	char err[512];
	struct capture *c = capture_create(port, argv[0], d->ports[port].eth_port, snaplen, filter,
					   count, d->nb_workers, err, sizeof(err));
	if (c == NULL)
		return ctl_error(o, "%s", err);
	c->unpublish = capture_unpublish;
	c->unpublish_ctx = d;
	/* The connection now carries a stream that may wait for a slow reader: the control
	 * server's time limits are for requests. */
	struct timeval none = {0};
	setsockopt(d->client_fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
	setsockopt(d->client_fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	/* Published before the writer starts: the writer may end at once (a client already
	 * gone) and unpublish, which must come after. */
	capture_publish(d, port, c);
	int rc = capture_start(c, d->client_fd);
	if (rc != 0) {
		capture_publish(d, port, NULL);
		capture_destroy(c);
		return ctl_error(o, "capture: cannot start its writer: %s", strerror(-rc));
	}
	d->captures.on[port] = c;
	d->captures.started++;
	d->client_kept = true;
	return 0;
}

void cmd_capture_stats(struct daemon *d, struct ctl_out *o)
{
	capture_reap(d);
	const struct capture_registry *r = &d->captures;
	uint64_t packets = r->packets, dropped = r->dropped;
	unsigned running = 0;
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		if (r->on[p] == NULL)
			continue;
		running++;
		packets += atomic_load(&r->on[p]->written);
		dropped += capture_dropped(r->on[p]);
	}
	if (o->json) {
		json_obj_begin(o, "capture");
		json_u64(o, "running", running);
		json_u64(o, "started", r->started);
		json_u64(o, "packets", packets);
		json_u64(o, "dropped", dropped);
		json_arr_begin(o, "captures");
	} else {
		ctl_printf(o, "Capture: %u running, %" PRIu64 " started, %" PRIu64
			      " packets written, %" PRIu64 " dropped (ring or writer behind)\n",
			   running, r->started, packets, dropped);
	}
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct capture *c = r->on[p];
		if (c == NULL)
			continue;
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "port", c->port_name);
			json_str(o, "filter", c->filter);
			json_u64(o, "packets", atomic_load(&c->written));
			json_u64(o, "dropped", capture_dropped(c));
			json_obj_end(o);
		} else {
			ctl_printf(o, "  %s%s%s: %" PRIu64 " packets written, %" PRIu64 " dropped\n",
				   c->port_name, c->filter[0] != '\0' ? " filter " : "", c->filter,
				   atomic_load(&c->written), capture_dropped(c));
		}
	}
	if (o->json) {
		json_arr_end(o);
		json_obj_end(o);
	}
}
