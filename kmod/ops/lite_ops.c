// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the one-sided operations (LITE_IOC_READ .. LITE_IOC_CAS).
 *
 * The path of an operation, with no mutex and no allocation:
 *   handle -> grant (lite_file_grant_get(), lock-free) -> access (EACCES)
 *   -> bounds, overflow-safe (EINVAL) -> revoked (ESTALE) -> the home
 *   node's peer under RCU (this node's own LMRs: the loopback peer), whose
 *   incarnation must be the grant's epoch (older or unknown: EHOSTDOWN;
 *   newer: ESTALE) -> one of its connected RC QPs, starting at one picked
 *   by CPU (none: EHOSTDOWN) -> an operation context from the device's
 *   pool (lite_ops_pool.c) -> work requests, one per piece of a chunk,
 *   chained and all signaled -> the caller sleeps on the context's
 *   completion, which the CQ's softirq poller completes.
 *
 * lite_op_begin() is that path up to the context, for every operation but
 * MEMCPY, which takes two grants first. Where the local bytes live (the
 * bounce buffer, pinned user pages) is lite_ops_buf.c's business; the
 * contexts' lifetimes are explained in lite_ops_pool.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "lite_ops_internal.h"

/* ---- connections ---- */

/* A connection to @home picked by CPU, spreading callers over the QPs. */
static int lite_conn_ops_get(u32 home, u64 epoch, struct lite_conn **out)
{
	return lite_conn_ops_get_from(home, epoch, raw_smp_processor_id(), out);
}

/* ---- completions ---- */

/*
 * A failed work request's errno. IB_WC_REM_ACCESS_ERR is the home's
 * responder refusing the key or the address range: lite.ko posts only
 * inside the grant (lite_grant_check() bounds every operation by the
 * grant's size, lite_build_rw() never passes the end of a chunk, and the
 * chunks add up to that size, lite_grant_answer.c), and an atomic only
 * with the home's atomics, so what is refused is the grant itself: a key
 * the home no longer honours (its LMR invalidated under per-LMR keys, its
 * device removed and added back with a new key) or chunks the home never
 * registered under it. ESTALE, as for any grant that is no more; a bounds
 * bug here would need lite_build_rw() to leave the grant's chunks, which
 * the global key would not refuse either.
 */
static int lite_wc_errno(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_WR_FLUSH_ERR:	/* the connection is going down */
	case IB_WC_RETRY_EXC_ERR:	/* the peer does not answer */
	case IB_WC_RNR_RETRY_EXC_ERR:
		return -EHOSTDOWN;
	case IB_WC_REM_ACCESS_ERR:
		return -ESTALE;
	default:
		return -EIO;
	}
}

/* @n work requests of @slot's batch are done (or were never posted). */
static void lite_batch_put(struct lite_op_slot *slot, int n, bool can_sleep)
{
	struct lite_conn *conn = slot->batch_conn;

	if (!atomic_sub_and_test(n, &slot->pending))
		return;
	if (slot->qos_posted_ns)
		lite_qos_rtt(&conn->peer->qos,
			     ktime_get_ns() - slot->qos_posted_ns);
	atomic_add(slot->batch_wrs, &conn->sq_credits);
	if (wq_has_sleeper(&conn->wait))
		wake_up(&conn->wait);
	if (slot->ucmd) {
		/*
		 * An io_uring command has no waiter: its results leave the
		 * context now, and its own reference goes with the batch's,
		 * so nothing shared waits for the submitter's task (which
		 * may never run it, review 2026-11-28 H1).
		 */
		lite_uring_complete(slot);
		lite_slot_put(slot, can_sleep);
	} else {
		complete(&slot->done);
	}
	lite_slot_put(slot, can_sleep);
}

