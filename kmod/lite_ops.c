// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the one-sided operations (LITE_IOC_READ .. LITE_IOC_CAS).
 *
 * The path of an operation, with no mutex and no allocation:
 *   handle -> grant (lite_file_grant_get(), lock-free) -> access (EACCES)
 *   -> bounds, overflow-safe (EINVAL) -> revoked (ESTALE) -> the home
 *   node's peer under RCU (this node's own LMRs: the loopback peer), its
 *   incarnation must be the grant's epoch (EHOSTDOWN) -> one of its
 *   connected RC QPs, starting at one picked by CPU (none: EHOSTDOWN) ->
 *   an operation context from the device's pool -> work requests, one per
 *   piece of a chunk, chained and all signaled -> the caller sleeps on the
 *   context's completion, which the CQ's softirq poller completes.
 *
 * Buffers. Up to LITE_BOUNCE_SIZE bytes go through the context's bounce
 * buffer, mapped once when the device came: copy_from_user() before a
 * WRITE, copy_to_user() after a READ. Bigger user buffers are pinned
 * (pin_user_pages_fast()) and mapped with ib_dma_map_page() one window of
 * at most LITE_WIN_PAGES pages at a time, so a 64 MiB operation never pins
 * more than 1 MiB. MEMSET points every SGE at the bounce buffer filled with
 * the value; MEMCPY reads into the bounce buffer and writes it out; atomics
 * fetch into its first 8 bytes.
 *
 * Lifetimes. A context is owned by the operation (one reference) and by
 * the batch of work requests it has posted (one more, dropped by the
 * completion of the batch's last work request). A caller that stops
 * waiting (op_timeout_ms, fatal signal) drops its reference and returns;
 * the context, its pinned pages and mappings stay until the work requests
 * complete, and whoever drops the last reference releases it (from softirq,
 * a work item unpins the pages). While a context is in use it counts in
 * its connections' inflight, and a connection's teardown moves its QP to
 * the error state (every posted work request completes with a flush
 * error) and waits for inflight to reach zero before it destroys the QP, so
 * no waiter hangs and nothing is freed under an operation; the device's
 * pool is freed only after every connection on it is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lite_grant.h"
#include "lite_internal.h"
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

static unsigned int lite_op_timeout_ms = 5000;

static int lite_param_set_timeout(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 600000);
}

static const struct kernel_param_ops lite_timeout_ops = {
	.set = lite_param_set_timeout,
	.get = param_get_uint,
};

module_param_cb(op_timeout_ms, &lite_timeout_ops, &lite_op_timeout_ms, 0644);
MODULE_PARM_DESC(op_timeout_ms, "longest a one-sided operation waits, in ms, 1..600000 (default 5000)");

/* Counters: per CPU, summed when read (/sys/kernel/debug/lite/ops/). */
enum lite_ops_stat {
	LITE_ST_READ,
	LITE_ST_WRITE,
	LITE_ST_MEMSET,
	LITE_ST_MEMCPY,
	LITE_ST_FAA,
	LITE_ST_CAS,
	LITE_ST_BYTES_READ,
	LITE_ST_BYTES_WRITTEN,
	LITE_ST_BOUNCE,
	LITE_ST_PINNED,
	LITE_ST_ERR_EBADF,
	LITE_ST_ERR_EACCES,
	LITE_ST_ERR_EINVAL,
	LITE_ST_ERR_EFAULT,
	LITE_ST_ERR_ESTALE,
	LITE_ST_ERR_EHOSTDOWN,
	LITE_ST_ERR_ETIMEDOUT,
	LITE_ST_ERR_EIO,
	LITE_ST_ERR_EINTR,
	LITE_ST_ERR_OTHER,
	LITE_ST_NR
};

