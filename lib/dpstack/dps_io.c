/* Data: the read and write families over the sockets' FIFOs in the shared segment, and the
 * zero-copy variant that hands out the FIFOs' bytes in place. A stream's bytes are copied
 * once each way (application buffer ↔ FIFO); the worker moves them between FIFOs and mbufs.
 * UDP datagrams are records in the FIFOs (struct udp_rx_hdr in, chan_udp_tx_hdr out).
 *
 * Everything the application hands over (buffers, iovec arrays, message headers, addresses,
 * control data) is reached through the fault-safe copies (dps_ucopy.h), in the kernel's
 * order: headers and arrays are copied in first, so that a bad one is EFAULT before anything
 * happens; data is copied straight between the application's buffer and the FIFO, and a FIFO
 * position moves only over bytes that arrived, so a bad page ends a stream's read or write
 * with the count done before it (EFAULT when none), as tcp_recvmsg and tcp_sendmsg return
 * what they copied before a fault (they count whole segments, the library whole pages). */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <dpstack/dpstack.h>

#include "dps_cmsg.h"
#include "dps_links.h"
#include "dps_priv.h"
#include "dps_ucopy.h"
#include "udp/udp.h"

/* Linux's net.core.optmem_max default: sendmsg's control data beyond it is ENOBUFS. */
#define DPS_CONTROL_MAX 131072

static bool dps_nonblock(const struct dps_file *f, int flags)
{
	return (flags & MSG_DONTWAIT) || (atomic_load(&f->flags) & O_NONBLOCK);
}

