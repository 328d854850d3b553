/* Fixture shared by the test_neigh_*.c files: a virtual clock, fake neigh_ops that record
 * every request, sent packet and dropped packet, and helpers that bring an entry into each
 * state. Packets are malloc'd ids: the callbacks free them, so ASan/valgrind catch a packet
 * the table loses or hands back twice, and `live` counts the ones still owned by the table. */
#ifndef DPS_TEST_NEIGH_H
#define DPS_TEST_NEIGH_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "l2/neigh.h"

#define FAKE_MAX 4096 /* records kept per kind; counts go on past it */

struct fake_req {
	uint16_t port;
	uint32_t ip;
	bool unicast;
	struct eth_addr dst;
	uint64_t at;
};

struct fake_sent {
	uint16_t port;
	struct eth_addr mac;
	int id;
	uint64_t at;
};

struct fake_drop {
	int id;
	enum neigh_drop why;
	uint64_t at;
};

struct fake {
	uint64_t now;              /* the virtual clock */
	struct neigh_params p;
	struct neigh_ops ops;
	struct neigh_table *t;
	long live;                 /* packets made and not yet sent, dropped or freed */
	size_t n_req, n_sent, n_drop;
	struct fake_req req[FAKE_MAX];
	struct fake_sent sent[FAKE_MAX];
	struct fake_drop drop[FAKE_MAX];
	struct eth_addr mac;       /* from the last resolve() */
	/* Runs after each drop is recorded, e.g. to call back into the table as an ICMP
	 * error would. */
	void (*on_drop)(struct fake *f, int id, enum neigh_drop why);
};

/* Not every file uses every address. */
#define TEST_UNUSED __attribute__((unused))
static const struct eth_addr MAC_A TEST_UNUSED = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}};
static const struct eth_addr MAC_B TEST_UNUSED = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b}};
static const struct eth_addr MAC_ZERO TEST_UNUSED = {{0}};
static const struct eth_addr MAC_BCAST TEST_UNUSED = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
static const struct eth_addr MAC_MCAST TEST_UNUSED = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};

#define IP1 0x0a000001u /* 10.0.0.1 */
#define IP2 0x0a000002u
#define IP3 0x0a000003u
#define T0 1000000u     /* an arbitrary non-zero origin for the clock */
#define NOPKT (-1)      /* resolve() without a packet */

static void fake_send_request(void *ctx, uint16_t port, uint32_t ip, const struct eth_addr *dst)
{
	struct fake *f = ctx;

	if (f->n_req < FAKE_MAX)
		f->req[f->n_req] = (struct fake_req){
			.port = port, .ip = ip, .unicast = dst != NULL,
			.dst = dst != NULL ? *dst : MAC_ZERO, .at = f->now,
		};
	f->n_req++;
}

static void fake_send_packet(void *ctx, uint16_t port, const struct eth_addr *mac, void *pkt)
{
	struct fake *f = ctx;

	assert_non_null(pkt);
	if (f->n_sent < FAKE_MAX)
		f->sent[f->n_sent] = (struct fake_sent){
			.port = port, .mac = *mac, .id = *(int *)pkt, .at = f->now,
		};
	f->n_sent++;
	free(pkt);
	f->live--;
}

static void fake_drop_packet(void *ctx, void *pkt, enum neigh_drop why)
{
	struct fake *f = ctx;
	int id;

	assert_non_null(pkt);
	if (f->n_drop < FAKE_MAX)
		f->drop[f->n_drop] = (struct fake_drop){ .id = *(int *)pkt, .why = why, .at = f->now };
	f->n_drop++;
	id = *(int *)pkt;
	free(pkt);
	f->live--;
	if (f->on_drop != NULL)
		f->on_drop(f, id, why);
}

static inline void fake_clear(struct fake *f)
{
	f->n_req = f->n_sent = f->n_drop = 0;
}

/* Re-creates the table with f->p (after a test changed a parameter); records are cleared. */
static inline void fake_reopen(struct fake *f)
{
	f->on_drop = NULL;
	neigh_table_destroy(f->t);
	f->t = neigh_table_create(&f->p, &f->ops, f);
	assert_non_null(f->t);
	fake_clear(f);
}

static inline int fake_setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->now = T0;
	neigh_params_default(&f->p);
	f->ops = (struct neigh_ops){
		.send_request = fake_send_request,
		.send_packet = fake_send_packet,
		.drop_packet = fake_drop_packet,
	};
	f->t = neigh_table_create(&f->p, &f->ops, f);
	if (f->t == NULL) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static inline int fake_teardown(void **state)
{
	struct fake *f = *state;

	f->on_drop = NULL; /* callbacks must not call into a table being destroyed */
	neigh_table_destroy(f->t);
	/* Every packet the table took came back through a callback exactly once. */
	assert_int_equal(f->live, 0);
	free(f);
	return 0;
}

static inline void *pkt_new(struct fake *f, int id)
{
	int *p = malloc(sizeof(*p));

	assert_non_null(p);
	*p = id;
	f->live++;
	return p;
}

