/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: what the control side (open files, handles, grants, hosted LMR
 * memory; lite_file.c, lite_grant.c, lite_lmr.c, lite_upcall.c) hands to the
 * data path (one-sided operations; lite_ops.c).
 *
 * A handle in an open file points at a grant. The data path looks the grant
 * up, checks access and bounds against it, and posts RDMA operations to the
 * grant's home node with the grant's memory key and chunk addresses. It
 * never takes a mutex or allocates for that.
 */
#ifndef LITE_GRANT_H
#define LITE_GRANT_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "uapi/lite.h"

/*
 * Every chunk of a grant but its last is a multiple of this (the smallest
 * page size a home may have; lite_grant_answer.c checks it).
 */
#define LITE_CHUNK_UNIT		SZ_4K

struct lite_chunk {
	u64 addr;		/* RDMA address at the home node */
	u64 length;
	u64 offset;		/* where the chunk starts in the LMR */
};

struct lite_grant {
	/*
	 * Held by the handle that points at it, by the node's grant table
	 * (until unmapped) and by every operation running on it.
	 */
	struct kref ref;
	u64 grant_id;
	u64 lmr_id;
	u32 home_node_id;	/* may be this node's own id */
	u32 access;		/* enum lite_access */
	u64 epoch;		/* the home node's incarnation */
	u64 size;
	u32 memory_key;
	/*
	 * 0 while usable; -ESTALE once revoked (LITE_CMD_GRANT_REVOKE, the
	 * LMR freed). Written with WRITE_ONCE, read with READ_ONCE.
	 */
	int revoked;
	/*
	 * Operations in flight on the grant: counted from the moment an
	 * operation has passed its checks (lite_grant_op_get()) until the
	 * last work request it posted has completed, also when its caller
	 * was killed or timed out and left the context to the completion
	 * handler. A revoke waits on @drained for it to reach 0.
	 */
	atomic_t ops;
	wait_queue_head_t drained;
	/*
	 * Set when an unmap or close gave up waiting for @ops: the grant
	 * stays in the node's table (revoked, GRANT_REVOKE answers ETIMEDOUT)
	 * until the operation that brings @ops to 0 queues @unmap_work, which
	 * forgets it and sends the UNMAP upcall. Written once, then read by
	 * lite_grant_op_put().
	 */
	bool parked;
	unsigned long unmap_queued;	/* bit 0: @unmap_work was queued */
	struct work_struct unmap_work;
	/* The control side's (lite_grant.c); the data path need not look. */
	struct rcu_head rcu;
	struct lite_lmr *hosted;	/* the LMR when hosted here, with a ref */
	u32 uid, gid, pid;		/* who mapped it */
	struct group_info *groups;	/* its supplementary groups, or NULL */
	struct lite_user *user;		/* its per-user charge until freed, or NULL */
	u64 incarnation;		/* the holder's (this node's) */
	s64 granted_at_ms;
	char name[LITE_NAME_BUF];
	u32 nr_chunks;
	struct lite_chunk chunks[];	/* in offset order, no gaps */
};

struct lite_lmr;
struct file;

/* Open files of /dev/lite: file->private_data. */
struct lite_file;

/*
 * The grant behind @handle in @lf with a reference, or NULL if the handle
 * is unknown or unmapped (the caller returns -EBADF). Lock-free.
 */
struct lite_grant *lite_file_grant_get(struct lite_file *lf, u64 handle);
void lite_grant_put(struct lite_grant *grant);
/*
 * A reference to @lf's open file, which keeps @lf: for an upcall whose
 * answer may come after its caller left. fput() gives it back.
 */
struct file *lite_file_pin(struct lite_file *lf);

/*
 * The home refused @grant's key (a work request completed with
 * IB_WC_REM_ACCESS_ERR): revokes it (ESTALE), counted once per grant in
 * grants_key_refused. The data path, any context; the grant stays in the
 * table until its handle is unmapped, like any revoked grant.
 */
void lite_grant_key_refused(struct lite_grant *grant);

/* A parked grant has drained: queue its unmap (once). Any context. */
void lite_grant_parked_drained(struct lite_grant *grant);

static inline void lite_grant_op_put(struct lite_grant *grant)
{
	/*
	 * Full barrier before wq_has_sleeper()'s and before reading @parked:
	 * pairs with the waiter's, and with lite_grant_park()'s smp_mb().
	 */
	if (!atomic_dec_and_test(&grant->ops))
		return;
	if (unlikely(READ_ONCE(grant->parked)))
		lite_grant_parked_drained(grant);
	if (wq_has_sleeper(&grant->drained))
		wake_up(&grant->drained);
}

/*
 * Counts an operation in flight on @grant, then checks that the grant is
 * not revoked: -ESTALE, not counted, if it is. Any context, lock-free. The
 * increment is ordered before the check (and lite_grant_revoke_wait()
 * orders its mark before it reads the count), so a revoke that finds no
 * operation in flight is seen by every operation that counts itself later.
 */
static inline int lite_grant_op_get(struct lite_grant *grant)
{
	int revoked;

	atomic_inc(&grant->ops);
	/* Pairs with the smp_mb() in lite_grant_drain() (lite_grant.c). */
	smp_mb__after_atomic();
	revoked = READ_ONCE(grant->revoked);
	if (unlikely(revoked)) {
		lite_grant_op_put(grant);
		return revoked;
	}
	return 0;
}

/*
 * How long a drain waits: an operation counted on the grant may wait up to
 * op_timeout_ms for a context or send credits before it sees the revoke,
 * and a work request already posted lives until the RC transport gives up
 * (peer_timeout_ms) or its QP is flushed; plus some slack.
 */
unsigned long lite_grant_drain_jiffies(void);

/*
 * Revokes @grant (operations on it fail with ESTALE from now on, those
 * running stop before their next batch) and waits, killably, up to
 * @timeout jiffies until no operation is in flight on it. 0 when drained:
 * then no work request of the grant is outstanding on any QP of this node,
 * and none is posted later. -ETIMEDOUT or -EINTR otherwise (the grant stays
 * revoked; calling again waits again). Process context; the caller holds a
 * reference.
 */
int lite_grant_revoke_wait(struct lite_grant *grant, unsigned long timeout);
/*
 * Unmap and file close, with the handle's reference: revokes @grant and
 * waits, not killably (a closing task may be dying), until @deadline
 * (jiffies) for its operations in flight. Drained: the grant leaves the
 * node's table and the agent hears the UNMAP upcall. Not drained: the
 * grant is parked (logged, counted in grant_drain_timeouts and the
 * grants_parked gauge) and given back the same way once its last
 * operation ends, so the manager never hears of an unmap while anything
 * of the grant is in flight here.
 */
void lite_grant_unmap(struct lite_grant *grant, unsigned long deadline);

/*
 * The index of the chunk that holds byte @offset of @grant (offset < size).
 * Chunks are found by binary search over chunks[].offset.
 */
u32 lite_grant_chunk_index(const struct lite_grant *grant, u64 offset);

struct io_uring_cmd;
/* IORING_OP_URING_CMD on /dev/lite (lite_ops_uring.c). */
int lite_ops_uring_cmd(struct lite_file *lf, struct io_uring_cmd *cmd,
		       unsigned int issue_flags);

#endif /* LITE_GRANT_H */
