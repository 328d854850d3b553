/* dpstackd: owns the DPDK ports, runs one stack per worker lcore, serves dpstackctl. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <dpstack/ctl.h>

#include "ctl/cmd.h"
#include "ctl/cmd_cluster.h"
#include "ctl/config.h"
#include "ctl/config_check.h"
#include "ctl/ctl_server.h"
#include "ctl/daemon.h"
#include "ctl/addrconf_run.h"
#include "ctl/dhcp_run.h"
#include "ctl/eal_args.h"
#include "ctl/startup_check.h"
#include "chan/chan.h"
#include "dp/port_ring.h"
#include "inet/inet.h"
#include "l2/neigh.h"
#include "stack/reass.h"
#include "tcp/tcp.h"


static void usage(FILE *f)
{
	struct stack_params defaults;
	inet_params_default(&defaults);
	fprintf(f,
		"Usage: dpstackd -c FILE [options]\n"
		"       dpstackd --check-config FILE\n"
		"\n"
		"Runs the dpstack userspace TCP/IP stack on the DPDK ports named in FILE.\n"
		"\n"
		"Options:\n"
		"  -c, --config FILE   the configuration file (required)\n"
		"  --check-config FILE check FILE without starting: every line with the\n"
		"                      daemon's own grammar, the commands as dry runs, and\n"
		"                      whether this machine can run it (CPUs, memory, mbufs);\n"
		"                      each error as FILE:LINE: reason; exit 0 when it is good\n"
		"  -h, --help          print this help and exit\n"
		"  -V, --version       print the version and exit\n"
		"\n"
		"Config file lines ('#' starts a comment), in this order:\n"
		"  eal ARGS...              EAL arguments, once. dpstackd adds what they leave\n"
		"                           open: --no-pci unless a port is a PCI device,\n"
		"                           --lcores for the workers, --vdev/-a for the ports,\n"
		"                           --in-memory with %u free hugepages or else --no-huge,\n"
		"                           -m %u without hugepages, and --no-shconf without\n"
		"                           hugepages or --file-prefix\n"
		"  workers N | CPUS         N workers, each alone on one of the CPUs this process\n"
		"                           may use, or on the listed CPUs (0,1 or 1,3-4); the\n"
		"                           control thread takes a CPU left over, else shares\n"
		"                           the first worker's (it sleeps but for commands)\n"
		"  port add NAME DEVICE [kernel IFNAME]\n"
		"                           a port: a vdev string (net_af_xdp0,iface=veth0,\n"
		"                           net_memif0,role=server,...) or a PCI address;\n"
		"                           net_ringN,peer=OTHER joins two net_ring ports of\n"
		"                           this daemon by a ring pair; with kernel IFNAME, a\n"
		"                           Linux interface IFNAME with the port's MAC gets\n"
		"                           what the stack does not own (other EtherTypes and\n"
		"                           IP protocols, TCP/UDP ports without a socket,\n"
		"                           bypass rules) and sends by it\n"
		"  mbufs N                  packet buffers in the pool (default %d)\n"
		"  idle-sleep-us N          longest nap of an idle worker, 0 = busy poll\n"
		"                           (default %d; ten times that after 100 ms without\n"
		"                           work; applications wake a napping worker at once)\n"
		"  tcp-listeners N          entries of each worker's TCP listener table, one per\n"
		"                           address listened on (default %u, at most %u; a\n"
		"                           listen beyond: ENOBUFS, tcp.listen_table_full);\n"
		"                           listeners-per-user defaults to 1/%u of it\n"
		"  routes N                 routes of both families each route table holds (the\n"
		"                           control thread's and each worker's; default %u,\n"
		"                           from %u to %u; about 80 bytes a route; an add beyond:\n"
		"                           'No space left on device')\n"
		"  tcp-connections N        entries of each worker's TCP connection table, one per\n"
		"                           connection, TIME-WAIT included (default %u, from %u\n"
		"                           to %u; beyond: SYN dropped, connect ENOBUFS,\n"
		"                           tcp.conn_table_full)\n"
		"  neighbours N             entries of each worker's neighbour table, ARP and\n"
		"                           NDP (default %u, from %u to %u; beyond: the packet\n"
		"                           dropped, neigh.table_full)\n"
		"  reassembly-datagrams N   datagrams each family's reassembly table holds in\n"
		"                           progress, per worker (default %u, from 1 to %u)\n"
		"  reassembly-memory BYTES  fragment memory each family's reassembly table holds\n"
		"                           per worker (default %u, from %u to %u)\n"
		"  then any dpstackctl command, e.g.\n"
		"    ip addr add 10.0.0.2/24 dev port0\n"
		"    ip route add default via 10.0.0.1\n"
		"    service add http tcp 80      (built-in services: echo, discard,\n"
		"                                  chargen, http, iperf3; see 'dpstackctl help')\n"
		"    sync on                      (mirror the addresses and routes of the\n"
		"                                  ports' kernel interfaces into the stack)\n"
		"    acl add deny proto tcp dport 23\n"
		"                                 (ACL rules: built into one set once the file\n"
		"                                  has run; grammar in 'dpstackctl help')\n"
		"    apps limits socks-per-app 4096 listeners-per-user 64\n"
		"                                 (what one application or user may take:\n"
		"                                  apps-per-user, socks-per-app, socks-per-user,\n"
		"                                  listeners-per-user, arena-mb-per-app,\n"
		"                                  arena-mb-per-user, binds-per-app; root is\n"
		"                                  exempt from per-user limits; 'dpstackctl\n"
		"                                  apps limits' shows them)\n"
		"\n"
		"A config (runs on a 2-CPU machine, with or without hugepages):\n"
		"  eal --no-huge -m 512           # optional: dpstackd picks memory options\n"
		"  workers 2                      # or: workers 0,1\n"
		"  port add port0 net_af_xdp0,iface=veth0\n"
		"  ip addr add 10.0.0.2/24 dev port0\n"
		"  ip route add default via 10.0.0.1\n"
		"\n"
		"Environment:\n"
		"  " DPSTACK_CTL_ENV "   control socket (default " DPSTACK_CTL_DEFAULT ")\n"
		"  " DPSTACK_SOCK_ENV "  application socket (default " DPSTACK_SOCK_DEFAULT ")\n"
		"\n"
		"SIGINT or SIGTERM stops the daemon cleanly.\n",
		EAL_MIN_FREE_HUGEPAGES, EAL_NO_HUGE_MB, DAEMON_DEFAULT_MBUFS,
		DAEMON_DEFAULT_IDLE_SLEEP_US, TCP_LISTEN_MAX_DEFAULT, TCP_LISTEN_MAX_LIMIT,
		CHAN_LISTENERS_PER_USER_SHARE, ROUTE_MAX_DEFAULT, ROUTE_MAX_MIN, ROUTE_MAX_LIMIT,
		TCP_CONN_MAX_DEFAULT, TCP_CONN_MAX_MIN, TCP_CONN_MAX_LIMIT, defaults.neigh.max_entries,
		NEIGH_MAX_ENTRIES_MIN, NEIGH_MAX_ENTRIES_LIMIT, defaults.reass.max_datagrams,
		REASS_MAX_DATAGRAMS_LIMIT, defaults.reass.max_bytes, REASS_MAX_BYTES_MIN,
		REASS_MAX_BYTES_LIMIT);
}

/* The lcores the workers run on: the config's list, or every worker lcore of the EAL. */
static int pick_worker_lcores(struct daemon *d)
{
	if (d->worker_lcores_given) {
		for (unsigned i = 0; i < d->nb_workers; i++) {
			unsigned l = d->worker_lcores[i];
			if (!rte_lcore_is_enabled(l) || l == rte_get_main_lcore()) {
				fprintf(stderr, "dpstackd: worker lcore %u is not a worker lcore of "
						"the EAL\n", l);
				return -1;
			}
		}
		return 0;
	}
	unsigned n = 0, l;
	RTE_LCORE_FOREACH_WORKER(l) {
		if (n < d->nb_workers)
			d->worker_lcores[n++] = l;
	}
	if (n < d->nb_workers) {
		fprintf(stderr, "dpstackd: %u workers wanted but the EAL has %u worker lcores\n",
			d->nb_workers, n);
		return -1;
	}
	return 0;
}

