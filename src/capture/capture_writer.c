/* The writer thread of one capture: from the workers' ring into the dpstackctl connection.
 *
 * Why the connection and not a descriptor passed by dpstackctl (SCM_RIGHTS): the daemon, as
 * root, never opens or writes the user's files, only the socket of the client that asked;
 * and a client that goes away closes that socket, so a write fails at once (EPIPE) and the
 * capture ends, where a passed pipe would stay open in the daemon and could hold the writer
 * on a reader the client left behind. The client relays the stream to its file or stdout;
 * when its output is slow it stops reading, the socket fills, this thread waits in its
 * write and the ring overflows: those frames are the capture drops, counted by the workers,
 * which never wait. The client ends a capture by shutting down its side (Ctrl-C): the
 * thread sees it at its next look (it looks before every batch it writes), takes the
 * capture out of the workers, writes what is queued and the statistics block, and closes. */
#include "capture.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ring.h>

#define CAPTURE_WRITE_BATCH 64

static bool capture_ready(void *arg)
{
	struct capture *c = arg;
	return rte_ring_count(c->ring) != 0 || atomic_load(&c->stop);
}

/* Sleeps until the workers ring, the client shuts down its side or goes, or a stop. */
static int capture_sleep(void *arg)
{
	struct capture *c = arg;
	struct pollfd fds[2] = {{.fd = c->bell_fd, .events = POLLIN},
				{.fd = c->client_fd, .events = POLLRDHUP}};
	if (poll(fds, 2, -1) < 0)
		return -errno;
	if (fds[0].revents & POLLIN) {
		uint64_t v;
		if (read(c->bell_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: someone else read it; the ring is looked at anyway */
		}
	}
	return 0;
}

static bool capture_client_done(const struct capture *c)
{
	struct pollfd p = {.fd = c->client_fd, .events = POLLRDHUP};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/* Writes up to what count allows of n copies (freeing all). False when the client is gone. */
static bool capture_write(struct capture *c, rte_pcapng_t *out, struct rte_mbuf **m,
			  unsigned n)
{
	uint64_t written = atomic_load_explicit(&c->written, memory_order_relaxed);
	unsigned keep = n;
	if (c->count != 0 && written + n > c->count)
		keep = (unsigned)(c->count - written);
	rte_pktmbuf_free_bulk(m + keep, n - keep); /* past count: not wanted, not drops */
	if (keep == 0)
		return true;
	/* rte_pcapng_write_packets frees the copies whatever happens. */
	if (rte_pcapng_write_packets(out, m, (uint16_t)keep) < 0)
		return false;
	atomic_store_explicit(&c->written, written + keep, memory_order_relaxed);
	return true;
}

static bool capture_count_reached(const struct capture *c)
{
	return c->count != 0 && atomic_load_explicit(&c->written, memory_order_relaxed) >=
					c->count;
}

static void *capture_writer_main(void *arg)
{
	struct capture *c = arg;
	char comment[CAPTURE_FILTER_MAX + 128];
	snprintf(comment, sizeof(comment), "dpstackd capture on %s%s%s", c->port_name,
		 c->filter[0] != '\0' ? ", filter: " : "", c->filter);
	/* The control protocol's answer (include/dpstack/ctl.h), then the stream. */
	bool client_ok = send(c->client_fd, "ok\n", 3, MSG_NOSIGNAL) == 3;
	/* A duplicate, which rte_pcapng_close closes: client_fd stays open (and its number
	 * ours) until capture_destroy, so capture_stop can shut it down at any time.
	 * rte_pcapng_fdopen writes the section header and a description of every DPDK port
	 * (a packet's pcapng interface is its DPDK port). */
	int out_fd = client_ok ? dup(c->client_fd) : -1;
	rte_pcapng_t *out = out_fd < 0 ? NULL : rte_pcapng_fdopen(out_fd, NULL, NULL,
							    "dpstackd " DPSTACK_VERSION, comment);
	if (out == NULL && out_fd >= 0)
		close(out_fd);
	client_ok = out != NULL;
	const int64_t spin = doorbell_spin_default();
	struct rte_mbuf *batch[CAPTURE_WRITE_BATCH];
	while (client_ok && !atomic_load(&c->stop) && !capture_count_reached(c) &&
	       !capture_client_done(c)) {
		unsigned n = rte_ring_sc_dequeue_burst(c->ring, (void **)batch, CAPTURE_WRITE_BATCH,
						       NULL);
		if (n != 0)
			client_ok = capture_write(c, out, batch, n);
		else
			doorbell_wait_fd(&c->bell, spin, capture_ready, capture_sleep, c);
	}
	/* After this no worker copies anything more for this capture. */
	c->unpublish(c, c->unpublish_ctx);
	unsigned n;
	while ((n = rte_ring_sc_dequeue_burst(c->ring, (void **)batch, CAPTURE_WRITE_BATCH,
					      NULL)) != 0) {
		if (client_ok && !atomic_load(&c->stop))
			client_ok = capture_write(c, out, batch, n);
		else
			rte_pktmbuf_free_bulk(batch, n);
	}
	if (out != NULL) {
		uint64_t dropped = capture_dropped(c);
		uint64_t written = atomic_load(&c->written);
		/* dpstackctl prints this comment when the capture ends (tcpdump's summary).
		 * Not when the daemon stops: capture_stop shuts the connection down at any
		 * moment, so the client is told, always, that the end was not the capture's. */
		snprintf(comment, sizeof(comment),
			 "%" PRIu64 " packets captured, %" PRIu64 " dropped (ring or writer behind)",
			 written, dropped);
		if (client_ok && !atomic_load(&c->stop))
			rte_pcapng_write_stats(out, c->eth_port, comment, 0, 0,
					       capture_copied(c) + dropped, dropped);
		rte_pcapng_close(out);
	}
	/* The client sees the end of the stream now, not when the capture is reaped. */
	shutdown(c->client_fd, SHUT_RDWR);
	capture_release(c);
	atomic_store(&c->finished, true);
	return NULL;
}

int capture_start(struct capture *c, int client_fd)
{
	c->client_fd = client_fd;
	int rc = pthread_create(&c->thread, NULL, capture_writer_main, c);
	if (rc != 0) {
		c->client_fd = -1;
		return -rc;
	}
	c->thread_started = true;
	char name[16];
	snprintf(name, sizeof(name), "dpscap-%.8s", c->port_name);
	pthread_setname_np(c->thread, name);
	return 0;
}

void capture_stop(struct capture *c)
{
	atomic_store(&c->stop, true);
	doorbell_ring_fd(&c->bell, c->bell_fd);
	/* A writer waiting in a write to a client that does not read gets EPIPE. */
	shutdown(c->client_fd, SHUT_RDWR);
	pthread_join(c->thread, NULL);
	c->thread_started = false;
}
