/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: priorities and QoS in lite.ko (lite_qos_throttle.c) — which
 * priority an operation runs at and whether its file may use it, and each
 * peer's throttle on low-priority operations, run by the policy in
 * lite_qos.h.
 */
#ifndef LITE_QOS_THROTTLE_H
#define LITE_QOS_THROTTLE_H

#include <linux/atomic.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "lite_qos.h"

struct dentry;
struct lite_file;

/*
 * One peer's QoS state, in struct lite_peer. @q is the policy's, under
 * @lock; the sample of the window running now is counted without it, the
 * high-priority round trips from completion handlers.
 */
struct lite_peer_qos {
	spinlock_t lock;		/* @q */
	struct lite_qos q;
	atomic64_t hi_ops;
	atomic64_t hi_rtt_sum_ns;
	atomic64_t hi_rtt_n;
	atomic64_t lo_bytes;
};

/* Module parameter `qos`: the throttle runs (READ_ONCE). */
extern bool lite_qos_on;

void lite_peer_qos_init(struct lite_peer_qos *pq);

/* A new file's priorities: @kernel files (lite_kernel_file_open()) may use HIGH. */
void lite_prio_file_init(struct lite_file *lf, bool kernel);

/*
 * The priority an operation asking for @requested runs at (0: the file's
 * default): LITE_PRIO_HIGH or _LOW in *@out, or -EINVAL (no priority),
 * -EPERM (HIGH, not allowed).
 */
int lite_prio_resolve(const struct lite_file *lf, u32 requested, u8 *out);

/* LITE_IOC_PRIORITY. */
long lite_ioc_priority(struct lite_file *lf, void __user *uarg);

/*
 * An operation of @cost bytes at @prio asks to start towards the peer of
 * @pq (qos on): 0 when it may (it is counted), else the ns to wait before
 * asking again. Never for HIGH.
 */
u64 lite_qos_start(struct lite_peer_qos *pq, u8 prio, u64 cost);

/*
 * Waits @ns, at most one window, killable: 0, or -EINTR on a fatal
 * signal. With @no_wait, -EAGAIN at once (io_uring issues it again from a
 * worker that may sleep).
 */
int lite_qos_wait(u64 ns, bool no_wait);

/*
 * The QP an operation at @prio tries first: with qos on and more than one
 * QP per peer, HIGH has QP 0 to itself and LOW the others, so that a small
 * HIGH operation never queues behind a LOW one's 64 KiB in one QP's send
 * queue; otherwise by CPU, spreading callers over the QPs.
 */
unsigned int lite_prio_first_qp(u8 prio);

/*
 * How many bytes of a READ or WRITE at @prio to @pq's peer go in one batch
 * of work requests: U64_MAX but for LOW while the peer's throttle is
 * engaged, then qos_low_chunk_kib. Between two batches a HIGH operation's
 * packets get on the wire (RC sends one QP's work requests in order, and
 * rxe a burst of one QP's packets at a time): its wait behind LOW traffic
 * is one chunk's, not one 64 KiB WRITE's.
 */
u64 lite_qos_chunk(const struct lite_peer_qos *pq, u8 prio);

/* A high-priority operation's round trip, from a completion handler. */
static inline void lite_qos_rtt(struct lite_peer_qos *pq, u64 ns)
{
	atomic64_add(ns, &pq->hi_rtt_sum_ns);
	atomic64_inc(&pq->hi_rtt_n);
}

/*
 * The same by node, for RPC (no connection held): an RPC call or message of
 * @cost bytes to @node waits its turn (0, -EINTR, -EAGAIN with @no_wait),
 * and a HIGH call's round trip is counted.
 */
int lite_qos_node_admit(u32 node, u8 prio, u64 cost, bool no_wait);
void lite_qos_node_rtt(u32 node, u64 ns);

/* debugfs: qos/ (windows by rule, and each peer's throttle). */
void lite_qos_debugfs_init(struct dentry *root);

#endif /* LITE_QOS_THROTTLE_H */
