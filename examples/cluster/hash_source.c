/* A shared-object custom hash for `cluster add ... hash custom libdps-hash-source.so`
 * (docs/CLUSTERS.md, include/dpstack/cluster_prog.h): frames go to consumers by their IPv4
 * source address (consumer = address % group size, the address read big-endian), so that
 * each consumer sees everything one host sends, whatever the flow. Other frames hash to 0.
 * dps_cluster_filter, in the same object, passes IPv4 frames from the 10.0.0.0/8 network
 * (`bounce PORT filter libdps-hash-source.so`). Both run on every worker at once: no state. */
#include <dpstack/cluster_prog.h>

/* Declared with the hook's type: the compiler checks the signature dpstackd calls. */
__attribute__((visibility("default"))) dps_cluster_prog_fn dps_cluster_hash, dps_cluster_filter;

#define ETH_HLEN 14
#define IPV4_SRC 12

/* The IPv4 source address of the frame, 0 when it carries no IPv4 header. */
static uint32_t ipv4_source(const uint8_t *frame, uint32_t len)
{
	if (len < ETH_HLEN + 20 || frame[12] != 0x08 || frame[13] != 0x00 ||
	    frame[ETH_HLEN] >> 4 != 4)
		return 0;
	const uint8_t *a = frame + ETH_HLEN + IPV4_SRC;
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

uint32_t dps_cluster_hash(const uint8_t *frame, uint32_t len)
{
	return ipv4_source(frame, len);
}

uint32_t dps_cluster_filter(const uint8_t *frame, uint32_t len)
{
	return ipv4_source(frame, len) >> 24 == 10;
}
