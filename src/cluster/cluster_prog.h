/* A program a cluster runs on each frame: its custom hash or its bounce filter
 * (include/dpstack/cluster_prog.h documents what users write). Loaded by the control thread,
 * then run by every worker at once (read-only after loading). */
#ifndef DPS_CLUSTER_PROG_H
#define DPS_CLUSTER_PROG_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#define CLUSTER_PROG_SPEC_LEN 256       /* "PATH[:NAME]" */

struct cluster_prog;

/* Loads spec, "PATH[:NAME]": an eBPF object (NAME: its section, default ".text") or a
 * shared object (NAME: its function, default default_fn). Returns NULL with the reason in
 * err: the file missing or unreadable, neither kind of ELF, no such section or function,
 * the verifier's refusal. */
struct cluster_prog *cluster_prog_load(const char *spec, const char *default_fn, char *err,
				       size_t errlen);
void cluster_prog_free(struct cluster_prog *p);

/* The program's value for the frame in m (0 when an eBPF program reads past the frame). */
uint32_t cluster_prog_run(const struct cluster_prog *p, const struct rte_mbuf *m);

#endif
