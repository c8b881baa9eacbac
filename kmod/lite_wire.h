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
 */
#ifndef LITE_WIRE_H
#define LITE_WIRE_H

#include <linux/types.h>

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

#endif /* LITE_WIRE_H */
