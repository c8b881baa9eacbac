// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: one-sided operations as io_uring commands (LITE_URING_CMD_OP,
 * uapi/lite_batch.h), issued the way NVMe passthrough issues its commands.
 *
 * A command carries one batch entry (struct lite_batch_op) in its SQE and
 * takes the batch's path: handle -> grant -> connection -> context, then
 * posted through the bounce buffer or as an atomic, and -EIOCBQUEUED. Its
 * last completion (lite_batch_put(), in the CQ's softirq) moves the
 * results out of the context (a READ's bytes into a buffer the command
 * allocated at issue, an atomic's old value into its pdu) and gives the
 * context back, and with it the connection's and the grant's counts; then
 * it hands the command to the submitter's task
 * (io_uring_cmd_complete_in_task()), where a READ's bytes are copied out
 * and the CQE is posted. Unlike LITE_IOC_BATCH, nothing in lite.ko waits:
 * a process keeps operations in flight across system calls (up to
 * uring_cmds_per_file and uring_cmds_per_uid) and reaps their completions
 * from the CQ ring mapped into it.
 *
 * Issued inline (IO_URING_F_NONBLOCK), a command never sleeps for a
 * context or for send queue credits, and never faults on user memory: it
 * returns -EAGAIN with nothing held, and io_uring issues it again from its
 * io-wq worker, where it may wait as a synchronous operation does (until
 * op_timeout_ms), and a WRITE whose bytes are not resident takes the
 * single-operation path, which faults them in.
 *
 * Lifetimes: a command holds its file (io_uring's reference, so the
 * lite_file and its grants outlive it) until its CQE. It holds a context
 * (and the grant's in-flight count and the connection, as a synchronous
 * operation does) only while its work request is posted: every posted
 * work request completes, also when the connection goes down (flushed),
 * and the completion gives them back. When the submitter's task runs the
 * rest is up to it: with IORING_SETUP_DEFER_TASKRUN only when it waits for
 * completions, when stopped never; a task that holds its completions that
 * way keeps nothing from anyone else (review 2026-11-28 H1), and at most
 * its per-file and per-uid share of commands.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/io_uring.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lite_ops_internal.h"

/*
 * Commands one file, and one uid across its files, may have issued to
 * lite.ko and not yet completed to io_uring (its CQE posted): counted from
 * the issue to the task work that posts the CQE, which only the submitter
 * runs (with DEFER_TASKRUN only when it waits for completions). Beyond
 * them a command fails at once: EBUSY for the file, EDQUOT for the uid.
 * What such a command still holds is its file and, for a READ, the bytes
 * waiting to be copied out; the context, the connection and the grant it
 * used were given back when it completed.
 */
#define LITE_URING_CMDS_MAX	1024

unsigned int lite_uring_cmds_per_file = 16;
unsigned int lite_uring_cmds_per_uid = 16;

static int lite_param_set_uring_cmds(const char *val,
				     const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_URING_CMDS_MAX);
}

static const struct kernel_param_ops lite_uring_cmds_ops = {
	.set = lite_param_set_uring_cmds,
	.get = param_get_uint,
};

module_param_cb(uring_cmds_per_file, &lite_uring_cmds_ops,
		&lite_uring_cmds_per_file, 0644);
MODULE_PARM_DESC(uring_cmds_per_file, "io_uring commands one open /dev/lite may have issued and not completed (CQE not posted), 1..1024 (default 16); more fail with EBUSY");
module_param_cb(uring_cmds_per_uid, &lite_uring_cmds_ops,
		&lite_uring_cmds_per_uid, 0644);
MODULE_PARM_DESC(uring_cmds_per_uid, "io_uring commands one uid (its files' opener) may have issued and not completed, 1..1024 (default 16); more fail with EDQUOT");

/* What the command's completion leaves for its task work, in its pdu. */
struct lite_uring_pdu {
	union {
		void *kbuf;		/* a READ's bytes, allocated at issue */
		u64 old;		/* an atomic's old value */
	};
	u64 buf;			/* a READ's user buffer */
	u32 length;
	s32 status;			/* the operation's outcome */
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

/*
 * Counts a command of @lf against both limits. The uid is the file's
 * opener's, found once per file: its first command may allocate the uid's
 * entry, also inline (a small allocation in process context, once; sent to
 * io-wq instead, its refusal would reach a DEFER_TASKRUN ring only as task
 * work).
 */
static int lite_uring_count(struct lite_file *lf)
{
	struct lite_user *user = READ_ONCE(lf->uring_user);

	if (!user) {
		user = lite_user_get(from_kuid(&init_user_ns,
					       lf->file->f_cred->euid));
		if (!user)
			return -ENOMEM;
		if (cmpxchg(&lf->uring_user, NULL, user)) {
			lite_user_put(user);
			user = lf->uring_user;
		}
	}
	if (atomic_inc_return(&lf->uring_cmds) >
	    READ_ONCE(lite_uring_cmds_per_file)) {
		atomic_dec(&lf->uring_cmds);
		return -EBUSY;
	}
	if (atomic_inc_return(&user->uring_cmds) >
	    READ_ONCE(lite_uring_cmds_per_uid)) {
		atomic_dec(&user->uring_cmds);
		atomic_dec(&lf->uring_cmds);
		return -EDQUOT;
	}
	return 0;
}

static void lite_uring_uncount(struct lite_file *lf)
{
	atomic_dec(&lf->uring_user->uring_cmds);
	atomic_dec(&lf->uring_cmds);
}

/*
 * In the submitter's task (or io_uring's fallback worker): the command's
 * operation completed and gave everything shared back; copy a READ's
 * bytes out and post the CQE.
 */
static void lite_uring_finish(struct io_uring_cmd *cmd,
			      unsigned int issue_flags)
{
	struct lite_uring_pdu *pdu = lite_uring_pdu(cmd);
	struct lite_file *lf = cmd->file->private_data;
	struct lite_batch_op a = {
		.opcode = pdu->opcode,
		.length = pdu->length,
		.buf = pdu->buf,
	};
	int ret = pdu->status;
	u64 old = 0;

	if (a.opcode == LITE_BATCH_READ) {
		/* The fallback worker has no user memory to copy to. */
		if (!ret && (current->flags & PF_KTHREAD))
			ret = -ECANCELED;
		if (!ret && copy_to_user(u64_to_user_ptr(a.buf), pdu->kbuf,
					 a.length))
			ret = -EFAULT;
		kfree(pdu->kbuf);
	} else if (a.opcode >= LITE_BATCH_FAA && !ret) {
		old = pdu->old;
	}
	lite_uring_account(&a, ret);
	/* Before the CQE: the file may go with it. */
	lite_uring_uncount(lf);
	io_uring_cmd_done(cmd, ret ? ret : lite_uring_res(a.opcode, a.length),
			  old, issue_flags);
}

void lite_uring_complete(struct lite_op_slot *slot)
{
	struct io_uring_cmd *cmd = slot->ucmd;
	struct lite_uring_pdu *pdu = lite_uring_pdu(cmd);
	struct ib_device *ibdev = slot->pool->ldev->ibdev;
	int ret = slot->status;

	/*
	 * Any context, the batch's last completion: the results move from
	 * the context to the command, so the context, its connection and its
	 * grant go back with this completion.
	 */
	if (!ret && pdu->opcode == LITE_BATCH_READ) {
		ib_dma_sync_single_for_cpu(ibdev, slot->buf_dma, pdu->length,
					   DMA_FROM_DEVICE);
		memcpy(pdu->kbuf, slot->buf, pdu->length);
	} else if (!ret && pdu->opcode >= LITE_BATCH_FAA) {
		ib_dma_sync_single_for_cpu(ibdev, slot->buf_dma, 8,
					   DMA_FROM_DEVICE);
		pdu->old = *(u64 *)slot->buf;
	}
	pdu->status = ret;
	slot->ucmd = NULL;
	io_uring_cmd_complete_in_task(cmd, lite_uring_finish);
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
	pdu->buf = a->buf;
	pdu->length = a->length;
	pdu->opcode = a->opcode;
	pdu->kbuf = NULL;
	if (a->opcode == LITE_BATCH_READ) {
		/* Where the completion leaves the bytes (charged to the caller). */
		pdu->kbuf = kmalloc(a->length, nowait ?
				    GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN :
				    GFP_KERNEL_ACCOUNT);
		if (!pdu->kbuf)
			return nowait ? -EAGAIN : -ENOMEM;
	}
	ret = lite_op_begin(&op, lf, &t);
	if (ret)
		goto out_free;
	op.no_wait = nowait;
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
out_free:
	kfree(pdu->kbuf);
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
		ret = lite_uring_count(lf);
	if (!ret) {
		ret = lite_uring_issue(lf, cmd, &a, nowait);
		/* Posted: its task work uncounts it. */
		if (ret == -EIOCBQUEUED)
			return ret;
		lite_uring_uncount(lf);
	}
	if (ret == -EAGAIN && nowait)
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