static size_t dps_iov_len(const struct iovec *iov, int cnt)
{
	size_t n = 0;
	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* The receive window may have been closed by a full FIFO: after reading from one that was at
 * least half full, let the worker announce the room (RFC 9293 §3.8.6.2.2 decides whether a
 * window update goes out). */
static void dps_rx_consumed(struct dps_file *f, const struct fifo *rx, uint32_t used_before)
{
	if (used_before >= rx->size / 2)
		dps_kick(f->at, f->socks[0]);
}

/* The socket's pending error, taken, or 0 (st: its state): once, by whichever call finds
 * it first (net/core/sock.c sock_error). */
static ssize_t dps_error_take(struct dps_file *f, uint32_t st)
{
	if (!(st & CHAN_SS_ERR))
		return 0;
	return -(ssize_t)atomic_exchange(&dps_sock(f->at, f->socks[0])->error, 0);
}

/* ---- streams ---- */

/* What a read that found no data returns: 0 at end of stream, an error, or -EAGAIN (wait). */
static ssize_t dps_stream_empty(struct dps_file *f)
{
	uint32_t st = dps_sock_state(f);
	ssize_t err = dps_error_take(f, st);
	if (err != 0)
		return err;
	if ((st & (CHAN_SS_RDHUP | CHAN_SS_HUP)) || f->shut_rd)
		return 0;
	return -EAGAIN;
}

/* A run of FIFO bytes (its one or two slices) to or from the application's memory at u;
 * returns the count copied (short: a page of u was bad). */
static size_t dps_slices_out(uint8_t *u, const struct fifo_slice s[2])
{
	size_t n = dps_copy_to_user(u, s[0].base, s[0].len);
	if (n == s[0].len && s[1].len > 0)
		n += dps_copy_to_user(u + n, s[1].base, s[1].len);
	return n;
}

static size_t dps_slices_in(const struct fifo_slice s[2], const uint8_t *u)
{
	size_t n = dps_copy_from_user(s[0].base, u, s[0].len);
	if (n == s[0].len && s[1].len > 0)
		n += dps_copy_from_user(s[1].base, u + n, s[1].len);
	return n;
}

static uint32_t dps_clamp32(size_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Copies FIFO bytes into iov past its first `done` bytes (which a MSG_PEEK also skips in
 * the FIFO) and consumes them unless peek. Returns the count copied; *fault when a page of
 * iov could not be written (what came before it is copied, and consumed). */
static size_t dps_fifo_to_iov(struct fifo *f, const struct iovec *iov, int cnt, size_t done,
			      bool peek, bool *fault)
{
	size_t base = 0, pos = done;
	for (int i = 0; i < cnt; i++) {
		size_t end = base + iov[i].iov_len;
		while (pos < end) {
			struct fifo_slice s[2];
			if (fifo_read_slices(f, peek ? (uint32_t)pos : 0, dps_clamp32(end - pos), s) == 0)
				return pos - done;
			size_t n = dps_slices_out((uint8_t *)iov[i].iov_base + (pos - base), s);
			if (!peek)
				fifo_consume(f, (uint32_t)n);
			pos += n;
			if (n < (size_t)s[0].len + s[1].len) {
				*fault = true;
				return pos - done;
			}
		}
		base = end;
	}
	return pos - done;
}

static ssize_t dps_stream_recv(struct dps_file *f, const struct iovec *iov, int cnt, int flags)
{
	if (f->nsocks == 0)
		return -ENOTCONN;
	const bool peek = (flags & MSG_PEEK) != 0;
	size_t want = dps_iov_len(iov, cnt), got = 0;
	if (want == 0)
		return 0;
	pthread_mutex_lock(&f->rx_lock);
	ssize_t rc;
	for (;;) {
		struct fifo rx;
		uint32_t gen;
		if (!dps_rx_view(f, &rx, &gen)) {
			rc = got > 0 ? (ssize_t)got : -EIO;
			break;
		}
		dps_rx_seen(f, gen);
		uint32_t used = fifo_used(&rx);
		bool fault = false;
		size_t n = dps_fifo_to_iov(&rx, iov, cnt, got, peek, &fault);
		got += n;
		if (!peek && n > 0)
			dps_rx_consumed(f, &rx, used);
		if (fault) {
			rc = got > 0 ? (ssize_t)got : -EFAULT;
			break;
		}
		if (got == want || (got > 0 && (peek || !(flags & MSG_WAITALL)))) {
			rc = (ssize_t)got;
			break;
		}
		rc = dps_stream_empty(f);
		if (rc != -EAGAIN || dps_nonblock(f, flags)) {
			if (rc == -EAGAIN)
				dps_attach_check_lazy(f->at);
			rc = got > 0 ? (ssize_t)got : rc;
			break;
		}
		rc = dps_wait_unlocked(f, &f->rx_lock, EPOLLIN, f->rcvtimeo_ms);
		if (rc < 0) {
			rc = got > 0 ? (ssize_t)got : rc == -ENOTCONN ? -ECONNRESET : rc;
			break;
		}
	}
	pthread_mutex_unlock(&f->rx_lock);
	return rc;
}

/* Copies iov past its first `done` bytes into the FIFO and publishes them; returns the
 * count copied, *fault when a page of iov could not be read (what came before it is sent). */
static size_t dps_iov_to_fifo(struct fifo *f, const struct iovec *iov, int cnt, size_t done,
			      bool *fault)
{
	size_t base = 0, pos = done;
	for (int i = 0; i < cnt; i++) {
		size_t end = base + iov[i].iov_len;
		while (pos < end) {
			struct fifo_slice s[2];
			if (fifo_write_slices(f, 0, dps_clamp32(end - pos), s) == 0)
				return pos - done;
			size_t n = dps_slices_in(s, (const uint8_t *)iov[i].iov_base + (pos - base));
			fifo_produce(f, (uint32_t)n);
			pos += n;
			if (n < (size_t)s[0].len + s[1].len) {
				*fault = true;
				return pos - done;
			}
		}
		base = end;
	}
	return pos - done;
}

/* The send FIFO is full: ask the worker for an event once room comes back (Linux's
 * SOCK_NOSPACE, chan_sock.nospace), then look once more, since the ACKs that made room
 * may have come before the worker saw the question. True when there is room now. */
static bool dps_tx_ask_room(struct dps_file *f)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	atomic_store_explicit(&ss->nospace, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return fifo_free(&f->tx) > 0;
}

/* Why a write cannot go on: -EPIPE (SIGPIPE follows), a pending error, or -EAGAIN. */
static ssize_t dps_stream_blocked(struct dps_file *f)
{
	uint32_t st = dps_sock_state(f);
	ssize_t err = dps_error_take(f, st);
	if (err != 0)
		return err;
	if ((st & (CHAN_SS_HUP | CHAN_SS_WRSHUT)) || f->shut_wr)
		return -EPIPE;
	return -EAGAIN;
}

static ssize_t dps_stream_send(struct dps_file *f, const struct iovec *iov, int cnt, int flags)
{
	if (f->nsocks == 0) {
		/* Linux: a stream that never connected cannot be written (EPIPE and SIGPIPE). */
		if (!(flags & MSG_NOSIGNAL))
			raise(SIGPIPE);
		return -EPIPE;
	}
	size_t want = dps_iov_len(iov, cnt), sent = 0;
	pthread_mutex_lock(&f->tx_lock);
	ssize_t rc;
	for (;;) {
		rc = dps_stream_blocked(f);
		if (rc != -EAGAIN)
			break;
		struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
		uint32_t st = atomic_load(&ss->state);
		if (st & CHAN_SS_CONNECTED) {
			bool fault = false;
			/* MSG_MORE (Linux): hold the short tail until a send without it; the
			 * worker reads this at the KICK that follows the bytes. */
			atomic_store_explicit(&ss->more, (flags & MSG_MORE) != 0,
					      memory_order_relaxed);
			size_t n = dps_iov_to_fifo(&f->tx, iov, cnt, sent, &fault);
			sent += n;
			if (n > 0)
				dps_kick(f->at, f->socks[0]);
			if (fault) {
				rc = sent > 0 ? (ssize_t)sent : -EFAULT;
				break;
			}
			if (sent == want) {
				rc = (ssize_t)sent;
				break;
			}
			if (dps_tx_ask_room(f))
				continue;
		}
		if (dps_nonblock(f, flags)) {
			dps_attach_check_lazy(f->at);
			rc = sent > 0 ? (ssize_t)sent : -EAGAIN;
			break;
		}
		rc = dps_wait_unlocked(f, &f->tx_lock, EPOLLOUT, f->sndtimeo_ms);
		if (rc < 0) {
			rc = sent > 0 ? (ssize_t)sent : rc == -ENOTCONN ? -EPIPE : rc;
			break;
		}
	}
	pthread_mutex_unlock(&f->tx_lock);
	if (rc == -EPIPE && sent > 0)
		rc = (ssize_t)sent;
	if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
	return rc;
}

/* ---- datagrams ---- */

/* Which control messages the datagram's path reads: an AF_INET6 socket's datagram to an
 * IPv4 peer (given, or the connected one) takes IPv4's (udpv6_sendmsg hands it to
 * udp_sendmsg). */
static enum dps_cmsg_path dps_dgram_path(struct dps_file *f, const struct dps_ep *to)
{
	if (f->family == AF_INET)
		return DPS_CMSG_PATH_IP;
	if (to != NULL)
		return inet_addr_is_v4(&to->addr) ? DPS_CMSG_PATH_MAPPED : DPS_CMSG_PATH_IP6;
	if (f->nsocks == 0)
		return DPS_CMSG_PATH_IP6; /* not connected: EDESTADDRREQ later */
	struct inet_addr peer = dps_sock(f->at, f->socks[0])->raddr;
	return inet_addr_is_v4(&peer) ? DPS_CMSG_PATH_MAPPED : DPS_CMSG_PATH_IP6;
}

/* What sendmsg's control messages ask of the datagram, into its header: IP_PKTINFO's or
 * IPV6_PKTINFO's source (checked against the stack's addresses and interfaces, as Linux's
 * routing checks it; the interface is only checked, the stack routes by destination) and
 * the TTL/hop limit and TOS/traffic class for this datagram alone. */
static int dps_dgram_cmsgs_in(struct dps_file *f, const struct msghdr *msg,
			      enum dps_cmsg_path path, struct chan_udp_tx_hdr *h)
{
	struct dps_cmsg_send c;
	int rc = dps_cmsg_parse_send(msg, path, &c);
	if (rc < 0)
		return rc;
	if (c.pktinfo && path == DPS_CMSG_PATH_IP6) {
		rc = dps_links_check_source6(f->at, &c.src6, c.ifindex);
		if (rc < 0)
			return rc;
		if (!IN6_IS_ADDR_UNSPECIFIED(&c.src6))
			memcpy(h->laddr.b, c.src6.s6_addr, sizeof(h->laddr.b));
	} else if (c.pktinfo && (c.spec_dst != 0 || c.ifindex != 0)) {
		rc = dps_links_check_source(f->at, c.spec_dst, c.ifindex);
		if (rc < 0)
			return rc;
		h->laddr = inet_addr_v4(ntohl(c.spec_dst));
	}
	if (c.ttl || c.tos) {
		h->flags |= CHAN_UDP_TX_IP;
		h->ttl = c.ttl ? c.ttl_v : f->opts.ttl;
		h->tos = c.tos ? c.tos_v : f->opts.tos;
	}
	return 0;
}

static ssize_t dps_dgram_send(struct dps_file *f, const struct iovec *iov, int cnt, int flags,
			      const struct sockaddr *to, socklen_t tolen, const struct msghdr *msg)
{
	struct chan_udp_tx_hdr h = {0};
	struct dps_ep ep;
	int rc;
	if (to != NULL) {
		rc = dps_ep_in(f->family, to, tolen, &ep);
		if (rc < 0)
			return rc;
		if (ep.port == 0)
			return -EINVAL;
		if (f->family == AF_INET6 && f->v6only && inet_addr_is_v4(&ep.addr))
			return -ENETUNREACH; /* udpv6_sendmsg: an IPv6-only socket's mapped peer */
		h.raddr = ep.addr;
		h.rport = ep.port;
		h.scope = ep.scope;
	}
	if (msg != NULL) {
		rc = dps_dgram_cmsgs_in(f, msg, dps_dgram_path(f, to != NULL ? &ep : NULL), &h);
		if (rc < 0)
			return rc == -ENOTCONN ? -ENETDOWN : rc;
	}
	/* Linux refuses a broadcast destination without SO_BROADCAST in sendto itself; the
	 * worker sends later, so the library asks (from its copy of the stack's subnets).
	 * Linux routes first: with no route at all it says ENETUNREACH, we EACCES. */
	if (to != NULL && !f->opts.broadcast && inet_addr_is_v4(&ep.addr)) {
		int b = dps_links_is_broadcast(f->at, htonl(inet_addr_to_v4(&ep.addr)));
		if (b != 0)
			return b == -ENOTCONN ? -ENETDOWN : b < 0 ? b : -EACCES;
	}
	size_t len = dps_iov_len(iov, cnt);
	/* An AF_INET6 socket's IPv4 datagrams are checked by the worker (SO_ERROR). */
	if (len > (f->family == AF_INET6 ? UDP6_MAX_PAYLOAD : UDP_MAX_PAYLOAD))
		return -EMSGSIZE;
	rc = dps_udp_ensure_open(f);
	if (rc < 0)
		return rc;
	if (to == NULL && dps_sock(f->at, f->socks[0])->rport == 0)
		return -EDESTADDRREQ;
	if (dps_sock_state(f) & CHAN_SS_HUP)
		return -EPIPE; /* shut down for writing: its daemon is gone (dps_orphan.c) */
	h.len = (uint32_t)len;
	const uint32_t need = (uint32_t)(sizeof(h) + len);
	if (need > f->tx.size)
		return -EMSGSIZE;
	pthread_mutex_lock(&f->tx_lock);
	while (fifo_free(&f->tx) < need) {
		if (dps_nonblock(f, flags)) {
			rc = -EAGAIN;
			break;
		}
		rc = dps_wait_unlocked(f, &f->tx_lock, EPOLLOUT, f->sndtimeo_ms);
		if (rc < 0)
			break;
	}
	if (fifo_free(&f->tx) >= need) {
		/* The whole record is written, then published at once: a bad page of the
		 * payload publishes nothing (EFAULT, as ip_make_skb's copy). */
		fifo_write_at(&f->tx, 0, &h, sizeof(h));
		uint32_t off = sizeof(h);
		bool whole = true;
		for (int i = 0; i < cnt && whole; i++) {
			struct fifo_slice s[2];
			fifo_write_slices(&f->tx, off, (uint32_t)iov[i].iov_len, s);
			whole = dps_slices_in(s, iov[i].iov_base) == iov[i].iov_len;
			off += (uint32_t)iov[i].iov_len;
		}
		if (whole)
			fifo_produce(&f->tx, need);
		rc = whole ? 0 : -EFAULT;
	}
	pthread_mutex_unlock(&f->tx_lock);
	if (rc < 0)
		return rc == -ENOTCONN ? -ENETDOWN : rc;
	dps_kick(f->at, f->socks[0]);
	return (ssize_t)len;
}

/* The ancillary data recvmsg asked for, from the datagram's record. */
static void dps_dgram_cmsgs(const struct dps_file *f, const struct udp_rx_hdr *h,
			    struct msghdr *msg)
{
	struct dps_cmsg_ip_info in = {
		.v6 = (h->flags & UDP_RXF_V6) != 0,
		.ifindex = h->ifindex,
		.spec_dst = htonl(h->spec_dst),
		.daddr = htonl(h->daddr),
		.ttl = h->ttl,
		.tos = h->tos,
	};
	memcpy(in.dst6.s6_addr, h->dst.b, sizeof(in.dst6.s6_addr));
	dps_cmsg_recv(msg, f->ip.cmsgs, &in);
}

/* One datagram into iov, its source into *from; msg (recvmsg only, else NULL) gets
 * MSG_TRUNC and the ancillary data. */
static ssize_t dps_dgram_recv(struct dps_file *f, const struct iovec *iov, int cnt, int flags,
			      struct sockaddr_storage *from, socklen_t *fromlen,
			      struct msghdr *msg)
{
	int rc = dps_udp_ensure_open(f);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&f->rx_lock);
	ssize_t out;
	for (;;) {
		/* A pending ICMP error comes first, once (Linux, IP_RECVERR off). */
		uint32_t st = dps_sock_state(f);
		out = dps_error_take(f, st);
		if (out != 0)
			break;
		struct udp_rx_hdr h;
		struct fifo rx;
		uint32_t gen;
		if (!dps_rx_view(f, &rx, &gen)) {
			out = -EIO;
			break;
		}
		uint32_t used = fifo_used(&rx);
		if (used >= sizeof(h)) {
			fifo_peek(&rx, 0, &h, sizeof(h));
			if (h.len > used - sizeof(h)) {
				fifo_consume(&rx, used); /* cannot happen with a sane daemon */
				out = -EIO;
				break;
			}
			uint32_t off = sizeof(h), left = h.len;
			bool fault = false;
			for (int i = 0; i < cnt && left > 0 && !fault; i++) {
				uint32_t n = iov[i].iov_len < left ? (uint32_t)iov[i].iov_len : left;
				struct fifo_slice s[2];
				fifo_read_slices(&rx, off, n, s);
				fault = dps_slices_out(iov[i].iov_base, s) < n;
				off += n;
				left -= n;
			}
			/* A datagram that could not be copied is gone too (udp_recvmsg). */
			if (!(flags & MSG_PEEK))
				fifo_consume(&rx, (uint32_t)sizeof(h) + h.len);
			if (fault) {
				out = -EFAULT;
				break;
			}
			if (msg != NULL && left > 0)
				msg->msg_flags |= MSG_TRUNC;
			if (msg != NULL)
				dps_dgram_cmsgs(f, &h, msg);
			struct dps_ep src = {.addr = h.src, .port = htons(h.sport),
					     .scope = h.ifindex};
			*fromlen = dps_ep_out(f->family, &src, from);
			out = (flags & MSG_TRUNC) ? (ssize_t)h.len : (ssize_t)(h.len - left);
			break;
		}
		if (dps_nonblock(f, flags)) {
			dps_attach_check_lazy(f->at);
			out = -EAGAIN;
			break;
		}
		if (st & CHAN_SS_HUP) {
			out = 0; /* shut down for reading: its daemon is gone (dps_orphan.c) */
			break;
		}
		out = dps_wait_unlocked(f, &f->rx_lock, EPOLLIN, f->rcvtimeo_ms);
		if (out < 0)
			break;
	}
	pthread_mutex_unlock(&f->rx_lock);
	return out;
}

/* ---- the calls ---- */

/* iov and cnt (0..IOV_MAX) are the library's copies; to is a copy of the destination (NULL:
 * none); msg: sendmsg's, with a copy of its control data, for its control messages (UDP
 * only; a stream ignores them, as tcp_sendmsg ignores IP-level ones), else NULL. */
static ssize_t dps_sendv(int fd, const struct iovec *iov, int cnt, int flags,
			 const struct sockaddr *to, socklen_t tolen, const struct msghdr *msg)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	ssize_t rc;
	if (f->kind == DPS_UDP)
		rc = dps_dgram_send(f, iov, cnt, flags, to, tolen, msg);
	else if (f->kind == DPS_TCP)
		rc = dps_stream_send(f, iov, cnt, flags);
	else
		rc = f->kind == DPS_EPOLL ? -EINVAL : -ENOTCONN;
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL((int)-rc) : rc;
}

