// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: fetch-and-add and compare-and-swap (LITE_IOC_FAA, LITE_IOC_CAS, the
 * kernel API's lite_kfaa/lite_kcas and batched entries): one 8-byte word,
 * aligned at the home node and in one chunk, through the context's bounce
 * buffer, on the path of every operation (lite_ops.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/uaccess.h>

#include "lite_ops_internal.h"

void lite_atomic_target(struct lite_op_target *t, u64 handle, u64 offset)
{
	memset(t, 0, sizeof(*t));
	t->handle = handle;
	t->offset = offset;
	t->length = 8;
	t->access = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
	t->word = true;
}

int lite_atomic_prepare(struct lite_op *op, const struct lite_op_target *t,
			u64 operand, u64 swap, bool cas)
{
	struct lite_op_slot *slot = op->slot;

	/*
	 * The home's key, or this device, takes no atomics: its NAK would put
	 * the QP every process shares in the error state (review finding 7).
	 */
	if (unlikely(op->conn->no_atomics || !op->conn->ldev->atomics))
		return -EOPNOTSUPP;
	slot->sges[0].addr = slot->buf_dma;
	slot->sges[0].length = 8;
	slot->sges[0].lkey = op->lkey;
	memset(&slot->awr, 0, sizeof(slot->awr));
	slot->awr.wr.wr_cqe = &slot->cqe;
	slot->awr.wr.sg_list = &slot->sges[0];
	slot->awr.wr.num_sge = 1;
	slot->awr.wr.opcode = cas ? IB_WR_ATOMIC_CMP_AND_SWP :
				    IB_WR_ATOMIC_FETCH_AND_ADD;
	slot->awr.wr.send_flags = IB_SEND_SIGNALED;
	slot->awr.remote_addr = t->raddr;
	slot->awr.compare_add = operand;
	slot->awr.swap = swap;
	slot->awr.rkey = op->grant->memory_key;
	/* The device writes the old value there: no dirty line may cover it. */
	ib_dma_sync_single_for_device(op->ibdev, slot->buf_dma, 8,
				      DMA_FROM_DEVICE);
	return 0;
}

u64 lite_atomic_result(struct lite_op *op)
{
	ib_dma_sync_single_for_cpu(op->ibdev, op->slot->buf_dma, 8,
				   DMA_FROM_DEVICE);
	return *(u64 *)op->slot->buf;
}

int lite_op_atomic_run(struct lite_file *lf, u64 handle, u64 offset,
		       u64 operand, u64 swap, bool cas, u32 priority,
		       u64 *result)
{
	struct lite_op_target t;
	struct lite_op op;
	int ret;

	if ((!cas && swap) || offset % 8)
		return -EINVAL;
	lite_atomic_target(&t, handle, offset);
	t.priority = priority;
	ret = lite_op_begin(&op, lf, &t);
	if (ret)
		return ret;
	ret = lite_atomic_prepare(&op, &t, operand, swap, cas);
	if (!ret)
		ret = lite_batch_post(&op, op.conn, op.grant, true);
	if (!ret)
		ret = lite_batch_wait(&op);
	if (!ret)
		*result = lite_atomic_result(&op);
	lite_op_end(&op);
	return ret;
}

long lite_op_atomic(struct lite_file *lf, struct lite_atomic __user *uarg,
		    bool cas)
{
	struct lite_atomic a;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EINVAL;
	ret = lite_op_atomic_run(lf, a.handle, a.offset, a.operand, a.swap, cas,
				 a.priority, &a.result);
	if (!ret && put_user(a.result, &uarg->result))
		ret = -EFAULT;
	return ret;
}