void lite_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_op_slot *slot = container_of(wc->wr_cqe,
						 struct lite_op_slot, cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		int err = lite_wc_errno(wc->status);

		/*
		 * Before the waiter can wake (lite_batch_put()) and drop the
		 * grant: the first refusal revokes it, so the operations after
		 * it fail before they post instead of each resetting a QP, and
		 * those flushed with it end the same way.
		 */
		if (wc->status == IB_WC_REM_ACCESS_ERR)
			lite_grant_key_refused(slot->batch_grant);
		else if (err == -EHOSTDOWN && READ_ONCE(slot->batch_grant->revoked))
			err = READ_ONCE(slot->batch_grant->revoked);
		cmpxchg(&slot->status, 0, err);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("peer %s QP %u: operation failed: %s (vendor error %#x)\n",
					    slot->batch_conn->peer->label,
					    slot->batch_conn->index,
					    ib_wc_status_msg(wc->status),
					    wc->vendor_err);
			/* The QP is in the error state now: replace it. */
			lite_conn_wc_error(slot->batch_conn, wc->status);
		}
	}
	lite_batch_put(slot, 1, false);
}

/* -ESTALE if a grant of the slot's operation is revoked, else 0. */
static int lite_slot_revoked(const struct lite_op_slot *slot)
{
	int ret = 0;

	if (slot->grants[0])
		ret = READ_ONCE(slot->grants[0]->revoked);
	if (!ret && slot->grants[1])
		ret = READ_ONCE(slot->grants[1]->revoked);
	return ret;
}

int lite_batch_post(struct lite_op *op, struct lite_conn *conn,
		    struct lite_grant *grant, bool atomic)
{
	struct lite_op_slot *slot = op->slot;
	const struct ib_send_wr *first, *bad = NULL;
	int n = atomic ? 1 : slot->nr_wrs;
	bool took;
	int posted, ret;
	long t;

	took = lite_sq_take(conn, n);
	if (!took) {
		if (op->no_wait)
			return -EAGAIN;
		/* The queue is full: wait for credits, or for its end. */
		t = wait_event_killable_timeout(conn->wait,
						(took = lite_sq_take(conn, n)) ||
						READ_ONCE(conn->ops_dying),
						lite_op_remaining(op));
		ret = lite_wait_errno(t);
		if (ret)
			return ret;
		if (!took)
			return -EHOSTDOWN;
	}

	if (unlikely(READ_ONCE(conn->ops_dying))) {
		/* Its QP is in the error state: posting would only flush. */
		atomic_add(n, &conn->sq_credits);
		return -EHOSTDOWN;
	}
	/*
	 * A revoke while the operation waited for its context or credits
	 * (an atomic, a MEMCPY or a first batch counted itself before):
	 * nothing is posted on a revoked grant. The drain still waits for
	 * the count, so this only keeps a late operation off the wire.
	 */
	ret = lite_slot_revoked(slot);
	if (unlikely(ret)) {
		atomic_add(n, &conn->sq_credits);
		return ret;
	}
	slot->batch_conn = conn;
	slot->batch_grant = grant;
	slot->batch_wrs = n;
	slot->qos_posted_ns = op->prio == LITE_PRIO_HIGH &&
			      READ_ONCE(lite_qos_on) ? ktime_get_ns() : 0;
	slot->status = 0;
	atomic_set(&slot->pending, n);
	reinit_completion(&slot->done);
	refcount_inc(&slot->refs);

	first = atomic ? &slot->awr.wr : &slot->wrs[0].wr;
	ret = ib_post_send(conn->qp, first, &bad);
	if (unlikely(ret)) {
		/* Work requests before @bad are posted and will complete. */
		if (atomic || !bad)
			posted = 0;
		else
			posted = container_of(bad, struct ib_rdma_wr, wr) - slot->wrs;
		pr_warn_ratelimited("peer %s QP %u: cannot post: %d\n",
				    conn->peer->label, conn->index, ret);
		cmpxchg(&slot->status, 0, -EIO);
		lite_batch_put(slot, n - posted, true);
	}
	return 0;
}

int lite_batch_wait(struct lite_op *op)
{
	struct lite_op_slot *slot = op->slot;
	long t;
	int ret;

	/* Spun or not, the wait consumes the completion (at once if done). */
	lite_spin_wait(slot->batch_conn->send_cq, &slot->done);
	t = wait_for_completion_killable_timeout(&slot->done,
						 lite_op_remaining(op));
	ret = lite_wait_errno(t);
	if (ret) {
		op->abandoned = true;
		return ret;
	}
	return slot->status;
}

