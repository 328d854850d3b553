/* TCP bind(2) reservations: a socket that is bound but neither listens nor connects has no
 * entry in the stack, so the channel keeps its address, and refuses a second bind of the
 * same port as Linux does unless both sockets allow sharing it (SO_REUSEADDR, or
 * SO_REUSEPORT by one user; net/ipv4/inet_connection_sock.c, inet_csk_bind_conflict).
 *
 * Reservations of port P live on worker P % nb_workers, which alone reads and writes them
 * (binds, unbinds, the conflict check of a listen there, the end of a process): no lock. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "chan_priv.h"

/* Does the address a socket bound to laddr (flags: its V6ONLY) hears include x? A family's
 * wildcard hears that family, and :: IPv4 too unless IPv6-only (RFC 3493 §5.3). */
static bool chan_bind_hears(const struct inet_addr *laddr, uint32_t flags,
			    const struct inet_addr *x)
{
	if (!inet_addr_is_any(laddr))
		return inet_addr_equal(laddr, x);
	bool v4 = inet_addr_is_v4(laddr);
	if (inet_addr_is_v4(x))
		return v4 || !(flags & CHAN_BIND_V6ONLY);
	return !v4;
}

/* Two bound addresses share some address (Linux's inet_bind_conflict and, across the
 * families, inet6_bind_conflict). */
static bool chan_bind_overlap(const struct inet_addr *a, uint32_t af, const struct inet_addr *b,
			      uint32_t bf)
{
	if (inet_addr_is_any(a) && inet_addr_is_any(b)) {
		/* Two wildcards: unless one is IPv4's and the other an IPv6-only ::. */
		bool a4 = inet_addr_is_v4(a), b4 = inet_addr_is_v4(b);
		if (a4 == b4)
			return true;
		return a4 ? !(bf & CHAN_BIND_V6ONLY) : !(af & CHAN_BIND_V6ONLY);
	}
	return inet_addr_is_any(a) ? chan_bind_hears(a, af, b) : chan_bind_hears(b, bf, a);
}

bool chan_bind_conflict(const struct chan_worker *cw, uid_t uid, const struct inet_addr *laddr,
			uint16_t lport, uint32_t flags, const struct chan_app *self_app,
			unsigned self_proc, uint32_t self_id)
{
	for (unsigned i = 0; i < cw->nbinds; i++) {
		const struct chan_bind *b = &cw->binds[i];
		if (b->lport != lport || !chan_bind_overlap(&b->laddr, b->flags, laddr, flags))
			continue;
		if (self_id != 0 && b->id == self_id && b->app == self_app && b->proc == self_proc)
			continue; /* the reservation of the very socket that listens now */
		bool reuseaddr = (b->flags & flags & CHAN_BIND_REUSEADDR) != 0;
		bool reuseport = (b->flags & flags & CHAN_BIND_REUSEPORT) != 0 && b->uid == uid;
		if (!reuseaddr && !reuseport)
			return true;
	}
	return false;
}

unsigned chan_bind_count(const struct chan_worker *cw, const struct chan_app *a)
{
	unsigned n = 0;
	for (unsigned i = 0; i < cw->nbinds; i++)
		n += cw->binds[i].app == a;
	return n;
}

int chan_bind_add(struct chan_worker *cw, struct chan_app *a, unsigned p,
		  const struct inet_addr *laddr,
		  uint16_t lport, uint32_t flags, uint32_t *id)
{
	if (cw->nbinds == cw->cap_binds) {
		unsigned cap = cw->cap_binds == 0 ? 64 : cw->cap_binds * 2;
		struct chan_bind *n = realloc(cw->binds, cap * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		cw->binds = n;
		cw->cap_binds = cap;
	}
	if (++cw->next_bind_id == 0)
		cw->next_bind_id = 1;
	*id = cw->next_bind_id;
	cw->binds[cw->nbinds++] = (struct chan_bind){
		.app = a, .proc = p, .uid = a->procs[p].uid, .laddr = *laddr, .lport = lport,
		.flags = flags, .id = *id};
	return 0;
}

void chan_bind_drop(struct chan_worker *cw, const struct chan_app *a, unsigned p, uint32_t id)
{
	for (unsigned i = 0; i < cw->nbinds; i++) {
		const struct chan_bind *b = &cw->binds[i];
		if (b->app == a && b->proc == p && b->id == id) {
			cw->binds[i] = cw->binds[--cw->nbinds];
			return;
		}
	}
}

void chan_bind_drop_proc(struct chan_worker *cw, const struct chan_app *a, unsigned p)
{
	for (unsigned i = 0; i < cw->nbinds;) {
		if (cw->binds[i].app == a && cw->binds[i].proc == p)
			cw->binds[i] = cw->binds[--cw->nbinds];
		else
			i++;
	}
}
