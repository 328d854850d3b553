/* Why eBPF through rte_bpf rather than libpcap's bpf_filter(): libpcap's interpreter reads
 * a flat buffer, so on a chained mbuf it would see only the first segment (loads past it
 * fail and the frame does not match), while the program rte_bpf_convert makes loads
 * packet bytes with rte_pktmbuf_read (every segment); and rte_bpf_load compiles it to
 * native code on x86-64 and arm64, against bpf_filter's interpretation of every
 * instruction. It is what dpdk-dumpcap does (doc.dpdk.org/guides/tools/dumpcap.html). */
#include "capture_filter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_malloc.h>

struct rte_bpf *capture_filter_compile(const char *expr, uint32_t snaplen, char *err,
				       size_t errlen)
{
	pcap_t *pcap = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	if (pcap == NULL) {
		snprintf(err, errlen, "filter: libpcap: out of memory");
		return NULL;
	}
	struct bpf_program cbpf;
	if (pcap_compile(pcap, &cbpf, expr, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		snprintf(err, errlen, "bad filter '%s': %s", expr, pcap_geterr(pcap));
		pcap_close(pcap);
		return NULL;
	}
	pcap_close(pcap);
	struct rte_bpf_prm *prm = rte_bpf_convert(&cbpf);
	pcap_freecode(&cbpf);
	if (prm == NULL) {
		snprintf(err, errlen, "filter '%s': cannot convert to eBPF: %s", expr,
			 rte_strerror(rte_errno));
		return NULL;
	}
	struct rte_bpf *bpf = rte_bpf_load(prm);
	rte_free(prm); /* rte_bpf_load keeps its own copy of the instructions */
	if (bpf == NULL)
		snprintf(err, errlen, "filter '%s': rte_bpf refused the program: %s", expr,
			 rte_strerror(rte_errno));
	return bpf;
}
