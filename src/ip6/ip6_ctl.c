/* The hand-off of Duplicate Address Detection, Router Discovery and MLD news to the control
 * thread, which runs those protocols for every port (src/ctl/addrconf_run.h says why there).
 * Rare messages: an eventfd write per message that found the inbox empty is cheap, and a
 * flood fills the ring and is counted instead of queued without bound. */
#include <stdint.h>
#include <unistd.h>

#include <rte_ring_elem.h>

#include "ip6.h"

bool ip6_ctl_post(struct stack *s, const struct ip6_ctl_event *ev)
{
	struct rte_ring *r = s->ip6->ctl;
	if (r == NULL)
		return false;
	bool was_empty = rte_ring_empty(r);
	struct ip6_ctl_event copy = *ev; /* the ring's API takes a non-const object */
	if (rte_ring_mp_enqueue_elem(r, &copy, sizeof(copy)) != 0) {
		stack_drop_count(s, STACK_DROP_IP6_CTL_FULL);
		return false;
	}
	if (was_empty) {
		uint64_t one = 1;
		/* A full eventfd counter still wakes the reader: the write's result changes
		 * nothing. */
		ssize_t n = write(s->ip6->ctl_fd, &one, sizeof(one));
		(void)n;
	}
	return true;
}
