// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the per-device pool of operation contexts (lite_ops.c runs the
 * operations in them). Each RDMA device with the global key gets
 * LITE_OP_SLOTS contexts when it comes, every buffer a context needs
 * allocated and its bounce buffer DMA-mapped once, so an operation
 * allocates nothing.
 *
 * Lifetimes. A context is owned by the operation (one reference) and by
 * the batch of work requests it has posted (one more, dropped by the
 * completion of the batch's last work request). A caller that stops
 * waiting (op_timeout_ms, fatal signal) drops its reference and returns;
 * the context, its pinned pages and mappings, and its grants' counts of
 * operations in flight (struct lite_grant, ops) stay until the work
 * requests complete, and whoever drops the last reference releases it (from
 * softirq, a work item does). While a context is in use it counts in
 * its connections' inflight, and a connection's teardown moves its QP to
 * the error state (every posted work request completes with a flush
 * error) and waits for inflight to reach zero before it destroys the QP, so
 * no waiter hangs and nothing is freed under an operation; the device's
 * pool is freed only after every connection on it is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "lite_ops.h"
#include "lite_ops_internal.h"

/*
 * The last reference is gone, so is every work request: give the context,
 * the grants and the connections back. Process context, or softirq once
 * no page or grant is left (lite_slot_put()).
 */
static void lite_slot_release(struct lite_op_slot *slot)
{
	struct lite_ops_pool *pool = slot->pool;
	struct lite_conn *conns[2] = { slot->conns[0], slot->conns[1] };
	struct lite_grant *grants[2] = { slot->grants[0], slot->grants[1] };

	if (slot->nr_pages)
		lite_slot_unpin(slot);
	if (slot->abandoned)
		lite_uncount(LITE_CNT_OPS_ABANDONED);
	slot->conns[0] = NULL;
	slot->conns[1] = NULL;
	slot->grants[0] = NULL;
	slot->grants[1] = NULL;
	clear_bit_unlock(slot->index, pool->busy);
	/* The pool outlives the connections: wake before they go. */
	if (wq_has_sleeper(&pool->wait))
		wake_up(&pool->wait);
	/* Before the connections: a drained connection has no grant counted. */
	if (grants[0])
		lite_grant_op_end(grants[0]);
	if (grants[1])
		lite_grant_op_end(grants[1]);
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

void lite_slot_put(struct lite_op_slot *slot, bool can_sleep)
{
	if (!refcount_dec_and_test(&slot->refs))
		return;
	/*
	 * Pinned pages or grants left here mean an abandoned operation's last
	 * completion, from the CQ's softirq: unpinning and a grant's last
	 * reference (which can hold a hosted LMR) need process context.
	 */
	if (!can_sleep && (slot->nr_pages || slot->grants[0]))
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

int lite_slot_get(struct lite_op *op, struct lite_conn *conn, bool wait)
{
	struct lite_ops_pool *pool = conn->ldev->ops_pool;
	struct lite_op_slot *slot = NULL;
	long ret;

	if (!pool) {
		lite_conn_ops_put(conn);
		return -EIO;
	}
	if (!lite_slot_try_get(pool, &slot)) {
		if (!wait) {
			lite_conn_ops_put(conn);
			return -EAGAIN;
		}
		/*
		 * Waiting holds the connection's inflight count: a teardown
		 * (ops_dying, lite_ops_wake_waiters()) ends the wait.
		 */
		ret = wait_event_killable_timeout(pool->wait,
						  lite_slot_try_get(pool, &slot) ||
						  READ_ONCE(conn->ops_dying),
						  lite_op_remaining(op));
		if (ret > 0 && !slot)
			ret = -EHOSTDOWN;
		else if (ret <= 0)
			ret = lite_wait_errno(ret);
		else
			ret = 0;
		if (ret) {
			lite_conn_ops_put(conn);
			return ret;
		}
	}
	refcount_set(&slot->refs, 1);
	slot->conns[0] = conn;
	slot->conns[1] = NULL;
	slot->grants[0] = NULL;
	slot->grants[1] = NULL;
	slot->abandoned = false;
	slot->nr_pages = 0;
	slot->ucmd = NULL;
	op->conn = conn;
	op->slot = slot;
	op->ibdev = conn->ldev->ibdev;
	op->lkey = conn->ldev->pd->local_dma_lkey;
	return 0;
}

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

void lite_ops_wake_waiters(struct lite_device *ldev)
{
	struct lite_ops_pool *pool = ldev->ops_pool;

	if (pool)
		wake_up_all(&pool->wait);
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
