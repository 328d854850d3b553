#include "config_check.h"

#include <stdio.h>
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
	return rc;
}

/* The least EAL that gives the master route table (rte_lpm) its memory: no hugepages, no
 * shared config or files, no devices, one lcore, quiet. */
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
	int rc = netcfg_init(&d->master, "routes_master", SOCKET_ID_ANY);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct eth_addr mac = {.b = {0x02, 0, 0, 0, 0, (uint8_t)(i + 1)}};
		netcfg_iface_add(&d->master, (uint16_t)i, d->ports[i].name, &mac, RTE_ETHER_MTU);
	}
	return 0;
}

int config_check(const char *path)
{
	static struct daemon d;
	daemon_defaults(&d);
	d.dry_run = true;
	struct config cfg;
	struct eal_host host;
	eal_host_read(&host);
	config_load(path, &d, &cfg, stderr, "");
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
			netcfg_fini(&d.master);
			rte_eal_cleanup();
		}
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
