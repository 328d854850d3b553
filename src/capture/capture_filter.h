/* Capture filters: tcpdump expressions compiled by libpcap, run on mbufs. */
#ifndef DPS_CAPTURE_FILTER_H
#define DPS_CAPTURE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>

/* Compiles expr (pcap-filter(7) syntax, for Ethernet frames) into prog (free it with
 * pcap_freecode). Returns 0, or -1 with libpcap's reason in err. */
int capture_filter_compile(const char *expr, uint32_t snaplen, struct bpf_program *prog,
			   char *err, size_t errlen);

/* True when the frame in m passes prog (every segment of a chained mbuf is seen). */
bool capture_filter_match(const struct bpf_program *prog, const struct rte_mbuf *m);

#endif
