#include "port_ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_ring.h>

/* The name of a port's device: its devargs up to the first ','. */
static void port_ring_dev_name(const struct port *p, char *name, size_t len)
{
	snprintf(name, len, "%.*s", (int)strcspn(p->devargs, ","), p->devargs);
}

int port_ring_pair_create(struct port *a, struct port *b, unsigned nb_queues, char *err,
			  size_t errlen)
{
	struct rte_ring *to_b[PORT_MAX_QUEUES], *to_a[PORT_MAX_QUEUES];
	if (nb_queues > PORT_MAX_QUEUES)
		nb_queues = PORT_MAX_QUEUES;
	int socket = (int)rte_socket_id();
	static unsigned rings_made;     /* ring names are unique in the process */
	for (unsigned q = 0; q < nb_queues; q++) {
		char name[RTE_RING_NAMESIZE];
		/* Each TX queue has one worker, each RX queue one poller. */
		snprintf(name, sizeof(name), "port_pair%u", rings_made++);
		to_b[q] = rte_ring_create(name, PORT_RING_SIZE, socket,
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "port_pair%u", rings_made++);
		to_a[q] = rte_ring_create(name, PORT_RING_SIZE, socket,
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (to_b[q] == NULL || to_a[q] == NULL) {
			snprintf(err, errlen, "rings of the pair %s-%s: %s", a->name, b->name,
				 rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	char name_a[RTE_ETH_NAME_MAX_LEN], name_b[RTE_ETH_NAME_MAX_LEN];
	port_ring_dev_name(a, name_a, sizeof(name_a));
	port_ring_dev_name(b, name_b, sizeof(name_b));
	int port_a = rte_eth_from_rings(name_a, to_a, nb_queues, to_b, nb_queues, socket);
	int port_b = port_a < 0 ? -1 :
		     rte_eth_from_rings(name_b, to_b, nb_queues, to_a, nb_queues, socket);
	if (port_b < 0) {
		snprintf(err, errlen, "ring pair %s-%s: %s", a->name, b->name,
			 rte_strerror(rte_errno));
		return -rte_errno;
	}
	/* The driver names the ethdevs after it ("net_ring_net_ring0"): port_start finds
	 * them by their ids. */
	a->eth_port = (uint16_t)port_a;
	b->eth_port = (uint16_t)port_b;
	return 0;
}
