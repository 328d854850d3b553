/* The exec family: a program's stack sockets that are not close-on-exec live on in the new
 * image, as kernel sockets do (libdpstack's dps_exec.c hands them over). glibc's execv,
 * execvp and execl* call execve inside libc, past this shim, so each is defined here. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "../dpstack/dps_fault.h"
#include "../dpstack/dps_priv.h"
#include "preload.h"

/* Runs one exec with the hand-over in place, undone when the exec fails. The new image
 * needs this shim and the daemon's address to use the sockets: they are carried when the
 * program's environment for it lacks them. It also inherits the program's SIG_IGN of
 * SIGSEGV/SIGBUS, which the kernel holds as the library's handler until then. */
#define PL_EXEC(envp, call)                                    \
	({                                                     \
		char **pl_env_ = dps_exec_prepare(envp, pl_exec_carry); \
		dps_fault_exec_prepare();                      \
		int pl_rc_ = (call);                           \
		int pl_e_ = errno;                             \
		dps_fault_exec_failed();                       \
		dps_exec_failed(pl_env_, (envp));              \
		errno = pl_e_;                                 \
		pl_rc_;                                        \
	})

int execve(const char *path, char *const argv[], char *const envp[])
{
	pl_init();
	if (pl_off)
		return pl_libc.execve(path, argv, envp);
	return PL_EXEC(envp, pl_libc.execve(path, argv, pl_env_));
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	pl_init();
	if (pl_off)
		return pl_libc.execvpe(file, argv, envp);
	return PL_EXEC(envp, pl_libc.execvpe(file, argv, pl_env_));
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	pl_init();
	if (pl_off)
		return pl_libc.fexecve(fd, argv, envp);
	return PL_EXEC(envp, pl_libc.fexecve(fd, argv, pl_env_));
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl's arguments as an argv (NULL-terminated), and the envp after it for execle. */
static char **pl_exec_args(const char *arg0, va_list ap, char *const **envp)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 1;
	while (va_arg(count, char *) != NULL)
		n++;
	va_end(count);
	char **argv = malloc((n + 1) * sizeof(*argv));
	if (argv == NULL)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *); /* the last is the NULL */
	if (envp != NULL)
		*envp = va_arg(ap, char *const *);
	return argv;
}

#define PL_EXECL(arg0, last_named, envp_out, call)             \
	({                                                     \
		va_list ap;                                    \
		va_start(ap, last_named);                      \
		char **argv = pl_exec_args(arg0, ap, envp_out); \
		va_end(ap);                                    \
		int rc_ = argv != NULL ? (call) : (errno = ENOMEM, -1); \
		int e_ = errno;                                \
		free(argv);                                    \
		errno = e_;                                    \
		rc_;                                           \
	})

int execl(const char *path, const char *arg, ...)
{
	return PL_EXECL(arg, arg, NULL, execve(path, argv, environ));
}

int execlp(const char *file, const char *arg, ...)
{
	return PL_EXECL(arg, arg, NULL, execvpe(file, argv, environ));
}

int execle(const char *path, const char *arg, ...)
{
	char *const *envp = NULL;
	return PL_EXECL(arg, arg, &envp, execve(path, argv, envp));
}
