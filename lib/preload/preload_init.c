/* The shim's setup: libc's definitions, the environment switches, the address rules and
 * the log. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "../dpstack/dps_sockaddr.h"
#include "../dpstack/dps_ucopy.h"
#include "preload.h"

#define PL_MAX_KERNEL_NETS 16

struct pl_libc pl_libc;
bool pl_off;
bool pl_log_on;
const char *pl_exec_carry[3];

struct pl_net {
	uint32_t addr, mask; /* host order */
};
static struct pl_net kernel_nets[PL_MAX_KERNEL_NETS];
static unsigned nb_kernel_nets;

static pthread_once_t pl_once = PTHREAD_ONCE_INIT;

static void *pl_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p == NULL) {
		fprintf(stderr, "dpstack preload: libc has no %s\n", name);
		abort();
	}
	return p;
}

/* "10.1.0.0/16,192.168.0.0/24": a bad entry is reported and skipped. */
static void pl_parse_nets(const char *s)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save)) {
		char *slash = strchr(tok, '/');
		int bits = 32;
		if (slash != NULL) {
			*slash = '\0';
			char *end;
			long b = strtol(slash + 1, &end, 10);
			bits = *end == '\0' && b >= 0 && b <= 32 ? (int)b : -1;
		}
		struct in_addr a;
		if (bits < 0 || inet_pton(AF_INET, tok, &a) != 1 ||
		    nb_kernel_nets == PL_MAX_KERNEL_NETS) {
			fprintf(stderr, "dpstack preload: DPSTACK_KERNEL_NETS: ignoring '%s'\n", tok);
			continue;
		}
		uint32_t mask = bits == 0 ? 0 : ~0u << (32 - bits);
		kernel_nets[nb_kernel_nets++] = (struct pl_net){ntohl(a.s_addr) & mask, mask};
	}
}

/* Read at start: a program may clear its environment later (nginx does). */
static void pl_exec_carry_setup(void)
{
	static char preload[PATH_MAX + 16], sock[PATH_MAX + 16];
	unsigned n = 0;
	Dl_info self;
	if (dladdr((void *)pl_init, &self) != 0 && self.dli_fname != NULL) {
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", self.dli_fname);
		pl_exec_carry[n++] = preload;
	}
	const char *s = getenv("DPSTACK_SOCK");
	if (s != NULL) {
		snprintf(sock, sizeof(sock), "DPSTACK_SOCK=%s", s);
		pl_exec_carry[n++] = sock;
	}
	pl_exec_carry[n] = NULL;
}

