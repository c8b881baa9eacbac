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
 * Failures: the home hears of a client node's failure from the manager,
 * through the agent (PEER_REMOVE or a new incarnation of the node:
 * lite_sync_peer_failed()), and of a client process's death from that
 * node's lite.ko, which tells the home in the file's release
 * (SYNC_REQ_DIED). lite.ko's own verdict that a peer is unreachable (its
 * RC retries ran out: lite_sync_peer_down()) only drops that node's waits:
 * a holder that was merely cut off keeps its lock, and no waiter enters
 * while it may still be in its critical section. A caller that gives up
 * (timeout, fatal signal) sends SYNC_REQ_CANCEL, which the home answers
 * by forgetting the wait, or by releasing what it had granted meanwhile:
 * either way nothing stays held by a caller that is gone.
 */
#ifndef LITE_SYNC_H
#define LITE_SYNC_H

#include <linux/types.h>

#include "lite_sync_rules.h"

struct lite_file;

/* ---- inside lite.ko (the wire and its rules: lite_sync_rules.h) ---- */

/* lite_sync_home.c */
int lite_sync_init(void);
void lite_sync_exit(void);
/* This node has an identity (again): serve its locks once the agent answers. */
void lite_sync_node_set(u32 node_id);
/*
 * Peer @node's connections are down (lite.ko's own verdict, or before
 * lite_sync_peer_failed()): its waits are dropped unanswered, its ring went
 * with them; what it holds stays held. Process context (lite_lock may be
 * held); so for the other two.
 */
void lite_sync_peer_down(u32 node);
/*
 * The manager failed @node's incarnation (PEER_REMOVE, or a new one
 * replaced it): its locks pass on marked owner-died, its barriers break.
 */
void lite_sync_peer_failed(u32 node);
/* The LMR @lmr_id hosted here is freed: its waiters get ESTALE. */
void lite_sync_lmr_gone(u64 lmr_id);

/* lite_sync_client.c */
int lite_sync_client_init(void);
/* Unload: every binding to a home closed, no release still running. */
void lite_sync_client_exit(void);
/* LITE_IOC_SYNC. */
long lite_ioc_sync(struct lite_file *lf, void __user *uarg);
/* The file closes: its locks are released and its barriers broken. */
void lite_sync_file_release(struct lite_file *lf);

#endif /* LITE_SYNC_H */
