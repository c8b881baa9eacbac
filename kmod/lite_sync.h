/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE distributed locks and barriers: the uapi header has the interface,
 * docs/locks.md the story.
 *
 * Every node's lite.ko serves the locks and barriers of the LMRs it hosts
 * as the kernel RPC service "lite.sync.<node id>" (lite_sync_home.c: one
 * thread keeps every lock's holder and FIFO of waiters, every barrier's
 * arrivals and participants). A caller's lite.ko is that service's client
 * (lite_sync_client.c): one binding per home node, a request per LOCK,
 * UNLOCK or BARRIER, whose reply comes when the lock is granted or the
 * barrier passes. The control plane only names the service, once per
 * (client node, home node).
 *
 * Failures: the home hears of a client node's failure from lite.ko's peer
 * table (lite_sync_peer_down()) and of a client process's death from that
 * node's lite.ko, which tells the home in the file's release
 * (SYNC_REQ_DIED). A caller that gives up (timeout, fatal signal) sends
 * SYNC_REQ_CANCEL, which the home answers by forgetting the wait, or by
 * releasing what it had granted meanwhile: either way nothing stays held
 * by a caller that is gone.
 */
#ifndef LITE_SYNC_H
#define LITE_SYNC_H

#include <linux/types.h>

struct lite_file;

/* ---- between lite.ko instances: a request and its reply, little-endian ---- */

#define LITE_SYNC_WIRE_VERSION	1

enum lite_sync_req_op {
	LITE_SYNC_REQ_LOCK = 1,		/* the reply comes when granted */
	LITE_SYNC_REQ_TRYLOCK = 2,	/* answered at once: 0 or EBUSY */
	LITE_SYNC_REQ_UNLOCK = 3,	/* @token the holder's */
	LITE_SYNC_REQ_BARRIER = 4,	/* the reply comes when the barrier passes */
	/* @token's wait ends: forgotten, or released if already granted. */
	LITE_SYNC_REQ_CANCEL = 5,
	/*
	 * File @file_id of the client node closed: every lock it holds is
	 * released with the owner-died mark, the barriers it is part of
	 * break (ECONNABORTED). @lmr_id 0.
	 */
	LITE_SYNC_REQ_DIED = 6,
};

struct lite_sync_req {
	__le16 version;
	__le16 op;			/* enum lite_sync_req_op */
	__le32 count;			/* BARRIER */
	__le64 lmr_id;
	__le64 token;			/* this wait's, unique on the client node */
	__le64 file_id;			/* the caller's file, unique on the client node */
};

struct lite_sync_reply {
	__le32 err;			/* 0 or a positive errno */
	__le32 result;			/* LITE_SYNC_OWNER_DIED */
};

/* ---- inside lite.ko ---- */

/*
 * Request slots per client node at a home's service: its ring is this many
 * 64-byte slots, and each of sync_nodes client nodes has one (charged to
 * lmr_quota_mib like every RPC ring: 256 KiB with the default 64 nodes).
 */
#define LITE_SYNC_DEPTH		64

/* lite_sync_home.c */
int lite_sync_init(void);
void lite_sync_exit(void);
/* This node has an identity (again): serve its locks once the agent answers. */
void lite_sync_node_set(u32 node_id);
/*
 * Peer @node is down: release what it held, break its barriers. Process
 * context (lite_lock may be held); so for lite_sync_lmr_gone().
 */
void lite_sync_peer_down(u32 node);
/* The LMR @lmr_id hosted here is freed: its waiters get ESTALE. */
void lite_sync_lmr_gone(u64 lmr_id);

/* lite_sync_client.c */
int lite_sync_client_init(void);
/* Unload: every binding to a home closed, no release still running. */
void lite_sync_client_exit(void);
long lite_sync_ioctl(struct lite_file *lf, void __user *uarg);
/* The file closes: its locks are released and its barriers broken. */
void lite_sync_file_release(struct lite_file *lf);

#endif /* LITE_SYNC_H */
