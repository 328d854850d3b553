/* link set PORT kernel IFNAME: a kernel interface for a running port (src/dp/exception.h),
 * as `port add NAME DEVICE kernel IFNAME` gives one at start. DPDK makes the device at run
 * time (rte_vdev_init, from this thread), then each worker takes its queue pair on its own
 * thread; the interface then follows the port (kernel_follow.h) and, with `sync on`, is
 * read by the sync, which hears of the new interface. A kernel interface stays until the
 * daemon stops: taking one away under the workers, whose peers may be handing it frames,
 * is not offered. */
#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "cluster/cluster_mgr.h"

struct kernel_attach {
	struct worker *w;
	uint16_t port;
	const struct exception_if *k;
};

static int kernel_attach_on_worker(struct stack *s, void *arg)
{
	(void)s;
	struct kernel_attach *a = arg;
	return worker_kernel_attach(a->w, a->port, a->k);
}

int cmd_kernel_if_add(struct daemon *d, uint16_t p, const char *ifname, struct ctl_out *o)
{
	struct port *port = &d->ports[p];
	if (!config_kernel_ifname_valid(ifname))
		return ctl_error(o, "kernel interface name '%s': use 1-%d characters, none of "
				    "'/', ':', ',', '=' or white space", ifname, IF_NAMESIZE - 1);
	if (port->kernel.ifname[0] != '\0')
		return ctl_error(o, "%s has the kernel interface %s already", port->name,
				 port->kernel.ifname);
	for (unsigned i = 0; i < d->nb_ports; i++)
		if (strcmp(d->ports[i].kernel.ifname, ifname) == 0)
			return ctl_error(o, "kernel interface '%s' is %s's", ifname,
					 d->ports[i].name);
	char rest[DPC_NAME_LEN];
	if (d->clusters != NULL && cluster_mgr_rest_of(d->clusters, p, rest))
		return ctl_error(o, "cluster '%s' takes what the stack does not own on %s: a "
				 "kernel interface would take it too (cluster del %s first)", rest,
				 port->name, rest);
	if (d->dry_run) {
		strcpy(port->kernel.ifname, ifname); /* later lines see it, as they would */
		return 0;
	}
	char err[256];
	strcpy(port->kernel.ifname, ifname);
	int rc = exception_if_start(&port->kernel, p, &port->mac, (uint16_t)d->nb_workers,
				    d->pool, err, sizeof(err));
	if (rc != 0) {
		port->kernel.ifname[0] = '\0';
		return ctl_error(o, "link set %s kernel %s: %s", port->name, ifname, err);
	}
	for (unsigned w = 0; w < d->nb_workers; w++) {
		struct kernel_attach a = {.w = &d->workers[w], .port = p, .k = &port->kernel};
		rc = d->workers_running ? worker_call(a.w, kernel_attach_on_worker, &a)
					: worker_kernel_attach(a.w, p, &port->kernel);
		if (rc != 0)
			return ctl_error(o, "link set %s kernel %s: worker %u: %s", port->name,
					 ifname, w, strerror(-rc));
	}
	kernel_follow_port(d, p);
	return 0;
}
