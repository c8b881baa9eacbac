/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the private data two lite.ko instances exchange in rdma_cm
 * connection setup (REQ, REP, REJ). This is a wire format between kernels
 * of possibly different versions: fields are big-endian with explicit
 * padding, reserved fields are sent as zero and must be zero, and the
 * version says how to read the rest.
 *
 * Sizes matter: on InfiniBand and RoCE rdma_cm leaves 56 bytes of a REQ for
 * the consumer, 196 of a REP and 148 of a REJ.
 *
 * Pure logic, no kernel dependency beyond byte order: the same code is
 * unit-tested on the host (lite_wire_test.cc).
 */
#ifndef LITE_WIRE_H
#define LITE_WIRE_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#else
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#define cpu_to_be16(x) ((__be16)htobe16(x))
#define cpu_to_be32(x) ((__be32)htobe32(x))
#define cpu_to_be64(x) ((__be64)htobe64(x))
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define be64_to_cpu(x) be64toh(x)
#endif

#define LITE_CM_MAGIC	0x4c495445	/* "LITE" */
#define LITE_CM_VERSION	1

/* Initiator -> acceptor, in the connection request. */
struct lite_cm_req {
	__be32 magic;
	__be16 version;
	__be16 qp_index;		/* 0 .. qps_per_peer - 1 */
	__be16 qps_per_peer;		/* both nodes must use the same K */
	__be16 reserved0;
	__be32 src_node_id;		/* the initiator */
	__be64 src_incarnation;
	__be32 dst_node_id;		/* whom the initiator means to reach */
	__be32 reserved1;
	__be64 dst_incarnation;
};

/* Acceptor -> initiator, in the reply. */
struct lite_cm_rep {
	__be32 magic;
	__be16 version;
	__be16 qp_index;		/* echoes the request's */
	__be32 node_id;			/* the acceptor */
	__be32 reserved;
	__be64 incarnation;
};

/* Why an acceptor refused a request (lite_cm_rej.reason). */
enum lite_cm_rej_reason {
	/* Malformed private data, unknown magic or version. */
	LITE_REJ_BAD_REQUEST = 1,
	/* The acceptor has no node identity yet: retry. */
	LITE_REJ_NOT_READY = 2,
	/* dst_node_id/dst_incarnation are not the acceptor's. */
	LITE_REJ_WRONG_NODE = 3,
	/* The acceptor has not been told about the initiator yet: retry. */
	LITE_REJ_UNKNOWN_PEER = 4,
	/* The acceptor knows a newer incarnation of the initiator. */
	LITE_REJ_STALE = 5,
	/* The initiator is newer than the acceptor knows (not told yet): retry. */
	LITE_REJ_NEWER = 6,
	/* qps_per_peer differs, or qp_index is out of range. */
	LITE_REJ_PARAMS = 7,
	/* The initiator's node id is not the smaller one. */
	LITE_REJ_ROLE = 8,
	/* The acceptor could not set up the queue pair: retry. */
	LITE_REJ_NO_RESOURCES = 9,
	/* The request came from another address than the acceptor knows. */
	LITE_REJ_ADDRESS = 10,
};

/* Acceptor -> initiator, in the reject (IB_CM_REJ_CONSUMER_DEFINED). */
struct lite_cm_rej {
	__be32 magic;
	__be16 version;
	__be16 reason;			/* enum lite_cm_rej_reason */
	__be32 node_id;			/* the acceptor, 0 if not set */
	__be32 reserved;
	__be64 incarnation;		/* the acceptor's, 0 if not set */
};

/* One side of a connection: a node id and its incarnation (0 0: none). */
struct lite_cm_node {
	u32 id;
	u64 incarnation;
};

static inline void lite_cm_fill_req(struct lite_cm_req *req,
				    const struct lite_cm_node *src,
				    const struct lite_cm_node *dst,
				    u16 qp_index, u16 qps_per_peer)
{
	memset(req, 0, sizeof(*req));
	req->magic = cpu_to_be32(LITE_CM_MAGIC);
	req->version = cpu_to_be16(LITE_CM_VERSION);
	req->qp_index = cpu_to_be16(qp_index);
	req->qps_per_peer = cpu_to_be16(qps_per_peer);
	req->src_node_id = cpu_to_be32(src->id);
	req->src_incarnation = cpu_to_be64(src->incarnation);
	req->dst_node_id = cpu_to_be32(dst->id);
	req->dst_incarnation = cpu_to_be64(dst->incarnation);
}

