/* Stack sockets across execve(2). On Linux a socket that is not close-on-exec stays open in
 * the new program, which is how nginx upgrades its binary without dropping a connection
 * (kill -USR2: the new master inherits the listeners, numbers in $NGINX). The new image of a
 * process has none of the library's memory, so the old one hands over what it needs:
 *
 * - the attachment itself (its unix connection, segment and eventfds stay open across the
 *   exec): the daemon sees the same process on the same connection and keeps its sockets;
 * - a record of every stack file: those that are not close-on-exec keep their numbers (the
 *   placeholders stay open), the others are closed by the new image, as the kernel closes
 *   close-on-exec descriptors.
 *
 * The records travel in a memfd whose number is in DPSTACK_EXEC_STATE, added to the
 * environment of the exec; the new image's constructor takes them (dps_exec_adopt) before
 * the program runs. A failed exec gives every descriptor its close-on-exec flag back.
 * Epoll instances are not carried (a program builds its sets anew after exec). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

#define DPS_EXEC_ENV "DPSTACK_EXEC_STATE"
#define DPS_EXEC_MAGIC 0x58455044u /* "DPEX" */
#define DPS_EXEC_MAX_FILES (1u << 20)

/* The kernel's fcntl: the shim's would take a placeholder for the stack socket it holds. */
static int dps_exec_fd_flags(int fd, int cmd, int arg)
{
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

struct dps_exec_hdr {
	uint32_t magic, size;           /* size: of this header, a version */
	struct dps_exec_attach attach;
	uint32_t nfiles;
	uint32_t file_size;
};

/* The plain fields of a stack file that a new image takes over as they are (one list for
 * the record, the saving and the loading). */
#define DPS_EXEC_FIELDS(X)                                                           \
	X(bool, reuseaddr) X(bool, reuseport) X(bool, bound) X(bool, shut_rd)         \
	X(bool, shut_wr) X(bool, connect_pending) X(int, rcvtimeo_ms)                 \
	X(int, sndtimeo_ms) X(int, linger_on) X(int, linger_s) X(struct chan_opts, opts) \
	X(struct dps_ip_flags, ip) X(struct dps_ep, local) X(uint32_t, bind_id)   \
	X(int, family) X(bool, v6only)

/* One descriptor number of a stack file. */
struct dps_exec_file {
	int fd;
	int32_t first;                  /* the record of the same file's first number, or -1 */
	uint8_t kind;
	bool keep;                      /* not close-on-exec: the new image has it */
	uint32_t nsocks;
	uint32_t socks[CHAN_MAX_WORKERS];
	int flags;                      /* O_NONBLOCK */
#define DPS_EXEC_DECLARE(type, name) type name;
	DPS_EXEC_FIELDS(DPS_EXEC_DECLARE)
};

static void dps_exec_save(struct dps_exec_file *r, const struct dps_file *f)
{
	r->kind = (uint8_t)f->kind;
	r->keep = !f->cloexec;
	r->nsocks = f->nsocks;
	memcpy(r->socks, f->socks, sizeof(r->socks));
	r->flags = atomic_load(&f->flags);
#define DPS_EXEC_SAVE(type, name) r->name = f->name;
	DPS_EXEC_FIELDS(DPS_EXEC_SAVE)
}

/* The sockets themselves are set up by the caller (dps_exec_file_make). */
static void dps_exec_load(struct dps_file *f, const struct dps_exec_file *r)
{
	atomic_store(&f->flags, r->flags);
#define DPS_EXEC_LOAD(type, name) f->name = r->name;
	DPS_EXEC_FIELDS(DPS_EXEC_LOAD)
	f->cloexec = true; /* the new image's placeholders are close-on-exec again */
}

/* ---- the old image: before execve ---- */

/* What prepare changed, to undo when the exec fails. One exec at a time. */
static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int state_fd;
	int *opened;                    /* descriptors whose FD_CLOEXEC was cleared */
	unsigned nopened, capopened;
	struct dps_exec_file *files;
	unsigned nfiles, capfiles;
	struct dps_file **seen;         /* files[i]'s file, to find dups */
	bool failed;
} ex;

static void dps_exec_keep_open(int fd)
{
	if (ex.nopened == ex.capopened) {
		unsigned cap = ex.capopened ? 2 * ex.capopened : 64;
		int *p = realloc(ex.opened, cap * sizeof(*p));
		if (p == NULL) {
			ex.failed = true;
			return;
		}
		ex.opened = p;
		ex.capopened = cap;
	}
	if (dps_exec_fd_flags(fd, F_SETFD, 0) == 0)
		ex.opened[ex.nopened++] = fd;
	else
		ex.failed = true;
}

