/* The exception path: what the stack does not own goes to the Linux kernel through the
 * kernel interface of the port it came in on (`port add NAME DEVICE kernel IFNAME`), and
 * whatever the kernel sends out of that interface leaves by the port (src/dp/exception.c).
 *
 * What the stack owns is decided in one place, its protocol registration table
 * (stack_proto.h) and its sockets: an EtherType or IP protocol no registered protocol
 * handles, a TCP segment for no connection or listener, a UDP datagram for no socket, an
 * IPv4 multicast datagram (the stack joins no group) and an ICMP message that is not about
 * the stack's own traffic are not the stack's. So IPv6 goes to the kernel exactly until an
 * IPv6 protocol registers ETH_TYPE_IPV6, with no other switch to turn. Bypass rules
 * (`bypass add`, src/acl/bypass_set.h) take more from the stack. Each drop point of those
 * cases asks stack_exception() first and drops as before when it says no (a port without a
 * kernel interface, a datagram of our own loopback). */
#ifndef DPS_STACK_EXCEPTION_H
#define DPS_STACK_EXCEPTION_H

#include <stdbool.h>

#include "stack.h"

/* The one way into a port's kernel interface: hands frame m (at its Ethernet header) to the
 * kernel interface of port, counting why (a kernel.* event) and the frame on the port. True
 * when it went (or was counted lost there): m is no longer the caller's. False when port
 * has no kernel interface: m stays the caller's. Whatever else sends frames to the kernel
 * (a flow rule's action) comes through here. */
bool stack_to_kernel(struct stack *s, uint16_t port, struct rte_mbuf *m, enum stack_event why);

/* Hands m, a frame received on m->port whose data now starts at some header after the
 * Ethernet one (stack_input_frame noted its length in m->l2_len), whole to the cluster
 * that takes the port's rest (counted cluster.rest), else to the port's kernel interface,
 * counting why. True when it went (or was counted lost there): m is no longer the caller's.
 * False when the port has neither or m came from no wire: the caller keeps m and drops it
 * as it would have. */
bool stack_exception(struct stack *s, struct rte_mbuf *m, enum stack_event why);

/* The same for a frame the kernel must not see but a cluster that takes the rest may (a
 * datagram for another host when the stack does not forward): true when such a cluster
 * took m. */
bool stack_to_rest(struct stack *s, struct rte_mbuf *m);

/* The same for a copy of m, which the caller keeps whatever happens (ARP, which both the
 * stack and the kernel must see; ICMP errors, which may concern either). */
void stack_exception_copy(struct stack *s, struct rte_mbuf *m, enum stack_event why);

/* Whether a frame the kernel sent out of its interface (m, at its Ethernet header) must not
 * leave by the port: its ARP reply for an address of the stack, which answered already
 * (one MAC on both sides, one answer). */
bool stack_kernel_frame_held(struct stack *s, const struct rte_mbuf *m);

#endif