/* neigh_resolve at f->now with packet id (NOPKT: none). On NEIGH_RESOLVED the packet stays
 * ours: it is freed here as if sent. The MAC lands in f->mac. */
static inline enum neigh_result resolve(struct fake *f, uint16_t port, uint32_t ip, int id)
{
	void *pkt = id == NOPKT ? NULL : pkt_new(f, id);
	enum neigh_result r;

	f->mac = MAC_ZERO;
	r = neigh_resolve(f->t, f->now, port, ip, pkt, &f->mac);
	if (r == NEIGH_RESOLVED && pkt != NULL) {
		free(pkt);
		f->live--;
	}
	return r;
}

static inline int learn(struct fake *f, uint16_t port, uint32_t ip, const struct eth_addr *mac,
			unsigned flags)
{
	return neigh_learn(f->t, f->now, port, ip, mac, flags);
}

/* Sets the clock and runs the timers. */
static inline void tick_at(struct fake *f, uint64_t ms)
{
	f->now = ms;
	neigh_tick(f->t, ms);
}

static inline void tick_every(struct fake *f, uint64_t until_ms, uint64_t step_ms)
{
	while (f->now + step_ms <= until_ms)
		tick_at(f, f->now + step_ms);
}

/* The entry's state, or -1 when it does not exist. */
static inline int state_of(struct fake *f, uint16_t port, uint32_t ip)
{
	struct neigh_info info;

	if (neigh_lookup(f->t, port, ip, &info) != 0)
		return -1;
	return (int)info.state;
}

static inline struct neigh_info info_of(struct fake *f, uint16_t port, uint32_t ip)
{
	struct neigh_info info;

	assert_int_equal(neigh_lookup(f->t, port, ip, &info), 0);
	return info;
}

static inline void assert_mac_equal(const struct eth_addr *a, const struct eth_addr *b)
{
	assert_memory_equal(a->b, b->b, ETH_ADDR_LEN);
}

static inline void assert_entry_mac(struct fake *f, uint16_t port, uint32_t ip,
				    const struct eth_addr *mac)
{
	struct neigh_info info = info_of(f, port, ip);

	assert_mac_equal(&info.mac, mac);
}

/* Field by field: struct padding is unspecified. */
static inline void assert_info_equal(const struct neigh_info *a, const struct neigh_info *b)
{
	assert_int_equal(a->port, b->port);
	assert_int_equal(a->ip, b->ip);
	assert_mac_equal(&a->mac, &b->mac);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->queued, b->queued);
	assert_int_equal(a->probes, b->probes);
	assert_int_equal(a->updated_ms, b->updated_ms);
}

/* Bring (port, ip) into a state at f->now (which may move on); records are cleared. */
static inline void to_incomplete(struct fake *f, uint16_t port, uint32_t ip)
{
	assert_int_equal(resolve(f, port, ip, NOPKT), NEIGH_QUEUED);
	fake_clear(f);
}

static inline void to_reachable(struct fake *f, uint16_t port, uint32_t ip,
				const struct eth_addr *mac)
{
	assert_int_equal(resolve(f, port, ip, NOPKT), NEIGH_QUEUED);
	assert_int_equal(learn(f, port, ip, mac, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, port, ip), NEIGH_REACHABLE);
	fake_clear(f);
}

static inline void to_stale(struct fake *f, uint16_t port, uint32_t ip, const struct eth_addr *mac)
{
	assert_int_equal(learn(f, port, ip, mac, NEIGH_F_CREATE), 0);
	assert_int_equal(state_of(f, port, ip), NEIGH_STALE);
	fake_clear(f);
}

static inline void to_delay(struct fake *f, uint16_t port, uint32_t ip, const struct eth_addr *mac)
{
	to_stale(f, port, ip, mac);
	assert_int_equal(resolve(f, port, ip, NOPKT), NEIGH_RESOLVED);
	assert_int_equal(state_of(f, port, ip), NEIGH_DELAY);
	fake_clear(f);
}

/* Leaves f->now at the moment PROBE was entered (first unicast request sent). */
static inline void to_probe(struct fake *f, uint16_t port, uint32_t ip, const struct eth_addr *mac)
{
	to_delay(f, port, ip, mac);
	tick_at(f, f->now + f->p.delay_ms);
	assert_int_equal(state_of(f, port, ip), NEIGH_PROBE);
	fake_clear(f);
}

/* Leaves f->now at the moment FAILED was entered. */
static inline void to_failed(struct fake *f, uint16_t port, uint32_t ip)
{
	to_incomplete(f, port, ip);
	for (uint32_t i = 0; i < f->p.mcast_probes; i++)
		tick_at(f, f->now + f->p.retrans_ms);
	assert_int_equal(state_of(f, port, ip), NEIGH_FAILED);
	fake_clear(f);
}

#define NEIGH_TEST(fn) cmocka_unit_test_setup_teardown(fn, fake_setup, fake_teardown)

#endif
