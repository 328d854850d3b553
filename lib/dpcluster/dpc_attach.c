/* Attaching to a cluster: the request on the cluster socket, the descriptors that come back,
 * and the mappings (the segment read-write, the regions read-only). */
#include "dpc_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static __thread char dpc_err[200];

__attribute__((format(printf, 2, 3)))
static struct dps_cluster *dpc_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dpc_err, sizeof(dpc_err), fmt, ap);
	va_end(ap);
	errno = err;
	return NULL;
}

DPC_EXPORT const char *dps_cluster_error(void)
{
	return dpc_err;
}

static int dpc_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The answer and its descriptors; returns how many descriptors, or -1. */
static int dpc_recv_reply(int fd, struct dpc_attach_rep *rep, int *fds, unsigned max)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * (2 + DPC_MAX_REGIONS))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n != (ssize_t)sizeof(*rep))
		return -1;
	int got = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned k = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int tmp[2 + DPC_MAX_REGIONS];
		memcpy(tmp, CMSG_DATA(cm), sizeof(int) * (k < DPC_ATTACH_FDS ? k : DPC_ATTACH_FDS));
		for (unsigned i = 0; i < k && i < DPC_ATTACH_FDS; i++) {
			if ((unsigned)got < max)
				fds[got++] = tmp[i];
			else
				close(tmp[i]);
		}
	}
	return got;
}

static void dpc_unmap(struct dps_cluster *c)
{
	for (unsigned i = 0; i < DPC_MAX_REGIONS; i++)
		if (c->region[i] != NULL)
			munmap((void *)c->region[i], c->region_size[i]);
	if (c->hdr != NULL)
		munmap(c->hdr, c->seg_size);
	if (c->efd >= 0)
		close(c->efd);
	if (c->conn >= 0)
		close(c->conn);
}

/* Maps what the daemon sent and checks that it is what this library understands. */
static int dpc_map(struct dps_cluster *c, const int *fds, unsigned nfds)
{
	off_t seg = lseek(fds[0], 0, SEEK_END);
	if (seg < (off_t)sizeof(struct dpc_shm_hdr))
		return -EPROTO;
	void *p = mmap(NULL, (size_t)seg, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (p == MAP_FAILED)
		return -errno;
	c->hdr = p;
	c->seg_size = (size_t)seg;
	const struct dpc_shm_hdr *h = c->hdr;
	uint64_t need = h->rings_off + h->ring_bytes * h->nb_rings;
	if (h->magic != DPC_SHM_MAGIC || h->version != DPC_SHM_VERSION || need > (uint64_t)seg ||
	    h->nb_rings == 0 || h->nb_rings > DPC_MAX_RINGS || h->nb_regions != nfds - 2 ||
	    h->ring_size == 0 || (h->ring_size & (h->ring_size - 1)) != 0 ||
	    h->ring_bytes < dpc_ring_bytes(h->ring_size) ||
	    h->tx_off < need || h->tx_off + sizeof(struct dpc_txring) > (uint64_t)seg)
		return -EPROTO;
	c->tx = (struct dpc_txring *)((char *)c->hdr + h->tx_off);
	for (unsigned i = 0; i < h->nb_regions; i++) {
		void *r = mmap(NULL, h->regions[i].size, PROT_READ, MAP_SHARED, fds[2 + i], 0);
		if (r == MAP_FAILED)
			return -errno;
		c->region[i] = r;
		c->region_size[i] = h->regions[i].size;
	}
	return 0;
}

DPC_EXPORT struct dps_cluster *dps_cluster_attach(const char *spec)
{
	struct dpc_attach_req req = {.version = DPC_SHM_VERSION};
	if (spec == NULL || strlen(spec) >= sizeof(req.spec))
		return dpc_fail(EINVAL, "'%s' is not NAME@i or NAME@g:i", spec ? spec : "(null)");
	strcpy(req.spec, spec);
	const char *path = getenv(DPC_SOCK_ENV);
	if (path == NULL || path[0] == '\0')
		path = DPC_SOCK_DEFAULT;
	int fd = dpc_connect(path);
	if (fd < 0)
		return dpc_fail(errno, "no dpstackd on %s: %s", path, strerror(errno));
	struct dpc_attach_rep rep;
	int fds[2 + DPC_MAX_REGIONS];
	int nfds = send(fd, &req, sizeof(req), MSG_NOSIGNAL) == (ssize_t)sizeof(req)
			   ? dpc_recv_reply(fd, &rep, fds, DPC_ATTACH_FDS) : -1;
	if (nfds < 0) {
		close(fd);
		return dpc_fail(EPROTO, "dpstackd on %s did not answer the attach", path);
	}
	if (rep.err != 0 || nfds < 2 || (unsigned)nfds != rep.nb_fds) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		close(fd);
		rep.msg[sizeof(rep.msg) - 1] = '\0';
		return dpc_fail(rep.err != 0 ? -rep.err : EPROTO, "%s",
				rep.err != 0 ? rep.msg : "bad answer from dpstackd");
	}
	struct dps_cluster *c = calloc(1, sizeof(*c));
	int rc = c != NULL ? 0 : -ENOMEM;
	if (c != NULL) {
		c->conn = fd;
		c->efd = fds[1];
		rc = dpc_map(c, fds, (unsigned)nfds);
	}
	close(fds[0]);
	for (int i = 2; i < nfds; i++)
		close(fds[i]);
	if (rc != 0) {
		if (c != NULL) {
			dpc_unmap(c);
			free(c);
		} else {
			close(fd);
			close(fds[1]);
		}
		return dpc_fail(-rc, "cannot map the cluster's memory: %s", strerror(-rc));
	}
	c->spin_ns = dpc_spin_default();
	return c;
}

DPC_EXPORT void dps_cluster_detach(struct dps_cluster *c)
{
	if (c == NULL)
		return;
	dpc_unmap(c);
	free(c);
}

DPC_EXPORT int dps_cluster_info(const struct dps_cluster *c, struct dps_cluster_info *info)
{
	const struct dpc_shm_hdr *h = c->hdr;
	memset(info, 0, sizeof(*info));
	snprintf(info->cluster, sizeof(info->cluster), "%.*s", (int)sizeof(h->cluster) - 1,
		 h->cluster);
	info->consumer = h->consumer;
	info->group = h->group;
	info->index = h->index_in_group;
	info->nb_ports = h->nb_regions;
	for (unsigned i = 0; i < h->nb_regions && i < 8; i++)
		snprintf(info->ports[i], sizeof(info->ports[i]), "%.*s",
			 (int)sizeof(h->regions[i].port) - 1, h->regions[i].port);
	info->ring_size = h->ring_size;
	return 0;
}
