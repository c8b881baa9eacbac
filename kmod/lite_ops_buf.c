// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: where an operation's local bytes live (lite_ops.c posts them).
 *
 * Up to LITE_BOUNCE_SIZE bytes go through the context's bounce buffer,
 * mapped once when the device came (lite_ops_pool.c): copy_from_user()
 * before a WRITE, copy_to_user() after a READ. Bigger user buffers are
 * pinned (pin_user_pages_fast()) and mapped with ib_dma_map_page() one
 * window of at most LITE_WIN_PAGES pages at a time, so a 64 MiB operation
 * never pins more than 1 MiB. MEMSET points every SGE at the bounce buffer
 * filled with the value; MEMCPY reads into the bounce buffer and writes it
 * out; atomics fetch into its first 8 bytes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
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

int lite_rw_user_bounce(struct lite_op *op, bool write, u64 off,
			void __user *ubuf, u64 len)
{
	struct lite_op_slot *slot = op->slot;
	int ret;

	if (write) {
		if (copy_from_user(slot->buf, ubuf, len))
			return -EFAULT;
		ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, len,
					      DMA_TO_DEVICE);
	} else {
		/* The device writes there: no dirty line may cover it. */
		ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, len,
					      DMA_FROM_DEVICE);
	}
	ret = lite_rw_bounce(op, op->conn, op->grant, write, off, len);
	if (!ret && !write) {
		ib_dma_sync_single_for_cpu(op->ibdev, slot->buf_dma, len,
					   DMA_FROM_DEVICE);
		if (copy_to_user(ubuf, slot->buf, len))
			ret = -EFAULT;
	}
	return ret;
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
	if (got < nr) {
		/*
		 * A WRITE fails before it posts anything (review finding 9):
		 * a prefix written remotely and EFAULT would leave the LMR
		 * half changed. A READ moves what it got and fails on the rest.
		 */
		if (write) {
			lite_slot_unpin(slot);
			return -EFAULT;
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
			unsigned long ubuf, u64 len)
{
	u64 done = 0;
	s64 n, win;

	while (done < len) {
		win = lite_pin_window(op, ubuf + done, len - done, write);
		if (win < 0)
			return win == -ENOMEM ? -EIO : -EFAULT;
		n = lite_rw_batch(op, op->conn, op->grant, write, off + done,
				  win);
		if (n < 0)
			return n;
		/* A batch may cover less than the window: pin the rest again. */
		lite_slot_unpin(op->slot);
		done += n;
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