/* ---- work requests ---- */

/*
 * Fills slot->wrs with @opcode work requests for the LMR range [off, off +
 * len) of @grant, one per piece of a chunk, taking the local side from
 * slot->segs. Stops when the work requests or the segments run out and
 * returns how many bytes the batch covers.
 */
static u64 lite_build_rw(struct lite_op *op, const struct lite_grant *grant,
			 enum ib_wr_opcode opcode, u64 off, u64 len,
			 unsigned int max_sge)
{
	struct lite_op_slot *slot = op->slot;
	u32 ci = lite_grant_chunk_index(grant, off);
	unsigned int si = 0, nsge = 0, nwr = 0;
	u64 done = 0, sofs = 0;

	max_sge = min_t(unsigned int, max_sge, LITE_OP_SGE_MAX);
	while (done < len && nwr < LITE_OP_WRS && si < slot->nr_segs &&
	       ci < grant->nr_chunks) {
		const struct lite_chunk *chunk = &grant->chunks[ci];
		u64 cofs = off + done - chunk->offset;
		u64 room = min(chunk->length - cofs, len - done);
		struct ib_rdma_wr *wr = &slot->wrs[nwr];
		u64 wlen = 0;

		memset(wr, 0, sizeof(*wr));
		wr->wr.sg_list = &slot->sges[nsge];
		while (wlen < room && wr->wr.num_sge < max_sge &&
		       si < slot->nr_segs) {
			struct ib_sge *seg = &slot->segs[si];
			struct ib_sge *sge = &slot->sges[nsge++];
			u64 take = min(seg->length - sofs, room - wlen);

			sge->addr = seg->addr + sofs;
			sge->length = take;
			sge->lkey = op->lkey;
			wr->wr.num_sge++;
			wlen += take;
			sofs += take;
			if (sofs == seg->length) {
				si++;
				sofs = 0;
			}
		}
		wr->wr.wr_cqe = &slot->cqe;
		wr->wr.opcode = opcode;
		wr->wr.send_flags = IB_SEND_SIGNALED;
		wr->remote_addr = chunk->addr + cofs;
		wr->rkey = grant->memory_key;
		if (nwr)
			slot->wrs[nwr - 1].wr.next = &wr->wr;
		nwr++;
		done += wlen;
		if (cofs + wlen == chunk->length)
			ci++;
	}
	slot->nr_wrs = nwr;
	return done;
}

s64 lite_rw_post(struct lite_op *op, struct lite_conn *conn,
		 struct lite_grant *grant, bool write, u64 off, u64 len)
{
	u64 n;
	int ret;

	/* A revoke in the middle of a long operation ends it here. */
	ret = READ_ONCE(grant->revoked);
	if (unlikely(ret))
		return ret;
	n = lite_build_rw(op, grant, write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			  off, len, conn->max_sge);
	if (!n)
		return -EIO;	/* the grant's chunks do not cover its size */
	ret = lite_batch_post(op, conn, grant, false);
	return ret ? ret : n;
}

s64 lite_rw_post_all(struct lite_op *op, bool write, u64 off, u64 len)
{
	struct lite_grant *grant = op->grant;
	u64 n;
	int ret;

	ret = READ_ONCE(grant->revoked);
	if (unlikely(ret))
		return ret;
	n = lite_build_rw(op, grant, write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ,
			  off, len, op->conn->max_sge);
	if (n != len)
		return -EIO;	/* checked chunks never leave a piece over */
	ret = lite_batch_post(op, op->conn, grant, false);
	return ret ? ret : n;
}

s64 lite_rw_batch(struct lite_op *op, struct lite_conn *conn,
		  struct lite_grant *grant, bool write, u64 off, u64 len)
{
	s64 n = lite_rw_post(op, conn, grant, write, off, len);
	int ret;

	if (n < 0)
		return n;
	ret = lite_batch_wait(op);
	return ret ? ret : n;
}

/* ---- the start of an operation ---- */

static int lite_grant_check(const struct lite_grant *grant, u32 access,
			    u64 off, u64 len)
{
	if ((grant->access & access) != access)
		return -EACCES;
	if (len > grant->size || off > grant->size - len)
		return -EINVAL;
	return 0;
}