static void dps_exec_note_file(int fd, struct dps_file *f, void *ctx)
{
	(void)ctx;
	if (f->kind == DPS_EPOLL || ex.failed)
		return;
	int32_t first = -1;
	for (unsigned i = 0; i < ex.nfiles && first < 0; i++)
		if (ex.seen[i] == f && ex.files[i].first < 0)
			first = (int32_t)i;
	if (first >= 0 && f->cloexec)
		return; /* its sockets are closed once, through the first record */
	if (ex.nfiles == ex.capfiles) {
		unsigned cap = ex.capfiles ? 2 * ex.capfiles : 64;
		struct dps_exec_file *p = realloc(ex.files, cap * sizeof(*p));
		struct dps_file **q = realloc(ex.seen, cap * sizeof(*q));
		if (p != NULL)
			ex.files = p;
		if (q != NULL)
			ex.seen = q;
		if (p == NULL || q == NULL || cap > DPS_EXEC_MAX_FILES) {
			ex.failed = true;
			return;
		}
		ex.capfiles = cap;
	}
	struct dps_exec_file *r = &ex.files[ex.nfiles];
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->first = first;
	dps_exec_save(r, f);
	ex.seen[ex.nfiles++] = f;
	if (r->keep)
		dps_exec_keep_open(fd);
}

static bool dps_exec_any_kept(void)
{
	for (unsigned i = 0; i < ex.nfiles; i++)
		if (ex.files[i].keep)
			return true;
	return false;
}

static int dps_exec_write_state(const struct dps_exec_attach *x)
{
	int fd = memfd_create("dpstack-exec", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	struct dps_exec_hdr h = {.magic = DPS_EXEC_MAGIC, .size = sizeof(h), .attach = *x,
				 .nfiles = ex.nfiles, .file_size = sizeof(struct dps_exec_file)};
	size_t bytes = (size_t)ex.nfiles * sizeof(*ex.files);
	if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    (bytes > 0 && write(fd, ex.files, bytes) != (ssize_t)bytes)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool dps_env_names(const char *entry, const char *name_eq)
{
	size_t n = strcspn(name_eq, "=");
	return strncmp(entry, name_eq, n) == 0 && entry[n] == '=';
}

static bool dps_env_has(char *const envp[], const char *name_eq)
{
	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		if (dps_env_names(envp[i], name_eq))
			return true;
	return false;
}

/* envp with DPSTACK_EXEC_STATE=fd in place of any it had, and the carry entries it lacks
 * (the new image needs the shim to use the sockets; nginx, for one, clears the environment
 * of its new binary). */
static char **dps_exec_env(char *const envp[], const char *const carry[], int state_fd)
{
	size_t n = 0, c = 0;
	while (envp != NULL && envp[n] != NULL)
		n++;
	while (carry != NULL && carry[c] != NULL)
		c++;
	char **env = malloc((n + c + 2) * sizeof(*env) + 64);
	if (env == NULL)
		return NULL;
	char *var = (char *)(env + n + c + 2);
	snprintf(var, 64, "%s=%d", DPS_EXEC_ENV, state_fd);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!dps_env_names(envp[i], var))
			env[k++] = envp[i];
	for (size_t i = 0; i < c; i++)
		if (!dps_env_has(envp, carry[i]))
			env[k++] = (char *)carry[i];
	env[k++] = var;
	env[k] = NULL;
	return env;
}

static void dps_exec_undo(void)
{
	for (unsigned i = 0; i < ex.nopened; i++)
		dps_exec_fd_flags(ex.opened[i], F_SETFD, FD_CLOEXEC);
	if (ex.state_fd >= 0)
		close(ex.state_fd);
	ex.state_fd = -1;
	ex.nopened = ex.nfiles = 0;
	ex.failed = false;
}

char **dps_exec_prepare(char *const envp[], const char *const carry[])
{
	pthread_mutex_lock(&exec_lock);
	ex.state_fd = -1;
	struct dps_exec_attach x;
	if (dps_attach_export(&x) != 0)
		return (char **)envp; /* nothing to carry */
	dps_files_each(dps_exec_note_file, NULL);
	if (ex.failed || !dps_exec_any_kept()) {
		dps_exec_undo();
		return (char **)envp;
	}
	ex.state_fd = dps_exec_write_state(&x);
	char **env = ex.state_fd >= 0 ? dps_exec_env(envp, carry, ex.state_fd) : NULL;
	if (env == NULL) {
		dps_exec_undo();
		return (char **)envp;
	}
	dps_exec_keep_open(ex.state_fd);
	dps_exec_keep_open(x.sock_fd);
	dps_exec_keep_open(x.mem_fd);
	dps_exec_keep_open(x.ev_fd);
	for (unsigned w = 0; w < x.ar.nb_workers; w++)
		dps_exec_keep_open(x.worker_fd[w]);
	return env;
}

void dps_exec_failed(char **env, char *const envp[])
{
	dps_exec_undo();
	if (env != (char **)envp)
		free(env);
	pthread_mutex_unlock(&exec_lock);
}

/* ---- the new image: before main ---- */

static bool dps_exec_record_ok(const struct dps_exec_file *r, uint32_t index,
			       const struct chan_layout *lay)
{
	if (r->fd < 0 || r->first >= (int32_t)index || r->nsocks > lay->nb_workers ||
	    (r->kind != DPS_TCP && r->kind != DPS_LISTEN && r->kind != DPS_UDP))
		return false;
	for (uint32_t i = 0; i < r->nsocks; i++)
		if (r->socks[i] >= lay->max_socks)
			return false;
	return r->keep ? dps_exec_fd_flags(r->fd, F_GETFD, 0) >= 0 : true;
}

/* Makes the file of record r, or NULL. */
static struct dps_file *dps_exec_file_make(struct dps_attach *at, const struct dps_exec_file *r)
{
	struct dps_file *f = dps_file_new((enum dps_kind)r->kind, r->keep ? r->fd : -1);
	if (f == NULL)
		return NULL;
	if (r->keep)
		dps_exec_fd_flags(r->fd, F_SETFD, FD_CLOEXEC);
	atomic_fetch_add(&at->refs, 1);
	f->at = at;
	dps_exec_load(f, r);
	int rc = 0;
	if (r->kind == DPS_LISTEN) {
		for (uint32_t i = 0; i < r->nsocks; i++) {
			f->socks[i] = r->socks[i];
			dps_file_bind_sock(f, r->socks[i]);
		}
		f->nsocks = r->nsocks;
	} else if (r->nsocks > 0) {
		rc = dps_file_attach_sock(f, r->socks[0]);
	}
	if (rc < 0) {
		dps_file_put(f);
		return NULL;
	}
	return f;
}

static void dps_exec_take_files(struct dps_attach *at, int state_fd, uint32_t n)
{
	struct dps_exec_file *recs = calloc(n ? n : 1, sizeof(*recs));
	struct dps_file **made = calloc(n ? n : 1, sizeof(*made));
	size_t bytes = (size_t)n * sizeof(*recs);
	if (recs == NULL || made == NULL ||
	    pread(state_fd, recs, bytes, sizeof(struct dps_exec_hdr)) != (ssize_t)bytes)
		n = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct dps_exec_file *r = &recs[i];
		if (!dps_exec_record_ok(r, i, &at->lay)) {
			fprintf(stderr, "dpstack: a socket handed over across exec is unusable "
					"(descriptor %d)\n", r->fd);
			continue;
		}
		if (r->first >= 0) {
			struct dps_file *f = made[r->first];
			if (f != NULL && r->keep) {
				dps_exec_fd_flags(r->fd, F_SETFD, FD_CLOEXEC);
				atomic_fetch_add(&f->nfds, 1);
				if (dps_file_install_at(f, r->fd) < 0)
					atomic_fetch_sub(&f->nfds, 1);
			}
			continue;
		}
		made[i] = dps_exec_file_make(at, r);
		if (made[i] == NULL)
			continue;
		if (!r->keep) {
			/* Close-on-exec: gone with the old image, as the kernel closes it. */
			dps_file_close_socks(made[i]);
			dps_file_put(made[i]);
			made[i] = NULL;
		} else if (dps_file_install(made[i]) < 0) {
			dps_file_close_socks(made[i]);
			dps_file_put(made[i]);
			made[i] = NULL;
		}
	}
	free(recs);
	free(made);
}

