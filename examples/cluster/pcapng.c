/* dps-cluster-pcapng: writes what one consumer of a cluster receives as pcapng to stdout, so
 * that tshark -r -, tcpdump -r -, Suricata or Zeek can read a cluster's queue from a pipe.
 * Stops after -c frames, at SIGINT/SIGTERM, or when the reader goes (SIGPIPE).
 * Blocks (pcapng, IETF draft-ietf-opsawg-pcapng): a section header, one interface per port
 * of the cluster (nanosecond timestamps), one enhanced packet block per frame. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer_loop.h"

#define SNAPLEN 65535
#define LINKTYPE_ETHERNET 1
#define OPT_IF_NAME 2
#define OPT_IF_TSRESOL 9

static void put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

static void put16(FILE *f, uint16_t v)
{
	fwrite(&v, 2, 1, f);
}

static uint32_t pad4(uint32_t n)
{
	return (n + 3) & ~3u;
}

static void write_padded(FILE *f, const void *p, uint32_t n)
{
	static const uint8_t zero[4];
	fwrite(p, 1, n, f);
	fwrite(zero, 1, pad4(n) - n, f);
}

static void write_header(FILE *f, const struct dps_cluster_info *info)
{
	put32(f, 0x0a0d0d0a);           /* section header block */
	put32(f, 28);
	put32(f, 0x1a2b3c4d);
	put16(f, 1);
	put16(f, 0);
	put32(f, 0xffffffff);           /* section length unknown */
	put32(f, 0xffffffff);
	put32(f, 28);
	for (unsigned i = 0; i < info->nb_ports; i++) {
		uint32_t name_len = (uint32_t)strlen(info->ports[i]);
		uint32_t opts = 4 + pad4(name_len) + 4 + 4 + 4;
		uint32_t len = 20 + opts;
		put32(f, 1);            /* interface description block */
		put32(f, len);
		put16(f, LINKTYPE_ETHERNET);
		put16(f, 0);
		put32(f, SNAPLEN);
		put16(f, OPT_IF_NAME);
		put16(f, (uint16_t)name_len);
		write_padded(f, info->ports[i], name_len);
		put16(f, OPT_IF_TSRESOL);
		put16(f, 1);
		uint8_t nanos[4] = {9, 0, 0, 0};
		fwrite(nanos, 1, 4, f);
		put32(f, 0);            /* end of options */
		put32(f, len);
	}
}

static bool write_burst(void *ctx, const struct dps_cluster_frame *fr, unsigned n)
{
	FILE *f = ctx;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 32 + pad4(fr[i].len);
		put32(f, 6);            /* enhanced packet block */
		put32(f, len);
		put32(f, fr[i].port);
		put32(f, (uint32_t)(fr[i].ts_ns >> 32));
		put32(f, (uint32_t)fr[i].ts_ns);
		put32(f, fr[i].len);
		put32(f, fr[i].len);
		write_padded(f, fr[i].data, fr[i].len);
		put32(f, len);
	}
	return fflush(f) == 0;
}

int main(int argc, char **argv)
{
	uint64_t limit = 0;
	int o;
	while ((o = getopt(argc, argv, "c:")) != -1) {
		if (o != 'c')
			return 2;
		limit = strtoull(optarg, NULL, 10);
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: dps-cluster-pcapng [-c FRAMES] NAME@i|NAME@g:i > FILE\n");
		return 2;
	}
	struct dps_cluster *c = consumer_attach("dps-cluster-pcapng", argv[optind]);
	struct dps_cluster_info info;
	dps_cluster_info(c, &info);
	write_header(stdout, &info);
	int rc = fflush(stdout) == 0 ? consumer_run(c, limit, write_burst, stdout) : 0;
	dps_cluster_detach(c);
	return rc;
}
