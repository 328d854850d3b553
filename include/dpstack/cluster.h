/* libdpstack_cluster: consume the frames a dpstackd cluster distributes (docs/CLUSTERS.md).
 *
 * A consumer is an ordinary process (no EAL, no hugepages; it needs only access to the
 * cluster socket, DPSTACK_CLUSTER_SOCK, default /run/dpstack/cluster.sock). It attaches as
 * one consumer of a cluster, "NAME@i" (the i-th consumer counting across groups) or
 * "NAME@g:i" (consumer i of group g), and reads bursts of frames in place, in the daemon's
 * packet memory mapped read-only: no copy. Frames are released in the order they were
 * received; until then they stay valid, and they count against the consumer's ring, whose
 * overflow drops frames for this consumer only (never for the others or the stack).
 *
 * One thread per handle: a handle is not thread-safe. Errors: NULL or a negative errno. */
#ifndef DPSTACK_CLUSTER_H
#define DPSTACK_CLUSTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dps_cluster;

/* One frame, a view into shared memory. */
struct dps_cluster_frame {
	const uint8_t *data;    /* the Ethernet frame, read-only */
	uint32_t len;
	uint32_t hash;          /* the cluster's hash of it (docs/CLUSTERS.md) */
	uint64_t ts_ns;         /* when the daemon received it, CLOCK_REALTIME in ns */
	uint16_t port;          /* index in the cluster's port list */
	uint16_t ring;          /* private: where it came from */
	uint32_t seq;           /* private: its place there */
};

struct dps_cluster_info {
	char cluster[32];
	unsigned consumer;      /* flat index */
	unsigned group, index;  /* its group and place in it */
	unsigned nb_ports;
	char ports[8][32];      /* the ports' names */
	unsigned ring_size;     /* frames each ring holds */
};

struct dps_cluster_stats {
	uint64_t received;      /* frames this handle received */
	uint64_t dropped;       /* frames the daemon had no room for in this handle's rings */
	uint64_t sent;          /* frames the daemon sent for it (dps_cluster_send) */
	uint64_t send_dropped;  /* frames it posted that the daemon refused (no mbuf) */
};

/* Attaches as spec. Returns NULL with errno (ENOENT: no such cluster or consumer, EBUSY:
 * someone is attached as it, ECONNREFUSED/ENOENT: no daemon, EPROTO: version mismatch);
 * dps_cluster_error() then says why in words. */
struct dps_cluster *dps_cluster_attach(const char *spec);

/* The reason for the last failed attach of this thread. */
const char *dps_cluster_error(void);

/* Up to max frames, without waiting. Returns how many (0: none yet), or -EPIPE once the
 * daemon no longer serves this consumer (cluster deleted, daemon gone). */
int dps_cluster_recv(struct dps_cluster *c, struct dps_cluster_frame *f, unsigned max);

/* Gives back n frames, which must be the oldest unreleased ones this handle received, in
 * the order received. Returns 0, or -EINVAL (out of order: nothing released). */
int dps_cluster_release(struct dps_cluster *c, const struct dps_cluster_frame *f, unsigned n);

/* Waits until frames may be there: spins a little, then sleeps. timeout_ms < 0 waits for
 * ever. Returns 0, -ETIMEDOUT, -EINTR, or -EPIPE as recv. */
int dps_cluster_wait(struct dps_cluster *c, int timeout_ms);

/* Transmit without a copy in the daemon: the consumer's segment holds 256 transmit buffers
 * of 2048 bytes, which the daemon attaches to mbufs and hands to the port as they are.
 *
 * dps_cluster_tx_buffer lends the next free buffer (its size in *size if not NULL), or
 * returns NULL with errno EAGAIN when all are posted and not yet sent, or EPIPE as recv;
 * dps_cluster_tx_post sends the
 * frame of len bytes (14 to 2048) built in it out of the cluster's port number port (its
 * place in the cluster's port list). A posted buffer is lent again once the port has sent
 * it; writing it meanwhile spoils only this consumer's frame. Returns 0, -EAGAIN (no
 * buffer lent), -EINVAL (bad port or length), -EPIPE as recv. */
void *dps_cluster_tx_buffer(struct dps_cluster *c, uint32_t *size);
int dps_cluster_tx_post(struct dps_cluster *c, unsigned port, uint32_t len);

/* dps_cluster_tx_buffer, a copy of frame into it, dps_cluster_tx_post: for a frame built
 * elsewhere (frame may be reused on return). Same returns as dps_cluster_tx_post. */
int dps_cluster_send(struct dps_cluster *c, unsigned port, const void *frame, uint32_t len);

/* Sends frame f (received, not yet released) out of the cluster's port number port when it
 * is released (dps_cluster_release), without copying it: the daemon hands the very buffer
 * the NIC wrote to that port's transmit queue, unchanged (the frame is read-only here).
 * Returns 0, or -EINVAL for a bad port or a frame this handle does not hold. A frame still
 * held when the consumer detaches or dies is freed, not sent. */
int dps_cluster_forward(struct dps_cluster *c, const struct dps_cluster_frame *f,
			unsigned port);

int dps_cluster_info(const struct dps_cluster *c, struct dps_cluster_info *info);
int dps_cluster_stats(const struct dps_cluster *c, struct dps_cluster_stats *st);

/* Detaches: frames not released are given back by the daemon. */
void dps_cluster_detach(struct dps_cluster *c);

#ifdef __cplusplus
}
#endif

#endif
