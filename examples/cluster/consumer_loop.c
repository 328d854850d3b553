#include "consumer_loop.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

bool consumer_stopping(void)
{
	return stop != 0;
}

struct dps_cluster *consumer_attach(const char *prog, const char *spec)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: waits end with EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	struct dps_cluster *c = dps_cluster_attach(spec);
	if (c == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, spec, dps_cluster_error());
		exit(1);
	}
	return c;
}

int consumer_run(struct dps_cluster *c, uint64_t limit,
		 bool (*on_burst)(void *ctx, const struct dps_cluster_frame *f, unsigned n),
		 void *ctx)
{
	struct dps_cluster_frame f[CONSUMER_BURST];
	uint64_t seen = 0;
	while (!stop && (limit == 0 || seen < limit)) {
		unsigned want = CONSUMER_BURST;
		if (limit != 0 && limit - seen < want)
			want = (unsigned)(limit - seen);
		int n = dps_cluster_recv(c, f, want);
		if (n == -EPIPE)
			return 1;
		if (n == 0) {
			int rc = dps_cluster_wait(c, -1);
			if (rc == -EPIPE)
				return 1;
			continue;
		}
		if (n < 0)
			return 1;
		bool go_on = on_burst(ctx, f, (unsigned)n);
		dps_cluster_release(c, f, (unsigned)n);
		seen += (uint64_t)n;
		if (!go_on)
			break;
	}
	return 0;
}

int consumer_run_counted(const char *prog, const char *spec, uint64_t limit,
			 bool (*on_burst)(void *ctx, const struct dps_cluster_frame *f, unsigned n),
			 void *ctx, struct dps_cluster **handle, const char *label,
			 const uint64_t *count)
{
	*handle = consumer_attach(prog, spec);
	int rc = consumer_run(*handle, limit, on_burst, ctx);
	printf("%s %" PRIu64 "\n", label, *count);
	fflush(stdout);
	dps_cluster_detach(*handle);
	return rc;
}
