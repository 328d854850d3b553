/* dps-cluster-reflect: sends every frame one consumer of a cluster receives back out of the
 * port it came in on, source and destination MAC swapped (transmit through a cluster: the
 * reflected frame is built straight in a buffer the daemon lends, which the port sends as
 * it is). Prints "reflected N" at the end (after -n frames, SIGINT or SIGTERM). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumer_loop.h"

struct reflect {
	struct dps_cluster *c;
	uint64_t reflected;
};

static bool reflect_burst(void *ctx, const struct dps_cluster_frame *f, unsigned n)
{
	struct reflect *r = ctx;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *buf;
		uint32_t size;
		/* The daemon sends posted frames every loop: wait for a buffer, briefly. */
		while ((buf = dps_cluster_tx_buffer(r->c, &size)) == NULL && errno == EAGAIN &&
		       !consumer_stopping())
			sched_yield();
		if (buf == NULL)
			return false;
		if (f[i].len < 14 || f[i].len > size)
			continue;
		memcpy(buf, f[i].data + 6, 6);
		memcpy(buf + 6, f[i].data, 6);
		memcpy(buf + 12, f[i].data + 12, f[i].len - 12);
		if (dps_cluster_tx_post(r->c, f[i].port, f[i].len) != 0)
			return false;
		r->reflected++;
	}
	return true;
}

int main(int argc, char **argv)
{
	uint64_t limit = 0;
	int o;
	while ((o = getopt(argc, argv, "n:")) != -1) {
		if (o != 'n')
			return 2;
		limit = strtoull(optarg, NULL, 10);
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: dps-cluster-reflect [-n FRAMES] NAME@i|NAME@g:i\n");
		return 2;
	}
	static struct reflect r;
	return consumer_run_counted("dps-cluster-reflect", argv[optind], limit, reflect_burst,
				    &r, &r.c, "reflected", &r.reflected);
}
