// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: where an operation's local bytes live (lite_ops.c posts them).
 *
 * Up to LITE_BOUNCE_SIZE bytes go through the context's bounce buffer,
 * mapped once when the device came (lite_ops_pool.c): copied from the
 * user before a WRITE, to the user after a READ. Bigger user buffers are
 * pinned and mapped with ib_dma_map_page() one window of at most
 * LITE_WIN_PAGES pages at a time, so a 64 MiB operation never pins more
 * than 1 MiB. MEMSET points every SGE at the bounce buffer filled with the
 * value; MEMCPY reads into the bounce buffer and writes it out; atomics
 * fetch into its first 8 bytes.
 *
 * All of it runs while the operation counts in a connection's inflight,
 * which the connection's teardown (and so device removal) waits for: no
 * user page is faulted in here (lifetimes review #3). Copies run with page
 * faults disabled and pins take the lockless path only
 * (pin_user_pages_fast_only()), after the caller faulted the buffer in
 * (lite_ops.c). A page gone since (reclaim, munmap) makes a WRITE's copy,
 * or either's pin, return -EAGAIN: the caller ends the operation, faults
 * in again and restarts. A READ's copy-out that comes up short stages the
 * rest in a kmalloc'd buffer for the caller to copy once the connection is
 * given back: the data is already read, and the common case costs nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "lite_ops_internal.h"

void lite_slot_unpin(struct lite_op_slot *slot)
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

/* Runs batches until [off, off + len) is done from one local segment. */
int lite_rw_bounce(struct lite_op *op, struct lite_conn *conn,
		   struct lite_grant *grant, bool write, u64 off, u64 len)
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

/* A WRITE's bytes into the bounce buffer, or the buffer readied for a READ. */
static int lite_bounce_load(struct lite_op *op, bool write,
			    void __user *ubuf, u64 len)
{
	struct lite_op_slot *slot = op->slot;
	unsigned long left;

	if (write) {
		/* The caller checked access_ok() and faulted it in. */
		pagefault_disable();
		left = __copy_from_user_inatomic(slot->buf, ubuf, len);
		pagefault_enable();
		if (left)
			return -EAGAIN;
		ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, len,
					      DMA_TO_DEVICE);
	} else {
		/* The device writes there: no dirty line may cover it. */
		ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, len,
					      DMA_FROM_DEVICE);
	}
	return 0;
}

int lite_bounce_post(struct lite_op *op, bool write, u64 off,
		     void __user *ubuf, u64 len)
{
	struct lite_op_slot *slot = op->slot;
	s64 n;
	int ret;

	ret = lite_bounce_load(op, write, ubuf, len);
	if (ret)
		return ret;
	slot->segs[0].addr = slot->buf_dma;
	slot->segs[0].length = len;
	slot->nr_segs = 1;
	/*
	 * All of @len in one batch, or nothing posted: an io_uring command's
	 * batch has no waiter to run a second one, and none is needed, since
	 * @len bytes span at most LITE_BOUNCE_SIZE / LITE_CHUNK_UNIT + 1
	 * chunks (lite_grant_answer.c refuses any other chunk list).
	 */
	BUILD_BUG_ON(LITE_BOUNCE_SIZE / LITE_CHUNK_UNIT + 1 > LITE_OP_WRS);
	n = lite_rw_post_all(op, write, off, len);
	return n < 0 ? n : 0;
}

int lite_rw_user_bounce(struct lite_op *op, bool write, u64 off,
			void __user *ubuf, u64 len, struct lite_copy_out *out)
{
	int ret;

	ret = lite_bounce_load(op, write, ubuf, len);
	if (ret)
		return ret;
	ret = lite_rw_bounce(op, op->conn, op->grant, write, off, len);
	if (ret || write)
		return ret;
	return lite_bounce_read_out(op, ubuf, len, out);
}

int lite_bounce_read_out(struct lite_op *op, void __user *ubuf, u64 len,
			 struct lite_copy_out *out)
{
	struct lite_op_slot *slot = op->slot;
	unsigned long left;

	ib_dma_sync_single_for_cpu(op->ibdev, slot->buf_dma, len,
				   DMA_FROM_DEVICE);
	pagefault_disable();
	left = __copy_to_user_inatomic(ubuf, slot->buf, len);
	pagefault_enable();
	if (!left)
		return 0;
	out->buf = kmemdup(slot->buf + len - left, left, GFP_KERNEL);
	if (!out->buf)
		return -ENOMEM;
	out->ubuf = ubuf + len - left;
	out->len = left;
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

