/* The state of one dpstackd: what the config set up (EAL, workers, ports), the running
 * workers, and the control thread's master copy of the network configuration. Owned and
 * changed only by the control (main) thread. */
#ifndef DPS_CTL_DAEMON_H
#define DPS_CTL_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "dp/port.h"
#include "dp/worker.h"
#include "stack/netcfg.h"
#include "chan/chan.h"
#include "acl/acl_table.h"
#include "flow/flow_table.h"
#include "acl/bypass_set.h"
#include "capture/capture.h"
#include "kernel_follow.h"
#include "kernel_sync.h"
#include "mem_trim.h"
#include "veth_offload.h"

#define DAEMON_MAX_EAL_ARGS 64
#define DAEMON_DEFAULT_MBUFS 16383          /* 2^n - 1 fills a mempool best */
#define DAEMON_DEFAULT_IDLE_SLEEP_US 200

struct svc_table;
struct chan;
struct cluster_mgr;
struct dhcp_run;
struct addrconf_run;

struct daemon {
	/* From the config's first part (before the ports start). */
	char *eal_argv[DAEMON_MAX_EAL_ARGS];
	int eal_argc;
	unsigned nb_workers;
	unsigned worker_lcores[WORKER_MAX];
	bool worker_lcores_given;        /* `workers LIST` rather than `workers N` */
	uint32_t idle_sleep_max_us;
	uint32_t nb_mbufs;
	/* What every worker's stack is made from (inet_params_default, then the sizes the
	 * config gives: `tcp-listeners`, `tcp-connections`, `routes`, `neighbours`,
	 * `reassembly-datagrams`, `reassembly-memory`); route_max sizes the master's table too. */
	struct stack_params stack_params;
	struct port ports[NETCFG_MAX_PORTS];
	unsigned nb_ports;
	struct chan_config chan_cfg;     /* the applications' segment layout */

	/* Running state. */
	struct steer steer;              /* which worker owns a flow (read-only once set) */
	struct rte_mempool *pool;
	/* A port's own RX pool, or NULL for the shared one: a cluster port's packet memory,
	 * which its consumers map (cmd_cluster.c). */
	struct rte_mempool *port_pool[NETCFG_MAX_PORTS];
	struct cluster_mgr *clusters;    /* `cluster` (src/cluster) */
	struct worker workers[WORKER_MAX];
	bool workers_running;
	struct netcfg master;
	/* Built-in services of worker i (src/svc), made by the first `service add`; each is
	 * used only on its worker's thread (cmd_service.c). */
	struct svc_table *svc[WORKER_MAX];
	struct chan *chan;               /* the application channel (src/chan) */
	struct acl_table acl;            /* the ACL rules (cmd_acl.c) */
	struct flow_table flow;          /* the flow rules (cmd_flow.c) */
	struct bypass_table bypass;      /* the bypass rules (cmd_bypass.c) */
	struct dhcp_run *dhcp;           /* the ports' DHCP clients (dhcp_run.h), or NULL */
	struct addrconf_run *addrconf;   /* IPv6 autoconfiguration (addrconf_run.h), or NULL */
	int sig_fd;                      /* readable when SIGINT/SIGTERM is pending */
	int client_fd;                   /* the control client being served, or -1 */
	bool client_kept;                /* the command keeps client_fd open (capture) */
	struct capture_registry captures; /* `capture` (cmd_capture.c) */
	struct mem_trim mem;             /* the heap given back after storms (mem_trim.h) */
	struct veth_offload_watch veth;  /* checksum drops from a veth peer (veth_offload.h) */
	struct kernel_sync sync;         /* `sync on`: the kernel's addresses and routes */
	struct kernel_follow follow;     /* the kernel interfaces' MTU and carrier */
	/* `dpstackd --check-config`: no EAL ports, workers or channel. Commands check their
	 * words and change the master tables (so later lines see earlier ones), nothing else:
	 * daemon_each_worker() has no workers to run on, and a handler that reads or changes
	 * a worker, port or the channel directly stops once its words are checked. */
	bool dry_run;
};

/* For long commands (ping): true when the daemon should stop or the client has gone, so the
 * command ends early and the control thread stays responsive. */
bool daemon_interrupted(const struct daemon *d);

/* Runs a configuration change: first fn_master on the master copy (which validates it), then,
 * only if that succeeded, fn_stack on every worker's stack, on the worker's own thread once
 * the workers run. Returns 0 or the -errno of the master. */
int daemon_apply(struct daemon *d, int (*fn_master)(struct netcfg *c, void *arg),
		 int (*fn_stack)(struct stack *s, void *arg), void *arg);

/* The common case of daemon_apply: a change of the netcfg tables alone, made by the same
 * function on the master copy and on every worker's copy. */
int daemon_apply_netcfg(struct daemon *d, int (*fn)(struct netcfg *c, void *arg), void *arg);

/* Runs fn on every worker (its own thread once running) and returns the first error. */
int daemon_each_worker(struct daemon *d, int (*fn)(struct stack *s, void *arg), void *arg);

#endif