static const char * const lite_ops_stat_names[LITE_ST_NR] = {
	[LITE_ST_READ] = "read",
	[LITE_ST_WRITE] = "write",
	[LITE_ST_MEMSET] = "memset",
	[LITE_ST_MEMCPY] = "memcpy",
	[LITE_ST_FAA] = "faa",
	[LITE_ST_CAS] = "cas",
	[LITE_ST_BYTES_READ] = "bytes_read",
	[LITE_ST_BYTES_WRITTEN] = "bytes_written",
	[LITE_ST_BOUNCE] = "bounce",
	[LITE_ST_PINNED] = "pinned",
	[LITE_ST_ERR_EBADF] = "err_ebadf",
	[LITE_ST_ERR_EACCES] = "err_eacces",
	[LITE_ST_ERR_EINVAL] = "err_einval",
	[LITE_ST_ERR_EFAULT] = "err_efault",
	[LITE_ST_ERR_ESTALE] = "err_estale",
	[LITE_ST_ERR_EHOSTDOWN] = "err_ehostdown",
	[LITE_ST_ERR_ETIMEDOUT] = "err_etimedout",
	[LITE_ST_ERR_EIO] = "err_eio",
	[LITE_ST_ERR_EINTR] = "err_eintr",
	[LITE_ST_ERR_OTHER] = "err_other",
};

struct lite_ops_stats {
	u64 v[LITE_ST_NR];
};

static DEFINE_PER_CPU(struct lite_ops_stats, lite_ops_stats);
static struct dentry *lite_ops_dir;

static void lite_stat_add(enum lite_ops_stat s, u64 n)
{
	this_cpu_add(lite_ops_stats.v[s], n);
}

static void lite_stat_error(int err)
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
	lite_stat_add(s, 1);
}

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
	unsigned int batch_wrs;		/* send queue credits it holds */
	/* Connections whose inflight this context counts in. */
	struct lite_conn *conns[2];
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
	struct lite_op_slot *slot;
	struct ib_device *ibdev;
	u32 lkey;
	unsigned long deadline;		/* jiffies */
	bool abandoned;			/* the caller stopped waiting */
};

/* ---- connections ---- */

/* Drops a connection's inflight count; the conn is freed after RCU. */
static void lite_conn_ops_put(struct lite_conn *conn)
{
	rcu_read_lock();
	if (atomic_dec_and_test(&conn->inflight))
		wake_up(&conn->wait);
	rcu_read_unlock();
}

/*
 * A connected QP to @home, counted in its inflight: lock-free, under RCU.
 * -EHOSTDOWN if the home node is unknown, has another incarnation than
 * @epoch, or has no connection up.
 */
static int lite_conn_ops_get(u32 home, u64 epoch, struct lite_conn **out)
{
	unsigned int k = READ_ONCE(lite_qps_per_peer), start, i;
	struct lite_peer *peer;
	struct lite_conn *conn;
	int ret = -EHOSTDOWN;

	rcu_read_lock();
	peer = lite_peer_lookup_rcu(home);
	if (!peer || peer->incarnation < epoch)
		goto out;
	if (peer->incarnation > epoch) {
		/* The home restarted: its memory behind this grant is gone. */
		ret = -ESTALE;
		goto out;
	}
	start = raw_smp_processor_id() % k;
	for (i = 0; i < k; i++) {
		conn = READ_ONCE(peer->conns[(start + i) % k]);
		/* Acquire: the QP and its accounting are set up before it. */
		if (!conn || !smp_load_acquire(&conn->ops_ready))
			continue;
		atomic_inc(&conn->inflight);
		/* Pairs with the smp_mb() in lite_conn_destroy_work(). */
		smp_mb__after_atomic();
		if (READ_ONCE(conn->ops_dying)) {
			lite_conn_ops_put(conn);
			continue;
		}
		*out = conn;
		ret = 0;
		break;
	}
out:
	rcu_read_unlock();
	return ret;
}

static bool lite_sq_take(struct lite_conn *conn, int n)
{
	int old = atomic_read(&conn->sq_credits);

	do {
		if (old < n)
			return false;
	} while (!atomic_try_cmpxchg(&conn->sq_credits, &old, old - n));
	return true;
}

/* ---- contexts ---- */

static void lite_slot_unpin(struct lite_op_slot *slot)
{
	struct ib_device *ibdev = slot->pool->ldev->ibdev;
	enum dma_data_direction dir = slot->pages_dirty ? DMA_FROM_DEVICE :
							  DMA_TO_DEVICE;
	unsigned int i;

	for (i = 0; i < slot->nr_pages; i++)
		ib_dma_unmap_page(ibdev, slot->page_dma[i], PAGE_SIZE, dir);
	if (slot->pages_dirty)
		unpin_user_pages_dirty_lock(slot->pages, slot->nr_pages, true);
	else
		unpin_user_pages(slot->pages, slot->nr_pages);
	slot->nr_pages = 0;
}

