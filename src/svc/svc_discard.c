/* Discard (RFC 863): everything received is read and dropped, over TCP and UDP. TCP closes
 * when the client has finished sending. */
#include "svc_priv.h"

static enum svc_run discard_run(struct svc_conn *sc)
{
	return svc_conn_drain(sc);
}

const struct svc_kind_ops svc_discard_ops = {
	.tcp = true,
	.udp = true,
	.conn_size = sizeof(struct svc_conn),
	.run = discard_run,
	/* UDP: svc.c has counted the datagram; there is nothing else to do. */
};