/* The same for receiving: *from gets the datagram's source and *fromlen its length (0 for
 * a stream), msg (a copy of recvmsg's header) its flags and ancillary data. */
static ssize_t dps_recvv(int fd, const struct iovec *iov, int cnt, int flags,
			 struct sockaddr_storage *from, socklen_t *fromlen, struct msghdr *msg)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	ssize_t rc;
	*fromlen = 0;
	if ((flags & MSG_ERRQUEUE) && f->kind != DPS_EPOLL)
		rc = -EAGAIN; /* no error queue (IP_RECVERR): Linux's answer for an empty one */
	else if (f->kind == DPS_UDP) {
		rc = dps_dgram_recv(f, iov, cnt, flags, from, fromlen, msg);
	} else if (f->kind == DPS_TCP) {
		/* streams have no source address per read, nor ancillary data (tcp_recvmsg) */
		rc = dps_stream_recv(f, iov, cnt, flags);
		if (rc >= 0 && msg != NULL)
			msg->msg_controllen = 0;
	} else
		rc = f->kind == DPS_EPOLL ? -EINVAL : -ENOTCONN;
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL((int)-rc) : rc;
}

/* An application's iovec array, copied in as the kernel's import_iovec does (EFAULT), into
 * fast when it fits. */
#define DPS_IOV_FAST 8
struct dps_iov_in {
	struct iovec *v;
	struct iovec fast[DPS_IOV_FAST];
};

