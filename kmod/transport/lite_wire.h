/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the private data two lite.ko instances exchange in rdma_cm
 * connection setup (REQ, REP, REJ). This is a wire format between kernels
 * of possibly different versions: fields are big-endian with explicit
 * padding, reserved fields are sent as zero and must be zero, and the
 * version says how to read the rest.
 *
 * Two versions, chosen by the peer_auth module parameter (the same on every
 * node): version 1 (peer_auth=0) names both ends and nothing proves it;
 * version 2 (peer_auth=1) authenticates both ends with the pair's secret in
 * a challenge-response exchange (docs/kernel-peers.md, "Peer
 * authentication"). Each version refuses the other's requests as
 * malformed.
 *
 * Sizes matter: on InfiniBand and RoCE rdma_cm leaves 56 bytes of a REQ for
 * the consumer, 196 of a REP and 148 of a REJ.
 *
 * Pure logic, no kernel dependency beyond byte order: the same code is
 * unit-tested on the host (lite_wire_test.cc). The HMAC itself is the
 * caller's (a lite_cm_mac_fn): lite.ko's kernel crypto API, the test's
 * OpenSSL.
 */
#ifndef LITE_WIRE_H
#define LITE_WIRE_H

#ifdef __KERNEL__
#include <crypto/algapi.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#else
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
typedef __u8 u8;
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
#define LITE_CM_VERSION	1		/* struct lite_cm_req etc.: peer_auth=0 */
#define LITE_CM_VERSION_AUTH 2		/* struct lite_cm_req2 etc.: peer_auth=1 */

/* Initiator -> acceptor, in the connection request. */
struct lite_cm_req {
	__be32 magic;
	__be16 version;
	__be16 qp_index;		/* 0 .. qps_per_peer - 1 */
	__be16 qps_per_peer;		/* both nodes must use the same K */
	__be16 reserved0;		/* LITE_CM_* flags; other bits 0 */
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
	__be32 reserved;		/* LITE_CM_* flags; other bits 0 */
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
	/*
	 * Version 2, not a refusal: the acceptor wants this challenge
	 * (lite_cm_rej2.challenge) in a new request, at once.
	 */
	LITE_REJ_CHALLENGE = 11,
	/*
	 * Version 2: the request failed authentication: its MAC is wrong
	 * (another pair secret, or meant for another incarnation of the
	 * acceptor) or its challenge is not the one outstanding (replayed,
	 * expired, or never issued).
	 */
	LITE_REJ_AUTH = 12,
	/*
	 * The request came from an unprivileged source port (>= 1024): not
	 * from lite.ko, which binds a privileged one.
	 */
	LITE_REJ_PORT = 13,
	/* Version 2: the acceptor has no pair secret for the initiator. */
	LITE_REJ_NO_KEY = 14,
};

/* What a reason says, for log lines. */
static inline const char *lite_cm_rej_reason_name(int reason)
{
	switch (reason) {
	case LITE_REJ_BAD_REQUEST:
		return "malformed request or another wire version";
	case LITE_REJ_NOT_READY:
		return "node identity not set";
	case LITE_REJ_WRONG_NODE:
		return "meant for another node";
	case LITE_REJ_UNKNOWN_PEER:
		return "unknown peer";
	case LITE_REJ_STALE:
		return "old incarnation";
	case LITE_REJ_NEWER:
		return "newer incarnation than known";
	case LITE_REJ_PARAMS:
		return "qps_per_peer differs or QP index out of range";
	case LITE_REJ_ROLE:
		return "the initiator's id is not the smaller";
	case LITE_REJ_NO_RESOURCES:
		return "no resources";
	case LITE_REJ_ADDRESS:
		return "from another address than the peer's";
	case LITE_REJ_CHALLENGE:
		return "challenge";
	case LITE_REJ_AUTH:
		return "authentication failed (pair secret mismatch?)";
	case LITE_REJ_PORT:
		return "from an unprivileged source port";
	case LITE_REJ_NO_KEY:
		return "no pair secret for the initiator";
	default:
		return "unknown reason";
	}
}

/* Acceptor -> initiator, in the reject (IB_CM_REJ_CONSUMER_DEFINED). */
struct lite_cm_rej {
	__be32 magic;
	__be16 version;
	__be16 reason;			/* enum lite_cm_rej_reason */
	__be32 node_id;			/* the acceptor, 0 if not set */
	__be32 reserved;
	__be64 incarnation;		/* the acceptor's, 0 if not set */
};

/*
 * What a node says about itself in its request or reply: version 1's
 * reserved0 (request) and reserved (reply), version 2's flags. Each flag
 * says what the sender LACKS, so a node that has everything sends zeros as
 * before, and an older peer, which refuses any nonzero bit as malformed,
 * fails safe. Bit 0 stays unused (older tests send it as "unknown").
 */
#define LITE_CM_NO_ATOMICS	0x02	/* its global key takes no remote atomics */
#define LITE_CM_FLAGS_KNOWN	LITE_CM_NO_ATOMICS

/* One side of a connection: a node id and its incarnation (0 0: none). */
struct lite_cm_node {
	u32 id;
	u64 incarnation;
	u32 flags;		/* LITE_CM_*: sent by fill, filled by check */
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
	req->reserved0 = cpu_to_be16(src->flags);
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
	rep->reserved = cpu_to_be32(self->flags);
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
	    (be16_to_cpu(req->reserved0) & ~LITE_CM_FLAGS_KNOWN) ||
	    req->reserved1)
		return LITE_REJ_BAD_REQUEST;
	if (!self)
		return LITE_REJ_NOT_READY;
	if (be32_to_cpu(req->dst_node_id) != self->id ||
	    be64_to_cpu(req->dst_incarnation) != self->incarnation)
		return LITE_REJ_WRONG_NODE;
	src->id = be32_to_cpu(req->src_node_id);
	src->incarnation = be64_to_cpu(req->src_incarnation);
	src->flags = be16_to_cpu(req->reserved0);
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
	    be16_to_cpu(rep->version) != LITE_CM_VERSION ||
	    (be32_to_cpu(rep->reserved) & ~LITE_CM_FLAGS_KNOWN) ||
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

/* ---- version 2: authenticated (peer_auth=1) ---- */

/* The pair secret (LITE_ATTR_PEER_SECRET) and the MACs made with it. */
#define LITE_CM_SECRET_LEN	32
#define LITE_CM_MAC_LEN		16	/* HMAC-SHA256, first 128 bits */
/* How long an acceptor's challenge may be answered. */
#define LITE_CM_CHALLENGE_TTL_MS 10000

/*
 * Source ports. rdma_cm lets only CAP_NET_BIND_SERVICE bind a port below
 * 1024 (cma_use_port()), so an acceptor refuses requests from any other
 * (LITE_REJ_PORT); initiators bind one of [MIN, MAX]. Both versions.
 */
#define LITE_CM_PRIVILEGED_PORTS 1024
#define LITE_CM_SRC_PORT_MIN	512
#define LITE_CM_SRC_PORT_MAX	1023

/*
 * Initiator -> acceptor. The first request of a connection has challenge 0
 * and no MAC (zeros): the acceptor answers it with a LITE_REJ_CHALLENGE
 * reject. The second, on a new rdma_cm id for the same QP, carries that
 * challenge and
 *   mac = HMAC-SHA256(secret, "LITE-REQ\0" || bytes 0..39 of this struct ||
 *                     acceptor node id (be32) || acceptor incarnation (be64))
 * truncated to 128 bits. The acceptor's incarnation is not sent: the MAC
 * covers it, so a request meant for an older incarnation fails (AUTH).
 */
struct lite_cm_req2 {
	__be32 magic;
	__u8 version;			/* LITE_CM_VERSION_AUTH */
	__u8 qp_index;			/* 0 .. qps_per_peer - 1 */
	__u8 qps_per_peer;		/* both nodes must use the same K */
	__u8 flags;			/* LITE_CM_* */
	__be32 src_node_id;		/* the initiator */
	__be32 dst_node_id;		/* the acceptor */
	__be64 src_incarnation;
	__be64 nonce;			/* the initiator's, fresh per request */
	__be64 challenge;		/* the acceptor's; 0 in a first request */
	__u8 mac[LITE_CM_MAC_LEN];
};

/*
 * Acceptor -> initiator, accepting an authenticated request:
 *   mac = HMAC-SHA256(secret, "LITE-REP\0" || bytes 0..39 of this struct ||
 *                     the request's mac)
 * The initiator checks it before its QP leaves INIT.
 */
struct lite_cm_rep2 {
	__be32 magic;
	__u8 version;			/* LITE_CM_VERSION_AUTH */
	__u8 qp_index;			/* echoes the request's */
	__be16 flags;			/* LITE_CM_* */
	__be32 node_id;			/* the acceptor */
	__be32 reserved;
	__be64 incarnation;		/* the acceptor's */
	__be64 nonce;			/* echoes the request's */
	__be64 challenge;		/* echoes the request's */
	__u8 mac[LITE_CM_MAC_LEN];
};

/*
 * Acceptor -> initiator, refusing. Not authenticated (the CM messages
 * around it are not either): a forged reject can delay a connection, never
 * make one. The reason is where version 1 has it.
 */
struct lite_cm_rej2 {
	__be32 magic;
	__u8 version;			/* LITE_CM_VERSION_AUTH */
	__u8 reserved0;
	__be16 reason;			/* enum lite_cm_rej_reason */
	__be32 node_id;			/* the acceptor, 0 if not set */
	__be32 reserved1;
	__be64 incarnation;		/* the acceptor's, 0 if not set */
	__be64 challenge;		/* LITE_REJ_CHALLENGE: to answer; else 0 */
};

#define LITE_CM_LABEL_LEN	9	/* "LITE-REQ" and "LITE-REP" with the NUL */
#define LITE_CM_REQ_SIGNED	offsetof(struct lite_cm_req2, mac)
#define LITE_CM_REP_SIGNED	offsetof(struct lite_cm_rep2, mac)
/* What a request's and a reply's MACs are computed over, in bytes. */
#define LITE_CM_REQ_MAC_INPUT	(LITE_CM_LABEL_LEN + LITE_CM_REQ_SIGNED + 4 + 8)
#define LITE_CM_REP_MAC_INPUT	(LITE_CM_LABEL_LEN + LITE_CM_REP_SIGNED + LITE_CM_MAC_LEN)

/*
 * HMAC-SHA256 of @len bytes at @data under the pair secret @key stands for,
 * its first LITE_CM_MAC_LEN bytes into @mac: 0, or a negative errno.
 */
typedef int (*lite_cm_mac_fn)(void *key, const void *data, size_t len,
			      u8 *mac);

/* Compares MACs in constant time: 0 if equal. */
static inline int lite_cm_mac_differs(const u8 *a, const u8 *b)
{
#ifdef __KERNEL__
	return crypto_memneq(a, b, LITE_CM_MAC_LEN);
#else
	u8 d = 0;
	size_t i;

	for (i = 0; i < LITE_CM_MAC_LEN; i++)
		d |= a[i] ^ b[i];
	return d != 0;
#endif
}

static inline void lite_cm_put_be32(u8 *p, u32 v)
{
	__be32 be = cpu_to_be32(v);

	memcpy(p, &be, sizeof(be));
}

static inline void lite_cm_put_be64(u8 *p, u64 v)
{
	__be64 be = cpu_to_be64(v);

	memcpy(p, &be, sizeof(be));
}

/* The MAC of @req, which is meant for @acceptor, into @mac. */
static inline int lite_cm_req2_mac(const struct lite_cm_req2 *req,
				   const struct lite_cm_node *acceptor,
				   lite_cm_mac_fn fn, void *key, u8 *mac)
{
	u8 in[LITE_CM_REQ_MAC_INPUT];
	u8 *p = in;

	memcpy(p, "LITE-REQ", LITE_CM_LABEL_LEN);
	p += LITE_CM_LABEL_LEN;
	memcpy(p, req, LITE_CM_REQ_SIGNED);
	p += LITE_CM_REQ_SIGNED;
	lite_cm_put_be32(p, acceptor->id);
	lite_cm_put_be64(p + 4, acceptor->incarnation);
	return fn(key, in, sizeof(in), mac);
}

/* The MAC of @rep, which answers the request whose MAC is @req_mac. */
static inline int lite_cm_rep2_mac(const struct lite_cm_rep2 *rep,
				   const u8 *req_mac, lite_cm_mac_fn fn,
				   void *key, u8 *mac)
{
	u8 in[LITE_CM_REP_MAC_INPUT];

	memcpy(in, "LITE-REP", LITE_CM_LABEL_LEN);
	memcpy(in + LITE_CM_LABEL_LEN, rep, LITE_CM_REP_SIGNED);
	memcpy(in + LITE_CM_LABEL_LEN + LITE_CM_REP_SIGNED, req_mac,
	       LITE_CM_MAC_LEN);
	return fn(key, in, sizeof(in), mac);
}

/*
 * A request from @src to @dst for QP @qp_index of @qps_per_peer, with the
 * initiator's @nonce. @challenge 0: a first request (no MAC, @fn unused);
 * else the acceptor's challenge, and the request is signed with @fn/@key.
 * 0, or the MAC's negative errno.
 */
static inline int lite_cm_fill_req2(struct lite_cm_req2 *req,
				    const struct lite_cm_node *src,
				    const struct lite_cm_node *dst,
				    u8 qp_index, u8 qps_per_peer, u64 nonce,
				    u64 challenge, lite_cm_mac_fn fn, void *key)
{
	memset(req, 0, sizeof(*req));
	req->magic = cpu_to_be32(LITE_CM_MAGIC);
	req->version = LITE_CM_VERSION_AUTH;
	req->qp_index = qp_index;
	req->qps_per_peer = qps_per_peer;
	req->flags = src->flags;
	req->src_node_id = cpu_to_be32(src->id);
	req->dst_node_id = cpu_to_be32(dst->id);
	req->src_incarnation = cpu_to_be64(src->incarnation);
	req->nonce = cpu_to_be64(nonce);
	req->challenge = cpu_to_be64(challenge);
	if (!challenge)
		return 0;
	return lite_cm_req2_mac(req, dst, fn, key, req->mac);
}

/* What the acceptor learns from a well-formed request. */
struct lite_cm_req2_info {
	struct lite_cm_node src;
	u16 qp_index;
	u64 challenge;			/* 0: a first request */
};

/*
 * The acceptor's checks of a version 2 request that need neither the peer
 * table nor the secret: @data/@len as received, @self the acceptor (NULL
 * while it has no identity), @qps_per_peer its K. Returns 0 and fills
 * @info, or the lite_cm_rej_reason to refuse with. A request from the
 * acceptor to itself (loopback) passes. The caller then looks the initiator
 * up (UNKNOWN_PEER, STALE, NEWER, ADDRESS, PORT, NO_KEY), issues or
 * consumes the challenge (CHALLENGE, AUTH) and verifies the MAC
 * (lite_cm_verify_req2, AUTH).
 */
static inline int lite_cm_check_req2(const void *data, size_t len,
				     const struct lite_cm_node *self,
				     u16 qps_per_peer,
				     struct lite_cm_req2_info *info)
{
	const struct lite_cm_req2 *req = (const struct lite_cm_req2 *)data;

	if (!req || len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != LITE_CM_MAGIC ||
	    req->version != LITE_CM_VERSION_AUTH ||
	    (req->flags & ~LITE_CM_FLAGS_KNOWN))
		return LITE_REJ_BAD_REQUEST;
	info->src.id = be32_to_cpu(req->src_node_id);
	info->src.incarnation = be64_to_cpu(req->src_incarnation);
	info->src.flags = req->flags;
	info->qp_index = req->qp_index;
	info->challenge = be64_to_cpu(req->challenge);
	if (!info->src.id || !info->src.incarnation)
		return LITE_REJ_BAD_REQUEST;
	if (!self)
		return LITE_REJ_NOT_READY;
	if (be32_to_cpu(req->dst_node_id) != self->id)
		return LITE_REJ_WRONG_NODE;
	if (info->src.id > self->id)
		return LITE_REJ_ROLE;
	if (req->qps_per_peer != qps_per_peer || req->qp_index >= qps_per_peer)
		return LITE_REJ_PARAMS;
	return 0;
}

/*
 * The request's MAC, for @self (the acceptor, with its incarnation), under
 * @fn/@key: 0 or LITE_REJ_AUTH (LITE_REJ_NO_RESOURCES if the MAC could not
 * be computed). @data passed lite_cm_check_req2().
 */
static inline int lite_cm_verify_req2(const void *data,
				      const struct lite_cm_node *self,
				      lite_cm_mac_fn fn, void *key)
{
	const struct lite_cm_req2 *req = (const struct lite_cm_req2 *)data;
	u8 mac[LITE_CM_MAC_LEN];

	if (lite_cm_req2_mac(req, self, fn, key, mac))
		return LITE_REJ_NO_RESOURCES;
	return lite_cm_mac_differs(mac, req->mac) ? LITE_REJ_AUTH : 0;
}

/* The reply of @self to the authenticated request @req. 0 or an errno. */
static inline int lite_cm_fill_rep2(struct lite_cm_rep2 *rep,
				    const struct lite_cm_node *self,
				    const struct lite_cm_req2 *req,
				    lite_cm_mac_fn fn, void *key)
{
	memset(rep, 0, sizeof(*rep));
	rep->magic = cpu_to_be32(LITE_CM_MAGIC);
	rep->version = LITE_CM_VERSION_AUTH;
	rep->qp_index = req->qp_index;
	rep->flags = cpu_to_be16(self->flags);
	rep->node_id = cpu_to_be32(self->id);
	rep->incarnation = cpu_to_be64(self->incarnation);
	rep->nonce = req->nonce;
	rep->challenge = req->challenge;
	return lite_cm_rep2_mac(rep, req->mac, fn, key, rep->mac);
}

/*
 * The initiator's check of a reply to its request @req (as sent) from
 * @peer: 0; -EPROTO malformed, or the reply to another QP or request;
 * -ESTALE another node or incarnation; -EKEYREJECTED the MAC is wrong.
 */
static inline int lite_cm_check_rep2(const void *data, size_t len,
				     const struct lite_cm_node *peer,
				     const struct lite_cm_req2 *req,
				     lite_cm_mac_fn fn, void *key)
{
	const struct lite_cm_rep2 *rep = (const struct lite_cm_rep2 *)data;
	u8 mac[LITE_CM_MAC_LEN];

	if (!rep || len < sizeof(*rep) ||
	    be32_to_cpu(rep->magic) != LITE_CM_MAGIC ||
	    rep->version != LITE_CM_VERSION_AUTH ||
	    (be16_to_cpu(rep->flags) & ~LITE_CM_FLAGS_KNOWN) ||
	    rep->reserved || rep->qp_index != req->qp_index ||
	    rep->nonce != req->nonce || rep->challenge != req->challenge)
		return -EPROTO;
	if (be32_to_cpu(rep->node_id) != peer->id ||
	    be64_to_cpu(rep->incarnation) != peer->incarnation)
		return -ESTALE;
	if (lite_cm_rep2_mac(rep, req->mac, fn, key, mac) ||
	    lite_cm_mac_differs(mac, rep->mac))
		return -EKEYREJECTED;
	return 0;
}

/*
 * The acceptor's LITE_CM_* flags in a reply that passed lite_cm_check_rep()
 * (@auth false) or lite_cm_check_rep2() (@auth true).
 */
static inline u32 lite_cm_rep_flags(const void *data, bool auth)
{
	if (auth)
		return be16_to_cpu(((const struct lite_cm_rep2 *)data)->flags);
	return be32_to_cpu(((const struct lite_cm_rep *)data)->reserved);
}

/*
 * The initiator's LITE_CM_* flags in a request that passed
 * lite_cm_check_req() (@auth false) or lite_cm_check_req2() (@auth true).
 */
static inline u32 lite_cm_req_flags(const void *data, bool auth)
{
	if (auth)
		return ((const struct lite_cm_req2 *)data)->flags;
	return be16_to_cpu(((const struct lite_cm_req *)data)->reserved0);
}

static inline void lite_cm_fill_rej2(struct lite_cm_rej2 *rej,
				     const struct lite_cm_node *self,
				     u16 reason, u64 challenge)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = cpu_to_be32(LITE_CM_MAGIC);
	rej->version = LITE_CM_VERSION_AUTH;
	rej->reason = cpu_to_be16(reason);
	rej->node_id = cpu_to_be32(self->id);
	rej->incarnation = cpu_to_be64(self->incarnation);
	rej->challenge = cpu_to_be64(challenge);
}

