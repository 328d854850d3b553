#include "config_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "cmd.h"
#include "eal_args.h"
#include "startup_check.h"

int config_run_commands(struct daemon *d, struct config *cfg, bool keep_going)
{
	int rc = 0;
	for (size_t i = 0; i < cfg->nb_cmds && (rc == 0 || keep_going); i++) {
		const struct config_cmd *c = &cfg->cmds[i];
		struct ctl_out out;
		ctl_out_init(&out, false);
		if (cmd_exec(d, c->argc, (char **)c->argv, &out) != 0) {
			config_error(cfg, c->lineno, "%.*s", (int)out.len, out.buf ? out.buf : "");
			rc = -1;
		}
		ctl_out_fini(&out);
	}
	/* The file's ACL rules, built into one set now that all are in (cmd_acl.c). */
	if (rc == 0 || keep_going) {
		struct ctl_out out;
		ctl_out_init(&out, false);
		if (cmd_acl_start(d, &out) != 0) {
			config_error(cfg, 0, "%.*s", (int)out.len, out.buf ? out.buf : "");
			rc = -1;
		}
		ctl_out_fini(&out);
	}
	return rc;
}

/* The least EAL that the commands' dry runs need (the master tables in DPDK memory): no
 * hugepages, no shared config or files, no devices, one lcore, quiet. */
static int check_eal_init(const struct eal_host *h)
{
	char lcores[32];
	snprintf(lcores, sizeof(lcores), "--lcores=0@%u", h->nb_cpus > 0 ? h->cpus[0] : 0);
	char *argv[] = {"dpstackd", "--no-huge", "-m", "128", "--no-shconf", "--no-pci",
			"--no-telemetry", lcores, "--log-level=*:error", NULL};
	return rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
}

/* The master table holds the ports by name, as the running daemon's does once they start. */
static int check_master_init(struct daemon *d)
{
	int rc = netcfg_init(&d->master, d->route_max);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct eth_addr mac = {.b = {0x02, 0, 0, 0, 0, (uint8_t)(i + 1)}};
		netcfg_iface_add(&d->master, (uint16_t)i, d->ports[i].name, &mac, RTE_ETHER_MTU);
	}
	return 0;
}

struct error_line {
	unsigned lineno;                /* 0: of the whole file */
	size_t order;                   /* as reported, for a stable sort */
	const char *text;
	size_t len;
};

static int error_line_cmp(const void *a, const void *b)
{
	const struct error_line *x = a, *y = b;
	if (x->lineno != y->lineno)
		return x->lineno < y->lineno ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

/* The errors come from three passes (the lines, this machine, the commands); a reader wants
 * them in the file's order, as a compiler gives them. Each is "PATH:LINE: ..." or "PATH: ...". */
static void print_in_line_order(const char *buf, size_t len, const char *path, FILE *to)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	struct error_line *lines = calloc(n, sizeof(*lines));
	if (lines == NULL) {
		fwrite(buf, 1, len, to);
		return;
	}
	size_t plen = strlen(path), k = 0;
	for (const char *p = buf, *end; k < n; p = end + 1, k++) {
		end = memchr(p, '\n', len - (size_t)(p - buf));
		lines[k] = (struct error_line){.order = k, .text = p, .len = (size_t)(end - p) + 1};
		if ((size_t)(end - p) > plen + 1 && p[plen] == ':')
			lines[k].lineno = (unsigned)strtoul(p + plen + 1, NULL, 10);
	}
	qsort(lines, n, sizeof(*lines), error_line_cmp);
	for (k = 0; k < n; k++)
		fwrite(lines[k].text, 1, lines[k].len, to);
	free(lines);
}

int config_check(const char *path)
{
	static struct daemon d;
	config_defaults(&d);
	d.dry_run = true;
	struct config cfg;
	struct eal_host host;
	eal_host_read(&host);
	char *errors = NULL;
	size_t errors_len = 0;
	FILE *errs = open_memstream(&errors, &errors_len);
	config_load(path, &d, &cfg, errs != NULL ? errs : stderr, "");
	if (d.nb_ports > 0)
		startup_check(&d, &host, &cfg);
	if (cfg.nb_cmds > 0) {
		if (check_eal_init(&host) < 0) {
			config_error(&cfg, 0, "cannot check the commands: EAL init failed: %s",
				     rte_strerror(rte_errno));
		} else {
			if (check_master_init(&d) != 0)
				config_error(&cfg, 0, "cannot check the commands: route table: %s",
					     rte_strerror(rte_errno));
			else
				config_run_commands(&d, &cfg, true);
			cmd_acl_fini(&d);
			cmd_flow_fini(&d);
			netcfg_fini(&d.master);
			rte_eal_cleanup();
		}
	}
	if (errs != NULL) {
		fclose(errs);
		print_in_line_order(errors, errors_len, path, stderr);
		free(errors);
	}
	int rc = cfg.nb_errors == 0 ? 0 : -1;
	if (rc == 0)
		printf("%s: ok: %u port(s), %u worker(s), %zu command(s)\n", path, d.nb_ports,
		       d.nb_workers, cfg.nb_cmds);
	else
		fprintf(stderr, "%s: %u error(s)\n", path, cfg.nb_errors);
	config_free(&cfg, &d);
	return rc;
}
