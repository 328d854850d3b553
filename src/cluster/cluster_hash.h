/* The hashes that place a frame on a consumer of its group: consumer = hash % group size.
 * Pure C, no DPDK: the formulas are documented (docs/CLUSTERS.md) so that anyone (the tests)
 * can compute where a frame goes. ip and 5tuple are symmetric: both directions of a flow
 * get the same hash. All words are read big-endian; sums wrap at 32 bits.
 *
 *   fmix32(x)  MurmurHash3's finalizer
 *   mac        fmix32(fold(dst) + fold(src)), fold(m) = (m0<<8 | m1) ^ (m2<<24 | m3<<16 | m4<<8 | m5)
 *   ip         fmix32(a + b); IPv4: a, b = source, destination; IPv6: a, b = the XOR of each
 *              address's four 32-bit words
 *   proto      the IP protocol (IPv6: the first next header), not mixed
 *   5tuple     fmix32(fmix32(a + b) ^ ((sport + dport) << 8 | proto)), ports only for TCP,
 *              UDP and SCTP datagrams that are not IPv4 fragments (else 0)
 *
 *   custom     a program's (cluster_prog.h): cluster_hash_frame gives 0
 *
 * Up to two VLAN tags (802.1Q, 802.1ad) are skipped. A frame without what its hash needs
 * (not IP, or truncated) hashes to 0, so it goes to the first consumer of each group. */
#ifndef DPS_CLUSTER_HASH_H
#define DPS_CLUSTER_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_HASH_LIST(X) \
	X(CLUSTER_HASH_5TUPLE, "5tuple") \
	X(CLUSTER_HASH_IP, "ip") \
	X(CLUSTER_HASH_MAC, "mac") \
	X(CLUSTER_HASH_PROTO, "proto") \
	X(CLUSTER_HASH_CUSTOM, "custom")

enum cluster_hash_kind {
#define CLUSTER_HASH_ENUM(e, name) e,
	CLUSTER_HASH_LIST(CLUSTER_HASH_ENUM)
#undef CLUSTER_HASH_ENUM
	CLUSTER_HASH_COUNT
};

/* "5tuple", "ip", ... */
const char *cluster_hash_name(enum cluster_hash_kind k);
/* Returns the kind named name, or -1. */
int cluster_hash_parse(const char *name);

uint32_t cluster_fmix32(uint32_t h);

/* The hash of the len bytes of an Ethernet frame. */
uint32_t cluster_hash_frame(enum cluster_hash_kind k, const uint8_t *frame, size_t len);

#endif