/* Faults in @len bytes at @ubuf for reading from (or, @write, into) them. */
static int lite_prefault(const char __user *ubuf, u64 len, bool write)
{
	size_t left = write ? fault_in_safe_writeable(ubuf, len) :
			      fault_in_readable(ubuf, len);

	return left ? -EFAULT : 0;
}

/*
 * The grant behind @handle, checked, with a reference and counted as an
 * operation in flight on it (revoked: ESTALE); lite_grant_op_end() ends
 * both, or the context they are handed to does. @t's @prefault (its
 * length bytes) is faulted in before the count: a slow fault then delays
 * no revoke, unmap or close of the grant.
 */
static int lite_grant_lookup(struct lite_file *lf, u64 handle, u32 access,
			     u64 off, u64 len, const struct lite_op_target *t,
			     struct lite_grant **out)
{
	struct lite_grant *grant = lite_file_grant_get(lf, handle);
	int ret;

	if (!grant)
		return -EBADF;
	ret = lite_grant_check(grant, access, off, len);
	if (!ret && t && t->prefault)
		ret = lite_prefault(t->prefault, len, t->prefault_write);
	if (!ret)
		ret = lite_grant_op_get(grant);
	if (ret) {
		lite_grant_put(grant);
		return ret;
	}
	*out = grant;
	return 0;
}

/* The word at @off must be 8-byte aligned at the home node and in one chunk. */
static int lite_word_addr(const struct lite_grant *grant, u64 off, u64 *raddr)
{
	const struct lite_chunk *chunk;
	u64 cofs;

	chunk = &grant->chunks[lite_grant_chunk_index(grant, off)];
	cofs = off - chunk->offset;
	*raddr = chunk->addr + cofs;
	if (*raddr % 8 || chunk->length - cofs < 8)
		return -EINVAL;
	return 0;
}

/*
 * grant -> connection -> context: a connected QP to @grant's home and a
 * context on its device, held by @op (lite_op_end() gives it back). On
 * success the context owns @grant (lite_grant_lookup()'s reference and
 * count); on failure the caller still does.
 */
static int lite_op_start(struct lite_op *op, struct lite_grant *grant,
			 const struct lite_op_target *t)
{
	struct lite_conn *conn;
	u64 wait_ns;
	int ret;

	for (;;) {
		ret = lite_conn_ops_get_from(grant->home_node_id, grant->epoch,
					     lite_prio_first_qp(t->prio), &conn);
		if (ret)
			return ret;
		if (!READ_ONCE(lite_qos_on))
			break;
		wait_ns = lite_qos_start(&conn->peer->qos, t->prio, t->length);
		if (!wait_ns)
			break;
		/* Throttled: nothing but the grant's count is held meanwhile. */
		lite_conn_ops_put(conn);
		ret = lite_qos_wait(wait_ns, t->no_wait);
		if (ret)
			return ret;
	}
	op->deadline = jiffies + msecs_to_jiffies(READ_ONCE(lite_op_timeout_ms));
	op->abandoned = false;
	op->no_wait = false;
	op->prio = t->prio;
	ret = lite_slot_get(op, conn, !t->no_wait);
	if (ret)
		return ret;
	op->slot->grants[0] = grant;
	op->grant = grant;
	return 0;
}

int lite_op_begin(struct lite_op *op, struct lite_file *lf,
		  struct lite_op_target *t)
{
	struct lite_grant *grant;
	int ret;

	ret = lite_prio_resolve(lf, t->priority, &t->prio);
	if (ret)
		return ret;
	ret = lite_grant_lookup(lf, t->handle, t->access, t->offset, t->length,
				t, &grant);
	if (ret)
		return ret;
	if (t->word)
		ret = lite_word_addr(grant, t->offset, &t->raddr);
	if (!ret)
		ret = lite_op_start(op, grant, t);
	if (ret)
		lite_grant_op_end(grant);
	return ret;
}

