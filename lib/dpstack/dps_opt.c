/* Socket options, fcntl and ioctl (the interface ioctls: dps_ifreq.c; level IPPROTO_IP:
 * dps_opt_ip.c). Options set before connect/listen travel with that call; on a live socket
 * they go to its worker at once: small values as a command that needs no answer
 * (CHAN_CMD_SETOPT), the others as a call (CHAN_OP_SETOPT). Values are checked as Linux
 * checks them (net/core/sock.c, net/ipv4/tcp.c). Values, lengths and ioctl arguments are the
 * application's memory, reached through the fault-safe copies (EFAULT); getsockopt reads the
 * length first and writes it back last, as the kernel does. */
#include <fcntl.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <dpstack/dpstack.h>

#include "dps_links.h"
#include "dps_priv.h"
#include "udp/udp.h"

#define DPS_BUF_DEFAULT 262144          /* the stack's default FIFO size */
#define DPS_BUF_MIN 4096

/* An option value of the application's of `need` bytes: -EINVAL when len is shorter,
 * -EFAULT when it cannot be read. */
static int dps_opt_arg(void *out, const void *val, socklen_t len, size_t need)
{
	if (len < need)
		return -EINVAL;
	return dps_get_user(out, val, need);
}

static int dps_int_arg(const void *val, socklen_t len, int *out)
{
	return dps_opt_arg(out, val, len, sizeof(int));
}

static bool dps_live(const struct dps_file *f)
{
	return f->nsocks > 0 && (f->kind == DPS_TCP || f->kind == DPS_LISTEN || f->kind == DPS_UDP);
}

/* Options whose value the library checked and that fit a command: no answer is awaited. */
static bool dps_opt_posted(enum chan_opt opt, uint32_t value)
{
	return value <= 0xffff && opt != CHAN_OPT_RCVBUF && opt != CHAN_OPT_SNDBUF &&
	       opt != CHAN_OPT_CONGESTION;
}