/*
 * The challenge in a LITE_REJ_CHALLENGE reject, or 0 if @data is not one
 * (lite_cm_rej_reason() reads the reason of either version).
 */
static inline u64 lite_cm_rej_challenge(const void *data, size_t len)
{
	const struct lite_cm_rej2 *rej = (const struct lite_cm_rej2 *)data;

	if (!rej || len < sizeof(*rej) ||
	    be32_to_cpu(rej->magic) != LITE_CM_MAGIC ||
	    rej->version != LITE_CM_VERSION_AUTH ||
	    be16_to_cpu(rej->reason) != LITE_REJ_CHALLENGE)
		return 0;
	return be64_to_cpu(rej->challenge);
}

/*
 * The acceptor's outstanding challenge for one (peer, QP index): at most
 * one, answerable for LITE_CM_CHALLENGE_TTL_MS, used by one verified
 * answer. Times are the acceptor's own monotonic milliseconds; nothing
 * depends on clocks agreeing.
 *
 * A first request carries no MAC, so anyone who can send one (raw RoCE
 * UDP reaches rxe from any sender, docs/kernel-peers.md) must not be able
 * to change or void the challenge the real initiator is answering: every
 * first request gets the same outstanding challenge until it expires (it
 * is no secret), and only an answer whose MAC verifies consumes it
 * (review 2026-11-28 L4). A replayed answer still finds it consumed.
 */
