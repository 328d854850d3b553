/* Echo (RFC 862): every byte received is sent back, over TCP and UDP.
 *
 * TCP never loses a byte and never buffers one of its own: it reads only as much as the send
 * FIFO can take at that moment, so a client that stops reading fills our send FIFO, then our
 * receive FIFO, and then its own window closes (backpressure end to end). Readiness for
 * output resumes the loop. */
#include <errno.h>

#include "svc_priv.h"

static enum svc_run echo_run(struct svc_conn *sc)
{
	struct svc *sv = sc->sv;
	struct sock *sk = tcp_sock(sc->c);
	uint8_t *buf = sv->t->scratch;
	for (;;) {
		if (sk->tx == NULL)
			return SVC_RUN_ERROR;
		uint32_t room = fifo_free(sk->tx);
		if (room == 0)
			return SVC_RUN_WAIT;
		size_t want = room < SVC_SCRATCH ? room : SVC_SCRATCH;
		ssize_t n = tcp_recv(sc->c, buf, want);
		if (n == -EAGAIN)
			return SVC_RUN_WAIT;
		if (n == 0)
			return SVC_RUN_DONE; /* the client has finished and has all of it queued */
		if (n < 0)
			return SVC_RUN_ERROR;
		sv->cnt.bytes_in += (uint64_t)n;
		/* We are the send FIFO's only producer, so the room measured above is still
		 * there; a short write would be a lost byte, which is worse than a reset. */
		ssize_t m = tcp_send(sc->c, buf, (size_t)n);
		if (m != n)
			return SVC_RUN_ERROR;
		sv->cnt.bytes_out += (uint64_t)m;
	}
}

static void echo_datagram(struct svc *sv, uint8_t *buf, size_t len, size_t cap,
			  const struct svc_peer *from)
{
	svc_udp_reply(sv, buf, len, from);
}

const struct svc_kind_ops svc_echo_ops = {
	.tcp = true,
	.udp = true,
	.conn_size = sizeof(struct svc_conn),
	.nodelay = true,
	.run = echo_run,
	.datagram = echo_datagram,
};
