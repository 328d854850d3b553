/* Reading and completing a vdev string ("net_af_xdp0,iface=veth0,queue_count=2"): the
 * driver its name starts with and its key=value arguments. Pure C, no DPDK. */
#ifndef DPS_DP_PORT_DEVARGS_H
#define DPS_DP_PORT_DEVARGS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the device's name (before the first ',') is driver followed by digits only:
 * "net_af_xdp0" is a net_af_xdp. */
bool port_devargs_driver_is(const char *devargs, const char *driver);

/* The value of argument key into val (NUL-terminated); false when the string has no such
 * argument or its value does not fit in len. */
bool port_devargs_value(const char *devargs, const char *key, char *val, size_t len);

/* The value of argument key as a decimal number; false when absent or not a number. */
bool port_devargs_uint(const char *devargs, const char *key, unsigned *v);

/* Appends ",key=value". Returns 0, or -1 when the string would not fit in len. */
int port_devargs_append(char *devargs, size_t len, const char *key, const char *value);

#endif
