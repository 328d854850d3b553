/* Why the interpreter and not rte_bpf's JIT: DPDK 22.11's x86-64 JIT crashed a worker on a
 * program the verifier had accepted (src/capture/capture_filter.c says which); a hash or
 * filter that crashes the daemon is worse than a slower one. Why a copy of the mbuf as the
 * program's argument: DPDK's verifier lets a program store into the mbuf it is given, and
 * the frame's metadata (its pool, data offset, reference count) is the daemon's. */
#include "cluster_prog.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_bpf.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "dpstack/cluster_prog.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif
/* An eBPF object of ours is small: a few kB (a bigger file is no program we can run). */
#define CLUSTER_PROG_MAX_FILE (4u << 20)
/* Bytes of a chained frame a shared object sees (beyond the largest MTU of the stack). */
#define CLUSTER_PROG_LINEAR 9216

struct cluster_prog {
	struct rte_bpf *bpf;            /* or: */
	void *dl;
	dps_cluster_prog_fn *fn;
};

/* Splits "PATH[:NAME]" (a ':' followed by no '/' starts NAME). */
static void cluster_prog_split(const char *spec, char *path, size_t pathlen, const char **name)
{
	const char *colon = strrchr(spec, ':');
	if (colon != NULL && colon[1] != '\0' && strchr(colon, '/') == NULL) {
		snprintf(path, pathlen, "%.*s", (int)(colon - spec), spec);
		*name = colon + 1;
	} else {
		snprintf(path, pathlen, "%s", spec);
		*name = NULL;
	}
}

/* Reads the whole file at path into a malloc'd buffer. */
static uint8_t *cluster_prog_read(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)CLUSTER_PROG_MAX_FILE) {
		snprintf(err, errlen, "%s is not a program: %s", path,
			 S_ISREG(st.st_mode) ? "larger than 4 MiB" : "not a regular file");
		close(fd);
		return NULL;
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	ssize_t got = buf != NULL ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (got != (ssize_t)st.st_size) {
		snprintf(err, errlen, "cannot read %s", path);
		free(buf);
		return NULL;
	}
	*len = (size_t)got;
	return buf;
}

/* The section named name in the 64-bit ELF image (len bytes, header checked), if any. */
static bool cluster_elf_has_section(const uint8_t *img, size_t len, const char *name)
{
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
	    (len - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		return false;
	Elf64_Shdr strs;
	memcpy(&strs, img + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof(strs));
	if (strs.sh_offset > len || strs.sh_size > len - strs.sh_offset)
		return false;
	size_t want = strlen(name) + 1;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, img + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(sh));
		if (sh.sh_name < strs.sh_size && strs.sh_size - sh.sh_name >= want &&
		    memcmp(img + strs.sh_offset + sh.sh_name, name, want) == 0)
			return true;
	}
	return false;
}

/* rte_bpf says why it refused a program only in DPDK's log: catch what it writes there
 * meanwhile (other threads' lines may land in it too: they only lengthen the message). */
static struct rte_bpf *cluster_bpf_load(const char *path, const char *section, char *err,
					size_t errlen)
{
	const struct rte_bpf_prm prm = {
		.prog_arg = {.type = RTE_BPF_ARG_PTR_MBUF, .size = sizeof(struct rte_mbuf),
			     .buf_size = RTE_MBUF_DEFAULT_BUF_SIZE},
	};
	char *log = NULL;
	size_t loglen = 0;
	FILE *was = rte_log_get_stream();
	FILE *catch = open_memstream(&log, &loglen);
	if (catch != NULL)
		rte_openlog_stream(catch);
	struct rte_bpf *bpf = rte_bpf_elf_load(&prm, path, section);
	int e = rte_errno;
	if (catch != NULL) {
		rte_openlog_stream(was);
		fclose(catch);
	}
	if (bpf == NULL) {
		/* The first line is the verifier's verdict; the next ones only say that the
		 * load failed. */
		size_t n = log != NULL ? strcspn(log, "\n") : 0;
		if (n > 0)
			log[n] = '\0';
		snprintf(err, errlen, "%s: eBPF section '%s' refused (%s)%s%s", path, section,
			 rte_strerror(e), n > 0 ? ": " : "", n > 0 ? log : "");
	}
	free(log);
	return bpf;
}

static int cluster_so_load(struct cluster_prog *p, const char *path, const char *fn, char *err,
			   size_t errlen)
{
	p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (p->dl == NULL) {
		snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
		return -1;
	}
	p->fn = (dps_cluster_prog_fn *)dlsym(p->dl, fn);
	if (p->fn == NULL) {
		snprintf(err, errlen, "%s has no function '%s'", path, fn);
		return -1;
	}
	return 0;
}

struct cluster_prog *cluster_prog_load(const char *spec, const char *default_fn, char *err,
				       size_t errlen)
{
	char path[CLUSTER_PROG_SPEC_LEN];
	const char *name;
	cluster_prog_split(spec, path, sizeof(path), &name);
	size_t len;
	uint8_t *img = cluster_prog_read(path, &len, err, errlen);
	if (img == NULL)
		return NULL;
	struct cluster_prog *p = calloc(1, sizeof(*p));
	int rc = -1;
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
	} else if (len < sizeof(Elf64_Ehdr) || memcmp(img, ELFMAG, SELFMAG) != 0 ||
		   img[EI_CLASS] != ELFCLASS64) {
		snprintf(err, errlen, "%s is neither an eBPF object nor a shared object (not a "
			 "64-bit ELF file)", path);
	} else if (((const Elf64_Ehdr *)(const void *)img)->e_machine == EM_BPF) {
		const char *section = name != NULL ? name : ".text";
		if (!cluster_elf_has_section(img, len, section))
			snprintf(err, errlen, "%s has no section '%s'", path, section);
		else if ((p->bpf = cluster_bpf_load(path, section, err, errlen)) != NULL)
			rc = 0;
	} else {
		rc = cluster_so_load(p, path, name != NULL ? name : default_fn, err, errlen);
	}
	free(img);
	if (rc != 0) {
		cluster_prog_free(p);
		return NULL;
	}
	return p;
}

void cluster_prog_free(struct cluster_prog *p)
{
	if (p == NULL)
		return;
	if (p->bpf != NULL)
		rte_bpf_destroy(p->bpf);
	if (p->dl != NULL)
		dlclose(p->dl);
	free(p);
}

uint32_t cluster_prog_run(const struct cluster_prog *p, const struct rte_mbuf *m)
{
	if (p->bpf != NULL) {
		struct rte_mbuf copy = *m;
		return (uint32_t)rte_bpf_exec(p->bpf, &copy);
	}
	if (m->nb_segs == 1)
		return p->fn(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
	uint8_t flat[CLUSTER_PROG_LINEAR];
	uint32_t n = m->pkt_len < sizeof(flat) ? m->pkt_len : (uint32_t)sizeof(flat);
	const uint8_t *data = rte_pktmbuf_read(m, 0, n, flat);
	return data != NULL ? p->fn(data, n) : 0;
}
