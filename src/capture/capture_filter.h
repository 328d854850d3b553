/* Capture filters: tcpdump expressions compiled by libpcap and run as eBPF by rte_bpf. */
#ifndef DPS_CAPTURE_FILTER_H
#define DPS_CAPTURE_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct rte_bpf;

/* Compiles expr (pcap-filter(7) syntax, for Ethernet frames) into a loaded rte_bpf program
 * whose argument is the mbuf. NULL with a message in err: libpcap's for a bad expression,
 * rte_bpf's for a program it refuses. */
struct rte_bpf *capture_filter_compile(const char *expr, uint32_t snaplen, char *err,
				       size_t errlen);

#endif