/* The last reference is gone: give the context and the connections back. */
static void lite_slot_release(struct lite_op_slot *slot)
{
	struct lite_ops_pool *pool = slot->pool;
	struct lite_conn *conns[2] = { slot->conns[0], slot->conns[1] };

	if (slot->nr_pages)
		lite_slot_unpin(slot);
	slot->conns[0] = NULL;
	slot->conns[1] = NULL;
	clear_bit_unlock(slot->index, pool->busy);
	/* The pool outlives the connections: wake before they go. */
	if (wq_has_sleeper(&pool->wait))
		wake_up(&pool->wait);
	if (conns[0])
		lite_conn_ops_put(conns[0]);
	if (conns[1])
		lite_conn_ops_put(conns[1]);
}

static void lite_slot_release_work(struct work_struct *work)
{
	lite_slot_release(container_of(work, struct lite_op_slot,
				       release_work));
}

/* @can_sleep: process context, where pinned pages can be unpinned. */
static void lite_slot_put(struct lite_op_slot *slot, bool can_sleep)
{
	if (!refcount_dec_and_test(&slot->refs))
		return;
	if (slot->nr_pages && !can_sleep)
		queue_work(lite_wq, &slot->release_work);
	else
		lite_slot_release(slot);
}

static bool lite_slot_try_get(struct lite_ops_pool *pool,
			      struct lite_op_slot **out)
{
	unsigned int i;

	for (;;) {
		i = find_first_zero_bit(pool->busy, LITE_OP_SLOTS);
		if (i >= LITE_OP_SLOTS)
			return false;
		if (!test_and_set_bit_lock(i, pool->busy)) {
			*out = &pool->slots[i];
			return true;
		}
	}
}

static long lite_op_remaining(const struct lite_op *op)
{
	long left = (long)(op->deadline - jiffies);

	return left > 0 ? left : 0;
}

/* Maps a wait's result: > 0 in time; 0 timed out; < 0 a fatal signal. */
static int lite_wait_errno(long ret)
{
	if (ret > 0)
		return 0;
	return ret ? -EINTR : -ETIMEDOUT;
}

/*
 * Starts @op on a context of @conn's device; the context takes over the
 * connection's inflight count (also on failure, where it is dropped).
 */
static int lite_op_start(struct lite_op *op, struct lite_conn *conn)
{
	struct lite_ops_pool *pool = conn->ldev->ops_pool;
	struct lite_op_slot *slot = NULL;
	long ret;

	op->deadline = jiffies + msecs_to_jiffies(READ_ONCE(lite_op_timeout_ms));
	op->abandoned = false;
	if (!pool) {
		lite_conn_ops_put(conn);
		return -EIO;
	}
	if (!lite_slot_try_get(pool, &slot)) {
		ret = wait_event_killable_timeout(pool->wait,
						  lite_slot_try_get(pool, &slot),
						  lite_op_remaining(op));
		if (ret <= 0) {
			lite_conn_ops_put(conn);
			return lite_wait_errno(ret);
		}
	}
	refcount_set(&slot->refs, 1);
	slot->conns[0] = conn;
	slot->conns[1] = NULL;
	slot->nr_pages = 0;
	op->slot = slot;
	op->ibdev = conn->ldev->ibdev;
	op->lkey = conn->ldev->pd->local_dma_lkey;
	return 0;
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

static void lite_op_finish(struct lite_op *op)
{
	/* A caller that left its batch in flight must not touch the pages. */
	if (!op->abandoned && op->slot->nr_pages)
		lite_slot_unpin(op->slot);
	lite_slot_put(op->slot, true);
}

/* ---- completions ---- */

static int lite_wc_errno(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_WR_FLUSH_ERR:	/* the connection is going down */
	case IB_WC_RETRY_EXC_ERR:	/* the peer does not answer */
	case IB_WC_RNR_RETRY_EXC_ERR:
		return -EHOSTDOWN;
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
	atomic_add(slot->batch_wrs, &conn->sq_credits);
	if (wq_has_sleeper(&conn->wait))
		wake_up(&conn->wait);
	complete(&slot->done);
	lite_slot_put(slot, can_sleep);
}

static void lite_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_op_slot *slot = container_of(wc->wr_cqe,
						 struct lite_op_slot, cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		cmpxchg(&slot->status, 0, lite_wc_errno(wc->status));
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("peer %s QP %u: operation failed: %s (vendor error %#x)\n",
					    slot->batch_conn->peer->label,
					    slot->batch_conn->index,
					    ib_wc_status_msg(wc->status),
					    wc->vendor_err);
			/* The QP is in the error state now: replace it. */
			lite_conn_fail(slot->batch_conn);
		}
	}
	lite_batch_put(slot, 1, false);
}