static int dps_iov_import(struct dps_iov_in *in, const struct iovec *uiov, size_t cnt)
{
	in->v = in->fast;
	if (cnt > DPS_IOV_FAST && (in->v = malloc(cnt * sizeof(*uiov))) == NULL)
		return -ENOMEM;
	if (dps_get_user(in->v, uiov, cnt * sizeof(*uiov)) < 0) {
		if (in->v != in->fast)
			free(in->v);
		return -EFAULT;
	}
	return 0;
}

static void dps_iov_done(struct dps_iov_in *in)
{
	if (in->v != in->fast)
		free(in->v);
}

/* recvfrom's and accept's address out (move_addr_to_user): what fits of it, then its
 * length; 0, -EFAULT, or -EINVAL for a negative *ulen. */
int dps_addr_out(const void *k, socklen_t klen, struct sockaddr *uaddr, socklen_t *ulen)
{
	int len;
	if (dps_get_user(&len, ulen, sizeof(len)) < 0)
		return -EFAULT;
	if (len > (int)klen)
		len = (int)klen;
	if (len < 0)
		return -EINVAL;
	if (len > 0 && dps_put_user(uaddr, k, (size_t)len) < 0)
		return -EFAULT;
	return dps_put_user(ulen, &klen, sizeof(klen));
}

