/* dps-cluster-count: counts the frames and bytes one consumer of a cluster receives (libzero's
 * zcount). At the end (after -n frames, SIGINT or SIGTERM) it prints
 * "frames F bytes B dropped D" (D: what the daemon dropped for it, its ring being full).
 * --stall attaches and then reads nothing until a signal: a consumer that falls behind. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "consumer_loop.h"

struct totals {
	uint64_t frames, bytes;
};

static bool count_burst(void *ctx, const struct dps_cluster_frame *f, unsigned n)
{
	struct totals *t = ctx;
	t->frames += n;
	for (unsigned i = 0; i < n; i++)
		t->bytes += f[i].len;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"count", required_argument, NULL, 'n'},
					     {"stall", no_argument, NULL, 's'},
					     {NULL, 0, NULL, 0}};
	uint64_t limit = 0;
	bool stall = false;
	int o;
	while ((o = getopt_long(argc, argv, "n:s", opts, NULL)) != -1) {
		if (o == 'n')
			limit = strtoull(optarg, NULL, 10);
		else if (o == 's')
			stall = true;
		else
			return 2;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: dps-cluster-count [-n FRAMES] [--stall] NAME@i|NAME@g:i\n");
		return 2;
	}
	struct dps_cluster *c = consumer_attach("dps-cluster-count", argv[optind]);
	struct totals t = {0};
	int rc = 0;
	if (stall) {
		while (!consumer_stopping())
			pause();
	} else {
		rc = consumer_run(c, limit, count_burst, &t);
	}
	struct dps_cluster_stats st;
	dps_cluster_stats(c, &st);
	printf("frames %" PRIu64 " bytes %" PRIu64 " dropped %" PRIu64 "\n", t.frames, t.bytes,
	       st.dropped);
	dps_cluster_detach(c);
	return rc;
}