/*
 * Posts the batch (slot->wrs[0..nr_wrs), or the atomic when @atomic) on
 * @conn and waits for it. After -ETIMEDOUT or -EINTR the batch may still
 * be in flight: the operation is abandoned.
 */
static int lite_batch_run(struct lite_op *op, struct lite_conn *conn,
			  bool atomic)
{
	struct lite_op_slot *slot = op->slot;
	const struct ib_send_wr *first, *bad = NULL;
	int n = atomic ? 1 : slot->nr_wrs;
	bool took;
	int posted, ret;
	long t;

	took = lite_sq_take(conn, n);
	if (!took) {
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

	slot->batch_conn = conn;
	slot->batch_wrs = n;
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
		pr_warn_ratelimited("peer %u QP %u: cannot post: %d\n",
				    conn->peer->node_id, conn->index, ret);
		cmpxchg(&slot->status, 0, -EIO);
		lite_batch_put(slot, n - posted, true);
	}

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

/* One batch over [off, off + len) of @grant; the bytes it moved, or an error. */
static s64 lite_rw_batch(struct lite_op *op, struct lite_conn *conn,
			 const struct lite_grant *grant, bool write, u64 off,
			 u64 len)
{
	u64 n = lite_build_rw(op, grant, write ? IB_WR_RDMA_WRITE :
				    IB_WR_RDMA_READ, off, len, conn->max_sge);
	int ret;

	if (!n)
		return -EIO;	/* the grant's chunks do not cover its size */
	ret = lite_batch_run(op, conn, false);
	return ret ? ret : n;
}

/* Runs batches until [off, off + len) is done from one local segment. */
static int lite_rw_bounce(struct lite_op *op, struct lite_conn *conn,
			  const struct lite_grant *grant, bool write, u64 off,
			  u64 len)
{
	struct lite_op_slot *slot = op->slot;
	u64 done = 0;
	s64 n;

	while (done < len) {
		slot->segs[0].addr = slot->buf_dma + done;
		slot->segs[0].length = len - done;
		slot->nr_segs = 1;
		n = lite_rw_batch(op, conn, grant, write, off + done, len - done);
		if (n < 0)
			return n;
		done += n;
	}
	return 0;
}

/*
 * Pins and maps the user pages of up to a window at @ubuf (at most @len
 * bytes) into slot->segs; the bytes they cover, or an error.
 */
static s64 lite_pin_window(struct lite_op *op, unsigned long ubuf, u64 len,
			   bool write)
{
	struct lite_op_slot *slot = op->slot;
	enum dma_data_direction dir = write ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	unsigned int first = offset_in_page(ubuf), i;
	u64 bytes = min_t(u64, len, (u64)LITE_WIN_PAGES * PAGE_SIZE - first);
	int nr = DIV_ROUND_UP(first + bytes, PAGE_SIZE);
	int got;

	got = pin_user_pages_fast(ubuf & PAGE_MASK, nr, write ? 0 : FOLL_WRITE,
				  slot->pages);
	if (got <= 0)
		return got ? got : -EFAULT;
	slot->nr_pages = got;
	slot->pages_dirty = !write;
	if (got < nr)
		bytes = (u64)got * PAGE_SIZE - first;

	slot->nr_segs = 0;
	for (i = 0; i < got; i++) {
		u64 dma = ib_dma_map_page(op->ibdev, slot->pages[i], 0,
					  PAGE_SIZE, dir);
		u32 start = i ? 0 : first;
		u32 end = PAGE_SIZE;
		struct ib_sge *seg;

		if (ib_dma_mapping_error(op->ibdev, dma)) {
			/* Unmaps and unpins the pages before this one. */
			unpin_user_pages(slot->pages + i, got - i);
			slot->nr_pages = i;
			lite_slot_unpin(slot);
			return -ENOMEM;
		}
		slot->page_dma[i] = dma;
		if (i == got - 1)
			end = first + bytes - (u64)i * PAGE_SIZE;
		seg = slot->nr_segs ? &slot->segs[slot->nr_segs - 1] : NULL;
		if (seg && seg->addr + seg->length == dma + start) {
			seg->length += end - start;
		} else {
			seg = &slot->segs[slot->nr_segs++];
			seg->addr = dma + start;
			seg->length = end - start;
		}
	}
	return bytes;
}

static int lite_rw_pinned(struct lite_op *op, struct lite_conn *conn,
			  const struct lite_grant *grant, bool write, u64 off,
			  unsigned long ubuf, u64 len)
{
	u64 done = 0;
	s64 n, win;

	while (done < len) {
		win = lite_pin_window(op, ubuf + done, len - done, write);
		if (win < 0)
			return win == -ENOMEM ? -EIO : -EFAULT;
		n = lite_rw_batch(op, conn, grant, write, off + done, win);
		if (n < 0)
			return n;
		/* A batch may cover less than the window: pin the rest again. */
		lite_slot_unpin(op->slot);
		done += n;
	}
	return 0;
}

/* ---- checks ---- */

static int lite_grant_check(const struct lite_grant *grant, u32 access,
			    u64 off, u64 len)
{
	if ((grant->access & access) != access)
		return -EACCES;
	if (len > grant->size || off > grant->size - len)
		return -EINVAL;
	if (READ_ONCE(grant->revoked))
		return -ESTALE;
	return 0;
}

static int lite_grant_lookup(struct lite_file *lf, u64 handle, u32 access,
			     u64 off, u64 len, struct lite_grant **out)
{
	struct lite_grant *grant = lite_file_grant_get(lf, handle);
	int ret;

	if (!grant)
		return -EBADF;
	ret = lite_grant_check(grant, access, off, len);
	if (ret) {
		lite_grant_put(grant);
		return ret;
	}
	*out = grant;
	return 0;
}

/* ---- the calls ---- */

static long lite_op_rw(struct lite_file *lf, void __user *uarg, bool write)
{
	struct lite_grant *grant;
	struct lite_conn *conn;
	struct lite_op op;
	struct lite_rw a;
	void __user *ubuf;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.priority || !a.length || a.length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	ubuf = u64_to_user_ptr(a.buf);
	if (!access_ok(ubuf, a.length))
		return -EFAULT;
	ret = lite_grant_lookup(lf, a.handle,
				write ? LITE_ACCESS_WRITE : LITE_ACCESS_READ,
				a.offset, a.length, &grant);
	if (ret)
		return ret;
	/*
	 * A WRITE that cannot read all of its buffer fails before it writes
	 * anything; a window failing half-way would leave part of it written.
	 */
	if (write && a.length > LITE_WIN_PAGES * PAGE_SIZE &&
	    fault_in_readable(ubuf, a.length)) {
		ret = -EFAULT;
		goto out_grant;
	}
	ret = lite_conn_ops_get(grant->home_node_id, grant->epoch, &conn);
	if (ret)
		goto out_grant;
	ret = lite_op_start(&op, conn);
	if (ret)
		goto out_grant;

	if (a.length <= LITE_BOUNCE_SIZE) {
		struct lite_op_slot *slot = op.slot;

		lite_stat_add(LITE_ST_BOUNCE, 1);
		if (write) {
			if (copy_from_user(slot->buf, ubuf, a.length)) {
				ret = -EFAULT;
				goto out_op;
			}
			ib_dma_sync_single_for_device(op.ibdev, slot->buf_dma,
						      a.length, DMA_TO_DEVICE);
		}
		ret = lite_rw_bounce(&op, conn, grant, write, a.offset, a.length);
		if (!ret && !write) {
			ib_dma_sync_single_for_cpu(op.ibdev, slot->buf_dma,
						   a.length, DMA_FROM_DEVICE);
			if (copy_to_user(ubuf, slot->buf, a.length))
				ret = -EFAULT;
		}
	} else {
		lite_stat_add(LITE_ST_PINNED, 1);
		ret = lite_rw_pinned(&op, conn, grant, write, a.offset,
				     (unsigned long)a.buf, a.length);
	}
	if (!ret)
		lite_stat_add(write ? LITE_ST_BYTES_WRITTEN : LITE_ST_BYTES_READ,
			      a.length);
out_op:
	lite_op_finish(&op);
out_grant:
	lite_grant_put(grant);
	return ret;
}

static long lite_op_memset(struct lite_file *lf, void __user *uarg)
{
	struct lite_grant *grant;
	struct lite_op_slot *slot;
	struct lite_conn *conn;
	struct lite_memset a;
	struct lite_op op;
	u64 done = 0, fill;
	unsigned int i;
	s64 n;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.priority || a.reserved || a.value > 255 ||
	    !a.length || a.length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	ret = lite_grant_lookup(lf, a.handle, LITE_ACCESS_WRITE, a.offset,
				a.length, &grant);
	if (ret)
		return ret;
	ret = lite_conn_ops_get(grant->home_node_id, grant->epoch, &conn);
	if (ret)
		goto out_grant;
	ret = lite_op_start(&op, conn);
	if (ret)
		goto out_grant;

	slot = op.slot;
	fill = min_t(u64, a.length, LITE_BOUNCE_SIZE);
	memset(slot->buf, a.value, fill);
	ib_dma_sync_single_for_device(op.ibdev, slot->buf_dma, fill,
				      DMA_TO_DEVICE);
	while (done < a.length) {
		/* Every SGE points at the same filled buffer. */
		u64 left = a.length - done;

		for (i = 0; i < LITE_OP_SEGS && left; i++) {
			slot->segs[i].addr = slot->buf_dma;
			slot->segs[i].length = min(left, fill);
			left -= slot->segs[i].length;
		}
		slot->nr_segs = i;
		n = lite_rw_batch(&op, conn, grant, true, a.offset + done,
				  a.length - done);
		if (n < 0) {
			ret = n;
			break;
		}
		done += n;
	}
	if (!ret)
		lite_stat_add(LITE_ST_BYTES_WRITTEN, a.length);
	lite_op_finish(&op);
out_grant:
	lite_grant_put(grant);
	return ret;
}

static long lite_op_memcpy(struct lite_file *lf, void __user *uarg)
{
	struct lite_grant *src, *dst;
	struct lite_conn *sconn, *dconn;
	struct lite_memcpy a;
	struct lite_op op;
	u64 done = 0, n;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.priority || !a.length || a.length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	ret = lite_grant_lookup(lf, a.src_handle, LITE_ACCESS_READ,
				a.src_offset, a.length, &src);
	if (ret)
		return ret;
	ret = lite_grant_lookup(lf, a.dst_handle, LITE_ACCESS_WRITE,
				a.dst_offset, a.length, &dst);
	if (ret)
		goto out_src;
	/* Overlapping ranges of one LMR (bounds are checked, no overflow). */
	if (src->lmr_id == dst->lmr_id && src->home_node_id == dst->home_node_id &&
	    a.src_offset < a.dst_offset + a.length &&
	    a.dst_offset < a.src_offset + a.length) {
		ret = -EINVAL;
		goto out_dst;
	}
	ret = lite_conn_ops_get(src->home_node_id, src->epoch, &sconn);
	if (ret)
		goto out_dst;
	ret = lite_op_start(&op, sconn);
	if (ret)
		goto out_dst;
	ret = lite_conn_ops_get(dst->home_node_id, dst->epoch, &dconn);
	if (!ret)
		ret = lite_op_add_conn(&op, dconn);

	while (!ret && done < a.length) {
		n = min_t(u64, a.length - done, LITE_BOUNCE_SIZE);
		ret = lite_rw_bounce(&op, sconn, src, false, a.src_offset + done, n);
		if (!ret)
			ret = lite_rw_bounce(&op, dconn, dst, true,
					     a.dst_offset + done, n);
		done += n;
	}
	if (!ret) {
		lite_stat_add(LITE_ST_BYTES_READ, a.length);
		lite_stat_add(LITE_ST_BYTES_WRITTEN, a.length);
	}
	lite_op_finish(&op);
out_dst:
	lite_grant_put(dst);
out_src:
	lite_grant_put(src);
	return ret;
}

static long lite_op_atomic(struct lite_file *lf, struct lite_atomic __user *uarg,
			   bool cas)
{
	struct lite_op_slot *slot;
	const struct lite_chunk *chunk;
	struct lite_grant *grant;
	struct lite_conn *conn;
	struct lite_atomic a;
	struct lite_op op;
	u64 cofs, raddr;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.priority || (!cas && a.swap) || a.offset % 8)
		return -EINVAL;
	ret = lite_grant_lookup(lf, a.handle,
				LITE_ACCESS_READ | LITE_ACCESS_WRITE, a.offset,
				8, &grant);
	if (ret)
		return ret;
	chunk = &grant->chunks[lite_grant_chunk_index(grant, a.offset)];
	cofs = a.offset - chunk->offset;
	raddr = chunk->addr + cofs;
	/* The word must be aligned at the home node and in one chunk. */
	if (raddr % 8 || chunk->length - cofs < 8) {
		ret = -EINVAL;
		goto out_grant;
	}
	ret = lite_conn_ops_get(grant->home_node_id, grant->epoch, &conn);
	if (ret)
		goto out_grant;
	ret = lite_op_start(&op, conn);
	if (ret)
		goto out_grant;

	slot = op.slot;
	slot->sges[0].addr = slot->buf_dma;
	slot->sges[0].length = 8;
	slot->sges[0].lkey = op.lkey;
	memset(&slot->awr, 0, sizeof(slot->awr));
	slot->awr.wr.wr_cqe = &slot->cqe;
	slot->awr.wr.sg_list = &slot->sges[0];
	slot->awr.wr.num_sge = 1;
	slot->awr.wr.opcode = cas ? IB_WR_ATOMIC_CMP_AND_SWP :
				    IB_WR_ATOMIC_FETCH_AND_ADD;
	slot->awr.wr.send_flags = IB_SEND_SIGNALED;
	slot->awr.remote_addr = raddr;
	slot->awr.compare_add = a.operand;
	slot->awr.swap = a.swap;
	slot->awr.rkey = grant->memory_key;
	ret = lite_batch_run(&op, conn, true);
	if (!ret) {
		ib_dma_sync_single_for_cpu(op.ibdev, slot->buf_dma, 8,
					   DMA_FROM_DEVICE);
		a.result = *(u64 *)slot->buf;
	}
	lite_op_finish(&op);
	if (!ret && put_user(a.result, &uarg->result))
		ret = -EFAULT;
out_grant:
	lite_grant_put(grant);
	return ret;
}

