#include "ctl_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <dpstack/ctl.h>

#define CTL_BODY_MAX (64u << 20) /* far beyond any reply; a runaway daemon stops here */

static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The request: the greeting, one line per word, an empty line. */
static int ctl_request_build(char *req, size_t cap, bool json, int argc, char *const argv[],
			     char err[CTL_CLIENT_ERR_MAX])
{
	if (argc > DPSTACK_CTL_MAX_WORDS) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "more than %d words", DPSTACK_CTL_MAX_WORDS);
		return -1;
	}
	size_t len = (size_t)snprintf(req, cap, "%s %s\n", DPSTACK_CTL_GREETING,
				      json ? "json" : "text");
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (n == 0 || strchr(argv[i], '\n') != NULL) {
			snprintf(err, CTL_CLIENT_ERR_MAX, "empty word or newline in argument %d",
				 i + 1);
			return -1;
		}
		if (len + n + 2 >= cap) {
			snprintf(err, CTL_CLIENT_ERR_MAX, "command too long");
			return -1;
		}
		memcpy(req + len, argv[i], n);
		len += n;
		req[len++] = '\n';
	}
	req[len++] = '\n';
	return (int)len;
}

int ctl_client_send(const char *path, bool json, int argc, char *const argv[], int timeout_s,
		    char err[CTL_CLIENT_ERR_MAX])
{
	char req[DPSTACK_CTL_MAX_REQUEST];
	int len = ctl_request_build(req, sizeof(req), json, argc, argv, err);
	if (len < 0)
		return -1;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "cannot reach dpstackd at %s: %s (is it running?)",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct timeval tv = {.tv_sec = timeout_s};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send_all(fd, req, (size_t)len) != 0) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "send to dpstackd at %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int ctl_client_status(int fd, const char *path, char err[CTL_CLIENT_ERR_MAX])
{
	char status[8];
	size_t got = 0;
	int rerr = 0;
	while (got < sizeof(status)) {
		ssize_t n = recv(fd, status + got, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rerr = n < 0 ? errno : 0;
			break;
		}
		if (status[got++] == '\n')
			break;
	}
	if (got == 3 && memcmp(status, "ok\n", 3) == 0)
		return 1;
	if (got == 6 && memcmp(status, "error\n", 6) == 0)
		return 0;
	if (rerr == EAGAIN || rerr == EWOULDBLOCK)
		snprintf(err, CTL_CLIENT_ERR_MAX, "no answer from dpstackd at %s (timed out)", path);
	else if (rerr != 0)
		snprintf(err, CTL_CLIENT_ERR_MAX, "no answer from dpstackd at %s: %s", path,
			 strerror(rerr));
	else
		snprintf(err, CTL_CLIENT_ERR_MAX, "no answer from dpstackd at %s", path);
	return -1;
}

int ctl_client_body(int fd, char **body, size_t *len, char err[CTL_CLIENT_ERR_MAX])
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "out of memory");
		return -1;
	}
	for (;;) {
		if (cap - n < 2) {
			char *nb = cap < CTL_BODY_MAX ? realloc(buf, cap * 2) : NULL;
			if (nb == NULL) {
				free(buf);
				snprintf(err, CTL_CLIENT_ERR_MAX, "answer too large");
				return -1;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, CTL_CLIENT_ERR_MAX, "receive: %s", strerror(errno));
			free(buf);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*body = buf;
	*len = n;
	return 0;
}
