/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: what the one-sided operations' files share, and nobody else sees:
 * the operations (lite_ops.c; the atomics in lite_ops_atomic.c, batches in
 * lite_ops_batch.c, the caller's spin in lite_ops_spin.c), the per-device
 * contexts they run in (lite_ops_pool.c) and the bounce buffer and pinned
 * user pages that hold their local bytes (lite_ops_buf.c).
 */
#ifndef LITE_OPS_INTERNAL_H
#define LITE_OPS_INTERNAL_H

#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "transport/lite_conn.h"
#include "mem/lite_grant.h"
#include "mem/lite_mem.h"
#include "lite_ops.h"

/* Operation contexts per device: operations running at once on the node. */
#define LITE_OP_SLOTS		32
/* User buffers up to this size are copied through the bounce buffer. */
#define LITE_BOUNCE_SIZE	SZ_16K
/* User pages pinned and mapped at once for bigger buffers (1 MiB). */
#define LITE_WIN_PAGES		256
/* Work requests per batch, and SGEs per work request at most. */
#define LITE_OP_WRS		32
#define LITE_OP_SGE_MAX		16
/* Local pieces of one batch: pinned pages, or MEMSET's repeated buffer. */
#define LITE_OP_SEGS		max(LITE_WIN_PAGES, LITE_OP_WRS * LITE_OP_SGE_MAX)

/*
 * One operation context. The fields after `index` belong to the operation
 * that holds it; `pending` and `status` are shared with the completion
 * handler of the batch in flight.
 */
struct lite_op_slot {
	struct lite_ops_pool *pool;
	unsigned int index;
	refcount_t refs;		/* the operation + the batch in flight */
	struct ib_cqe cqe;
	struct completion done;		/* the batch's last completion */
	atomic_t pending;		/* work requests of the batch not completed */
	int status;			/* the batch's first error (cmpxchg) */
	struct lite_conn *batch_conn;	/* where the batch was posted */
	/*
	 * The io_uring command whose operation this is (lite_ops_uring.c):
	 * its last completion ends it and gives the context back, with no
	 * waiter; the submitter's task only posts its CQE.
	 */
	struct io_uring_cmd *ucmd;
	/* Whose key the batch uses: revoked if the home refuses it. */
	struct lite_grant *batch_grant;
	/* A HIGH batch's post time for its round trip (QoS), else 0. */
	u64 qos_posted_ns;
	unsigned int batch_wrs;		/* send queue credits it holds */
	/* Connections whose inflight this context counts in. */
	struct lite_conn *conns[2];
	/*
	 * Grants whose ops this context counts in, each with a reference:
	 * an operation's grants stay counted until its last completion, also
	 * when its caller left (@abandoned).
	 */
	struct lite_grant *grants[2];
	bool abandoned;
	/* The pinned window, unpinned by the releaser if the caller left. */
	unsigned int nr_pages;
	bool pages_dirty;		/* the device wrote them (READ) */
	struct work_struct release_work;

	void *buf;			/* the bounce buffer, LITE_BOUNCE_SIZE */
	u64 buf_dma;
	struct page **pages;		/* LITE_WIN_PAGES */
	u64 *page_dma;			/* LITE_WIN_PAGES */
	struct ib_sge *segs;		/* LITE_OP_SEGS: local pieces */
	unsigned int nr_segs;
	struct ib_sge *sges;		/* LITE_OP_WRS * LITE_OP_SGE_MAX */
	struct ib_rdma_wr *wrs;		/* LITE_OP_WRS */
	unsigned int nr_wrs;
	struct ib_atomic_wr awr;
};

struct lite_ops_pool {
	struct lite_device *ldev;
	DECLARE_BITMAP(busy, LITE_OP_SLOTS);
	wait_queue_head_t wait;		/* a context coming free */
	struct lite_op_slot slots[LITE_OP_SLOTS];
};

/* One running operation, on the caller's stack. */
struct lite_op {
	struct lite_grant *grant;	/* slot->grants[0] (lite_op_begin()) */
	struct lite_conn *conn;		/* the first connection of the context */
	struct lite_op_slot *slot;
	struct ib_device *ibdev;
	u32 lkey;
	unsigned long deadline;		/* jiffies */
	bool abandoned;			/* the caller stopped waiting */
	/* No send queue credits: -EAGAIN at once (io_uring's NONBLOCK). */
	bool no_wait;
	u8 prio;			/* LITE_PRIO_HIGH or _LOW */
};

static inline long lite_op_remaining(const struct lite_op *op)
{
	long left = (long)(op->deadline - jiffies);

	return left > 0 ? left : 0;
}

/*
 * The part of a READ's result that could not be copied to the user's
 * buffer without a page fault (lite_rw_user_bounce()): staged here, and
 * copied after lite_op_end(), so no fault is taken while the operation
 * holds a connection (lifetimes review #3).
 */
struct lite_copy_out {
	void *buf;			/* kmalloc'd, or NULL: nothing left */
	void __user *ubuf;
	size_t len;
};

/*
 * How many times an operation whose user buffer went away between its
 * fault-in and its no-fault copy or pin is restarted without progress
 * before it fails with EFAULT.
 */
#define LITE_OP_FAULT_RETRIES	3

/* Maps a wait's result: > 0 in time; 0 timed out; < 0 a fatal signal. */
static inline int lite_wait_errno(long ret)
{
	if (ret > 0)
		return 0;
	return ret ? -EINTR : -ETIMEDOUT;
}

/* Ends an operation's count in @grant and drops its reference. */
static inline void lite_grant_op_end(struct lite_grant *grant)
{
	lite_grant_op_put(grant);
	lite_grant_put(grant);
}

/* lite_ops.c: the operations, their connections and work requests. */

/*
 * What READ, WRITE, MEMSET and the atomics ask of their handle, checked in
 * this order before anything is taken on the home node's side.
 */
struct lite_op_target {
	u64 handle;
	u64 offset;
	u64 length;
	u32 access;			/* enum lite_access the operation needs */
	/* An atomic: the word must be aligned at the home node. */
	bool word;
	u64 raddr;			/* out, for a word: its RDMA address */
	/*
	 * A WRITE's user buffer, or a pinned READ's (@prefault_write),
	 * faulted in before anything is taken on the home's side: a slow
	 * fault (FUSE, swap, userfaultfd) then holds neither the grant's
	 * in-flight count nor a connection's inflight count, and a WRITE
	 * that cannot read all of its buffer fails before it writes
	 * anything. What goes away after (reclaim, munmap) is noticed without
	 * a fault (lite_ops_buf.c) and the operation restarts. A READ is
	 * faulted in without writing (fault_in_safe_writeable()); one through
	 * the bounce buffer is not, since its copy-out comes after the
	 * connection in the rare case that it would fault, and one page walk
	 * more per small READ is what that avoids.
	 */
	const char __user *prefault;
	bool prefault_write;
	/*
	 * No operation context free on the device, or a LOW operation
	 * throttled: -EAGAIN at once instead of waiting (a batch that holds
	 * some contexts finishes one first).
	 */
	bool no_wait;
	/* Asked for (enum lite_priority); lite_op_begin() resolves it. */
	u32 priority;
	u8 prio;			/* out: LITE_PRIO_HIGH or _LOW */
};

/*
 * handle -> grant -> connection -> context, for one @t. On success @op
 * holds a context, which holds op->grant; lite_op_end() gives it back. On
 * failure nothing is held.
 */
int lite_op_begin(struct lite_op *op, struct lite_file *lf,
		  struct lite_op_target *t);
/*
 * Gives the context back, and with it the operation's grants: now, or at
 * the last completion of a batch its caller stopped waiting for. @keep:
 * the caller keeps the first grant, counted and referenced, and ends it
 * with lite_grant_op_end() (not for an abandoned operation).
 */
void __lite_op_end(struct lite_op *op, bool keep);

static inline void lite_op_end(struct lite_op *op)
{
	__lite_op_end(op, false);
}

/*
 * Posts the batch (slot->wrs[0..nr_wrs), or the atomic when @atomic) on
 * @conn with @grant's key: 0 once it is posted (a failed post is reported
 * by the wait), or an error with nothing posted. lite_batch_wait() waits
 * for it: its status, or -ETIMEDOUT or -EINTR with the batch perhaps still
 * in flight (the operation is then abandoned).
 */
int lite_batch_post(struct lite_op *op, struct lite_conn *conn,
		    struct lite_grant *grant, bool atomic);
int lite_batch_wait(struct lite_op *op);
/*
 * An atomic's target (the 8-byte word at @offset of @handle); its work
 * request in op's context (-EOPNOTSUPP: no atomics on that path); and,
 * once it completed, the old value.
 */
void lite_atomic_target(struct lite_op_target *t, u64 handle, u64 offset);
int lite_atomic_prepare(struct lite_op *op, const struct lite_op_target *t,
			u64 operand, u64 swap, bool cas);
u64 lite_atomic_result(struct lite_op *op);
/* LITE_IOC_FAA and LITE_IOC_CAS (lite_ops_atomic.c). */
long lite_op_atomic(struct lite_file *lf, struct lite_atomic __user *uarg,
		    bool cas);
/* The completion handler of every work request a context posts. */
void lite_op_done(struct ib_cq *cq, struct ib_wc *wc);
/*
 * One batch of RDMA READs or WRITEs (@write) over [off, off + len) of
 * @grant on @conn, its local side in slot->segs; the bytes it moved, or
 * an error.
 */
s64 lite_rw_batch(struct lite_op *op, struct lite_conn *conn,
		  struct lite_grant *grant, bool write, u64 off, u64 len);
/* lite_rw_batch()'s first half: the bytes the posted batch covers. */
s64 lite_rw_post(struct lite_op *op, struct lite_conn *conn,
		 struct lite_grant *grant, bool write, u64 off, u64 len);
/*
 * The same on op->grant over op->conn, for [off, off + len) as one batch:
 * @len once posted, or an error with nothing posted (-EIO: one batch of
 * work requests does not cover it).
 */
s64 lite_rw_post_all(struct lite_op *op, bool write, u64 off, u64 len);

/* lite_ops_pool.c: the per-device operation contexts. */

/*
 * Puts a context of @conn's device behind @op, waiting for one until
 * op->deadline; sets op->conn, op->slot, op->ibdev and op->lkey. The
 * context takes over the connection's inflight count (also on failure,
 * where it is dropped): -EIO if the device has no contexts, -ETIMEDOUT,
 * -EINTR on a fatal signal; without @wait, -EAGAIN at once when none is
 * free. The caller then hands it its grant (grants[0]).
 */
int lite_slot_get(struct lite_op *op, struct lite_conn *conn, bool wait);
/*
 * Drops a reference; the last one gives the context, its connections and
 * its grants back. @can_sleep: process context, where pinned pages can be
 * unpinned and a grant's last reference dropped (otherwise a work item
 * does it).
 */
void lite_slot_put(struct lite_op_slot *slot, bool can_sleep);

/* lite_ops_buf.c: the bounce buffer and pinned user pages. */

/* Unmaps and unpins the pinned window. Process context. */
void lite_slot_unpin(struct lite_op_slot *slot);
/* Moves [off, off + len) of @grant through the bounce buffer on @conn. */
int lite_rw_bounce(struct lite_op *op, struct lite_conn *conn,
		   struct lite_grant *grant, bool write, u64 off, u64 len);
/*
 * The rest run on op->grant over op->conn (lite_op_begin()). None of them
 * faults on user memory: the caller faulted the buffer in first, and what
 * has gone since makes them return -EAGAIN (the caller ends the operation,
 * faults in again and restarts where it stopped).
 *
 * READ into or WRITE from @ubuf (len <= LITE_BOUNCE_SIZE), copied. A READ
 * whose buffer is not all resident leaves the rest in *@out for the
 * caller to copy after lite_op_end().
 */
int lite_rw_user_bounce(struct lite_op *op, bool write, u64 off,
			void __user *ubuf, u64 len, struct lite_copy_out *out);
/*
 * The same in halves, for a batched operation whose @len bytes one batch
 * of work requests covers: a WRITE's bytes copied in and the batch posted
 * (-EAGAIN: the WRITE's buffer is not resident; nothing posted), then,
 * after lite_batch_wait(), a READ's bytes copied out.
 */
int lite_bounce_post(struct lite_op *op, bool write, u64 off,
		     void __user *ubuf, u64 len);
int lite_bounce_read_out(struct lite_op *op, void __user *ubuf, u64 len,
			 struct lite_copy_out *out);
/*
 * READ into or WRITE from @ubuf, pinned one window at a time; *@done the
 * bytes moved (also with -EAGAIN).
 */
int lite_rw_user_pinned(struct lite_op *op, bool write, u64 off,
			unsigned long ubuf, u64 len, u64 *done);
/*
 * A READ or WRITE of @t (its handle, offset and length) with @ubuf, from
 * lite_op_begin() to lite_op_end(), restarted where it stopped when the
 * buffer must be faulted in again.
 */
int lite_op_rw_run(struct lite_file *lf, struct lite_op_target *t,
		   bool write, void __user *ubuf);
/* MEMSET: every SGE points at the bounce buffer filled with @value. */
int lite_memset_bounce(struct lite_op *op, u64 off, u64 len, u8 value);

/* lite_ops_batch.c: LITE_IOC_BATCH (lite_ioc_batch(), lite_ops.h). */
/* An entry's arguments, as the single-operation ioctls check theirs. */
int lite_batch_check(const struct lite_batch_op *a);
/* What entry @a asks of its handle (no prefault: see lite_ops_batch.c). */
void lite_batch_target(struct lite_op_target *t, const struct lite_batch_op *a);
/*
 * Entry @a's operation on @op completed with @ret: a READ's bytes copied
 * out of the bounce buffer (what would fault is left in *@out, for after
 * the context is given back), an atomic's old value in *@old.
 */
int lite_batch_collect(struct lite_op *op, const struct lite_batch_op *a,
		       int ret, u64 *old, struct lite_copy_out *out);
/* Counts entry @a's outcome @err in the operations' statistics. */
void lite_batch_account(const struct lite_batch_op *a, int err);

/*
 * lite_ops_uring.c: IORING_OP_URING_CMD. The last completion of @slot's
 * operation, in any context: its results are moved into its command, which
 * is finished in the submitter's task; the caller then drops the
 * command's reference to the context with the batch's.
 */
void lite_uring_complete(struct lite_op_slot *slot);

#endif /* LITE_OPS_INTERNAL_H */
