#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>

#include "dp/port_devargs.h"
#include "tcp/tcp.h"
#include "wire/ipv4.h"

#define CONFIG_MAX_LINE 4096

int config_split(char *line, char **argv, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p != '\0' && isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == max)
			return -1;
		argv[n++] = p;
		while (*p != '\0' && !isspace((unsigned char)*p) && *p != '#')
			p++;
		if (*p == '#') {
			*p = '\0';
			return n;
		}
		if (*p != '\0')
			*p++ = '\0';
	}
}

int config_error(struct config *cfg, unsigned lineno, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (lineno != 0)
		fprintf(cfg->errs, "%s%s:%u: %s\n", cfg->prefix, cfg->path, lineno, msg);
	else
		fprintf(cfg->errs, "%s%s: %s\n", cfg->prefix, cfg->path, msg);
	cfg->nb_errors++;
	return -1;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || *end != '\0' || errno != 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* `workers 2` is a count; a list of lcores has a ',' or a '-' ("1,3-4", or "3," for the
 * single lcore 3). */
static int parse_workers(struct daemon *d, const char *spec, struct config *cfg,
			 unsigned lineno)
{
	unsigned long v;
	if (strpbrk(spec, ",-") == NULL) {
		if (!parse_uint(spec, WORKER_MAX, &v) || v == 0)
			return config_error(cfg, lineno,
					   "workers: '%s' is not a count from 1 to %u", spec,
					   WORKER_MAX);
		d->nb_workers = (unsigned)v;
		d->worker_lcores_given = false;
		return 0;
	}
	char buf[256];
	if (strlen(spec) >= sizeof(buf))
		return config_error(cfg, lineno, "workers: list too long");
	strcpy(buf, spec);
	unsigned n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long lo, hi;
		char *dash = strchr(tok, '-');
		if (dash != NULL)
			*dash = '\0';
		if (!parse_uint(tok, RTE_MAX_LCORE - 1, &lo) ||
		    (dash != NULL ? !parse_uint(dash + 1, RTE_MAX_LCORE - 1, &hi) : (hi = lo, 0)) ||
		    hi < lo)
			return config_error(cfg, lineno, "workers: bad lcore list '%s'",
					   spec);
		for (unsigned long c = lo; c <= hi; c++) {
			if (n == WORKER_MAX)
				return config_error(cfg, lineno, "workers: more than %u",
						   WORKER_MAX);
			for (unsigned k = 0; k < n; k++)
				if (d->worker_lcores[k] == c)
					return config_error(cfg, lineno,
							   "workers: lcore %lu listed twice", c);
			d->worker_lcores[n++] = (unsigned)c;
		}
	}
	d->nb_workers = n;
	d->worker_lcores_given = true;
	return 0;
}

static bool port_name_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= NETCFG_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

bool config_kernel_ifname_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= IF_NAMESIZE || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] <= ' ' || name[i] == '/' || name[i] == ':' || name[i] == ',' ||
		    name[i] == '=' || name[i] == 0x7f)
			return false;
	return true;
}

static int config_port_add(struct daemon *d, int argc, char **argv, struct config *cfg,
			   unsigned lineno)
{
	if (argc != 4 && !(argc == 6 && strcmp(argv[4], "kernel") == 0))
		return config_error(cfg, lineno, "usage: port add NAME DEVICE [kernel IFNAME]");
	const char *kernel_if = argc == 6 ? argv[5] : "";
	if (argc == 6 && !config_kernel_ifname_valid(kernel_if))
		return config_error(cfg, lineno,
				   "kernel interface name '%s': use 1-%d characters, none of "
				   "'/', ':', ',', '=' or white space", kernel_if, IF_NAMESIZE - 1);
	if (!port_name_valid(argv[2]))
		return config_error(cfg, lineno,
				   "port name '%s': use 1-%d letters, digits, '_', '-' or '.'",
				   argv[2], NETCFG_NAME_LEN - 1);
	if (strlen(argv[3]) >= PORT_DEVARGS_LEN)
		return config_error(cfg, lineno, "device string too long");
	if (d->nb_ports == NETCFG_MAX_PORTS)
		return config_error(cfg, lineno, "more than %d ports", NETCFG_MAX_PORTS);
	for (unsigned i = 0; i < d->nb_ports; i++) {
		if (strcmp(d->ports[i].name, argv[2]) == 0)
			return config_error(cfg, lineno, "port '%s' defined twice", argv[2]);
		size_t a = strcspn(d->ports[i].devargs, ","), b = strcspn(argv[3], ",");
		if (a == b && strncmp(d->ports[i].devargs, argv[3], a) == 0)
			return config_error(cfg, lineno, "device '%.*s' used twice", (int)b,
					   argv[3]);
		if (kernel_if[0] != '\0' && strcmp(d->ports[i].kernel.ifname, kernel_if) == 0)
			return config_error(cfg, lineno, "kernel interface '%s' used twice",
					   kernel_if);
	}
	cfg->port_lines[d->nb_ports] = lineno;
	struct port *p = &d->ports[d->nb_ports++];
	strcpy(p->name, argv[2]);
	strcpy(p->devargs, argv[3]);
	strcpy(p->kernel.ifname, kernel_if);
	return 0;
}

