/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE RPC: the 32-bit immediate of every RPC work request (pure logic
 * shared with lite.ko, tested on the host by lite_rpc_imm_test.cc).
 *
 * Every RPC transfer is one RDMA WRITE_WITH_IMM; its immediate says what
 * the bytes are and where they went, so the receiver needs no header in
 * the data (the request's bytes are exactly the user's, zero copy):
 *
 *   31 30 | 29 ........ 16 | 15 .. 12 | 11 ....... 0
 *   kind  |  port (14 bits) |  code    |  slot (12 bits)
 *
 * kind CALL:  a request that wants a reply, in slot `slot` of the sender
 *             node's ring of the service at `port` (the receiver's);
 *             code 0.
 * kind MSG:   the same for a one-way message; code 0.
 * kind REPLY: the answer to request slot `slot` of the receiver's binding
 *             to the sender's service at `port`, in the receiver's reply
 *             slot `slot`; code is enum lite_rpc_status.
 * kind CTRL:  no bytes; code is enum lite_rpc_ctrl:
 *             CREDIT    server -> client: message slot `slot` is free;
 *             GONE      server -> client: the service at `port` is gone,
 *                       every request of the client's ring is dropped
 *                       and no reply of it will come (slot 0);
 *             RELEASED  client -> server: the client node let go of its
 *                       ring of `port` after GONE, no write of it is in
 *                       flight (slot 0).
 * The sender's node is the connection's peer, never in the immediate.
 * The immediate travels in network byte order (ib_send_wr.ex.imm_data is
 * __be32): lite_rpc_imm_encode() and _decode() work on host order, the
 * caller converts.
 */
#ifndef LITE_RPC_IMM_H
#define LITE_RPC_IMM_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <linux/types.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
#endif

enum lite_rpc_kind {
	LITE_RPC_KIND_CALL = 0,
	LITE_RPC_KIND_MSG = 1,
	LITE_RPC_KIND_REPLY = 2,
	LITE_RPC_KIND_CTRL = 3,
};

/* A REPLY's code: how the request ended. */
enum lite_rpc_status {
	LITE_RPC_STATUS_OK = 0,		/* the bytes are the reply */
	LITE_RPC_STATUS_REFUSED = 1,	/* the service is gone: ECONNREFUSED */
	__LITE_RPC_STATUS_MAX,
};

/* A CTRL's code. */
enum lite_rpc_ctrl {
	LITE_RPC_CTRL_CREDIT = 1,
	LITE_RPC_CTRL_GONE = 2,
	LITE_RPC_CTRL_RELEASED = 3,
	__LITE_RPC_CTRL_MAX,
};

#define LITE_RPC_IMM_PORT_BITS	14
#define LITE_RPC_IMM_SLOT_BITS	12
/* 2^PORT_BITS - 1 and 2^SLOT_BITS (no BIT(): also built on the host) */
#define LITE_RPC_IMM_PORT_MAX	16383U
#define LITE_RPC_IMM_SLOTS	4096U

struct lite_rpc_imm {
	u8 kind;			/* enum lite_rpc_kind */
	u8 code;			/* 0..15 */
	u16 port;			/* 1..LITE_RPC_IMM_PORT_MAX */
	u16 slot;			/* 0..LITE_RPC_IMM_SLOTS - 1 */
};

static inline u32 lite_rpc_imm_encode(const struct lite_rpc_imm *m)
{
	return ((u32)(m->kind & 3) << 30) |
	       ((u32)(m->port & LITE_RPC_IMM_PORT_MAX) << 16) |
	       ((u32)(m->code & 15) << 12) |
	       ((u32)m->slot & (LITE_RPC_IMM_SLOTS - 1));
}

/*
 * Decodes @imm into @m; false if it is not a valid immediate (port 0, a
 * code its kind does not have, a slot on GONE/RELEASED): the receiver
 * drops it and counts it.
 */
static inline bool lite_rpc_imm_decode(u32 imm, struct lite_rpc_imm *m)
{
	m->kind = imm >> 30;
	m->port = (imm >> 16) & LITE_RPC_IMM_PORT_MAX;
	m->code = (imm >> 12) & 15;
	m->slot = imm & (LITE_RPC_IMM_SLOTS - 1);
	if (!m->port)
		return false;
	switch (m->kind) {
	case LITE_RPC_KIND_CALL:
	case LITE_RPC_KIND_MSG:
		return m->code == 0;
	case LITE_RPC_KIND_REPLY:
		return m->code < __LITE_RPC_STATUS_MAX;
	default:
		if (m->code == LITE_RPC_CTRL_CREDIT)
			return true;
		return m->code && m->code < __LITE_RPC_CTRL_MAX && !m->slot;
	}
}

#endif /* LITE_RPC_IMM_H */
