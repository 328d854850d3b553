#include "ctl_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <dpstack/ctl.h>

#include "cmd.h"

#define CTL_IO_TIMEOUT_S 2 /* a client that stalls longer is dropped: the daemon must not */

static int mkdir_parents(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int ctl_server_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int rc = mkdir_parents(path);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create the directory of %s: %s", path, strerror(-rc));
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen, "another dpstackd answers on %s (set DPSTACK_CTL to run one "
				      "more)", path);
		return -1;
	}
	unlink(path); /* stale: nobody answered */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	chmod(path, 0660); /* root and the dpstack group administer the stack */
	return fd;
}

void ctl_server_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(path);
}

int ctl_request_parse(char *buf, size_t len, bool *json, char **argv, int max, char *err,
		      size_t errlen)
{
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "NUL byte in request");
		return -1;
	}
	buf[len] = '\0';
	char *save = NULL;
	char *line = strtok_r(buf, "\n", &save);
	const size_t glen = strlen(DPSTACK_CTL_GREETING);
	if (line == NULL || strncmp(line, DPSTACK_CTL_GREETING " ", glen + 1) != 0) {
		snprintf(err, errlen, "bad greeting (protocol " DPSTACK_CTL_GREETING " expected)");
		return -1;
	}
	const char *fmt = line + glen + 1;
	if (strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
		snprintf(err, errlen, "unknown output format '%s'", fmt);
		return -1;
	}
	*json = strcmp(fmt, "json") == 0;
	/* Words follow one per line up to an empty line; strtok_r would skip empty lines, so
	 * walk by hand. */
	char *p = save;
	int n = 0;
	while (p != NULL && *p != '\0' && *p != '\n') {
		char *nl = strchr(p, '\n');
		if (nl == NULL) {
			snprintf(err, errlen, "request not terminated by an empty line");
			return -1;
		}
		*nl = '\0';
		if (n == max) {
			snprintf(err, errlen, "more than %d words", max);
			return -1;
		}
		argv[n++] = p;
		p = nl + 1;
	}
	if (p == NULL || *p != '\n') {
		snprintf(err, errlen, "request not terminated by an empty line");
		return -1;
	}
	return n;
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return; /* the client went away: nothing more to tell it */
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* Reads until the terminating empty line, EOF, the size limit or the timeout. */
static ssize_t recv_request(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	while (len < cap) {
		ssize_t n = recv(fd, buf + len, cap - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (ssize_t)len;
		len += (size_t)n;
		if (len >= 2 && buf[len - 1] == '\n' && buf[len - 2] == '\n')
			return (ssize_t)len;
	}
	return -1;
}

void ctl_server_serve_one(struct daemon *d, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct timeval tv = {.tv_sec = CTL_IO_TIMEOUT_S};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	static char buf[DPSTACK_CTL_MAX_REQUEST + 1];
	char err[256];
	char *argv[DPSTACK_CTL_MAX_WORDS];
	bool json = false;
	ssize_t len = recv_request(fd, buf, DPSTACK_CTL_MAX_REQUEST);
	int argc = -1;
	if (len < 0)
		snprintf(err, sizeof(err), "request too large, incomplete or timed out");
	else
		argc = ctl_request_parse(buf, (size_t)len, &json, argv, DPSTACK_CTL_MAX_WORDS, err,
					 sizeof(err));
	if (argc < 0) {
		char msg[300];
		int n = snprintf(msg, sizeof(msg), "error\n%s\n", err);
		send_all(fd, msg, (size_t)n);
		close(fd);
		return;
	}
	struct ctl_out out;
	ctl_out_init(&out, json);
	d->client_fd = fd;
	int rc = cmd_exec(d, argc, argv, &out);
	d->client_fd = -1;
	if (d->client_kept) {
		/* The command answers on the connection itself, and closes it (capture). */
		d->client_kept = false;
		ctl_out_fini(&out);
		return;
	}
	const char *status = rc == 0 ? "ok\n" : "error\n";
	send_all(fd, status, strlen(status));
	if (out.len > 0)
		send_all(fd, out.buf, out.len);
	if (rc != 0 && (out.len == 0 || out.buf[out.len - 1] != '\n'))
		send_all(fd, "\n", 1);
	ctl_out_fini(&out);
	close(fd);
}
