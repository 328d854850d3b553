/* Programs that a dpstackd cluster runs on every frame (docs/CLUSTERS.md): a custom hash
 * (`cluster add ... hash custom PROG`) that places frames on consumers, and a bounce filter
 * (`bounce PORT filter PROG`) that decides which frames are forwarded. One hook serves both:
 * the program gets a frame and returns a 32-bit value, the hash (consumer = value % group
 * size), or for a filter nonzero to pass the frame and 0 to drop it.
 *
 * PROG is PATH[:NAME], and PATH is one of:
 *
 * - an eBPF object (clang -O2 -target bpf -c prog.c), run by DPDK's rte_bpf interpreter
 *   after its verifier accepted it. NAME is the ELF section holding the program (default
 *   ".text"). The program's argument is an opaque frame handle: read the frame's bytes
 *   only with dps_bpf_load_byte/half/word below (big-endian values, as on the wire); a read
 *   past the frame's end ends the program at once with the value 0 (so such a frame hashes
 *   to 0, or is dropped by a filter). Maps, helpers and global data are not available.
 *
 * - a shared object (cc -shared -fPIC), loaded into dpstackd (it runs with the daemon's
 *   privileges, on the workers' packet path: it must be fast, thread-safe and must not
 *   block). NAME is the function (default dps_cluster_hash for a hash, dps_cluster_filter
 *   for a filter), of type dps_cluster_prog_fn. */
#ifndef DPSTACK_CLUSTER_PROG_H
#define DPSTACK_CLUSTER_PROG_H

#ifdef __bpf__

/* clang turns these into eBPF's packet loads (BPF_LD | BPF_ABS/BPF_IND), which read the
 * frame through the handle the program was given (its first argument) and bound the read
 * by the frame's length. off counts from the frame's first byte (the destination MAC). */
unsigned long long dps_bpf_load_byte(void *frame, unsigned long long off)
	__asm__("llvm.bpf.load.byte");
unsigned long long dps_bpf_load_half(void *frame, unsigned long long off)
	__asm__("llvm.bpf.load.half");
unsigned long long dps_bpf_load_word(void *frame, unsigned long long off)
	__asm__("llvm.bpf.load.word");

#else

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A shared object's entry point: frame is the whole Ethernet frame, len bytes, read-only
 * and valid only during the call. Called concurrently from every worker thread. */
typedef uint32_t dps_cluster_prog_fn(const uint8_t *frame, uint32_t len);

#ifdef __cplusplus
}
#endif

#endif

#endif