int dps_ep_put(const struct dps_file *f, const struct dps_ep *ep, struct sockaddr *uaddr,
	       socklen_t *ulen)
{
	struct sockaddr_storage k;
	socklen_t klen = dps_ep_out(f->family, ep, &k);
	return dps_addr_out(&k, klen, uaddr, ulen);
}

/* sendto's and sendmsg's address in (move_addr_to_kernel). */
int dps_addr_in(const struct sockaddr *uaddr, socklen_t len, struct sockaddr_storage *k)
{
	if ((int)len < 0 || len > sizeof(*k))
		return -EINVAL;
	return dps_get_user(k, uaddr, len);
}

/* recv's result with recvfrom's address written out: an address that cannot be written
 * fails the call after the data was taken, as on Linux. */
static ssize_t dps_recv_addr(int fd, const struct iovec *iov, int cnt, int flags,
			     struct sockaddr *from, socklen_t *fromlen)
{
	struct sockaddr_storage src;
	socklen_t srclen;
	ssize_t rc = dps_recvv(fd, iov, cnt, flags, &src, &srclen, NULL);
	if (rc < 0 || from == NULL)
		return rc;
	int err = dps_addr_out(&src, srclen, from, fromlen);
	return err < 0 ? DPS_FAIL(-err) : rc;
}

