#include "port_caps.h"

#include <linux/capability.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "startup_check.h"

#define CAP(c) (UINT64_C(1) << (c))

static const struct {
	const char *driver;             /* the vdev name's prefix */
	uint64_t caps;
	bool memlock;                   /* CAP_IPC_LOCK unless RLIMIT_MEMLOCK holds the pool */
} port_caps[] = {
	{"net_af_xdp", CAP(CAP_NET_RAW) | CAP(CAP_NET_ADMIN) | CAP(CAP_SYS_ADMIN), true},
	{"net_af_packet", CAP(CAP_NET_RAW) | CAP(CAP_NET_ADMIN), false},
	{"net_tap", CAP(CAP_NET_ADMIN), false},
};

static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{CAP_NET_RAW, "CAP_NET_RAW"},
	{CAP_NET_ADMIN, "CAP_NET_ADMIN"},
	{CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
	{CAP_IPC_LOCK, "CAP_IPC_LOCK"},
};

uint64_t port_caps_missing(const struct daemon *d, uint64_t caps, uint64_t memlock,
			   unsigned *port_index)
{
	uint64_t pool = (uint64_t)d->nb_mbufs * STARTUP_MBUF_BYTES;
	uint64_t missing = 0;
	*port_index = 0;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		for (size_t k = 0; k < sizeof(port_caps) / sizeof(port_caps[0]); k++) {
			const char *drv = port_caps[k].driver;
			if (strncmp(d->ports[i].devargs, drv, strlen(drv)) != 0)
				continue;
			uint64_t need = port_caps[k].caps;
			if (port_caps[k].memlock && memlock < pool)
				need |= CAP(CAP_IPC_LOCK);
			if ((need & ~caps) != 0 && missing == 0)
				*port_index = i;
			missing |= need & ~caps;
		}
	}
	return missing;
}

/* The effective set, through capget(2) (no libcap needed for one call). */
static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return UINT64_MAX;      /* unknown: let the drivers say */
	return (uint64_t)data[1].effective << 32 | data[0].effective;
}

unsigned port_caps_check(const struct daemon *d, struct config *cfg)
{
	struct rlimit rl;
	uint64_t memlock = getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY
				   ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	unsigned port;
	uint64_t missing = port_caps_missing(d, effective_caps(), memlock, &port);
	if (missing == 0)
		return 0;
	char names[128] = "";
	for (size_t k = 0; k < sizeof(cap_names) / sizeof(cap_names[0]); k++)
		if (missing & CAP(cap_names[k].cap))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] != '\0' ? ", " : "", cap_names[k].name);
	config_error(cfg, cfg->port_lines[port],
		     "port %s (%.*s) needs capabilities this process lacks: %s; run as root or "
		     "grant them (setcap, or systemd's AmbientCapabilities=)%s", d->ports[port].name,
		     (int)strcspn(d->ports[port].devargs, ","), d->ports[port].devargs, names,
		     (missing & CAP(CAP_IPC_LOCK)) != 0
			     ? "; CAP_IPC_LOCK is not needed when 'ulimit -l' holds the mbuf pool"
			     : "");
	return 1;
}
