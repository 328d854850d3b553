/* dps-cluster-forward: an inline consumer (libzero's zbounce from a consumer): sends every
 * frame it receives out of another port of its cluster, without copying it (the daemon
 * hands the buffer the NIC wrote to that port when the frame is released). -p PORT: the
 * index of the port in the cluster's port list (default: the other of two, 1 for frames of
 * port 0, 0 for the rest). Prints "forwarded N" at the end (after -n frames, SIGINT or
 * SIGTERM). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "consumer_loop.h"

struct forward {
	struct dps_cluster *c;
	int port;                       /* -1: the other port */
	uint64_t forwarded;
};

static bool forward_burst(void *ctx, const struct dps_cluster_frame *f, unsigned n)
{
	struct forward *fw = ctx;
	for (unsigned i = 0; i < n; i++) {
		unsigned out = fw->port >= 0 ? (unsigned)fw->port : f[i].port == 0;
		if (dps_cluster_forward(fw->c, &f[i], out) != 0)
			return false;
		fw->forwarded++;
	}
	return true;
}

int main(int argc, char **argv)
{
	uint64_t limit = 0;
	static struct forward fw = {.port = -1};
	int o;
	while ((o = getopt(argc, argv, "n:p:")) != -1) {
		if (o == 'n')
			limit = strtoull(optarg, NULL, 10);
		else if (o == 'p')
			fw.port = atoi(optarg);
		else
			return 2;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: dps-cluster-forward [-n FRAMES] [-p PORT] NAME@i|NAME@g:i\n");
		return 2;
	}
	return consumer_run_counted("dps-cluster-forward", argv[optind], limit, forward_burst,
				    &fw, &fw.c, "forwarded", &fw.forwarded);
}
