#include "monitor.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "monitor_rates.h"
#include "monitor_show.h"

#define MON_USAGE "monitor [-j] [interval SEC] [count N]"
#define MON_INTERVAL_MIN 0.1
#define MON_INTERVAL_MAX 3600.0

struct mon_args {
	bool json;
	double interval_s;
	uint64_t count;      /* 0: until q or a signal */
};

/* ECMA-48 / xterm sequences every terminal over ssh understands. */
#define ESC_ALT_SCREEN_ON "\033[?1049h"
#define ESC_ALT_SCREEN_OFF "\033[?1049l"
#define ESC_CURSOR_HIDE "\033[?25l"
#define ESC_CURSOR_SHOW "\033[?25h"
#define ESC_HOME "\033[H"
#define ESC_CLEAR_EOL "\033[K"
#define ESC_CLEAR_BELOW "\033[J"

struct mon_term {
	bool screen;             /* stdout is a terminal we draw on */
	bool keys;               /* stdin is a terminal we read keys from */
	struct termios saved;
};

static volatile sig_atomic_t mon_quit_signal;
static volatile sig_atomic_t mon_resized;
static volatile sig_atomic_t mon_suspended;

static void mon_on_signal(int sig)
{
	if (sig == SIGWINCH)
		mon_resized = 1;
	else if (sig == SIGTSTP)
		mon_suspended = 1;
	else
		mon_quit_signal = sig;
}

static const int mon_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP};

__attribute__((format(printf, 1, 2))) static int mon_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("dpstackctl: monitor: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(" (usage: dpstackctl " MON_USAGE ")\n", stderr);
	va_end(ap);
	return 2;
}

static int mon_parse_args(struct mon_args *a, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *w = argv[i];
		if (strcmp(w, "-j") == 0) {
			a->json = true;
			continue;
		}
		bool interval = strcmp(w, "interval") == 0;
		if (!interval && strcmp(w, "count") != 0)
			return mon_usage_error("unknown argument '%s'", w);
		if (i + 1 == argc)
			return mon_usage_error("'%s' needs a value", w);
		const char *v = argv[++i];
		char *end;
		errno = 0;
		if (interval) {
			double s = strtod(v, &end);
			if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || !isfinite(s) ||
			    s < MON_INTERVAL_MIN || s > MON_INTERVAL_MAX)
				return mon_usage_error(
					"interval must be a number of seconds from 0.1 to 3600, not '%s'", v);
			a->interval_s = s;
		} else {
			unsigned long long n = strtoull(v, &end, 10);
			if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n == 0)
				return mon_usage_error("count must be a whole number from 1, not '%s'", v);
			a->count = n;
		}
	}
	return 0;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the terminal went away: the next signal or read ends us */
		buf += n;
		len -= (size_t)n;
	}
}

static void mon_term_enter(struct mon_term *t)
{
	t->screen = isatty(STDOUT_FILENO);
	if (!t->screen)
		return;
	/* Keys without Enter and without echo; ISIG stays, so Ctrl-C is SIGINT as ever. */
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		struct termios raw = t->saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		t->keys = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	static const char on[] = ESC_ALT_SCREEN_ON ESC_CURSOR_HIDE ESC_HOME ESC_CLEAR_BELOW
		"dpstack monitor: the first rates come after one interval (q quits)" ESC_CLEAR_EOL;
	write_all(STDOUT_FILENO, on, sizeof(on) - 1);
}

static void mon_term_leave(struct mon_term *t)
{
	if (!t->screen)
		return;
	static const char off[] = ESC_CURSOR_SHOW ESC_ALT_SCREEN_OFF;
	write_all(STDOUT_FILENO, off, sizeof(off) - 1);
	if (t->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->screen = t->keys = false;
}

/* Draws the frame's lines from the top of the screen, each cut to the width and as many
 * as the height holds, so a small window shows the first rows instead of scrolling. */
static void mon_draw(const struct ctl_out *frame)
{
	struct winsize ws = {0};
	unsigned cols = 80, rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col != 0 && ws.ws_row != 0) {
		cols = ws.ws_col;
		rows = ws.ws_row;
	}
	struct ctl_out screen;
	ctl_out_init(&screen, false);
	ctl_printf(&screen, ESC_HOME);
	const char *p = frame->buf, *end = frame->buf + frame->len;
	for (unsigned row = 0; p < end && row < rows; row++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl != NULL ? nl : end) - p);
		ctl_printf(&screen, "%s%.*s" ESC_CLEAR_EOL, row == 0 ? "" : "\r\n",
			   (int)(len < cols ? len : cols), p);
		p = nl != NULL ? nl + 1 : end;
	}
	ctl_printf(&screen, ESC_CLEAR_BELOW);
	if (!screen.oom)
		write_all(STDOUT_FILENO, screen.buf, screen.len);
	ctl_out_fini(&screen);
}

/* Ctrl-Z: give the terminal back as it was, stop as SIGTSTP's default would, and take the
 * screen again once continued (fg), as top does. */
