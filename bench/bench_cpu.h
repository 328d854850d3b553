/* What the micro-benchmarks (acl_classify.c, flow_walk.c) measure with: this thread's CPU
 * time, and the median of several runs. */
#ifndef DPS_BENCH_CPU_H
#define DPS_BENCH_CPU_H

#include <stdlib.h>
#include <time.h>

/* The thread's CPU time, not the wall clock: on a shared machine the time others' work
 * takes from this thread would otherwise count as the code's under test. */
static inline double bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) (n >= 1) and returns its median. */
static inline double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