long lite_ops_ioctl(struct lite_file *lf, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	enum lite_ops_stat s;
	long ret;

	switch (cmd) {
	case LITE_IOC_READ:
		s = LITE_ST_READ;
		ret = lite_op_rw(lf, uarg, false);
		break;
	case LITE_IOC_WRITE:
		s = LITE_ST_WRITE;
		ret = lite_op_rw(lf, uarg, true);
		break;
	case LITE_IOC_MEMSET:
		s = LITE_ST_MEMSET;
		ret = lite_op_memset(lf, uarg);
		break;
	case LITE_IOC_MEMCPY:
		s = LITE_ST_MEMCPY;
		ret = lite_op_memcpy(lf, uarg);
		break;
	case LITE_IOC_FAA:
		s = LITE_ST_FAA;
		ret = lite_op_atomic(lf, uarg, false);
		break;
	case LITE_IOC_CAS:
		s = LITE_ST_CAS;
		ret = lite_op_atomic(lf, uarg, true);
		break;
	default:
		return -ENOTTY;
	}
	lite_stat_add(s, 1);
	if (ret)
		lite_stat_error(ret);
	return ret;
}

/* ---- per-device pools ---- */

static void lite_ops_pool_free(struct lite_ops_pool *pool)
{
	struct ib_device *ibdev = pool->ldev->ibdev;
	unsigned int i;

	for (i = 0; i < LITE_OP_SLOTS; i++) {
		struct lite_op_slot *slot = &pool->slots[i];

		if (slot->buf) {
			if (slot->buf_dma)
				ib_dma_unmap_single(ibdev, slot->buf_dma,
						    LITE_BOUNCE_SIZE,
						    DMA_BIDIRECTIONAL);
			kfree(slot->buf);
		}
		kvfree(slot->pages);
		kvfree(slot->page_dma);
		kvfree(slot->segs);
		kvfree(slot->sges);
		kvfree(slot->wrs);
	}
	kvfree(pool);
}