ssize_t dps_read(int fd, void *buf, size_t len)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	return dps_recv_addr(fd, &iov, 1, 0, NULL, NULL);
}

ssize_t dps_write(int fd, const void *buf, size_t len)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	return dps_sendv(fd, &iov, 1, 0, NULL, 0, NULL);
}

/* readv and writev: the array copied in first (after the kernel's EINVAL for a count out
 * of range). */
static ssize_t dps_rwv(int fd, const struct iovec *uiov, int iovcnt, bool write)
{
	if (iovcnt < 0 || iovcnt > IOV_MAX)
		return DPS_FAIL(EINVAL);
	struct dps_iov_in in;
	int err = dps_iov_import(&in, uiov, (size_t)iovcnt);
	if (err < 0)
		return DPS_FAIL(-err);
	ssize_t rc = write ? dps_sendv(fd, in.v, iovcnt, 0, NULL, 0, NULL)
			   : dps_recv_addr(fd, in.v, iovcnt, 0, NULL, NULL);
	dps_iov_done(&in);
	return rc;
}

ssize_t dps_readv(int fd, const struct iovec *iov, int iovcnt)
{
	return dps_rwv(fd, iov, iovcnt, false);
}

ssize_t dps_writev(int fd, const struct iovec *iov, int iovcnt)
{
	return dps_rwv(fd, iov, iovcnt, true);
}

ssize_t dps_send(int fd, const void *buf, size_t len, int flags)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	return dps_sendv(fd, &iov, 1, flags, NULL, 0, NULL);
}

