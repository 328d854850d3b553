/* The socket layer's common part: what every transport endpoint of a worker's stack has, and
 * how it tells its owner that something changed. Owners are the built-in services today and
 * the application channel later (issue: apps on dpstack); both read and write the byte FIFOs
 * and are woken through notify with epoll-style readiness bits, so the channel can forward
 * them unchanged. Everything here runs on the worker that owns the socket. */
#ifndef DPS_STACK_SOCK_H
#define DPS_STACK_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/fifo.h"
#include "wire/inet_addr.h"

/* Readiness, with the values of <sys/epoll.h> so that nothing translates them. */
#define SOCK_EV_IN 0x001     /* data, a FIN, or a connection to accept */
#define SOCK_EV_OUT 0x004    /* room in the send FIFO, or a connect completed */
#define SOCK_EV_ERR 0x008    /* sock.error is set */
#define SOCK_EV_HUP 0x010    /* both directions are shut: nothing more will happen */
#define SOCK_EV_RDHUP 0x2000 /* the peer sent FIN */

struct sock;

/* IP-level options of a socket (IP_TTL, IP_TOS): what its datagrams carry in their IPv4
 * header. */
struct sock_ip_opts {
	uint8_t ttl;            /* 0: the stack's default, 64 (Linux's ip_default_ttl) */
	uint8_t tos;            /* DSCP (RFC 2474) and, for UDP, the ECN field as set (RFC 3168) */
};

/* Where a socket's FIFOs live: the heap by default, or an application's shared segment (the
 * channel allocates them there, so the worker fills and drains them in place). Each FIFO is
 * two allocations: its positions (sizeof(struct fifo_pos)) and its data (its size). */
struct sock_mem {
	void *(*alloc)(void *ctx, size_t bytes);    /* FIFO_CACHE_LINE-aligned, or NULL */
	void (*free)(void *ctx, void *p, size_t bytes);
	void *ctx;
};

struct sock_owner {
	/* Called on the worker, from packet or timer processing, with the bits that became
	 * true. The owner must not free the socket from inside this call: it may read, write,
	 * shut down and close (close defers the free). */
	void (*notify)(struct sock *sk, uint32_t events);
	void *ctx;
	const struct sock_mem *mem;     /* NULL: the heap */
	int32_t pid;                    /* the owning process, 0 for the daemon (sock show) or
					 * for a process in a PID namespace the daemon cannot
					 * see into (another container's) */
	int32_t ns_pid;                 /* its pid in its own PID namespace, as it said when it
					 * attached (sock show, where pid is 0) */
	/* Receive autotuning (tcp_rcvbuf.c) replaces an empty rx FIFO by a bigger one. NULL:
	 * always allowed, and the old FIFO is freed at once. Otherwise the owner says whether
	 * it can follow a move now, and takes the old FIFO to free when nobody reads it. */
	bool (*rx_swappable)(const struct sock *sk);
	void (*rx_retire)(struct sock *sk, struct fifo *old);
};

struct sock {
	uint8_t proto;          /* IPPROTO_TCP or IPPROTO_UDP */
	/* Both families, IPv4 as mapped addresses (inet_addr.h). laddr: the wildcard of its
	 * family (inet_addr_any) for listeners and unbound UDP sockets; :: also hears IPv4
	 * unless v6only. raddr: the wildcard when not connected. */
	struct inet_addr laddr;
	struct inet_addr raddr;
	uint16_t lport;
	uint16_t rport;
	bool v6only;            /* IPV6_V6ONLY on a socket bound to :: (RFC 3493 §5.3) */
	uint16_t scope;         /* the port a link-local peer is on (its scope, RFC 4007 §6);
				 * NETCFG_PORT_ANY for every other peer */
	struct fifo *rx;        /* stack → owner */
	struct fifo *tx;        /* owner → stack */
	int error;              /* pending error (positive errno), read and cleared like SO_ERROR */
	struct sock_owner owner;
	const struct sock_mem *mem;     /* kept after the owner lets go: frees use it */
};

/* A FIFO of at least bytes (a power of two, at least min, at most FIFO_SIZE_MAX) in mem
 * (NULL: the heap); NULL when there is no memory. */
struct fifo *sock_fifo_alloc(const struct sock_mem *mem, uint32_t bytes, uint32_t min);
void sock_fifo_free(const struct sock_mem *mem, struct fifo *f);

static inline void sock_notify(struct sock *sk, uint32_t events)
{
	if (sk->owner.notify != NULL && events != 0)
		sk->owner.notify(sk, events);
}

#endif
