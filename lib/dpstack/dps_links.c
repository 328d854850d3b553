/* The stack's interfaces and addresses as this process knows them: the table of CHAN_OP_LINKS,
 * asked of worker 0 again only when its generation in the segment header says it changed (one
 * round trip per change, none per call). The interface ioctls answer from it, and sendto asks
 * it whether a destination is a broadcast address that needs SO_BROADCAST and whether
 * sendmsg's IP_PKTINFO or IPV6_PKTINFO names one of its addresses. */
#include <pthread.h>
#include <string.h>

#include "dps_links.h"
#include "dps_priv.h"

/* Read by every sendto without SO_BROADCAST, written only when the table changed. */
static pthread_rwlock_t links_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	const struct dps_attach *at;    /* whose table (with its gen: a forked child's is new) */
	unsigned at_gen;
	struct chan_links t;
} cache;

/* Under links_lock, read or written: the cached table is at's, and current. */
static bool dps_links_current(const struct dps_attach *at)
{
	uint32_t g = atomic_load_explicit(&at->hdr->links_gen, memory_order_acquire);
	return cache.at == at && cache.at_gen == at->gen && g != 0 && g == cache.t.gen;
}

/* Under links_lock written: asks worker 0 for the table. 0 or -errno. */
static int dps_links_refresh(struct dps_attach *at)
{
	if (dps_links_current(at))
		return 0; /* another thread was first */
	struct chan_req rq = {.op = CHAN_OP_LINKS};
	struct chan_reply rep;
	int rc = dps_call(at, 0, &rq, &rep);
	if (rc < 0)
		return rc;
	cache.t = rep.u.links;
	/* Counts from the daemon, trusted no further than the arrays reach. */
	if (cache.t.nlinks > CHAN_LINKS_MAX)
		cache.t.nlinks = CHAN_LINKS_MAX;
	if (cache.t.naddrs > CHAN_LINK_ADDRS_MAX)
		cache.t.naddrs = CHAN_LINK_ADDRS_MAX;
	for (unsigned i = 0; i < cache.t.nlinks; i++)
		cache.t.links[i].name[CHAN_IFNAME_MAX - 1] = '\0';
	unsigned n = 0;
	for (unsigned i = 0; i < cache.t.naddrs; i++)
		if (cache.t.addrs[i].link < cache.t.nlinks)
			cache.t.addrs[n++] = cache.t.addrs[i];
	cache.t.naddrs = n;
	if (cache.t.naddrs6 > CHAN_LINK_ADDRS6_MAX)
		cache.t.naddrs6 = CHAN_LINK_ADDRS6_MAX;
	n = 0;
	for (unsigned i = 0; i < cache.t.naddrs6; i++)
		if (cache.t.addrs6[i].link < cache.t.nlinks)
			cache.t.addrs6[n++] = cache.t.addrs6[i];
	cache.t.naddrs6 = n;
	cache.at = at;
	cache.at_gen = at->gen;
	return 0;
}

/* Takes links_lock for reading with at's current table in the cache; 0, or -errno with
 * the lock not held. */
static int dps_links_read_lock(struct dps_attach *at)
{
	for (;;) {
		pthread_rwlock_rdlock(&links_lock);
		if (dps_links_current(at))
			return 0;
		pthread_rwlock_unlock(&links_lock);
		/* Worker 0 publishes the generation in the round that answers the call, so
		 * this asks at most twice unless the table keeps changing. */
		pthread_rwlock_wrlock(&links_lock);
		int rc = dps_links_refresh(at);
		pthread_rwlock_unlock(&links_lock);
		if (rc < 0)
			return rc;
	}
}

int dps_links_get(struct dps_attach *at, struct chan_links *out)
{
	int rc = dps_links_read_lock(at);
	if (rc < 0)
		return rc;
	*out = cache.t;
	pthread_rwlock_unlock(&links_lock);
	return 0;
}

/* q's answer about at's current table. */
static int dps_links_ask(struct dps_attach *at,
			 int (*q)(const struct chan_links *t, uint32_t a, uint32_t b),
			 uint32_t a, uint32_t b)
{
	int rc = dps_links_read_lock(at);
	if (rc < 0)
		return rc;
	rc = q(&cache.t, a, b);
	pthread_rwlock_unlock(&links_lock);
	return rc;
}

static int dps_links_table_is_broadcast_q(const struct chan_links *t, uint32_t addr,
					  uint32_t unused)
{
	(void)unused;
	return dps_links_table_is_broadcast(t, addr);
}

int dps_links_is_broadcast(struct dps_attach *at, uint32_t addr)
{
	if (addr == INADDR_BROADCAST)
		return 1;
	return dps_links_ask(at, dps_links_table_is_broadcast_q, addr, 0);
}

int dps_links_check_source(struct dps_attach *at, uint32_t addr, uint32_t ifindex)
{
	return dps_links_ask(at, dps_links_table_check_source, addr, ifindex);
}

int dps_links_check_source6(struct dps_attach *at, const struct in6_addr *addr,
			    uint32_t ifindex)
{
	int rc = dps_links_read_lock(at);
	if (rc < 0)
		return rc;
	rc = dps_links_table_check_source6(&cache.t, addr, ifindex);
	pthread_rwlock_unlock(&links_lock);
	return rc;
}

void dps_links_after_fork(void)
{
	pthread_rwlock_init(&links_lock, NULL);
}
