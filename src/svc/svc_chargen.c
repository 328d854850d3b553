/* Character generator (RFC 864).
 *
 * TCP: the rotating pattern is queued as fast as the send FIFO drains, i.e. as fast as the
 * peer's window and congestion control allow; input is read and dropped. The client ends the
 * stream by closing (its FIN closes ours), or `size` bytes end it.
 * UDP: each datagram is answered with one datagram of the pattern from its start, of a random
 * length 0..512 (RFC 864), or of `size` bytes. */
#include <stdint.h>

#include "svc_priv.h"

struct chargen_conn {
	struct svc_conn sc;
	uint32_t offset;        /* in the pattern period */
	uint64_t left;          /* bytes still to send; UINT64_MAX: until the client closes */
};

static void chargen_open(struct svc_conn *sc)
{
	struct chargen_conn *cc = (struct chargen_conn *)sc;
	cc->left = sc->sv->opts.has_size ? sc->sv->opts.size : UINT64_MAX;
}

static enum svc_run chargen_run(struct svc_conn *sc)
{
	struct chargen_conn *cc = (struct chargen_conn *)sc;
	enum svc_run r = svc_conn_drain(sc);
	if (r != SVC_RUN_WAIT)
		return r;
	return svc_conn_send_pattern(sc, &cc->offset, &cc->left);
}

static void chargen_datagram(struct svc *sv, uint8_t *buf, size_t len, size_t cap,
			     const struct svc_peer *from)
{
	size_t n = sv->opts.has_size ? (size_t)sv->opts.size
				     : svc_rand(sv->t) % (SVC_CHARGEN_UDP_MAX + 1);
	if (n > cap)
		n = cap;
	svc_pattern_fill(buf, n, 0);
	svc_udp_reply(sv, buf, n, from);
}

const struct svc_kind_ops svc_chargen_ops = {
	.tcp = true,
	.udp = true,
	.conn_size = sizeof(struct chargen_conn),
	.open = chargen_open,
	.run = chargen_run,
	.datagram = chargen_datagram,
};
