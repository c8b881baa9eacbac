/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE locks and barriers: the wire between lite.ko instances and the pure
 * rules on it, shared by lite.ko (lite_sync_home.c, lite_sync_client.c)
 * and its host test (lite_sync_rules_test.cc).
 *
 * - lite_sync_req_check(): what the home accepts. Every field is checked,
 *   whoever sent the frame: a request lite.ko would never send (a count
 *   where none belongs, an id 0, an unknown op) is refused with EPROTO
 *   before it touches any state.
 * - A file id and a wait's token are random 64-bit values (the client's
 *   get_random_u64()), never 0; the home matches UNLOCK on (node, file,
 *   token) and DIED on (node, file), so a frame with guessed ids releases
 *   nothing: the space to guess is 2^64 per file and 2^63 per hold.
 * - struct lite_sync_budget: the LOCKs and BARRIERs one node leaves waiting
 *   at one home, LITE_SYNC_WAIT_BUDGET in all and at most a per-uid share
 *   for each user, so one user's waits cannot take the slots every other
 *   user's LOCK, BARRIER and UNLOCK need.
 */
#ifndef LITE_SYNC_RULES_H
#define LITE_SYNC_RULES_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#include "uapi/lite.h"
#else
#include <errno.h>
#include <linux/types.h>
#include "kmod/include/uapi/lite.h"
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
#endif

/* ---- between lite.ko instances: a request and its reply, little-endian ---- */

#define LITE_SYNC_WIRE_VERSION	1

enum lite_sync_req_op {
	LITE_SYNC_REQ_LOCK = 1,		/* the reply comes when granted */
	LITE_SYNC_REQ_TRYLOCK = 2,	/* answered at once: 0 or EBUSY */
	LITE_SYNC_REQ_UNLOCK = 3,	/* @token the holder's LOCK's */
	LITE_SYNC_REQ_BARRIER = 4,	/* the reply comes when the barrier passes */
	/* @token's wait ends: forgotten, or released if already granted. */
	LITE_SYNC_REQ_CANCEL = 5,
	/*
	 * File @file_id of the client node closed: every lock it holds is
	 * released with the owner-died mark, the barriers it is part of
	 * break (ECONNABORTED). @lmr_id and @token 0.
	 */
	LITE_SYNC_REQ_DIED = 6,
};

struct lite_sync_req {
	__le16 version;
	__le16 op;			/* enum lite_sync_req_op */
	__le32 count;			/* BARRIER's; else 0 */
	__le64 lmr_id;
	__le64 token;			/* this wait's: random, not 0 */
	__le64 file_id;			/* the caller's file: random, not 0 */
};

struct lite_sync_reply {
	__le32 err;			/* 0 or a positive errno */
	__le32 result;			/* LITE_SYNC_OWNER_DIED */
};

/*
 * Request slots per client node at a home's service: its ring is this many
 * 64-byte slots, and each of sync_nodes client nodes has one (charged to
 * lmr_quota_mib like every RPC ring: 256 KiB with the default 64 nodes).
 */
#define LITE_SYNC_DEPTH		64

/*
 * LOCKs and BARRIERs one node leaves waiting at one home: fewer than the
 * home's request slots for this node, so that UNLOCK, TRYLOCK, CANCEL and
 * DIED always find one (a holder's UNLOCK stuck behind the waiters it
 * would wake would be a deadlock).
 */
#define LITE_SYNC_WAIT_BUDGET	(LITE_SYNC_DEPTH - 16)
/* One uid's share of them by default (sync_waits_per_uid). */
#define LITE_SYNC_WAITS_PER_UID_DEFAULT	16

/* Arrivals one barrier remembers (its participants): the largest count. */
#define LITE_SYNC_MEMBERS_MAX	LITE_SYNC_COUNT_MAX

/* A request's fields in CPU order, for the check. */
struct lite_sync_fields {
	u16 version, op;
	u32 count;
	u64 lmr_id, token, file_id;
};

/* 0 if lite.ko could have sent it, else -EPROTO. */
static inline int lite_sync_req_check(const struct lite_sync_fields *f)
{
	if (f->version != LITE_SYNC_WIRE_VERSION || !f->file_id)
		return -EPROTO;
	switch (f->op) {
	case LITE_SYNC_REQ_LOCK:
	case LITE_SYNC_REQ_TRYLOCK:
	case LITE_SYNC_REQ_UNLOCK:
	case LITE_SYNC_REQ_CANCEL:
		return f->lmr_id && f->token && !f->count ? 0 : -EPROTO;
	case LITE_SYNC_REQ_BARRIER:
		return f->lmr_id && f->token && f->count &&
		       f->count <= LITE_SYNC_COUNT_MAX ? 0 : -EPROTO;
	case LITE_SYNC_REQ_DIED:
		return !f->lmr_id && !f->token && !f->count ? 0 : -EPROTO;
	default:
		return -EPROTO;
	}
}

/* A lock's holder: whoever took it (node, file and the LOCK's token). */
struct lite_sync_hold {
	u32 node;
	u64 file_id, token;
};

/*
 * Whether an UNLOCK or CANCEL from @node names the hold @h: all three must
 * match, so a frame with a guessed file id still needs the hold's token.
 */
static inline bool lite_sync_hold_is(const struct lite_sync_hold *h, u32 node,
				     u64 file_id, u64 token)
{
	return h->node == node && h->file_id == file_id && h->token == token;
}

/*
 * The waits one node has at one home, by uid. A uid with waits has an
 * entry; there are never more such uids than waits, so the table is as
 * long as the budget. The caller serialises (a spinlock in lite.ko).
 */
struct lite_sync_budget {
	u32 waits;
	struct {
		u32 uid;
		u32 waits;
	} user[LITE_SYNC_WAIT_BUDGET];
};

/*
 * One wait more for @uid: 0; -EDQUOT when @uid has @per_uid waits here
 * already (its own waits must end first: refused, not queued); -EAGAIN
 * when the node's budget is full (several users' waits: the caller waits
 * for one to end).
 */
static inline int lite_sync_budget_take(struct lite_sync_budget *b, u32 uid,
					u32 per_uid)
{
	unsigned int i, mine = LITE_SYNC_WAIT_BUDGET, spare = mine;

	for (i = 0; i < LITE_SYNC_WAIT_BUDGET; i++) {
		if (b->user[i].waits && b->user[i].uid == uid)
			mine = i;
		else if (!b->user[i].waits && spare == LITE_SYNC_WAIT_BUDGET)
			spare = i;
	}
	if (mine < LITE_SYNC_WAIT_BUDGET && b->user[mine].waits >= per_uid)
		return -EDQUOT;
	if (b->waits >= LITE_SYNC_WAIT_BUDGET)
		return -EAGAIN;
	if (mine == LITE_SYNC_WAIT_BUDGET) {
		/* waits < budget: some entry is free. */
		mine = spare;
		b->user[mine].uid = uid;
	}
	b->user[mine].waits++;
	b->waits++;
	return 0;
}

/* A wait of @uid taken with lite_sync_budget_take() ended. */
static inline void lite_sync_budget_put(struct lite_sync_budget *b, u32 uid)
{
	unsigned int i;

	for (i = 0; i < LITE_SYNC_WAIT_BUDGET; i++) {
		if (b->user[i].waits && b->user[i].uid == uid) {
			b->user[i].waits--;
			b->waits--;
			return;
		}
	}
}

#endif /* LITE_SYNC_RULES_H */
