#include "monitor_show.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

/* Rates to a thousandth; the interval to a microsecond, so that rate times interval gives
 * back the counter's growth. */
#define RATE_DECIMALS 3
#define INTERVAL_DECIMALS 6

static void iso_time(char *buf, size_t len, const struct timespec *ts)
{
	struct tm tm;
	gmtime_r(&ts->tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03ldZ", ts->tv_nsec / 1000000);
}

static void json_rate_members(struct ctl_out *o, const struct mon_rates *r)
{
	for (size_t i = 0; i < r->n; i++)
		json_f64(o, r->v[i].name, r->v[i].per_s, RATE_DECIMALS);
}

static void json_traffic(struct ctl_out *o, const struct mon_traffic *t)
{
	json_f64(o, "rx_pps", t->rx_pps, RATE_DECIMALS);
	json_f64(o, "rx_bps", t->rx_bps, RATE_DECIMALS);
	json_f64(o, "tx_pps", t->tx_pps, RATE_DECIMALS);
	json_f64(o, "tx_bps", t->tx_bps, RATE_DECIMALS);
}

void mon_show_json(struct ctl_out *o, const struct mon_view *v)
{
	char when[40];
	iso_time(when, sizeof(when), &v->wall);
	json_obj_begin(o, NULL);
	json_str(o, "time", when);
	json_f64(o, "interval_s", v->interval_s, INTERVAL_DECIMALS);
	json_arr_begin(o, "ports");
	for (size_t i = 0; i < v->nb_ports; i++) {
		const struct mon_port_view *p = &v->ports[i];
		json_obj_begin(o, NULL);
		json_str(o, "port", p->name);
		json_traffic(o, &p->traffic);
		json_obj_begin(o, "drops_per_s");
		json_rate_members(o, &p->losses);
		json_obj_end(o);
		json_obj_end(o);
	}
	json_arr_end(o);
	json_arr_begin(o, "workers");
	for (size_t i = 0; i < v->nb_workers; i++) {
		const struct mon_worker_view *w = &v->workers[i];
		json_obj_begin(o, NULL);
		json_u64(o, "worker", w->worker);
		json_u64(o, "lcore", w->lcore);
		json_f64(o, "busy_pct", w->busy_pct, RATE_DECIMALS);
		json_traffic(o, &w->traffic);
		json_u64(o, "tcp_established", w->tcp_established);
		json_u64(o, "tcp_conns", w->tcp_conns);
		json_u64(o, "udp_socks", w->udp_socks);
		json_obj_begin(o, "drops_per_s");
		json_rate_members(o, &w->drops);
		json_rate_members(o, &w->losses);
		json_obj_end(o);
		json_obj_end(o);
	}
	json_arr_end(o);
	json_obj_begin(o, "drops_per_s");
	json_rate_members(o, &v->drops);
	json_obj_end(o);
	json_obj_end(o);
}

/* A rate in at most 7 columns, with an SI prefix as ifstat or sar print them: 987.0,
 * 12.3k, 1.02G. */
static const char *si(char buf[16], double x)
{
	static const char prefix[] = " kMGTP";
	unsigned k = 0;
	while (x >= 999.95 && k + 1 < sizeof(prefix) - 1) {
		x /= 1000.0;
		k++;
	}
	if (k == 0)
		snprintf(buf, 16, "%.1f", x);
	else
		snprintf(buf, 16, "%.*f%c", x < 9.995 ? 2 : 1, x, prefix[k]);
	return buf;
}

#define TRAFFIC_HEAD "   RX pkt/s  RX bit/s   TX pkt/s  TX bit/s"

static void text_traffic(struct ctl_out *o, const struct mon_traffic *t)
{
	char a[16], b[16], c[16], d[16];
	ctl_printf(o, " %10s %9s %10s %9s", si(a, t->rx_pps), si(b, t->rx_bps), si(c, t->tx_pps),
		   si(d, t->tx_bps));
}

void mon_show_text(struct ctl_out *o, const struct mon_view *v, const char *path,
		   double interval_s)
{
	char when[40], buf[16];
	struct tm tm;
	localtime_r(&v->wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	ctl_printf(o, "dpstack monitor  %s  every %gs  %s  (q quits)\n\n", path, interval_s, when);
	ctl_printf(o, "%-10s" TRAFFIC_HEAD "   drops/s\n", "PORT");
	for (size_t i = 0; i < v->nb_ports; i++) {
		const struct mon_port_view *p = &v->ports[i];
		ctl_printf(o, "%-10s", p->name);
		text_traffic(o, &p->traffic);
		ctl_printf(o, " %9s\n", si(buf, p->losses.sum));
	}
	ctl_printf(o, "\nWORKER LCORE BUSY%%" TRAFFIC_HEAD "  ESTAB   TCP   UDP  drops/s\n");
	for (size_t i = 0; i < v->nb_workers; i++) {
		const struct mon_worker_view *w = &v->workers[i];
		ctl_printf(o, "%6" PRIu64 " %5" PRIu64 " %5.1f", w->worker, w->lcore, w->busy_pct);
		text_traffic(o, &w->traffic);
		ctl_printf(o, " %6" PRIu64 " %5" PRIu64 " %5" PRIu64 " %8s\n", w->tcp_established,
			   w->tcp_conns, w->udp_socks, si(buf, w->drops.sum + w->losses.sum));
	}
	ctl_printf(o, "\nDROPS/s (non-zero)\n");
	size_t shown = 0;
	for (size_t i = 0; i < v->nb_ports; i++)
		for (size_t k = 0; k < v->ports[i].losses.n; k++, shown++)
			ctl_printf(o, "  %-10s %-24s %9s\n", v->ports[i].name,
				   v->ports[i].losses.v[k].name, si(buf, v->ports[i].losses.v[k].per_s));
	for (size_t k = 0; k < v->drops.n; k++, shown++)
		ctl_printf(o, "  %-10s %-24s %9s\n", "stack", v->drops.v[k].name,
			   si(buf, v->drops.v[k].per_s));
	for (size_t i = 0; i < v->nb_workers; i++) {
		char who[24];
		snprintf(who, sizeof(who), "worker %" PRIu64, v->workers[i].worker);
		for (size_t k = 0; k < v->workers[i].losses.n; k++, shown++)
			ctl_printf(o, "  %-10s %-24s %9s\n", who, v->workers[i].losses.v[k].name,
				   si(buf, v->workers[i].losses.v[k].per_s));
	}
	if (shown == 0)
		ctl_printf(o, "  none\n");
}
