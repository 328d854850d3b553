#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_dps_util.h"

int dps_test_attach_init(struct dps_attach *at, void *base, const struct chan_layout *lay)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	at->sock_fd = sv[0];
	at->ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	at->worker_fd[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(at->ev_fd >= 0 && at->worker_fd[0] >= 0);
	at->mem_fd = -1;
	at->base = base;
	at->hdr = base;
	at->lay = *lay;
	at->sock_file = calloc(lay->max_socks, sizeof(*at->sock_file));
	assert_non_null(at->sock_file);
	atomic_init(&at->refs, 1);
	static unsigned gen = 1u << 30;
	at->gen = ++gen; /* a wait set of its own: each attachment has new descriptors */
	atomic_init(&at->calls_free, ~0ull);
	doorbell_init(&at->calls_bell);
	pthread_mutex_init(&at->cmd_lock[0], NULL);
	pthread_mutex_init(&at->ev_lock, NULL);
	return sv[1];
}

void dps_test_attach_fini(struct dps_attach *at, int peer_fd)
{
	close(at->sock_fd);
	close(peer_fd);
	close(at->ev_fd);
	close(at->worker_fd[0]);
	free(at->sock_file);
}