int dps_setopt_live(struct dps_file *f, enum chan_opt opt, uint32_t value)
{
	if (!dps_live(f))
		return 0;
	for (unsigned i = 0; i < f->nsocks; i++) {
		int rc;
		if (dps_opt_posted(opt, value)) {
			rc = dps_cmd(f->at, f->socks[i], CHAN_CMD_SETOPT,
				     CHAN_CMD_SETOPT_ARG(opt, value));
		} else {
			struct chan_req rq = {.op = CHAN_OP_SETOPT, .sock = f->socks[i],
					      .opt = opt, .value = value};
			memcpy(rq.cc, f->opts.cc, sizeof(rq.cc));
			struct chan_reply rep;
			rc = dps_call(f->at, chan_sock_worker(&f->at->lay, f->socks[i]), &rq, &rep);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int dps_timeval_ms(const void *val, socklen_t len, int *ms)
{
	struct timeval tv;
	int rc = dps_opt_arg(&tv, val, len, sizeof(tv));
	if (rc < 0)
		return rc;
	if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return -EDOM;
	if (tv.tv_sec < 0) {
		*ms = 0;
		return 0;
	}
	int64_t v = (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
	*ms = v > INT32_MAX ? INT32_MAX : (int)v;
	return 0;
}

static int dps_set_socket_level(struct dps_file *f, int name, const void *val, socklen_t len)
{
	int v = 0, rc;
	switch (name) {
	case SO_RCVTIMEO:
		return dps_timeval_ms(val, len, &f->rcvtimeo_ms);
	case SO_SNDTIMEO:
		return dps_timeval_ms(val, len, &f->sndtimeo_ms);
	case SO_LINGER: {
		struct linger l;
		if ((rc = dps_opt_arg(&l, val, len, sizeof(l))) < 0)
			return rc;
		f->linger_on = l.l_onoff;
		f->linger_s = l.l_linger;
		f->opts.linger0 = l.l_onoff && l.l_linger == 0;
		return dps_setopt_live(f, CHAN_OPT_LINGER0, f->opts.linger0);
	}
	default:
		break;
	}
	if ((rc = dps_int_arg(val, len, &v)) < 0)
		return rc;
	switch (name) {
	case SO_REUSEADDR:
		f->reuseaddr = v != 0;
		return 0;
	case SO_REUSEPORT:
		f->reuseport = v != 0;
		return 0;
	case SO_RCVBUF:
	case SO_SNDBUF: {
		/* Linux doubles the request (room for its bookkeeping) and so do we. */
		uint32_t b = v < DPS_BUF_MIN / 2 ? DPS_BUF_MIN : (uint32_t)v * 2;
		if (b > UDP_RCVBUF_MAX)
			b = UDP_RCVBUF_MAX;
		if (name == SO_RCVBUF)
			f->opts.rcvbuf = b;
		else
			f->opts.sndbuf = b;
		return dps_setopt_live(f, name == SO_RCVBUF ? CHAN_OPT_RCVBUF : CHAN_OPT_SNDBUF, b);
	}
	case SO_KEEPALIVE:
		f->opts.keepalive = v != 0;
		return dps_setopt_live(f, CHAN_OPT_KEEPALIVE, f->opts.keepalive);
	case SO_BROADCAST:
		f->opts.broadcast = v != 0;
		return dps_setopt_live(f, CHAN_OPT_BROADCAST, f->opts.broadcast);
	default:
		return -ENOPROTOOPT;
	}
}

static int dps_set_tcp_level(struct dps_file *f, int name, const void *val, socklen_t len)
{
	if (f->kind != DPS_TCP && f->kind != DPS_LISTEN)
		return -ENOPROTOOPT;
	if (name == TCP_CONGESTION) {
		char cc[CHAN_CC_NAME_MAX] = {0};
		if (len == 0)
			return -EINVAL;
		/* A string, read up to its end (strncpy_from_sockptr): a bad page after the
		 * terminating NUL is no fault. */
		size_t want = len < sizeof(cc) - 1 ? len : sizeof(cc) - 1;
		size_t got = dps_copy_from_user(cc, val, want);
		if (got < want && memchr(cc, '\0', got) == NULL)
			return -EFAULT;
		struct chan_req rq = {.op = CHAN_OP_SETOPT, .sock = UINT32_MAX,
				      .opt = CHAN_OPT_CONGESTION};
		memcpy(rq.cc, cc, sizeof(rq.cc));
		struct chan_reply rep;
		int rc = dps_call(f->at, 0, &rq, &rep); /* is the name known? */
		if (rc < 0)
			return rc;
		memcpy(f->opts.cc, cc, sizeof(f->opts.cc));
		return dps_setopt_live(f, CHAN_OPT_CONGESTION, 0);
	}
	int v, rc;
	if ((rc = dps_int_arg(val, len, &v)) < 0)
		return rc;
	switch (name) {
	case TCP_NODELAY:
		f->opts.nodelay = v != 0;
		return dps_setopt_live(f, CHAN_OPT_NODELAY, f->opts.nodelay);
	case TCP_CORK:
		f->opts.cork = v != 0;
		return dps_setopt_live(f, CHAN_OPT_CORK, f->opts.cork);
	case TCP_KEEPIDLE:
	case TCP_KEEPINTVL:
		if (v < 1 || v > 32767)
			return -EINVAL;
		if (name == TCP_KEEPIDLE)
			f->opts.keep_idle_s = (uint32_t)v;
		else
			f->opts.keep_intvl_s = (uint32_t)v;
		return dps_setopt_live(f, name == TCP_KEEPIDLE ? CHAN_OPT_KEEPIDLE
								: CHAN_OPT_KEEPINTVL, (uint32_t)v);
	case TCP_KEEPCNT:
		if (v < 1 || v > 127)
			return -EINVAL;
		f->opts.keep_cnt = (uint32_t)v;
		return dps_setopt_live(f, CHAN_OPT_KEEPCNT, (uint32_t)v);
	case TCP_USER_TIMEOUT:
		if (v < 0)
			return -EINVAL;
		f->opts.user_timeout_ms = (uint32_t)v;
		return dps_setopt_live(f, CHAN_OPT_USER_TIMEOUT, (uint32_t)v);
	case TCP_MAXSEG:
		if (v != 0 && (v < 88 || v > 32767))
			return -EINVAL;
		f->opts.maxseg = (uint16_t)v;
		return dps_setopt_live(f, CHAN_OPT_MAXSEG, (uint32_t)v);
	default:
		return -ENOPROTOOPT;
	}
}

int dps_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc;
	if (f->kind == DPS_EPOLL)
		rc = -ENOTSOCK;
	else if (level == SOL_SOCKET)
		rc = dps_set_socket_level(f, name, val, len);
	else if (level == IPPROTO_TCP)
		rc = dps_set_tcp_level(f, name, val, len);
	else if (level == IPPROTO_IP)
		rc = dps_set_ip_level(f, name, val, len);
	else if (level == IPPROTO_IPV6)
		rc = dps_set_ip6_level(f, name, val, len);
	else
		rc = -ENOPROTOOPT;
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

/* An answer of size bytes into the application's val: min(*len, size) of them, as Linux
 * copies and reports; -EFAULT for a negative *len (len is the library's copy). */
static int dps_put_opt(void *val, socklen_t *len, const void *v, size_t size)
{
	if ((int)*len < 0)
		return -EFAULT;
	socklen_t n = *len < size ? *len : (socklen_t)size;
	if (dps_put_user(val, v, n) < 0)
		return -EFAULT;
	*len = n;
	return 0;
}

static int dps_put_int(void *val, socklen_t *len, int v)
{
	return dps_put_opt(val, len, &v, sizeof(v));
}

/* A value that must fit whole (EINVAL otherwise). */
static int dps_put_whole(void *val, socklen_t *len, const void *v, size_t size)
{
	if (*len < size)
		return -EINVAL;
	return dps_put_opt(val, len, v, size);
}

static int dps_put_timeval(void *val, socklen_t *len, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	return dps_put_whole(val, len, &tv, sizeof(tv));
}

static int dps_info(struct dps_file *f, struct chan_info *out)
{
	struct chan_req rq = {.op = CHAN_OP_INFO, .sock = f->socks[0]};
	struct chan_reply rep;
	int rc = dps_call(f->at, chan_sock_worker(&f->at->lay, f->socks[0]), &rq, &rep);
	if (rc == 0)
		*out = rep.u.info;
	return rc;
}

static int dps_get_socket_level(struct dps_file *f, int name, void *val, socklen_t *len)
{
	struct chan_sock *ss = f->nsocks > 0 ? dps_sock(f->at, f->socks[0]) : NULL;
	switch (name) {
	case SO_ERROR:
		if (ss == NULL || f->kind == DPS_LISTEN)
			return dps_put_int(val, len, 0);
		dps_sock_state(f); /* a dead daemon's reset is armed first (dps_orphan.c) */
		return dps_put_int(val, len, (int)atomic_exchange(&ss->error, 0));
	case SO_TYPE:
		return dps_put_int(val, len, f->kind == DPS_UDP ? SOCK_DGRAM : SOCK_STREAM);
	case SO_DOMAIN:
		return dps_put_int(val, len, f->family);
	case SO_PROTOCOL:
		return dps_put_int(val, len, f->kind == DPS_UDP ? IPPROTO_UDP : IPPROTO_TCP);
	case SO_ACCEPTCONN:
		return dps_put_int(val, len, f->kind == DPS_LISTEN);
	case SO_REUSEADDR:
		return dps_put_int(val, len, f->reuseaddr);
	case SO_REUSEPORT:
		return dps_put_int(val, len, f->reuseport);
	case SO_KEEPALIVE:
		return dps_put_int(val, len, f->opts.keepalive);
	case SO_BROADCAST:
		return dps_put_int(val, len, f->opts.broadcast);
	case SO_RCVBUF:
		if (ss != NULL && f->kind != DPS_LISTEN)
			return dps_put_int(val, len, (int)ss->rx_size);
		return dps_put_int(val, len, f->opts.rcvbuf ? (int)f->opts.rcvbuf : DPS_BUF_DEFAULT);
	case SO_SNDBUF:
		if (ss != NULL && f->kind != DPS_LISTEN)
			return dps_put_int(val, len, (int)ss->tx_size);
		return dps_put_int(val, len, f->opts.sndbuf ? (int)f->opts.sndbuf : DPS_BUF_DEFAULT);
	case SO_RCVTIMEO:
		return dps_put_timeval(val, len, f->rcvtimeo_ms);
	case SO_SNDTIMEO:
		return dps_put_timeval(val, len, f->sndtimeo_ms);
	case SO_LINGER: {
		struct linger l = {.l_onoff = f->linger_on, .l_linger = f->linger_s};
		return dps_put_whole(val, len, &l, sizeof(l));
	}
	default:
		return -ENOPROTOOPT;
	}
}

static int dps_get_tcp_info(struct dps_file *f, void *val, socklen_t *len)
{
	struct tcp_info ti;
	memset(&ti, 0, sizeof(ti));
	if (f->nsocks > 0) {
		struct chan_info ci;
		int rc = dps_info(f, &ci);
		if (rc < 0)
			return rc;
		ti.tcpi_state = ci.tcp_state;
		ti.tcpi_options = ci.options;
		ti.tcpi_snd_wscale = ci.snd_wscale & 0xf;
		ti.tcpi_rcv_wscale = ci.rcv_wscale & 0xf;
		ti.tcpi_rto = ci.rto_us;
		ti.tcpi_snd_mss = ci.snd_mss;
		ti.tcpi_rcv_mss = ci.rcv_mss;
		ti.tcpi_unacked = ci.unacked;
		ti.tcpi_rtt = ci.rtt_us;
		ti.tcpi_rttvar = ci.rttvar_us;
		ti.tcpi_snd_ssthresh = ci.snd_ssthresh;
		ti.tcpi_snd_cwnd = ci.snd_cwnd;
		ti.tcpi_advmss = ci.rcv_mss;
		ti.tcpi_total_retrans = ci.total_retrans;
	} else {
		ti.tcpi_state = 7; /* TCP_CLOSE */
	}
	return dps_put_opt(val, len, &ti, sizeof(ti));
}

static int dps_get_tcp_level(struct dps_file *f, int name, void *val, socklen_t *len)
{
	if (name == TCP_INFO)
		return dps_get_tcp_info(f, val, len);
	struct chan_info ci;
	bool live = f->nsocks > 0;
	if (live) {
		int rc = dps_info(f, &ci);
		if (rc < 0)
			return rc;
	}
	switch (name) {
	case TCP_NODELAY:
		return dps_put_int(val, len, live ? ci.nodelay : f->opts.nodelay);
	case TCP_CORK: /* only this library sets it: its copy is the socket's */
		return dps_put_int(val, len, f->opts.cork);
	case TCP_KEEPIDLE:
		return dps_put_int(val, len, live ? (int)ci.keep_idle_s
					     : f->opts.keep_idle_s ? (int)f->opts.keep_idle_s : 7200);
	case TCP_KEEPINTVL:
		return dps_put_int(val, len, live ? (int)ci.keep_intvl_s
					     : f->opts.keep_intvl_s ? (int)f->opts.keep_intvl_s : 75);
	case TCP_KEEPCNT:
		return dps_put_int(val, len, live ? (int)ci.keep_cnt
					     : f->opts.keep_cnt ? (int)f->opts.keep_cnt : 9);
	case TCP_USER_TIMEOUT:
		return dps_put_int(val, len, live ? (int)ci.user_timeout_ms
					     : (int)f->opts.user_timeout_ms);
	case TCP_MAXSEG:
		/* Linux: the MSS in use once connected, else the user's cap or 536. */
		return dps_put_int(val, len, live && ci.snd_mss ? (int)ci.snd_mss
					     : f->opts.maxseg ? f->opts.maxseg : 536);
	case TCP_CONGESTION: {
		const char *cc = live ? ci.cc : f->opts.cc[0] ? f->opts.cc : "cubic";
		char buf[CHAN_CC_NAME_MAX] = {0};
		snprintf(buf, sizeof(buf), "%s", cc);
		return dps_put_opt(val, len, buf, sizeof(buf));
	}
	default:
		return -ENOPROTOOPT;
	}
}

int dps_getsockopt(int fd, int level, int name, void *val, socklen_t *ulen)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc;
	socklen_t len;
	bool tcp = f->kind == DPS_TCP || f->kind == DPS_LISTEN;
	if (f->kind == DPS_EPOLL)
		rc = -ENOTSOCK;
	else if (level != SOL_SOCKET && level != IPPROTO_IP && level != IPPROTO_IPV6 &&
		 (level != IPPROTO_TCP || !tcp))
		rc = -ENOPROTOOPT;
	else if (dps_get_user(&len, ulen, sizeof(len)) < 0)
		rc = -EFAULT;
	else if (level == SOL_SOCKET)
		rc = dps_get_socket_level(f, name, val, &len);
	else if (level == IPPROTO_TCP)
		rc = dps_get_tcp_level(f, name, val, &len);
	else if (level == IPPROTO_IPV6)
		rc = dps_get_ip6_level(f, name, val, &len);
	else
		rc = dps_get_ip_level(f, name, val, &len);
	if (rc == 0)
		rc = dps_put_user(ulen, &len, sizeof(len));
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

int dps_fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = 0;
	switch (cmd) {
	case F_GETFL:
		rc = O_RDWR | (atomic_load(&f->flags) & O_NONBLOCK);
		break;
	case F_SETFL:
		atomic_store(&f->flags, (int)(arg & O_NONBLOCK));
		break;
	case F_GETFD:
		rc = f->cloexec ? FD_CLOEXEC : 0;
		break;
	case F_SETFD:
		/* Only recorded: a socket's placeholder stays close-on-exec until an exec
		 * carries the socket over (dps_exec.c), so that a program run some other way
		 * (posix_spawn) finds the descriptor closed rather than a dead socket. */
		f->cloexec = (arg & FD_CLOEXEC) != 0;
		break;
	default:
		rc = -EINVAL;
	}
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : rc;
}

/* An interface ioctl: the request copied in, answered, copied out (EFAULT either way). */
static int dps_ioctl_ifreq(struct dps_file *f, unsigned long request, void *uarg)
{
	union {
		struct ifreq r;
		struct ifconf c;
	} k;
	size_t size = request == SIOCGIFCONF ? sizeof(k.c) : sizeof(k.r);
	if (dps_get_user(&k, uarg, size) < 0)
		return -EFAULT;
	struct chan_links t;
	int rc = dps_links_get(f->at, &t);
	if (rc == 0)
		rc = dps_ifreq_answer(&t, request, &k);
	return rc < 0 ? rc : dps_put_user(uarg, &k, size);
}

int dps_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = 0;
	if (request == FIOCLEX || request == FIONCLEX) {
		/* No argument: the close-on-exec flag, as F_SETFD sets it. */
		f->cloexec = request == FIOCLEX;
	} else if (dps_ifreq_request(request) && f->kind != DPS_EPOLL) {
		rc = dps_ioctl_ifreq(f, request, arg);
	} else if (request == FIONBIO) {
		int on;
		rc = dps_get_user(&on, arg, sizeof(on));
		if (rc == 0 && on)
			atomic_fetch_or(&f->flags, O_NONBLOCK);
		else if (rc == 0)
			atomic_fetch_and(&f->flags, ~O_NONBLOCK);
	} else if (request == FIONREAD) {
		int n = 0;
		struct fifo rx;
		uint32_t gen;
		if (f->kind == DPS_LISTEN || f->kind == DPS_EPOLL) {
			rc = -EINVAL;
		} else if (f->nsocks == 0 || !dps_rx_view(f, &rx, &gen)) {
			n = 0; /* not connected: nothing to read */
		} else if (f->kind == DPS_UDP) {
			/* Linux: the size of the next datagram. */
			struct udp_rx_hdr h;
			n = fifo_peek(&rx, 0, &h, sizeof(h)) == sizeof(h) ? (int)h.len : 0;
		} else {
			n = (int)fifo_used(&rx);
		}
		if (rc == 0)
			rc = dps_put_user(arg, &n, sizeof(n));
	} else {
		rc = -ENOTTY;
	}
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}
