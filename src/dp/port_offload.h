/* Which offloads a port is configured with: the transmit checksums and TSO it reports
 * (rte_eth_dev_info.tx_offload_capa) are turned on, so that the stack can leave them to it
 * (src/stack/tx_offload.h); the rest stays in software. */
#ifndef DPS_DP_PORT_OFFLOAD_H
#define DPS_DP_PORT_OFFLOAD_H

#include <stddef.h>

#include <rte_ethdev.h>

#include "stack/tx_offload.h"

/* Turns on in conf->txmode.offloads what the device offers of the checksums and TSO, and
 * fills caps with what the stack may then leave to it. */
void port_offload_choose(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf,
			 struct stack_tx_caps *caps);

/* "ip4-csum tcp-csum udp-csum tso" for what caps has, "none" for nothing, into buf. */
void port_offload_format(const struct stack_tx_caps *caps, char *buf, size_t len);

#endif
