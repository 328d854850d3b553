/* Every RX queue of the kernel interface under a net_af_xdp port is served. The kernel
 * spreads received frames over the interface's RX queues by flow, and an AF_XDP socket sees
 * only the frames of its own queue: a frame on a queue without a socket goes to the kernel's
 * own stack, which for the stack's address is a silent loss (10 of 48 connections hung on a
 * veth with 2 RX queues, issue 18). Before the EAL starts, each net_af_xdp port without
 * queue_count/start_queue is given queue_count = the interface's RX queues where DPDK 22.11's
 * PMD can open them (it allows as many as the interface's combined channels); where it
 * cannot (a veth counts RX and TX channels apart, and the PMD then opens one queue), or
 * where the user's queue_count/start_queue leave a queue out, the daemon refuses to start
 * and names the ethtool command that fixes it. */
#ifndef DPS_CTL_PORT_QUEUES_H
#define DPS_CTL_PORT_QUEUES_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* What the kernel says of a port's interface. */
struct port_queues_if {
	unsigned rx_queues;             /* RX queues in use; 0: no such interface */
	unsigned combined;              /* combined channels; 0: the driver has none */
	bool veth;
	char veth_peer[IF_NAMESIZE];    /* the veth's other end, "" when in another namespace */
};

/* Completes devargs (a net_af_xdp vdev string on ifname) so that every RX queue of k is
 * served, or explains in err why it cannot be and what fixes it. Returns 0 or -1. Pure. */
int port_queues_plan(char *devargs, size_t len, const char *ifname,
		     const struct port_queues_if *k, char *err, size_t errlen);

/* Plans every net_af_xdp port of d (config_error at the port's line for each refusal);
 * returns the number of errors. */
unsigned port_queues_check(struct daemon *d, struct config *cfg);

#endif