/* The second connection of a MEMCPY, on the same device. */
static int lite_op_add_conn(struct lite_op *op, struct lite_conn *conn)
{
	if (conn->ldev != op->slot->conns[0]->ldev) {
		lite_conn_ops_put(conn);
		return -EIO;
	}
	op->slot->conns[1] = conn;
	return 0;
}

void __lite_op_end(struct lite_op *op, bool keep)
{
	struct lite_op_slot *slot = op->slot;
	struct lite_grant *grants[2] = {};

	if (unlikely(op->abandoned)) {
		/* It must not touch the pages: the batch may be in flight. */
		slot->abandoned = true;
		lite_count(LITE_CNT_OPS_ABANDONED);
	} else {
		if (slot->nr_pages)
			lite_slot_unpin(slot);
		/*
		 * Every work request has completed: the grants go here, in
		 * process context, so that the completion's reference, which
		 * may be the last, releases the context right in softirq.
		 */
		swap(grants[0], slot->grants[0]);
		swap(grants[1], slot->grants[1]);
		if (keep)
			grants[0] = NULL;
	}
	lite_slot_put(slot, true);
	if (grants[0])
		lite_grant_op_end(grants[0]);
	if (grants[1])
		lite_grant_op_end(grants[1]);
}

/* ---- the calls ---- */

static long lite_op_rw(struct lite_file *lf, void __user *uarg, bool write)
{
	struct lite_op_target t = {};
	struct lite_rw a;
	void __user *ubuf;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || !a.length || a.length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	ubuf = u64_to_user_ptr(a.buf);
	if (!access_ok(ubuf, a.length))
		return -EFAULT;
	t.handle = a.handle;
	t.offset = a.offset;
	t.length = a.length;
	t.priority = a.priority;
	t.access = write ? LITE_ACCESS_WRITE : LITE_ACCESS_READ;
	if (write || a.length > LITE_BOUNCE_SIZE) {
		t.prefault = ubuf;
		t.prefault_write = !write;
	}
	lite_ops_stat_add(a.length <= LITE_BOUNCE_SIZE ? LITE_ST_BOUNCE :
			  LITE_ST_PINNED, 1);
	ret = lite_op_rw_run(lf, &t, write, ubuf);
	if (!ret)
		lite_ops_stat_add(write ? LITE_ST_BYTES_WRITTEN :
				  LITE_ST_BYTES_READ, a.length);
	return ret;
}

int lite_op_memset_run(struct lite_file *lf, u64 handle, u64 offset,
		       u64 length, u8 value, u32 priority)
{
	struct lite_op_target t = {};
	struct lite_op op;
	int ret;

	if (!length || length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	t.handle = handle;
	t.offset = offset;
	t.length = length;
	t.priority = priority;
	t.access = LITE_ACCESS_WRITE;
	ret = lite_op_begin(&op, lf, &t);
	if (ret)
		return ret;
	ret = lite_memset_bounce(&op, offset, length, value);
	if (!ret)
		lite_ops_stat_add(LITE_ST_BYTES_WRITTEN, length);
	lite_op_end(&op);
	return ret;
}

static long lite_op_memset(struct lite_file *lf, void __user *uarg)
{
	struct lite_memset a;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.reserved || a.value > 255)
		return -EINVAL;
	return lite_op_memset_run(lf, a.handle, a.offset, a.length, a.value,
				  a.priority);
}