ssize_t dps_recv(int fd, void *buf, size_t len, int flags)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	return dps_recv_addr(fd, &iov, 1, flags, NULL, NULL);
}

ssize_t dps_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
		   socklen_t tolen)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct sockaddr_storage k;
	if (to != NULL) {
		int err = dps_addr_in(to, tolen, &k);
		if (err < 0)
			return DPS_FAIL(-err);
	}
	return dps_sendv(fd, &iov, 1, flags, to != NULL ? (struct sockaddr *)&k : NULL, tolen,
			 NULL);
}

ssize_t dps_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		     socklen_t *fromlen)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	return dps_recv_addr(fd, &iov, 1, flags, from, fromlen);
}

/* A message header copied in with its iovec array (copy_msghdr_from_user, import_iovec):
 * 0 or -errno. */
static int dps_msg_import(struct msghdr *m, const struct msghdr *umsg, struct dps_iov_in *in)
{
	if (dps_get_user(m, umsg, sizeof(*m)) < 0)
		return -EFAULT;
	if (m->msg_name == NULL)
		m->msg_namelen = 0;
	if ((int)m->msg_namelen < 0)
		return -EINVAL;
	if (m->msg_iovlen > IOV_MAX)
		return -EMSGSIZE;
	return dps_iov_import(in, m->msg_iov, m->msg_iovlen);
}

ssize_t dps_msg_send(int fd, const struct msghdr *umsg, int flags, size_t *want)
{
	struct msghdr m;
	struct dps_iov_in in;
	int err = dps_msg_import(&m, umsg, &in);
	if (err < 0)
		return DPS_FAIL(-err);
	*want = dps_iov_len(in.v, (int)m.msg_iovlen);
	struct sockaddr_storage name;
	socklen_t namelen = m.msg_namelen < sizeof(name) ? m.msg_namelen : sizeof(name);
	if (namelen > 0)
		err = dps_addr_in(m.msg_name, namelen, &name);
	/* The control data, copied whole before anything is sent (____sys_sendmsg). */
	void *ctl = NULL;
	if (err == 0 && m.msg_controllen > 0) {
		if (m.msg_controllen > DPS_CONTROL_MAX)
			err = -ENOBUFS;
		else if ((ctl = malloc(m.msg_controllen)) == NULL)
			err = -ENOMEM;
		else
			err = dps_get_user(ctl, m.msg_control, m.msg_controllen);
	}
	m.msg_control = ctl;
	ssize_t rc = err < 0 ? DPS_FAIL(-err)
			     : dps_sendv(fd, in.v, (int)m.msg_iovlen, flags,
					 namelen > 0 ? (struct sockaddr *)&name : NULL, namelen, &m);
	free(ctl);
	dps_iov_done(&in);
	return rc;
}

ssize_t dps_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	size_t want;
	return dps_msg_send(fd, msg, flags, &want);
}

/* What recvmsg gives back into the application's header, as ____sys_recvmsg: the source
 * address (when it asked for one), then msg_flags and msg_controllen. */
static int dps_msg_export(struct msghdr *umsg, const struct msghdr *m,
			  const struct sockaddr_storage *from, socklen_t fromlen)
{
	int err = 0;
	if (m->msg_name != NULL)
		err = dps_addr_out(from, fromlen, m->msg_name, &umsg->msg_namelen);
	if (err == 0)
		err = dps_put_user(&umsg->msg_flags, &m->msg_flags, sizeof(m->msg_flags));
	if (err == 0)
		err = dps_put_user(&umsg->msg_controllen, &m->msg_controllen,
				   sizeof(m->msg_controllen));
	return err;
}

ssize_t dps_recvmsg(int fd, struct msghdr *umsg, int flags)
{
	struct msghdr m;
	struct dps_iov_in in;
	int err = dps_msg_import(&m, umsg, &in);
	if (err < 0)
		return DPS_FAIL(-err);
	m.msg_flags = 0;
	struct sockaddr_storage from;
	socklen_t fromlen;
	ssize_t rc = dps_recvv(fd, in.v, (int)m.msg_iovlen, flags, &from, &fromlen, &m);
	dps_iov_done(&in);
	if (rc >= 0 && (err = dps_msg_export(umsg, &m, &from, fromlen)) < 0)
		return DPS_FAIL(-err);
	return rc;
}

bool dps_error_pending(int fd)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return false;
	bool pending = false;
	if (f->nsocks > 0 && (f->kind == DPS_UDP || f->kind == DPS_TCP)) {
		struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
		pending = (dps_sock_state(f) & CHAN_SS_ERR) && atomic_load(&ss->error) != 0;
	}
	dps_file_put(f);
	return pending;
}

