/* The monitor's rates (tools/dpstackctl/monitor_rates.c) from two `stats -j` replies written
 * here, half a second apart: traffic per port and worker, busy % from the busy cycles over
 * all the loop's cycles, only non-zero drop and loss rates, and counters that went back or
 * a worker that was not there before (zero, never a huge rate). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "monitor_rates.h"

static void snap_of(struct mon_snap *s, const char *json, long ms)
{
	memset(s, 0, sizeof(*s));
	s->body = strdup(json);
	assert_non_null(s->body);
	assert_int_equal(json_tree_parse(&s->tree, s->body, strlen(s->body)), 0);
	s->mono = (struct timespec){.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
	s->wall = s->mono;
}

static const struct mon_rate *rate_named(const struct mon_rates *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

#define PREV \
	"{\"ports\":{\"port0\":{\"rx_packets\":100,\"rx_bytes\":1000,\"tx_packets\":50," \
	"\"tx_bytes\":500,\"tx_dropped\":0,\"rx_missed\":3}}," \
	"\"workers\":[{\"worker\":0,\"lcore\":1,\"cycles\":{\"ports\":100,\"polling\":900}," \
	"\"busy_cycles\":100,\"rx_packets\":100,\"rx_bytes\":1000,\"tx_packets\":50," \
	"\"tx_bytes\":500,\"handoff_full\":0,\"neigh_news_lost\":0," \
	"\"drops\":{\"ip.a\":5,\"ip.b\":1}}]," \
	"\"drops\":{\"ip.a\":5,\"ip.b\":1}}"

#define CUR \
	"{\"ports\":{\"port0\":{\"rx_packets\":200,\"rx_bytes\":3000,\"tx_packets\":40," \
	"\"tx_bytes\":900,\"tx_dropped\":0,\"rx_missed\":4}}," \
	"\"workers\":[{\"worker\":0,\"lcore\":1,\"cycles\":{\"ports\":350,\"polling\":1650}," \
	"\"busy_cycles\":350,\"rx_packets\":200,\"rx_bytes\":3000,\"tx_packets\":40," \
	"\"tx_bytes\":900,\"handoff_full\":2,\"neigh_news_lost\":0,\"tcp_established\":3," \
	"\"tcp_conns\":5,\"udp_socks\":2,\"drops\":{\"ip.a\":5,\"ip.b\":11}}," \
	"{\"worker\":1,\"lcore\":2,\"cycles\":{\"ports\":10},\"busy_cycles\":10," \
	"\"rx_packets\":7,\"drops\":{\"ip.a\":9}}]," \
	"\"drops\":{\"ip.a\":5,\"ip.b\":11}}"

static void test_monitor_rates_over_the_interval(void **state)
{
	struct mon_snap prev, cur;
	snap_of(&prev, PREV, 1000);
	snap_of(&cur, CUR, 1500);
	struct mon_view v;
	assert_int_equal(mon_view_build(&v, &prev, &cur), 0);
	assert_true(v.interval_s == 0.5);

	assert_int_equal(v.nb_ports, 1);
	const struct mon_port_view *p = &v.ports[0];
	assert_string_equal(p->name, "port0");
	assert_true(p->traffic.rx_pps == 200.0 && p->traffic.rx_bps == 8.0 * 2000 / 0.5);
	assert_true(p->traffic.tx_pps == 0.0); /* went back: the daemon restarted */
	assert_true(p->traffic.tx_bps == 8.0 * 400 / 0.5);
	/* the port's losses: rx_missed grew, tx_dropped did not, traffic is not a loss */
	assert_int_equal(p->losses.n, 1);
	assert_true(rate_named(&p->losses, "rx_missed")->per_s == 2.0);

	assert_int_equal(v.nb_workers, 2);
	const struct mon_worker_view *w = &v.workers[0];
	assert_int_equal(w->lcore, 1);
	assert_true(w->busy_pct == 25.0); /* 250 busy of 1000 cycles */
	assert_true(w->traffic.rx_pps == 200.0);
	assert_int_equal(w->tcp_established, 3);
	assert_int_equal(w->tcp_conns, 5);
	assert_int_equal(w->udp_socks, 2);
	assert_int_equal(w->drops.n, 1); /* ip.a did not move */
	assert_true(rate_named(&w->drops, "ip.b")->per_s == 20.0);
	assert_int_equal(w->losses.n, 1);
	assert_true(rate_named(&w->losses, "handoff_full")->per_s == 4.0);

	/* a worker the first reply did not have: no rate from counters since its start */
	const struct mon_worker_view *w1 = &v.workers[1];
	assert_int_equal(w1->worker, 1);
	assert_true(w1->busy_pct == 0.0 && w1->traffic.rx_pps == 0.0);
	assert_int_equal(w1->drops.n, 0);

	assert_int_equal(v.drops.n, 1);
	assert_true(rate_named(&v.drops, "ip.b")->per_s == 20.0 && v.drops.sum == 20.0);
	mon_view_free(&v);
	mon_snap_free(&prev);
	mon_snap_free(&cur);
}

static void test_monitor_rates_of_replies_without_the_expected_members(void **state)
{
	struct mon_snap prev, cur;
	snap_of(&prev, "{}", 0);
	snap_of(&cur, "{\"ports\":[],\"workers\":{},\"drops\":7}", 100);
	struct mon_view v;
	assert_int_equal(mon_view_build(&v, &prev, &cur), 0);
	assert_int_equal(v.nb_ports, 0);
	assert_int_equal(v.nb_workers, 0);
	assert_int_equal(v.drops.n, 0);
	mon_view_free(&v);
	mon_snap_free(&prev);
	mon_snap_free(&cur);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monitor_rates_over_the_interval),
		cmocka_unit_test(test_monitor_rates_of_replies_without_the_expected_members),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