struct lite_cm_challenge {
	u64 value;			/* 0: none outstanding */
	u64 expires_ms;
};

/*
 * Issues a challenge from @random (0 is taken as 1: 0 means "none") at
 * @now_ms, replacing any outstanding one, and returns it.
 */
static inline u64 lite_cm_challenge_issue(struct lite_cm_challenge *c,
					  u64 random, u64 now_ms)
{
	c->value = random ? random : 1;
	c->expires_ms = now_ms + LITE_CM_CHALLENGE_TTL_MS;
	return c->value;
}

/*
 * The challenge for a first request at @now_ms: the outstanding one while
 * it has not expired, else a new one from @random.
 */
static inline u64 lite_cm_challenge_for_first(struct lite_cm_challenge *c,
					      u64 random, u64 now_ms)
{
	if (c->value && now_ms < c->expires_ms)
		return c->value;
	return lite_cm_challenge_issue(c, random, now_ms);
}

/*
 * True if @got is the outstanding challenge and has not expired at
 * @now_ms. Nothing is consumed: lite_cm_challenge_consume() does, once the
 * answer's MAC has verified.
 */
static inline bool lite_cm_challenge_matches(const struct lite_cm_challenge *c,
					     u64 got, u64 now_ms)
{
	return c->value && got == c->value && now_ms < c->expires_ms;
}

static inline void lite_cm_challenge_consume(struct lite_cm_challenge *c)
{
	c->value = 0;
	c->expires_ms = 0;
}

#endif /* LITE_WIRE_H */
