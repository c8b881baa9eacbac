// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: one-sided operations as io_uring commands (LITE_URING_CMD_OP,
 * uapi/lite_batch.h), issued the way NVMe passthrough issues its commands.
 *
 * A command carries one batch entry (struct lite_batch_op) in its SQE and
 * takes the batch's path: handle -> grant -> connection -> context, then
 * posted through the bounce buffer or as an atomic, and -EIOCBQUEUED. Its
 * last completion (lite_batch_put(), in the CQ's softirq) hands it to the
 * submitter's task (io_uring_cmd_complete_in_task()), where a READ's bytes
 * are copied out, the context is given back and the CQE is posted. Unlike
 * LITE_IOC_BATCH, nothing in lite.ko waits: a process keeps as many
 * operations in flight as there are contexts, across system calls, and
 * reaps their completions from the CQ ring mapped into it.
 *
 * Issued inline (IO_URING_F_NONBLOCK), a command never sleeps for a
 * context or for send queue credits, and never faults on user memory: it
 * returns -EAGAIN with nothing held, and io_uring issues it again from its
 * io-wq worker, where it may wait as a synchronous operation does (until
 * op_timeout_ms), and a WRITE whose bytes are not resident takes the
 * single-operation path, which faults them in.
 *
 * Lifetimes: a command in flight holds its file (io_uring's reference,
 * so the lite_file and its grants outlive it) and its context (which
 * holds the grant's in-flight count and the connection, as a synchronous
 * operation's does). Every posted work request completes, also when the
 * connection goes down (flushed), so every command ends, and a ring or a
 * process that goes away waits for its commands (io_uring cancels
 * nothing that is issued to a driver).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io_uring.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lite_ops_internal.h"

/* What the completion needs of the command, in its pdu. */
struct lite_uring_pdu {
	struct lite_op_slot *slot;
	u64 buf;			/* a READ's user buffer */
	u32 length;
	u16 opcode;
};

static struct lite_uring_pdu *lite_uring_pdu(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct lite_uring_pdu) >
		     sizeof_field(struct io_uring_cmd, pdu));
	return (struct lite_uring_pdu *)cmd->pdu;
}

/* The CQE's res of a command that did not fail. */
static s32 lite_uring_res(u16 opcode, u32 length)
{
	return opcode == LITE_BATCH_READ || opcode == LITE_BATCH_WRITE ?
		length : 0;
}

static void lite_uring_account(const struct lite_batch_op *a, int err)
{
	lite_ops_stat_add(LITE_ST_URING_CMDS, 1);
	lite_batch_account(a, err);
}

/* In the submitter's task: the command's operation has completed. */
static void lite_uring_finish(struct io_uring_cmd *cmd,
			      unsigned int issue_flags)
{
	struct lite_uring_pdu *pdu = lite_uring_pdu(cmd);
	struct lite_op_slot *slot = pdu->slot;
	struct lite_op op = {
		.slot = slot,
		.conn = slot->conns[0],
		.grant = slot->grants[0],
		.ibdev = slot->conns[0]->ldev->ibdev,
	};
	struct lite_batch_op a = {
		.opcode = pdu->opcode,
		.length = pdu->length,
		.buf = pdu->buf,
	};
	struct lite_copy_out out = {};
	struct lite_grant *grant = op.grant;
	int ret = slot->status;
	u64 old = 0;

	/*
	 * io_uring's fallback worker, for a task that could not run its task
	 * work, has no user memory to copy a READ's bytes to.
	 */
	if (!ret && a.opcode == LITE_BATCH_READ && (current->flags & PF_KTHREAD))
		ret = -ECANCELED;
	ret = lite_batch_collect(&op, &a, ret, &old, &out);
	if (likely(!out.buf)) {
		lite_op_end(&op);
	} else {
		/* The rest may fault: with the context given back. */
		__lite_op_end(&op, true);
		if (copy_to_user(out.ubuf, out.buf, out.len))
			ret = -EFAULT;
		lite_grant_op_end(grant);
		kfree(out.buf);
	}
	lite_uring_account(&a, ret);
	io_uring_cmd_done(cmd, ret ? ret : lite_uring_res(a.opcode, a.length),
			  old, issue_flags);
}

