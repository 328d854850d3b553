/* The consumers' socket: one thread accepts attaches ("NAME@i" in, the segment, eventfd and
 * regions out over SCM_RIGHTS) and watches each attached consumer's connection, whose end
 * (exit, crash, SIGKILL) detaches it and reclaims its frames. */
#include "cluster_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CLUSTER_REQ_TIMEOUT_MS 1000     /* a connection that says nothing waits no longer */
#define CLUSTER_MAX_POLL (1 + 1 + CLUSTER_MAX * CLUSTER_MAX_CONSUMERS)

static void cluster_reply(int fd, const struct dpc_attach_rep *rep, const int *fds,
			  unsigned nfds)
{
	struct iovec iov = {.iov_base = (void *)rep, .iov_len = sizeof(*rep)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * (2 + DPC_MAX_REGIONS))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the consumer went away meanwhile: its hang-up detaches it */
	}
}

/* A new connection: its request, then the attach (keeping fd) or a refusal (closing it). */
static void cluster_serve_attach(struct cluster_mgr *m, int fd)
{
	struct dpc_attach_req req;
	struct dpc_attach_rep rep = {0};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n = poll(&pfd, 1, CLUSTER_REQ_TIMEOUT_MS) == 1 ? recv(fd, &req, sizeof(req),
								      MSG_DONTWAIT) : -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (n != (ssize_t)sizeof(req) || req.version != DPC_SHM_VERSION ||
	    memchr(req.spec, '\0', sizeof(req.spec)) == NULL ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		rep.err = -EPROTO;
		snprintf(rep.msg, sizeof(rep.msg), "bad attach request (library version %d "
			 "expected)", DPC_SHM_VERSION);
		cluster_reply(fd, &rep, NULL, 0);
		close(fd);
		return;
	}
	int fds[2 + DPC_MAX_REGIONS];
	unsigned nfds = 0;
	pthread_mutex_lock(&m->lock);
	struct cluster *cl = NULL;
	unsigned c = 0;
	int rc = cluster_spec_find(m, req.spec, &cl, &c, rep.msg, sizeof(rep.msg));
	if (rc == 0)
		rc = cluster_consumer_attach(m, cl, c, fd, cred.pid, fds, &nfds, rep.msg,
					     sizeof(rep.msg));
	rep.err = rc;
	rep.nb_fds = nfds;
	cluster_reply(fd, &rep, fds, nfds);
	pthread_mutex_unlock(&m->lock);
	if (rc != 0)
		close(fd);
}

/* An attached consumer's connection woke us: it ended (or said something, which the
 * protocol has no room for): detach it. */
static void cluster_serve_conn(struct cluster_mgr *m, int fd)
{
	char byte;
	ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	bool ours = false;
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < CLUSTER_MAX && !ours; i++) {
		struct cluster *cl = &m->clusters[i];
		for (unsigned c = 0; cl->used && c < cl->nb_consumers && !ours; c++)
			ours = cl->cons[c].conn_fd == fd && cluster_consumer_detach(m, cl, c) == fd;
	}
	pthread_mutex_unlock(&m->lock);
	/* Else the control thread detached it meanwhile: it is a zombie, closed once. */
	if (ours)
		close(fd);
}

/* The fds to watch: the stop eventfd, the listening socket, each attached consumer. Closes
 * the connections the control thread detached. */
static unsigned cluster_poll_set(struct cluster_mgr *m, struct pollfd *pfd)
{
	unsigned n = 0;
	pfd[n++] = (struct pollfd){.fd = m->stop_fd, .events = POLLIN};
	pfd[n++] = (struct pollfd){.fd = m->listen_fd, .events = POLLIN};
	pthread_mutex_lock(&m->lock);
	for (unsigned z = 0; z < m->nb_zombies; z++)
		close(m->zombie[z]);
	m->nb_zombies = 0;
	for (unsigned i = 0; i < CLUSTER_MAX; i++) {
		const struct cluster *cl = &m->clusters[i];
		for (unsigned c = 0; cl->used && c < cl->nb_consumers; c++)
			if (cl->cons[c].conn_fd >= 0)
				pfd[n++] = (struct pollfd){.fd = cl->cons[c].conn_fd,
							   .events = POLLIN};
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

static void *cluster_server_main(void *arg)
{
	struct cluster_mgr *m = arg;
	static struct pollfd pfd[CLUSTER_MAX_POLL];
	for (;;) {
		unsigned n = cluster_poll_set(m, pfd);
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents != 0)
			break;
		for (unsigned i = 2; i < n; i++)
			if (pfd[i].revents != 0)
				cluster_serve_conn(m, pfd[i].fd);
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				cluster_serve_attach(m, fd);
		}
	}
	return NULL;
}

int cluster_mgr_listen(struct cluster_mgr *m, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path) || strlen(path) >= sizeof(m->path)) {
		snprintf(err, errlen, "cluster socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cluster socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		snprintf(err, errlen, "another daemon serves clusters on %s", path);
		close(fd);
		return -1;
	}
	unlink(path);
	/* Consumers see every frame of a port: the owner and its group may attach (chgrp
	 * the socket to let a group of users in), not everyone as with applications. */
	mode_t old = umask(0007);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || listen(fd, 64) != 0) {
		snprintf(err, errlen, "cluster socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stop_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	m->listen_fd = fd;
	strcpy(m->path, path);
	rc = pthread_create(&m->thread, NULL, cluster_server_main, m);
	if (rc != 0) {
		snprintf(err, errlen, "cluster thread: %s", strerror(rc));
		return -1;
	}
	pthread_setname_np(m->thread, "dps-cluster");
	m->running = true;
	return 0;
}

void cluster_mgr_stop(struct cluster_mgr *m)
{
	if (m == NULL)
		return;
	if (m->running) {
		uint64_t one = 1;
		if (write(m->stop_fd, &one, sizeof(one)) < 0) {
			/* cannot fail on a fresh eventfd */
		}
		pthread_join(m->thread, NULL);
		m->running = false;
	}
	cluster_mgr_delete_all(m);
	for (unsigned z = 0; z < m->nb_zombies; z++)
		close(m->zombie[z]);
	m->nb_zombies = 0;
	if (m->listen_fd >= 0) {
		close(m->listen_fd);
		unlink(m->path);
	}
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	m->listen_fd = m->stop_fd = -1;
}