static inline void lite_cm_fill_rep(struct lite_cm_rep *rep,
				    const struct lite_cm_node *self,
				    u16 qp_index)
{
	memset(rep, 0, sizeof(*rep));
	rep->magic = cpu_to_be32(LITE_CM_MAGIC);
	rep->version = cpu_to_be16(LITE_CM_VERSION);
	rep->qp_index = cpu_to_be16(qp_index);
	rep->node_id = cpu_to_be32(self->id);
	rep->incarnation = cpu_to_be64(self->incarnation);
}

static inline void lite_cm_fill_rej(struct lite_cm_rej *rej,
				    const struct lite_cm_node *self, u16 reason)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = cpu_to_be32(LITE_CM_MAGIC);
	rej->version = cpu_to_be16(LITE_CM_VERSION);
	rej->reason = cpu_to_be16(reason);
	rej->node_id = cpu_to_be32(self->id);
	rej->incarnation = cpu_to_be64(self->incarnation);
}

/*
 * The acceptor's checks that need no peer table: @data/@len as received,
 * @self the acceptor (NULL while it has no identity), @qps_per_peer its K.
 * Returns 0 and fills @src and @qp_index, or the lite_cm_rej_reason to
 * refuse with. The caller then looks @src up (UNKNOWN_PEER, STALE, NEWER,
 * ADDRESS).
 */
static inline int lite_cm_check_req(const void *data, size_t len,
				    const struct lite_cm_node *self,
				    u16 qps_per_peer, struct lite_cm_node *src,
				    u16 *qp_index)
{
	const struct lite_cm_req *req = (const struct lite_cm_req *)data;
	u16 index;

	if (!req || len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != LITE_CM_MAGIC ||
	    be16_to_cpu(req->version) != LITE_CM_VERSION ||
	    req->reserved0 || req->reserved1)
		return LITE_REJ_BAD_REQUEST;
	if (!self)
		return LITE_REJ_NOT_READY;
	if (be32_to_cpu(req->dst_node_id) != self->id ||
	    be64_to_cpu(req->dst_incarnation) != self->incarnation)
		return LITE_REJ_WRONG_NODE;
	src->id = be32_to_cpu(req->src_node_id);
	src->incarnation = be64_to_cpu(req->src_incarnation);
	if (!src->id || !src->incarnation)
		return LITE_REJ_BAD_REQUEST;
	if (src->id >= self->id)
		return LITE_REJ_ROLE;
	index = be16_to_cpu(req->qp_index);
	if (be16_to_cpu(req->qps_per_peer) != qps_per_peer ||
	    index >= qps_per_peer)
		return LITE_REJ_PARAMS;
	*qp_index = index;
	return 0;
}

/*
 * The initiator's check of the acceptor's reply to QP @qp_index: 0, -EPROTO
 * (malformed) or -ESTALE (another node or incarnation than @peer).
 */
static inline int lite_cm_check_rep(const void *data, size_t len,
				    const struct lite_cm_node *peer,
				    u16 qp_index)
{
	const struct lite_cm_rep *rep = (const struct lite_cm_rep *)data;

	if (!rep || len < sizeof(*rep) ||
	    be32_to_cpu(rep->magic) != LITE_CM_MAGIC ||
	    be16_to_cpu(rep->version) != LITE_CM_VERSION || rep->reserved ||
	    be16_to_cpu(rep->qp_index) != qp_index)
		return -EPROTO;
	if (be32_to_cpu(rep->node_id) != peer->id ||
	    be64_to_cpu(rep->incarnation) != peer->incarnation)
		return -ESTALE;
	return 0;
}

/*
 * The reason in a reject, if it is a LITE reject (0 otherwise). Retrying
 * quietly is right for the reasons that mean "not caught up yet".
 */
static inline int lite_cm_rej_reason(const void *data, size_t len)
{
	const struct lite_cm_rej *rej = (const struct lite_cm_rej *)data;

	if (!rej || len < sizeof(*rej) ||
	    be32_to_cpu(rej->magic) != LITE_CM_MAGIC)
		return 0;
	return be16_to_cpu(rej->reason);
}

static inline int lite_cm_rej_is_transient(int reason)
{
	return reason == LITE_REJ_NOT_READY || reason == LITE_REJ_UNKNOWN_PEER ||
	       reason == LITE_REJ_NEWER || reason == LITE_REJ_NO_RESOURCES;
}

#endif /* LITE_WIRE_H */
