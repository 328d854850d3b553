#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_chan_util.h"
#include "test_eal.h"
#include "inet/inet.h"

static void drop_frame(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	(void)ctx;
	(void)port;
	rte_pktmbuf_free(m);
}

void chan_test_start(struct chan_test *t)
{
	struct stack_params p;
	inet_params_default(&p);
	p.pool = test_pool();
	p.ops.xmit = drop_frame;
	t->stack = stack_create(&p);
	assert_non_null(t->stack);
	const struct eth_addr mac = {{0x02, 0, 0, 0, 0, 1}};
	assert_int_equal(netcfg_iface_add(&t->stack->cfg, 0, "port0", &mac, 1500), 0);
	assert_int_equal(stack_addr_add(t->stack, 0, CT_ADDR, 24, false), 0);

	struct chan *ch = t->ch = calloc(1, sizeof(*ch));
	assert_non_null(ch);
	ch->cfg = (struct chan_config){.max_socks = CT_MAX_SOCKS, .arena_mb = 4};
	ch->nb_workers = 1;
	ch->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(ch->wake_fd >= 0);
	ch->bounds = (struct chan_limit_bounds){.max = {
		[CHAN_LIMIT_APPS_PER_USER] = CHAN_MAX_APPS,
		[CHAN_LIMIT_SOCKS_PER_APP] = CT_MAX_SOCKS,
		[CHAN_LIMIT_SOCKS_PER_USER] = CT_MAX_SOCKS,
		[CHAN_LIMIT_LISTENERS_PER_USER] = CT_MAX_SOCKS,
		[CHAN_LIMIT_ARENA_MB_PER_APP] = 4, [CHAN_LIMIT_ARENA_MB_PER_USER] = 4 * CHAN_MAX_APPS,
		[CHAN_LIMIT_BINDS_PER_APP] = 16}};
	chan_limits_default(&ch->limits, &ch->bounds, 1ull << 34);
	struct chan_worker *cw = &ch->cw[0];
	*cw = (struct chan_worker){.chan = ch, .stack = t->stack, .udp_buf = malloc(65536)};
	TAILQ_INIT(&cw->accept_list);
	TAILQ_INIT(&cw->udp_tx_list);

	char err[128];
	t->a = chan_app_create(ch, chan_user_get(ch, 1000), err, sizeof(err));
	assert_non_null(t->a);
	t->a->procs[0] = (struct chan_proc_priv){.fd = -1, .efd = -1, .pid = getpid(),
						 .uid = 1000};
	atomic_store(&t->a->hdr->procs[0].attached, 1);
	struct chan_job j = {.app = t->a, .proc = 0, .worker = 0};
	assert_int_equal(chan_job_app_add(t->stack, &j), 0);
}

void chan_test_app_end(struct chan_test *t)
{
	if (t->a == NULL) /* a test removed it as the channel does */
		return;
	struct chan_job j = {.app = t->a, .proc = 0, .worker = 0};
	chan_job_app_remove(t->stack, &j);
	chan_app_unref(t->a);
}

void chan_test_free(struct chan_test *t)
{
	free(t->ch->cw[0].udp_buf);
	free(t->ch->cw[0].binds);
	close(t->ch->wake_fd);
	free(t->ch);
	stack_destroy(t->stack);
}
