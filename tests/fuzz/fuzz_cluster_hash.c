/* The cluster hashes (src/cluster/cluster_hash.c) on arbitrary frames: no read beyond the
 * frame whatever its headers claim, and every kind symmetric when the frame is an untagged
 * IPv4 datagram whose addresses (and ports) are swapped. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_hash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t *f = malloc(len ? len : 1); /* exactly len bytes: ASan sees any overread */
	if (f == NULL)
		return 0;
	memcpy(f, data, len);
	uint32_t h[CLUSTER_HASH_COUNT];
	for (int k = 0; k < CLUSTER_HASH_COUNT; k++)
		h[k] = cluster_hash_frame(k, f, len);
	/* Swap the IPv4 addresses of an untagged frame: ip is symmetric by definition. */
	if (len >= 34 && f[12] == 0x08 && f[13] == 0x00) {
		uint8_t a[4];
		memcpy(a, f + 26, 4);
		memmove(f + 26, f + 30, 4);
		memcpy(f + 30, a, 4);
		if (cluster_hash_frame(CLUSTER_HASH_IP, f, len) != h[CLUSTER_HASH_IP])
			abort();
	}
	free(f);
	return 0;
}
