/* RFC 6528 initial sequence numbers and the random secret behind them (see tcp_isn.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "wire/bytes.h"
#include "tcp_isn.h"

/* Reads exactly len bytes from /dev/urandom. Returns 0 or -errno. */
static int isn_read_urandom(uint8_t *buf, size_t len)
{
	size_t got = 0;
	int fd, err = 0;

	do {
		fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0) {
			err = -EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	return err;
}

/* Reads exactly len bytes from getrandom(2), blocking until the kernel's pool is initialised.
 * Returns 0 or -errno; -ENOSYS when the kernel lacks the call. */
static int isn_getrandom(uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(buf + got, len - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

int tcp_secret_init_random(struct tcp_secret *s)
{
	uint8_t buf[32];
	int err;

	err = isn_getrandom(buf, sizeof(buf));
	/* Kernels before 3.17, or seccomp filters that refuse the call: fall back. */
	if (err == -ENOSYS || err == -EPERM)
		err = isn_read_urandom(buf, sizeof(buf));
	if (err < 0) {
		memset(s, 0, sizeof(*s));
		return err;
	}
	memcpy(&s->isn_key.k0, buf, 8);
	memcpy(&s->isn_key.k1, buf + 8, 8);
	memcpy(&s->cookie_key.k0, buf + 16, 8);
	memcpy(&s->cookie_key.k1, buf + 24, 8);
	/* Leave no copy of the keys on the stack; unlike memset, explicit_bzero is not optimised
	 * away as a dead store. */
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

uint32_t tcp_isn(const struct tcp_secret *s, const struct inet_addr *laddr, uint16_t lport,
		 const struct inet_addr *raddr, uint16_t rport, uint64_t now_us)
{
	uint8_t msg[36];
	uint32_t m, f;

	/* A fixed big-endian layout, so the ISN does not depend on the host's byte order. */
	memcpy(msg, laddr->b, 16);
	wire_put_be16(msg + 16, lport);
	memcpy(msg + 18, raddr->b, 16);
	wire_put_be16(msg + 34, rport);
	f = (uint32_t)siphash24(&s->isn_key, msg, sizeof(msg));
	/* RFC 6528 §3: M is a timer that ticks every 4 microseconds. */
	m = (uint32_t)(now_us >> 2);
	return m + f;
}
