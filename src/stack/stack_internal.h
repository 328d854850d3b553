/* Entry points of the stack instance for the protocols above it (src/l2, src/ip4, src/tcp,
 * src/udp), not for users of a stack. */
#ifndef DPS_STACK_STACK_INTERNAL_H
#define DPS_STACK_STACK_INTERNAL_H

#include <stdbool.h>

#include "stack.h"

/* Datagrams to our own addresses (data at the IP header) wait here until
 * stack_loopback_drain, which hands them to their network layer's input. */
void stack_loopback_queue(struct stack *s, struct rte_mbuf *m);
/* Drops the queued datagrams whose payload is lent by owner (tcp_seg_lend): the memory
 * they point into is about to go. */
void stack_loopback_forget(struct stack *s, const struct rte_mbuf_ext_shared_info *owner);
/* Hands datagram m (at its IP header) to the worker owner, which passes how to
 * stack_input_steered (software RSS): a copy when m borrows a socket's memory, whose sender
 * lives here. Counted ip.steered_out, or dropped as ip.steer_full. Takes m. */
void stack_steer_to(struct stack *s, unsigned owner, struct rte_mbuf *m, unsigned how);
/* Whether a segment of m points into memory lent by a socket (an external buffer). */
bool stack_mbuf_borrows(const struct rte_mbuf *m, const struct rte_mbuf_ext_shared_info *owner);

#endif