static int lite_ops_slot_init(struct lite_ops_pool *pool, unsigned int i)
{
	struct ib_device *ibdev = pool->ldev->ibdev;
	struct lite_op_slot *slot = &pool->slots[i];
	u64 dma;

	slot->pool = pool;
	slot->index = i;
	slot->cqe.done = lite_op_done;
	init_completion(&slot->done);
	INIT_WORK(&slot->release_work, lite_slot_release_work);
	slot->pages = kvcalloc(LITE_WIN_PAGES, sizeof(*slot->pages), GFP_KERNEL);
	slot->page_dma = kvcalloc(LITE_WIN_PAGES, sizeof(*slot->page_dma),
				  GFP_KERNEL);
	slot->segs = kvcalloc(LITE_OP_SEGS, sizeof(*slot->segs), GFP_KERNEL);
	slot->sges = kvcalloc(LITE_OP_WRS * LITE_OP_SGE_MAX,
			      sizeof(*slot->sges), GFP_KERNEL);
	slot->wrs = kvcalloc(LITE_OP_WRS, sizeof(*slot->wrs), GFP_KERNEL);
	slot->buf = kzalloc(LITE_BOUNCE_SIZE, GFP_KERNEL);
	if (!slot->pages || !slot->page_dma || !slot->segs || !slot->sges ||
	    !slot->wrs || !slot->buf)
		return -ENOMEM;
	dma = ib_dma_map_single(ibdev, slot->buf, LITE_BOUNCE_SIZE,
				DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, dma))
		return -ENOMEM;
	slot->buf_dma = dma;
	return 0;
}

