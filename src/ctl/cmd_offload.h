/* The offloads of a port in `link show` and `link set PORT offload|gro on|off`: which
 * transmit checksums and TSO the stacks leave to the port (src/stack/tx_offload.h), and
 * whether the workers merge received TCP segments (src/dp/gro.h). */
#ifndef DPS_CTL_CMD_OFFLOAD_H
#define DPS_CTL_CMD_OFFLOAD_H

#include <stdint.h>

#include "ctl_out.h"
#include "daemon.h"

/* `link set PORT offload|gro on|off` (what names offload or gro, value the word after).
 * Returns 0, or -1 with the error in o. */
int cmd_offload_set(struct daemon *d, uint16_t port, const char *what, const char *value,
		    struct ctl_out *o);

/* The port's offloads as JSON fields of the open object, or as one text line. */
void cmd_offload_json(struct ctl_out *o, const struct port *p);
void cmd_offload_text(struct ctl_out *o, const struct port *p);

#endif