	/* No fault: the lockless walk of what the caller faulted in. */
	got = pin_user_pages_fast_only(ubuf & PAGE_MASK, nr,
				       write ? 0 : FOLL_WRITE, slot->pages);
	if (got <= 0)
		return -EAGAIN;
	slot->nr_pages = got;
	slot->pages_dirty = !write;
	if (got < nr) {
		/*
		 * A WRITE posts nothing of a window it could not pin whole
		 * (review finding 9): it restarts at the window. A READ moves
		 * what it got and restarts after it.
		 */
		if (write) {
			lite_slot_unpin(slot);
			return -EAGAIN;
		}
		bytes = (u64)got * PAGE_SIZE - first;
	}

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

int lite_rw_user_pinned(struct lite_op *op, bool write, u64 off,
			unsigned long ubuf, u64 len, u64 *done)
{
	const u64 chunk = lite_qos_chunk(&op->conn->peer->qos, op->prio);
	s64 n, win;

	*done = 0;
	while (*done < len) {
		win = lite_pin_window(op, ubuf + *done,
				      min(len - *done, chunk), write);
		if (win < 0)
			return win == -ENOMEM ? -EIO : win;
		n = lite_rw_batch(op, op->conn, op->grant, write, off + *done,
				  win);
		if (n < 0)
			return n;
		/* A batch may cover less than the window: pin the rest again. */
		lite_slot_unpin(op->slot);
		*done += n;
	}
	return 0;
}

int lite_memset_bounce(struct lite_op *op, u64 off, u64 len, u8 value)
{
	struct lite_op_slot *slot = op->slot;
	u64 done = 0, fill;
	unsigned int i;
	s64 n;

	fill = min_t(u64, len, LITE_BOUNCE_SIZE);
	memset(slot->buf, value, fill);
	ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, fill,
				      DMA_TO_DEVICE);
	while (done < len) {
		/* Every SGE points at the same filled buffer. */
		u64 left = len - done;

		for (i = 0; i < LITE_OP_SEGS && left; i++) {
			slot->segs[i].addr = slot->buf_dma;
			slot->segs[i].length = min(left, fill);
			left -= slot->segs[i].length;
		}
		slot->nr_segs = i;
		n = lite_rw_batch(op, op->conn, op->grant, true, off + done,
				  len - done);
		if (n < 0)
			return n;
		done += n;
	}
	return 0;
}

/*
 * A READ or WRITE of up to LITE_BOUNCE_SIZE bytes. A READ's bytes that
 * could not be copied out without a fault are copied after the context
 * and its connection are given back, still counted in the grant: the
 * operation is not over until its caller has its bytes, so an unmap or
 * close meanwhile waits for it (and parks the grant if the fault outlasts
 * the drain bound), but no connection teardown does. The price: a holder
 * whose copy-out stalls (FUSE, userfaultfd) keeps its own grant from
 * draining, so a revoke of it answers ETIMEDOUT until the fault ends.
 */
static int lite_op_rw_bounce(struct lite_op *op, struct lite_file *lf,
			     struct lite_op_target *t, bool write,
			     void __user *ubuf)
{
	struct lite_copy_out out = {};
	struct lite_grant *grant;
	int ret;

	ret = lite_op_begin(op, lf, t);
	if (ret)
		return ret;
	ret = lite_rw_user_bounce(op, write, t->offset, ubuf, t->length, &out);
	if (likely(!out.buf)) {
		lite_op_end(op);
		return ret;
	}
	grant = op->grant;
	__lite_op_end(op, true);
	if (copy_to_user(out.ubuf, out.buf, out.len))
		ret = -EFAULT;
	lite_grant_op_end(grant);
	kfree(out.buf);
	return ret;
}

/*
 * A READ or WRITE over pinned user pages, or through the bounce buffer.
 * -EAGAIN from either: a page faulted in before the operation is gone
 * (above); the operation ends, the rest of the buffer is faulted
 * in again with nothing held, and a new one goes on where it stopped.
 */
int lite_op_rw_run(struct lite_file *lf, struct lite_op_target *t,
		   bool write, void __user *ubuf)
{
	unsigned int tries = 0;
	struct lite_op op;
	u64 done;
	int ret;

	for (;;) {
		if (t->length <= LITE_BOUNCE_SIZE) {
			ret = lite_op_rw_bounce(&op, lf, t, write, ubuf);
			done = 0;
		} else {
			ret = lite_op_begin(&op, lf, t);
			if (ret)
				return ret;
			ret = lite_rw_user_pinned(&op, write, t->offset,
						  (unsigned long)ubuf,
						  t->length, &done);
			lite_op_end(&op);
		}
		if (ret != -EAGAIN)
			return ret;
		tries = done ? 0 : tries + 1;
		if (tries > LITE_OP_FAULT_RETRIES)
			return -EFAULT;
		t->offset += done;
		t->length -= done;
		ubuf += done;
		t->prefault = ubuf;
		t->prefault_write = !write;
	}
}

int lite_op_rw_kernel(struct lite_file *lf, u64 handle, u64 offset, void *buf,
		      u64 length, bool write)
{
	struct lite_op_target t = {};
	struct lite_op op;
	u64 done = 0, n;
	int ret;

	if (!length || length > LITE_OP_LENGTH_MAX)
		return -EINVAL;
	t.handle = handle;
	t.offset = offset;
	t.length = length;
	t.access = write ? LITE_ACCESS_WRITE : LITE_ACCESS_READ;
	ret = lite_op_begin(&op, lf, &t);
	if (ret)
		return ret;
	lite_ops_stat_add(LITE_ST_BOUNCE, 1);
	/* No user memory: nothing faults, and nothing is staged for later. */
	while (!ret && done < length) {
		n = min_t(u64, length - done, LITE_BOUNCE_SIZE);
		if (write) {
			memcpy(op.slot->buf, buf + done, n);
			ib_dma_sync_single_for_device(op.ibdev,
						      op.slot->buf_dma, n,
						      DMA_TO_DEVICE);
		} else {
			ib_dma_sync_single_for_device(op.ibdev,
						      op.slot->buf_dma, n,
						      DMA_FROM_DEVICE);
		}
		ret = lite_rw_bounce(&op, op.conn, op.grant, write,
				     offset + done, n);
		if (!ret && !write) {
			ib_dma_sync_single_for_cpu(op.ibdev, op.slot->buf_dma,
						   n, DMA_FROM_DEVICE);
			memcpy(buf + done, op.slot->buf, n);
		}
		done += n;
	}
	if (!ret)
		lite_ops_stat_add(write ? LITE_ST_BYTES_WRITTEN :
				  LITE_ST_BYTES_READ, length);
	lite_op_end(&op);
	return ret;
}