/* A ring pair's device strings have no arguments but peer= (its rings are dpstackd's). */
static bool ring_devargs_plain(const char *devargs)
{
	const char *c = strchr(devargs, ',');
	return c == NULL || (strncmp(c, ",peer=", 6) == 0 && strchr(c + 1, ',') == NULL);
}

/* `port add b net_ring1,peer=a`: ports a and b (both net_ring) joined by a ring pair
 * (src/dp/port_ring.h). The peer may be defined before or after, and may name b back. */
static void config_ring_pairs(struct daemon *d, struct config *cfg)
{
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct port *p = &d->ports[i];
		char peer[NETCFG_NAME_LEN];
		if (!port_devargs_value(p->devargs, "peer", peer, sizeof(peer)))
			continue;
		unsigned lineno = cfg->port_lines[i], k = 0;
		while (k < d->nb_ports && strcmp(d->ports[k].name, peer) != 0)
			k++;
		struct port *q = k < d->nb_ports ? &d->ports[k] : NULL;
		if (p->ring_paired && p->ring_peer == k)
			continue;
		if (!port_devargs_driver_is(p->devargs, "net_ring"))
			config_error(cfg, lineno, "port %s: peer= joins two net_ring ports only",
				     p->name);
		else if (q == NULL || q == p || !port_devargs_driver_is(q->devargs, "net_ring"))
			config_error(cfg, lineno, "port %s: peer '%s' is not another net_ring "
						  "port of this config", p->name, peer);
		else if (p->ring_paired || q->ring_paired)
			config_error(cfg, lineno, "port %s: %s is already in a ring pair",
				     p->name, p->ring_paired ? p->name : q->name);
		else if (!ring_devargs_plain(p->devargs) || !ring_devargs_plain(q->devargs))
			config_error(cfg, lineno, "port %s: a ring pair takes no other device "
						  "arguments: 'net_ringN,peer=NAME' and 'net_ringM'",
				     p->name);
		else {
			p->ring_paired = q->ring_paired = true;
			p->ring_peer = (uint16_t)k;
			q->ring_peer = (uint16_t)i;
		}
	}
}

/* The start-up directives that take one number: where it goes in struct daemon. */
static const struct {
	const char *name;
	const char *unit;               /* "is not UNIT from MIN to MAX" */
	unsigned long min, max;
	size_t offset;                  /* of a uint32_t */
} config_numbers[] = {
	{"mbufs", "a count", 1024, 1u << 24, offsetof(struct daemon, nb_mbufs)},
	{"idle-sleep-us", "microseconds", 0, 1000000, offsetof(struct daemon, idle_sleep_max_us)},
	{"tcp-listeners", "a count", 1, TCP_LISTEN_MAX_LIMIT,
	 offsetof(struct daemon, tcp_listen_max)},
	{"routes", "a count", ROUTE_MAX_MIN, ROUTE_MAX_LIMIT, offsetof(struct daemon, route_max)},
};

#define CONFIG_NUMBERS (sizeof(config_numbers) / sizeof(config_numbers[0]))

static int config_number(const char *kw)
{
	for (size_t i = 0; i < CONFIG_NUMBERS; i++)
		if (strcmp(kw, config_numbers[i].name) == 0)
			return (int)i;
	return -1;
}

/* A start-up directive: returns 1 when the line was one (-1 when it was a wrong one,
 * reported), 0 when it is a command. */