static long lite_op_memcpy(struct lite_file *lf, void __user *uarg)
{
	struct lite_op_target t = {};
	struct lite_grant *src, *dst;
	struct lite_conn *dconn;
	struct lite_memcpy a;
	struct lite_op op;
	u64 done = 0, n;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || !a.length || a.length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	/* Throttled (LOW) as one operation of its length, on the source. */
	t.length = a.length;
	ret = lite_prio_resolve(lf, a.priority, &t.prio);
	if (ret)
		return ret;
	ret = lite_grant_lookup(lf, a.src_handle, LITE_ACCESS_READ,
				a.src_offset, a.length, NULL, &src);
	if (ret)
		return ret;
	ret = lite_grant_lookup(lf, a.dst_handle, LITE_ACCESS_WRITE,
				a.dst_offset, a.length, NULL, &dst);
	if (ret)
		goto out_src;
	/* Overlapping ranges of one LMR (bounds are checked, no overflow). */
	if (src->lmr_id == dst->lmr_id && src->home_node_id == dst->home_node_id &&
	    a.src_offset < a.dst_offset + a.length &&
	    a.dst_offset < a.src_offset + a.length) {
		ret = -EINVAL;
		goto out_dst;
	}
	/*
	 * The context is on the source's connection; the destination's joins.
	 * The context owns both grants from here.
	 */
	ret = lite_op_start(&op, src, &t);
	if (ret)
		goto out_dst;
	op.slot->grants[1] = dst;
	ret = lite_conn_ops_get(dst->home_node_id, dst->epoch, &dconn);
	if (!ret)
		ret = lite_op_add_conn(&op, dconn);

	while (!ret && done < a.length) {
		n = min_t(u64, a.length - done, LITE_BOUNCE_SIZE);
		ib_dma_sync_single_for_device(op.ibdev, op.slot->buf_dma, n,
					      DMA_FROM_DEVICE);
		ret = lite_rw_bounce(&op, op.conn, src, false,
				     a.src_offset + done, n);
		if (!ret) {
			/* What the device wrote, as the device reads it. */
			ib_dma_sync_single_for_cpu(op.ibdev, op.slot->buf_dma,
						   n, DMA_FROM_DEVICE);
			ib_dma_sync_single_for_device(op.ibdev,
						      op.slot->buf_dma, n,
						      DMA_TO_DEVICE);
			ret = lite_rw_bounce(&op, dconn, dst, true,
					     a.dst_offset + done, n);
		}
		done += n;
	}
	if (!ret) {
		lite_ops_stat_add(LITE_ST_BYTES_READ, a.length);
		lite_ops_stat_add(LITE_ST_BYTES_WRITTEN, a.length);
	}
	lite_op_end(&op);
	return ret;
out_dst:
	lite_grant_op_end(dst);
out_src:
	lite_grant_op_end(src);
	return ret;
}

static void lite_ops_stat_error(int err)
{
	enum lite_ops_stat s;

	switch (err) {
	case -EBADF:
		s = LITE_ST_ERR_EBADF;
		break;
	case -EACCES:
		s = LITE_ST_ERR_EACCES;
		break;
	case -EINVAL:
		s = LITE_ST_ERR_EINVAL;
		break;
	case -EFAULT:
		s = LITE_ST_ERR_EFAULT;
		break;
	case -ESTALE:
		s = LITE_ST_ERR_ESTALE;
		break;
	case -EHOSTDOWN:
		s = LITE_ST_ERR_EHOSTDOWN;
		break;
	case -ETIMEDOUT:
		s = LITE_ST_ERR_ETIMEDOUT;
		break;
	case -EIO:
		s = LITE_ST_ERR_EIO;
		break;
	case -EINTR:
		s = LITE_ST_ERR_EINTR;
		break;
	default:
		s = LITE_ST_ERR_OTHER;
		break;
	}
	lite_ops_stat_add(s, 1);
}

void lite_ops_account(enum lite_ops_stat s, long ret)
{
	lite_ops_stat_add(s, 1);
	if (ret)
		lite_ops_stat_error(ret);
}

/*
 * The ioctls (ctl/lite_ioctl.c's table), each counted as the operation it
 * is; a batch counts each entry.
 */
static long lite_ops_counted(enum lite_ops_stat s, long ret)
{
	lite_ops_account(s, ret);
	return ret;
}

long lite_ioc_read(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_READ, lite_op_rw(lf, uarg, false));
}

long lite_ioc_write(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_WRITE, lite_op_rw(lf, uarg, true));
}

long lite_ioc_memset(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_MEMSET, lite_op_memset(lf, uarg));
}

long lite_ioc_memcpy(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_MEMCPY, lite_op_memcpy(lf, uarg));
}

long lite_ioc_faa(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_FAA, lite_op_atomic(lf, uarg, false));
}

long lite_ioc_cas(struct lite_file *lf, void __user *uarg)
{
	return lite_ops_counted(LITE_ST_CAS, lite_op_atomic(lf, uarg, true));
}
