/* dps-flow-bench: what software flow rules (src/flow) cost per received frame, as the worker
 * pays it (src/dp/worker_flow.c): read the frame's key, walk the rules in order.
 *
 *   dps-flow-bench [--runs N] [--frames N]
 *
 * Rule lists of 1, 10, 100 and 1,000 rules made like a real list (UDP and TCP, sources as
 * /32 hosts and every tenth a /24, single ports and every seventh a range) that never match
 * the frames, and a last rule that matches every one (steer 0): each frame walks the whole
 * list and counts a hit, the worst case. The frames are 64-byte UDP/IPv4 from 1,024
 * addresses. Prints per list the median over the runs of CPU ns per frame (this thread's CPU
 * time, CLOCK_THREAD_CPUTIME_ID, so that other processes on the machine do not count), and
 * the key's read alone. Pure C: no EAL, no ports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_cpu.h"
#include "flow/flow_table.h"

#define NB_ADDRS 1024
#define FRAME_LEN 64
#define MAX_RUNS 64

static void make_frame(uint8_t *f, unsigned i)
{
	memset(f, 0, FRAME_LEN);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[9] = 17;
	ip[12] = 10, ip[13] = 10, ip[14] = (uint8_t)(i >> 8), ip[15] = (uint8_t)i;
	ip[16] = 10, ip[17] = 20, ip[19] = 1;
	ip[20] = 0x30, ip[21] = 0x39;          /* 12345 -> 9 */
	ip[23] = 9;
}

static struct flow_rule rule(const char *line)
{
	char copy[200], err[200], *words[24];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok(copy, " "); w != NULL && n < 24; w = strtok(NULL, " "))
		words[n++] = w;
	struct flow_parse_env env = {.nb_workers = 1};
	struct flow_rule r;
	if (flow_rule_parse(n, words, &env, &r, err, sizeof(err)) != 0) {
		fprintf(stderr, "dps-flow-bench: '%s': %s\n", line, err);
		exit(1);
	}
	return r;
}

/* n rules, the last matching every frame. */
static struct flow_set *make_set(unsigned n)
{
	struct flow_table t = {0};
	char line[200];
	for (unsigned i = 0; i + 1 < n; i++) {
		char src[32], port[16];
		snprintf(src, sizeof(src), i % 10 == 9 ? "172.16.%u.0/24" : "172.16.%u.%u",
			 i / 250, i % 250);
		snprintf(port, sizeof(port), i % 7 == 6 ? "%u-%u" : "%u", 1024 + i, 1074 + i);
		snprintf(line, sizeof(line), "drop proto %s src %s dport %s", i % 3 ? "udp" : "tcp",
			 src, port);
		struct flow_rule r = rule(line);
		flow_table_insert(&t, &r);
	}
	struct flow_rule last = rule("steer 0 src 10.10.0.0/16");
	flow_table_insert(&t, &last);
	struct flow_set *set;
	if (flow_table_build(&t, 1, &set) != 0) {
		fprintf(stderr, "dps-flow-bench: out of memory\n");
		exit(1);
	}
	flow_table_fini(&t);
	return set;
}

/* One run: every frame's key read (and judged by set unless it is NULL) `frames` times
 * over; returns CPU ns per frame. */
static double run(const struct flow_set *set, uint8_t (*f)[FRAME_LEN], unsigned frames)
{
	unsigned matched = 0;
	double t0 = bench_cpu_ns();
	for (unsigned i = 0; i < frames; i++) {
		struct flow_key k;
		flow_key_parse(f[i % NB_ADDRS], FRAME_LEN, 0, &k);
		if (set != NULL)
			matched += flow_set_judge(set, 0, &k) != NULL;
		else
			matched += k.l4;
	}
	double ns = (bench_cpu_ns() - t0) / frames;
	if (matched != frames) {
		fprintf(stderr, "dps-flow-bench: %u of %u frames matched\n", matched, frames);
		exit(1);
	}
	return ns;
}

int main(int argc, char **argv)
{
	unsigned runs = 7, frames = 2000000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--runs") == 0)
			runs = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--frames") == 0)
			frames = (unsigned)atoi(argv[i + 1]);
	}
	if (runs == 0 || runs > MAX_RUNS || frames == 0 || argc % 2 == 0) {
		fprintf(stderr, "usage: dps-flow-bench [--runs 1-%d] [--frames N]\n", MAX_RUNS);
		return 2;
	}
	static uint8_t f[NB_ADDRS][FRAME_LEN];
	for (unsigned i = 0; i < NB_ADDRS; i++)
		make_frame(f[i], i);
	double v[MAX_RUNS];
	for (unsigned r = 0; r < runs; r++)
		v[r] = run(NULL, f, frames);
	printf("%-7s %s\n", "rules", "CPU ns per frame (median of runs)");
	printf("%-7s %.1f (reading the key alone)\n", "-", bench_median(v, runs));
	static const unsigned sizes[] = {1, 10, 100, 1000};
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct flow_set *set = make_set(sizes[s]);
		for (unsigned r = 0; r < runs; r++)
			v[r] = run(set, f, frames);
		printf("%-7u %.1f\n", sizes[s], bench_median(v, runs));
		flow_set_free(set);
	}
	return 0;
}