static void dps_exec_adopt(void)
{
	const char *v = getenv(DPS_EXEC_ENV);
	if (v == NULL)
		return;
	char *end;
	long state_fd = strtol(v, &end, 10);
	unsetenv(DPS_EXEC_ENV); /* the program's own children must not take it again */
	struct dps_exec_hdr h;
	if (*end != '\0' || state_fd < 0 || state_fd > INT32_MAX ||
	    pread((int)state_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != DPS_EXEC_MAGIC || h.size != sizeof(h) ||
	    h.file_size != sizeof(struct dps_exec_file) || h.nfiles > DPS_EXEC_MAX_FILES) {
		fprintf(stderr, "dpstack: %s=%s is no hand-over of this library; ignored\n",
			DPS_EXEC_ENV, v);
		return;
	}
	dps_exec_fd_flags(h.attach.sock_fd, F_SETFD, FD_CLOEXEC);
	dps_exec_fd_flags(h.attach.mem_fd, F_SETFD, FD_CLOEXEC);
	dps_exec_fd_flags(h.attach.ev_fd, F_SETFD, FD_CLOEXEC);
	for (unsigned w = 0; w < h.attach.ar.nb_workers && w < CHAN_MAX_WORKERS; w++)
		dps_exec_fd_flags(h.attach.worker_fd[w], F_SETFD, FD_CLOEXEC);
	int err;
	struct dps_attach *at = dps_attach_import(&h.attach, &err);
	if (at == NULL)
		fprintf(stderr, "dpstack: the attachment handed over across exec is unusable: %s\n",
			strerror(err));
	else
		dps_exec_take_files(at, (int)state_fd, h.nfiles);
	close((int)state_fd);
	dps_attach_put(at);
}

__attribute__((constructor)) static void dps_exec_constructor(void)
{
	dps_exec_adopt();
}