void lite_uring_complete(struct lite_op_slot *slot)
{
	io_uring_cmd_complete_in_task(slot->ucmd, lite_uring_finish);
}

/*
 * Begins and posts @a's operation for @cmd: -EIOCBQUEUED once it is
 * posted (its completion finishes @cmd); else nothing is held and the
 * result is returned (-EAGAIN with @nowait: issue again from io-wq).
 */
static int lite_uring_issue(struct lite_file *lf, struct io_uring_cmd *cmd,
			    const struct lite_batch_op *a, bool nowait)
{
	struct lite_uring_pdu *pdu = lite_uring_pdu(cmd);
	void __user *ubuf = u64_to_user_ptr(a->buf);
	bool write = a->opcode == LITE_BATCH_WRITE;
	bool atomic = a->opcode >= LITE_BATCH_FAA;
	struct lite_op_target t;
	struct lite_op op;
	int ret;

	lite_batch_target(&t, a);
	t.no_wait = nowait;
	ret = lite_op_begin(&op, lf, &t);
	if (ret)
		return ret;
	op.no_wait = nowait;
	pdu->slot = op.slot;
	pdu->buf = a->buf;
	pdu->length = a->length;
	pdu->opcode = a->opcode;
	/* Before the post: its completion may come at once. */
	op.slot->ucmd = cmd;
	if (atomic) {
		ret = lite_atomic_prepare(&op, &t, a->operand, a->swap,
					  a->opcode == LITE_BATCH_CAS);
		if (!ret)
			ret = lite_batch_post(&op, op.conn, op.grant, true);
	} else {
		ret = lite_bounce_post(&op, write, a->offset, ubuf, a->length);
	}
	if (!ret)
		return -EIOCBQUEUED;
	/* Nothing was posted. */
	op.slot->ucmd = NULL;
	lite_op_end(&op);
	if (ret == -EAGAIN && write && !nowait) {
		/* Its bytes are not resident: fault them in, and write. */
		t.no_wait = false;
		t.prefault = ubuf;
		ret = lite_op_rw_run(lf, &t, true, ubuf);
	}
	return ret;
}

int lite_ops_uring_cmd(struct lite_file *lf, struct io_uring_cmd *cmd,
		       unsigned int issue_flags)
{
	const unsigned int big = IO_URING_F_SQE128 | IO_URING_F_CQE32;
	bool nowait = issue_flags & IO_URING_F_NONBLOCK;
	struct lite_batch_op a;
	int ret;

	if (cmd->cmd_op != LITE_URING_CMD_OP)
		return -ENOTTY;
	if ((issue_flags & big) != big)
		return -EINVAL;
	/*
	 * One copy, then checked: the SQE is in memory the process shares
	 * (io_uring copies it only for a command issued again from io-wq).
	 */
	memcpy(&a, cmd->cmd, sizeof(a));
	ret = lite_batch_check(&a);
	if (!ret && (a.result || a.error))
		ret = -EINVAL;
	if (!ret)
		ret = lite_uring_issue(lf, cmd, &a, nowait);
	if (ret == -EIOCBQUEUED || (ret == -EAGAIN && nowait))
		return ret;
	lite_uring_account(&a, ret);
	if (ret)
		return ret;
	/*
	 * Done here, and not failed: completed through io_uring_cmd_done(),
	 * since io_uring takes a positive return from ->uring_cmd() for a
	 * result only when the command was issued inline; from io-wq (where
	 * a WRITE that had to fault its bytes in ends) it would drop it, and
	 * the command would never complete.
	 */
	io_uring_cmd_done(cmd, lite_uring_res(a.opcode, a.length), 0,
			  issue_flags);
	return -EIOCBQUEUED;
}