int lite_ops_device_add(struct lite_device *ldev)
{
	struct lite_ops_pool *pool;
	unsigned int i;
	int ret;

	pool = kvzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return -ENOMEM;
	pool->ldev = ldev;
	init_waitqueue_head(&pool->wait);
	for (i = 0; i < LITE_OP_SLOTS; i++) {
		ret = lite_ops_slot_init(pool, i);
		if (ret) {
			lite_ops_pool_free(pool);
			return ret;
		}
	}
	ldev->ops_pool = pool;
	return 0;
}

void lite_ops_device_remove(struct lite_device *ldev)
{
	struct lite_ops_pool *pool = ldev->ops_pool;

	if (!pool)
		return;
	/* Every connection is gone, so every context has been released. */
	WARN_ON(!bitmap_empty(pool->busy, LITE_OP_SLOTS));
	ldev->ops_pool = NULL;
	lite_ops_pool_free(pool);
}

/* ---- module ---- */

static int lite_ops_stat_get(void *data, u64 *val)
{
	unsigned int s = (const char * const *)data - lite_ops_stat_names;
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(&lite_ops_stats, cpu)->v[s];
	*val = sum;
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(lite_ops_stat_fops, lite_ops_stat_get, NULL, "%llu\n");

int lite_ops_init(void)
{
	struct dentry *root;
	int i;

	/* Counters are diagnostics: operations work without them. */
	root = debugfs_lookup(KBUILD_MODNAME, NULL);
	if (IS_ERR_OR_NULL(root))
		return 0;
	lite_ops_dir = debugfs_create_dir("ops", root);
	dput(root);
	for (i = 0; i < LITE_ST_NR; i++)
		debugfs_create_file_unsafe(lite_ops_stat_names[i], 0444,
					   lite_ops_dir,
					   (void *)&lite_ops_stat_names[i],
					   &lite_ops_stat_fops);
	return 0;
}

void lite_ops_exit(void)
{
	debugfs_remove_recursive(lite_ops_dir);
	lite_ops_dir = NULL;
}