static void mon_suspend(struct mon_term *t, const struct ctl_out *last_frame)
{
	bool screen = t->screen;
	mon_term_leave(t);
	struct sigaction dfl = {.sa_handler = SIG_DFL}, ours = {.sa_handler = mon_on_signal};
	sigemptyset(&dfl.sa_mask);
	sigemptyset(&ours.sa_mask);
	sigaction(SIGTSTP, &dfl, NULL);
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	raise(SIGTSTP); /* pending while blocked: delivered, and we stop, at the unblock */
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	sigaction(SIGTSTP, &ours, NULL);
	if (!screen)
		return;
	mon_term_enter(t);
	if (last_frame->len != 0)
		mon_draw(last_frame);
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits until deadline (monotonic seconds), a key or a signal: true to go on, false to quit.
 * Signals are blocked but inside ppoll, so none slips between a check and the sleep. */
static bool mon_wait(struct mon_term *t, double deadline, const sigset_t *waitmask,
		     const struct ctl_out *last_frame)
{
	for (;;) {
		if (mon_quit_signal != 0)
			return false;
		if (mon_suspended) {
			mon_suspended = 0;
			mon_suspend(t, last_frame);
		}
		if (mon_resized) {
			mon_resized = 0;
			if (t->screen && last_frame->len != 0)
				mon_draw(last_frame);
		}
		double left = deadline - mono_now();
		if (left <= 0)
			return true;
		struct timespec ts = {.tv_sec = (time_t)left,
				      .tv_nsec = (long)((left - floor(left)) * 1e9)};
		struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
		int n = ppoll(&pfd, t->keys ? 1 : 0, &ts, waitmask);
		if (n <= 0)
			continue;
		if (pfd.revents & (POLLERR | POLLNVAL))
			return false; /* the terminal is gone: nobody is watching */
		char keys[64];
		ssize_t got = read(STDIN_FILENO, keys, sizeof(keys));
		if ((got == 0 && (pfd.revents & POLLHUP)) ||
		    (got < 0 && errno != EINTR && errno != EAGAIN))
			return false;
		for (ssize_t i = 0; i < got; i++)
			if (keys[i] == 'q' || keys[i] == 'Q')
				return false;
	}
}

static void mon_signals(sigset_t *waitmask)
{
	struct sigaction sa = {.sa_handler = mon_on_signal};
	sigemptyset(&sa.sa_mask);
	sigset_t block;
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(mon_sigs) / sizeof(mon_sigs[0]); i++) {
		sigaction(mon_sigs[i], &sa, NULL);
		sigaddset(&block, mon_sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, waitmask);
	for (size_t i = 0; i < sizeof(mon_sigs) / sizeof(mon_sigs[0]); i++)
		sigdelset(waitmask, mon_sigs[i]);
}

/* One interval's output: a JSON line, a redrawn screen, or (stdout not a terminal) the
 * tables one after another. */
static int mon_emit(const struct mon_args *a, const struct mon_term *t, const char *path,
		    const struct mon_view *v, struct ctl_out *frame)
{
	frame->len = 0;
	if (a->json)
		mon_show_json(frame, v);
	else
		mon_show_text(frame, v, path, a->interval_s);
	if (!t->screen && !a->json)
		ctl_printf(frame, "\n");
	if (frame->oom)
		return -1;
	if (t->screen && !a->json)
		mon_draw(frame);
	else
		write_all(STDOUT_FILENO, frame->buf, frame->len);
	return 0;
}

int monitor_main(const char *ctl_path, bool json, int argc, char **argv)
{
	struct mon_args a = {.json = json, .interval_s = 1.0};
	if (mon_parse_args(&a, argc, argv) != 0)
		return 2;
	char err[CTL_CLIENT_ERR_MAX];
	struct mon_snap prev, cur;
	if (mon_snap_take(&prev, ctl_path, err) != 0) {
		fprintf(stderr, "dpstackctl: monitor: %s\n", err);
		return 2;
	}
	sigset_t waitmask;
	mon_signals(&waitmask);
	struct mon_term term = {0};
	if (!a.json)
		mon_term_enter(&term);
	struct ctl_out frame;
	ctl_out_init(&frame, a.json);
	int rc = 0;
	double deadline = mono_now() + a.interval_s;
	for (uint64_t shown = 0; a.count == 0 || shown < a.count; shown++) {
		if (!mon_wait(&term, deadline, &waitmask, &frame))
			break;
		if (mon_snap_take(&cur, ctl_path, err) != 0) {
			rc = 2;
			break;
		}
		struct mon_view v;
		int vrc = mon_view_build(&v, &prev, &cur);
		mon_snap_free(&prev);
		prev = cur;
		if (vrc != 0 || mon_emit(&a, &term, ctl_path, &v, &frame) != 0) {
			snprintf(err, sizeof(err), "out of memory");
			rc = 2;
		}
		mon_view_free(&v);
		if (rc != 0)
			break;
		/* Keep the cadence; after a stall (a slow reply, a stopped terminal) start anew. */
		deadline += a.interval_s;
		if (deadline < mono_now())
			deadline = mono_now() + a.interval_s;
	}
	mon_term_leave(&term);
	ctl_out_fini(&frame);
	mon_snap_free(&prev);
	if (rc != 0)
		fprintf(stderr, "dpstackctl: monitor: lost dpstackd: %s\n", err);
	return rc;
}