/* ---- zero copy ---- */

static struct dps_file *dps_zc_file(int fd, int *err)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL) {
		*err = EBADF;
		return NULL;
	}
	if (f->kind != DPS_TCP || f->nsocks == 0) {
		*err = f->kind == DPS_TCP ? ENOTCONN : EOPNOTSUPP;
		dps_file_put(f);
		return NULL;
	}
	return f;
}

/* The slices (when rc > 0; empty ones otherwise) out to the application's iov[2]: rc, or
 * -EFAULT when it cannot be written. */
static ssize_t dps_zc_out(struct iovec uiov[2], const struct fifo_slice s[2], ssize_t rc)
{
	struct iovec k[2] = {{0}};
	for (int i = 0; rc > 0 && i < 2; i++) {
		k[i].iov_base = s[i].base;
		k[i].iov_len = s[i].len;
	}
	return dps_put_user(uiov, k, sizeof(k)) < 0 ? -EFAULT : rc;
}

ssize_t dps_zc_recv(int fd, struct iovec iov[2], int flags)
{
	int err;
	struct dps_file *f = dps_zc_file(fd, &err);
	if (f == NULL)
		return DPS_FAIL(err);
	ssize_t rc;
	struct fifo_slice s[2];
	for (;;) {
		struct fifo rx;
		uint32_t gen;
		if (!dps_rx_view(f, &rx, &gen)) {
			rc = -EIO;
			break;
		}
		if (fifo_read_slices(&rx, 0, UINT32_MAX, s) > 0) {
			rc = (ssize_t)(s[0].len + s[1].len);
			break;
		}
		rc = dps_stream_empty(f);
		if (rc != -EAGAIN || dps_nonblock(f, flags))
			break;
		rc = dps_wait(f, EPOLLIN, f->rcvtimeo_ms);
		if (rc < 0)
			break;
	}
	rc = dps_zc_out(iov, s, rc);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL((int)-rc) : rc;
}

int dps_zc_recv_done(int fd, size_t n)
{
	int err;
	struct dps_file *f = dps_zc_file(fd, &err);
	if (f == NULL)
		return DPS_FAIL(err);
	pthread_mutex_lock(&f->rx_lock);
	struct fifo rx;
	uint32_t gen;
	int rc = dps_rx_view(f, &rx, &gen) ? 0 : -EIO;
	uint32_t used = rc == 0 ? fifo_used(&rx) : 0;
	if (rc == 0 && n > used)
		rc = -EINVAL;
	if (rc == 0 && n > 0) {
		dps_rx_seen(f, gen);
		fifo_consume(&rx, (uint32_t)n);
		dps_rx_consumed(f, &rx, used);
	}
	pthread_mutex_unlock(&f->rx_lock);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

ssize_t dps_zc_send_reserve(int fd, struct iovec iov[2], int flags)
{
	int err;
	struct dps_file *f = dps_zc_file(fd, &err);
	if (f == NULL)
		return DPS_FAIL(err);
	ssize_t rc;
	struct fifo_slice s[2];
	for (;;) {
		rc = dps_stream_blocked(f);
		if (rc != -EAGAIN)
			break;
		bool connected = atomic_load(&dps_sock(f->at, f->socks[0])->state) &
				 CHAN_SS_CONNECTED;
		if (connected && fifo_write_slices(&f->tx, 0, UINT32_MAX, s) > 0) {
			rc = (ssize_t)(s[0].len + s[1].len);
			break;
		}
		if (connected && dps_tx_ask_room(f))
			continue;
		if (dps_nonblock(f, flags))
			break;
		rc = dps_wait(f, EPOLLOUT, f->sndtimeo_ms);
		if (rc < 0)
			break;
	}
	rc = dps_zc_out(iov, s, rc);
	if (rc == -EPIPE && !(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL((int)-rc) : rc;
}

int dps_zc_send_commit(int fd, size_t n)
{
	int err;
	struct dps_file *f = dps_zc_file(fd, &err);
	if (f == NULL)
		return DPS_FAIL(err);
	int rc = n > fifo_free(&f->tx) ? -EINVAL : 0;
	if (rc == 0 && n > 0) {
		/* A commit has no MSG_MORE: what an earlier send held goes too. */
		atomic_store_explicit(&dps_sock(f->at, f->socks[0])->more, 0, memory_order_relaxed);
		fifo_produce(&f->tx, (uint32_t)n);
		dps_kick(f->at, f->socks[0]);
	}
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}