static int start_dataplane(struct daemon *d, const struct config *cfg)
{
	char err[256];
	steer_init(&d->steer, d->nb_workers);
	d->pool = port_pool_create("mbufs", d->nb_mbufs, 256, (int)rte_socket_id());
	if (d->pool == NULL) {
		fprintf(stderr, "dpstackd: mbuf pool: %s\n", rte_strerror(rte_errno));
		if (rte_errno == ENOMEM)
			startup_memory_hint(d);
		return -1;
	}
	int rc = netcfg_init(&d->master, d->stack_params.route_max);
	if (rc < 0) {
		fprintf(stderr, "dpstackd: route table: %s\n", strerror(-rc));
		if (rc == -ENOMEM)
			startup_memory_hint(d);
		return -1;
	}
	if (cmd_cluster_start(d, cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "dpstackd: %s\n", err);
		return -1;
	}
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct port *p = &d->ports[i];
		if (p->ring_paired && p->ring_peer > i &&
		    port_ring_pair_create(p, &d->ports[p->ring_peer], d->nb_workers, err,
					  sizeof(err)) != 0) {
			fprintf(stderr, "dpstackd: %s\n", err);
			return -1;
		}
	}
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct port *p = &d->ports[i];
		struct rte_mempool *rx_pool = d->port_pool[i] != NULL ? d->port_pool[i] : d->pool;
		if (port_start(p, (uint16_t)d->nb_workers, rx_pool, &d->steer, err,
			       sizeof(err)) != 0) {
			fprintf(stderr, "dpstackd: port %s: %s\n", p->name, err);
			return -1;
		}
		if (p->kernel.ifname[0] != '\0' &&
		    exception_if_start(&p->kernel, i, &p->mac, (uint16_t)d->nb_workers, d->pool,
				       err, sizeof(err)) != 0) {
			fprintf(stderr, "dpstackd: port %s: %s\n", p->name, err);
			return -1;
		}
		struct eth_addr mac;
		memcpy(mac.b, p->mac.addr_bytes, ETH_ADDR_LEN);
		netcfg_iface_add(&d->master, (uint16_t)i, p->name, &mac, p->mtu);
	}
	for (unsigned w = 0; w < d->nb_workers; w++) {
		rc = worker_init(&d->workers[w], w, d->worker_lcores[w], d->ports, d->nb_ports,
				 d->pool, d->idle_sleep_max_us, &d->steer, &d->stack_params);
		if (rc != 0) {
			fprintf(stderr, "dpstackd: worker %u: %s\n", w, strerror(-rc));
			if (rc == -ENOMEM)
				startup_memory_hint(d);
			return -1;
		}
		struct stack *s = d->workers[w].stack;
		for (uint16_t p = 0; p < d->nb_ports; p++) {
			const struct netcfg_iface *i = &d->master.ifaces[p];
			netcfg_iface_add(&s->cfg, p, i->name, &i->mac, i->mtu);
		}
	}
	for (unsigned w = 0; w < d->nb_workers; w++)
		worker_set_peers(&d->workers[w], d->workers, d->nb_workers);
	rc = addrconf_run_init(d);
	if (rc != 0) {
		fprintf(stderr, "dpstackd: IPv6 autoconfiguration: %s\n", strerror(-rc));
		return -1;
	}
	const char *app_path = getenv(DPSTACK_SOCK_ENV);
	if (app_path == NULL || app_path[0] == '\0')
		app_path = DPSTACK_SOCK_DEFAULT;
	d->chan = chan_create(&d->chan_cfg, d->workers, d->nb_workers, app_path, err, sizeof(err));
	if (d->chan == NULL) {
		fprintf(stderr, "dpstackd: %s\n", err);
		return -1;
	}
	for (unsigned w = 0; w < d->nb_workers; w++) {
		rc = rte_eal_remote_launch(worker_main, &d->workers[w], d->workers[w].lcore);
		if (rc != 0) {
			fprintf(stderr, "dpstackd: launch worker %u: %s\n", w, strerror(-rc));
			return -1;
		}
	}
	d->workers_running = true;
	if (cmd_cluster_listen(d, err, sizeof(err)) != 0) {
		fprintf(stderr, "dpstackd: %s\n", err);
		return -1;
	}
	rc = chan_start(d->chan);
	if (rc != 0) {
		fprintf(stderr, "dpstackd: channel thread: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

static void stop_dataplane(struct daemon *d)
{
	/* Leases are released (RFC 2131 §4.4.6) through the workers, which must still run. */
	dhcp_run_fini(d);
	addrconf_run_fini(d);
	kernel_sync_stop(d);
	/* Captures take themselves out of the workers, which must still run. */
	cmd_capture_fini(d);
	/* Services close their sockets on their workers' threads while those still run. */
	cmd_service_fini(d);
	/* Consumers' frames are reclaimed by their workers, so before those stop. */
	cmd_cluster_stop(d);
	/* Applications' sockets are closed by their workers, so before those stop. */
	chan_stop(d->chan);
	if (d->workers_running) {
		for (unsigned w = 0; w < d->nb_workers; w++)
			atomic_store(&d->workers[w].stop, true);
		rte_eal_mp_wait_lcore();
		d->workers_running = false;
	}
	for (unsigned w = 0; w < d->nb_workers; w++)
		worker_fini(&d->workers[w]);
	cmd_acl_fini(d);
	cmd_flow_fini(d); /* before the ports stop: their hardware rules go first */
	cmd_bypass_fini(d);
	/* After the stacks: connections still finishing held FIFOs in applications' segments. */
	chan_destroy(d->chan);
	d->chan = NULL;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		exception_if_stop(&d->ports[i].kernel);
		port_stop(&d->ports[i]);
	}
	cmd_cluster_free(d);
	netcfg_fini(&d->master);
	rte_mempool_free(d->pool);
	d->pool = NULL;
}

/* The control thread: serve dpstackctl until SIGINT or SIGTERM. */
static void serve(struct daemon *d, int ctl_fd, int sig_fd)
{
	/* The control socket, signals, the kernel sync's netlink socket, the DHCP clients'
	 * doorbell (dhcp_run_poll reads what it rang at the loop's top), the workers' IPv6
	 * autoconfiguration news (likewise). */
	struct pollfd fds[5] = {{.fd = ctl_fd, .events = POLLIN}, {.fd = sig_fd, .events = POLLIN},
				{.events = POLLIN}, {.events = POLLIN}, {.events = POLLIN}};
	for (;;) {
		mem_trim_tick(&d->mem, d);
		veth_offload_tick(&d->veth, d);
		kernel_follow_tick(d);
		dhcp_run_poll(d);
		addrconf_run_poll(d);
		fds[2].fd = d->sync.fd; /* -1 while sync is off: poll skips it */
		fds[2].revents = 0;
		fds[3].fd = dhcp_run_fd(d); /* -1 without a DHCP client */
		fds[4].fd = addrconf_run_fd(d);
		int wait_ms = addrconf_run_timeout_ms(d, dhcp_run_timeout_ms(d, MEM_TRIM_INTERVAL_MS));
		if (poll(fds, 5, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			perror("dpstackd: poll");
			return;
		}
		if (fds[1].revents != 0) {
			struct signalfd_siginfo si;
			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				fprintf(stderr, "dpstackd: signal %u, stopping\n", si.ssi_signo);
			return;
		}
		if (fds[2].revents != 0)
			kernel_sync_input(d);
		if (fds[0].revents & POLLIN)
			ctl_server_serve_one(d, ctl_fd);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check-config", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	mem_trim_setup();
	const char *config_path = NULL, *check_path = NULL;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'C':
			check_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dpstackd " DPSTACK_VERSION "\n");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((config_path == NULL) == (check_path == NULL) || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (check_path != NULL)
		return config_check(check_path) == 0 ? 0 : 1;

	static struct daemon d;
	config_defaults(&d);
	struct config cfg;
	char err[512];
	struct eal_host host;
	eal_host_read(&host);
	if (config_load(config_path, &d, &cfg, stderr, "dpstackd: ") != 0 ||
	    startup_check(&d, &host, &cfg) != 0) {
		config_free(&cfg, &d);
		return 1;
	}

	/* Signals are read through a signalfd by the control loop; block them before the EAL
	 * starts threads so that every thread inherits the mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	char *eal_argv[DAEMON_MAX_EAL_ARGS + 1];
	static char eal_store[8192];
	int eal_argc = eal_args_build(&d, &host, eal_argv, eal_store, sizeof(eal_store), err,
				      sizeof(err));
	if (eal_argc < 0) {
		fprintf(stderr, "dpstackd: %s\n", err);
		config_free(&cfg, &d);
		return 1;
	}
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		startup_eal_failed(&d, eal_argc, eal_argv);
		config_free(&cfg, &d);
		return 1;
	}
	int status = 1;
	int ctl_fd = -1;
	const char *ctl_path = getenv(DPSTACK_CTL_ENV);
	if (ctl_path == NULL || ctl_path[0] == '\0')
		ctl_path = DPSTACK_CTL_DEFAULT;
	int sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);
	d.sig_fd = sig_fd;
	d.client_fd = -1;
	/* Claim the control socket first: a second daemon on the same path must stop before
	 * it touches any port. Clients that connect meanwhile wait until serve() answers. */
	ctl_fd = ctl_server_open(ctl_path, err, sizeof(err));
	if (ctl_fd < 0) {
		fprintf(stderr, "dpstackd: %s\n", err);
		goto out;
	}
	if (sig_fd < 0 || pick_worker_lcores(&d) != 0 || start_dataplane(&d, &cfg) != 0)
		goto out;
	veth_offload_check_ports(&d.veth, &d);
	if (config_run_commands(&d, &cfg, false) != 0)
		goto out;
	fprintf(stderr, "dpstackd: running with %u worker(s) and %u port(s); control socket %s\n",
		d.nb_workers, d.nb_ports, ctl_path);
	serve(&d, ctl_fd, sig_fd);
	status = 0;
out:
	ctl_server_close(ctl_fd, ctl_path);
	stop_dataplane(&d);
	if (sig_fd >= 0)
		close(sig_fd);
	config_free(&cfg, &d);
	rte_eal_cleanup();
	return status;
}