static void pl_setup(void)
{
#define PL_NEXT(field, name) pl_libc.field = (__typeof__(pl_libc.field))pl_next(name)
	PL_NEXT(socket, "socket");
	PL_NEXT(bind, "bind");
	PL_NEXT(listen, "listen");
	PL_NEXT(accept, "accept");
	PL_NEXT(accept4, "accept4");
	PL_NEXT(connect, "connect");
	PL_NEXT(close, "close");
	PL_NEXT(shutdown, "shutdown");
	PL_NEXT(read, "read");
	PL_NEXT(write, "write");
	PL_NEXT(readv, "readv");
	PL_NEXT(writev, "writev");
	PL_NEXT(recv, "recv");
	PL_NEXT(send, "send");
	PL_NEXT(recvfrom, "recvfrom");
	PL_NEXT(sendto, "sendto");
	PL_NEXT(recvmsg, "recvmsg");
	PL_NEXT(sendmsg, "sendmsg");
	PL_NEXT(sendmmsg, "sendmmsg");
	PL_NEXT(recvmmsg, "recvmmsg");
	PL_NEXT(read_chk, "__read_chk");
	PL_NEXT(recv_chk, "__recv_chk");
	PL_NEXT(recvfrom_chk, "__recvfrom_chk");
	PL_NEXT(sendfile, "sendfile");
	PL_NEXT(getsockopt, "getsockopt");
	PL_NEXT(setsockopt, "setsockopt");
	PL_NEXT(getsockname, "getsockname");
	PL_NEXT(getpeername, "getpeername");
	PL_NEXT(fcntl, "fcntl");
	PL_NEXT(fcntl64, "fcntl64");
	PL_NEXT(ioctl, "ioctl");
	PL_NEXT(dup, "dup");
	PL_NEXT(dup2, "dup2");
	PL_NEXT(dup3, "dup3");
	PL_NEXT(close_range, "close_range");
	PL_NEXT(closefrom, "closefrom");
	PL_NEXT(poll, "poll");
	PL_NEXT(ppoll, "ppoll");
	PL_NEXT(poll_chk, "__poll_chk");
	PL_NEXT(select, "select");
	PL_NEXT(pselect, "pselect");
	PL_NEXT(epoll_ctl, "epoll_ctl");
	PL_NEXT(epoll_wait, "epoll_wait");
	PL_NEXT(epoll_pwait, "epoll_pwait");
	PL_NEXT(epoll_pwait2, "epoll_pwait2");
	PL_NEXT(fork, "fork");
	PL_NEXT(execve, "execve");
	PL_NEXT(execvpe, "execvpe");
	PL_NEXT(fexecve, "fexecve");
	PL_NEXT(sigaction, "sigaction");
	PL_NEXT(signal, "signal");
	PL_NEXT(sysv_signal, "sysv_signal");
#undef PL_NEXT
	const char *mode = getenv("DPSTACK_PRELOAD");
	if (mode != NULL && strcmp(mode, "kernel") == 0)
		pl_off = true;
	else if (mode != NULL && *mode != '\0' && strcmp(mode, "stack") != 0)
		fprintf(stderr, "dpstack preload: DPSTACK_PRELOAD=%s: expected stack or kernel; "
				"using stack\n", mode);
	const char *log = getenv("DPSTACK_PRELOAD_LOG");
	pl_log_on = log != NULL && *log != '\0' && strcmp(log, "0") != 0;
	const char *nets = getenv("DPSTACK_KERNEL_NETS");
	if (nets != NULL)
		pl_parse_nets(nets);
	pl_exec_carry_setup();
}

void pl_init(void)
{
	pthread_once(&pl_once, pl_setup);
}

__attribute__((constructor)) static void pl_constructor(void)
{
	pl_init();
}

void pl_log(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "dpstack[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* One write, so lines of several threads do not interleave. */
	if (pl_libc.write(STDERR_FILENO, line, len) < 0) {
		/* nowhere to report it */
	}
}

bool pl_is_stack(int fd)
{
	return !pl_off && fd >= 0 && dps_is_stack_fd(fd);
}

/* An IPv4 address (host order) the kernel keeps: loopback, DPSTACK_KERNEL_NETS. */
static bool pl_kernel_v4(uint32_t a)
{
	if ((a >> 24) == 127)
		return true;
	for (unsigned i = 0; i < nb_kernel_nets; i++)
		if ((a & kernel_nets[i].mask) == kernel_nets[i].addr)
			return true;
	return false;
}

bool pl_kernel_addr(const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage k;
	if (len < sizeof(sa_family_t) || len > sizeof(k) || dps_get_user(&k, addr, len) < 0)
		return false;
	struct dps_ep ep;
	if (dps_ep_in(k.ss_family, (struct sockaddr *)&k, len, &ep) < 0)
		return false;
	/* An AF_INET6 socket's IPv4 peers are mapped addresses (RFC 4291 §2.5.5.2): the same
	 * rules. ::1 is the kernel's as 127.0.0.1 is. */
	if (inet_addr_is_v4(&ep.addr))
		return pl_kernel_v4(inet_addr_to_v4(&ep.addr));
	static const struct inet_addr loopback6 = {.b = {[15] = 1}};
	return inet_addr_equal(&ep.addr, &loopback6);
}