static int config_directive(struct daemon *d, int argc, char **argv, struct config *cfg,
			    unsigned lineno)
{
	const char *kw = argv[0];
	bool is_port_add = strcmp(kw, "port") == 0 && argc >= 2 && strcmp(argv[1], "add") == 0;
	int number = config_number(kw);
	bool directive = is_port_add || strcmp(kw, "eal") == 0 || strcmp(kw, "workers") == 0 ||
			 number >= 0;
	if (!directive)
		return 0;
	if (cfg->nb_cmds != 0)
		return config_error(cfg, lineno,
				   "'%s' must come before the first command", kw);
	unsigned long v;
	if (is_port_add)
		return config_port_add(d, argc, argv, cfg, lineno) == 0 ? 1 : -1;
	if (strcmp(kw, "eal") == 0) {
		if (cfg->eal_line != 0)
			return config_error(cfg, lineno, "'eal' given twice (first on line %u)",
					    cfg->eal_line);
		cfg->eal_line = lineno;
		if (argc - 1 > DAEMON_MAX_EAL_ARGS - 16)
			return config_error(cfg, lineno, "too many EAL arguments");
		for (int i = 1; i < argc; i++)
			if ((d->eal_argv[d->eal_argc++] = strdup(argv[i])) == NULL)
				return config_error(cfg, lineno, "out of memory");
		return 1;
	}
	if (argc != 2)
		return config_error(cfg, lineno, "usage: %s VALUE", kw);
	if (strcmp(kw, "workers") == 0) {
		cfg->workers_line = lineno;
		return parse_workers(d, argv[1], cfg, lineno) == 0 ? 1 : -1;
	}
	if (strcmp(kw, "mbufs") == 0)
		cfg->mbufs_line = lineno;
	unsigned long min = config_numbers[number].min, max = config_numbers[number].max;
	if (!parse_uint(argv[1], max, &v) || v < min)
		return config_error(cfg, lineno, "%s: '%s' is not %s from %lu to %lu", kw,
				   argv[1], config_numbers[number].unit, min, max);
	*(uint32_t *)((char *)d + config_numbers[number].offset) = (uint32_t)v;
	return 1;
}

void config_defaults(struct daemon *d)
{
	d->nb_workers = 1;
	d->nb_mbufs = DAEMON_DEFAULT_MBUFS;
	d->idle_sleep_max_us = DAEMON_DEFAULT_IDLE_SLEEP_US;
	d->tcp_listen_max = TCP_LISTEN_MAX_DEFAULT;
	d->route_max = ROUTE_MAX_DEFAULT;
	d->chan_cfg = (struct chan_config){.max_socks = CHAN_MAX_SOCKS_DEFAULT};
	kernel_sync_init(&d->sync);
	kernel_follow_init(&d->follow);
}

int config_load(const char *path, struct daemon *d, struct config *cfg, FILE *errs,
		const char *prefix)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->path = path;
	cfg->errs = errs;
	cfg->prefix = prefix;
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return config_error(cfg, 0, "cannot open: %s", strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	unsigned lineno = 0;
	/* Every line is checked, so that one run names every mistake. */
	while ((got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (got > CONFIG_MAX_LINE) {
			config_error(cfg, lineno, "line longer than %d bytes", CONFIG_MAX_LINE);
			continue;
		}
		if (strlen(line) != (size_t)got) {
			config_error(cfg, lineno, "NUL byte in line");
			continue;
		}
		char *argv[CONFIG_MAX_WORDS];
		int argc = config_split(line, argv, CONFIG_MAX_WORDS);
		if (argc < 0) {
			config_error(cfg, lineno, "more than %d words", CONFIG_MAX_WORDS);
			continue;
		}
		if (argc == 0 || config_directive(d, argc, argv, cfg, lineno) != 0)
			continue;
		/* Room doubles at each power of two: a file of 10,000 acl lines once took minutes
		 * under ASan, whose realloc copies every time. */
		size_t n = cfg->nb_cmds;
		if ((n & (n - 1)) == 0) {
			struct config_cmd *cmds = realloc(cfg->cmds, (n ? 2 * n : 1) * sizeof(*cmds));
			if (cmds == NULL) {
				config_error(cfg, lineno, "out of memory");
				break;
			}
			cfg->cmds = cmds;
		}
		struct config_cmd *c = &cfg->cmds[cfg->nb_cmds++];
		memset(c, 0, sizeof(*c));
		c->lineno = lineno;
		for (int i = 0; i < argc; i++) {
			if ((c->argv[i] = strdup(argv[i])) == NULL) {
				config_error(cfg, lineno, "out of memory");
				break;
			}
			c->argc = i + 1;
		}
	}
	if (ferror(f))
		config_error(cfg, lineno, "read error");
	free(line);
	fclose(f);
	if (d->nb_ports == 0)
		config_error(cfg, 0, "no 'port add NAME DEVICE' line: nothing to run on");
	config_ring_pairs(d, cfg);
	return cfg->nb_errors == 0 ? 0 : -1;
}

void config_free(struct config *cfg, struct daemon *d)
{
	for (size_t i = 0; i < cfg->nb_cmds; i++)
		for (int k = 0; k < cfg->cmds[i].argc; k++)
			free(cfg->cmds[i].argv[k]);
	free(cfg->cmds);
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < d->eal_argc; i++)
		free(d->eal_argv[i]);
	d->eal_argc = 0;
}
