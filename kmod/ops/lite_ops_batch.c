// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: batched one-sided operations (LITE_IOC_BATCH, uapi/lite_batch.h).
 *
 * One system call runs many small READs, WRITEs and atomics: each entry
 * takes the same path as its single-operation ioctl (handle -> grant ->
 * connection -> context, lite_ops.c) and is posted without waiting; up to
 * LITE_BATCH_WINDOW entries are in flight at once, and the oldest is
 * finished (waited for, its READ bytes copied out, its context given back,
 * its result written to the caller's entry) when the window is full, when
 * no operation context is free, and at the end. The syscall, the sleep and
 * the wake-up of a synchronous operation are paid once per window instead
 * of once per operation.
 *
 * Nothing faults on user memory while entries are in flight (lifetimes
 * review #3, as for a single operation): an entry is copied in with page
 * faults disabled, and one that is not resident waits until the window is
 * empty; a READ's bytes that cannot be copied out without a fault are
 * staged and copied once the window is empty; the results go back to the
 * caller's entries at the end, with nothing held.
 *
 * A batch never waits for a context while it holds one: the device's
 * LITE_OP_SLOTS contexts are shared by every process, and two batches that
 * each held some and waited for more could wait on each other until their
 * operations timed out. A batch that finds none free finishes its own
 * oldest entry first, and waits only when it holds none.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lite_ops_internal.h"

/* One entry in flight. */
struct lite_batch_ent {
	struct lite_op op;
	struct lite_batch_op a;		/* the caller's entry; results here */
	u32 index;			/* in the caller's array */
};

/* An entry's outcome, written back to the caller's entry at the end. */
struct lite_batch_res {
	s32 error;
	u64 result;
};

struct lite_batch_ctx {
	struct lite_file *lf;
	struct lite_batch_op __user *uops;
	u32 failed;
	int fault;			/* an entry could not be read */
	unsigned int head, nr;		/* the window: ents[head], nr of them */
	struct lite_batch_ent ents[LITE_BATCH_WINDOW];
	struct lite_batch_res res[LITE_BATCH_MAX];
};

int lite_batch_check(const struct lite_batch_op *a)
{
	if (a->flags || a->priority > LITE_PRIO_LOW)
		return -EINVAL;
	switch (a->opcode) {
	case LITE_BATCH_READ:
	case LITE_BATCH_WRITE:
		if (!a->length || a->length > LITE_BATCH_RW_MAX ||
		    a->operand || a->swap)
			return -EINVAL;
		if (!access_ok(u64_to_user_ptr(a->buf), a->length))
			return -EFAULT;
		return 0;
	case LITE_BATCH_FAA:
		if (a->swap)
			return -EINVAL;
		fallthrough;
	case LITE_BATCH_CAS:
		if (a->length != 8 || a->buf || a->offset % 8)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

void lite_batch_account(const struct lite_batch_op *a, int err)
{
	static const enum lite_ops_stat kind[] = {
		[LITE_BATCH_READ] = LITE_ST_READ,
		[LITE_BATCH_WRITE] = LITE_ST_WRITE,
		[LITE_BATCH_FAA] = LITE_ST_FAA,
		[LITE_BATCH_CAS] = LITE_ST_CAS,
	};

	if (!a->opcode || a->opcode >= ARRAY_SIZE(kind)) {
		/* No operation of any kind: only its EINVAL is counted. */
		lite_ops_stat_add(LITE_ST_ERR_EINVAL, 1);
		return;
	}
	if (!err && a->opcode == LITE_BATCH_READ)
		lite_ops_stat_add(LITE_ST_BYTES_READ, a->length);
	else if (!err && a->opcode == LITE_BATCH_WRITE)
		lite_ops_stat_add(LITE_ST_BYTES_WRITTEN, a->length);
	if (a->opcode == LITE_BATCH_READ || a->opcode == LITE_BATCH_WRITE)
		lite_ops_stat_add(LITE_ST_BOUNCE, 1);
	lite_ops_account(kind[a->opcode], err);
}

/* Keeps the entry's error and result for the caller, and counts it. */
static void lite_batch_report(struct lite_batch_ctx *bc, u32 index,
			      struct lite_batch_op *a, int err)
{
	bc->res[index].error = err;
	bc->res[index].result = err ? 0 : a->result;
	if (err)
		bc->failed++;
	lite_batch_account(a, err);
}

static void lite_batch_drain(struct lite_batch_ctx *bc);

int lite_batch_collect(struct lite_op *op, const struct lite_batch_op *a,
		       int ret, u64 *old, struct lite_copy_out *out)
{
	if (ret)
		return ret;
	if (a->opcode == LITE_BATCH_READ)
		return lite_bounce_read_out(op, u64_to_user_ptr(a->buf),
					    a->length, out);
	if (a->opcode >= LITE_BATCH_FAA)
		*old = lite_atomic_result(op);
	return 0;
}

/* Waits for the oldest entry in flight and ends it. */
static void lite_batch_finish_oldest(struct lite_batch_ctx *bc)
{
	struct lite_batch_ent *e = &bc->ents[bc->head];
	struct lite_copy_out out = {};
	struct lite_grant *grant;
	int ret;

	bc->head = (bc->head + 1) % LITE_BATCH_WINDOW;
	bc->nr--;
	ret = lite_batch_wait(&e->op);
	ret = lite_batch_collect(&e->op, &e->a, ret, &e->a.result, &out);
	if (likely(!out.buf)) {
		lite_op_end(&e->op);
	} else {
		/*
		 * The rest may fault: copied with nothing of the batch in
		 * flight (the entry is done; its grant stays counted until
		 * its caller has the bytes, as for a single READ).
		 */
		grant = e->op.grant;
		__lite_op_end(&e->op, true);
		lite_batch_drain(bc);
		if (copy_to_user(out.ubuf, out.buf, out.len))
			ret = -EFAULT;
		lite_grant_op_end(grant);
		kfree(out.buf);
	}
	lite_batch_report(bc, e->index, &e->a, ret);
}

/* Finishes every entry in flight. */
static void lite_batch_drain(struct lite_batch_ctx *bc)
{
	while (bc->nr)
		lite_batch_finish_oldest(bc);
}

/* Entry @index, copied without a fault while others are in flight. */
static int lite_batch_copy_in(struct lite_batch_ctx *bc, u32 index,
			      struct lite_batch_op *a)
{
	unsigned long left;

	pagefault_disable();
	left = __copy_from_user_inatomic(a, &bc->uops[index], sizeof(*a));
	pagefault_enable();
	if (likely(!left))
		return 0;
	lite_batch_drain(bc);
	return copy_from_user(a, &bc->uops[index], sizeof(*a)) ? -EFAULT : 0;
}

void lite_batch_target(struct lite_op_target *t, const struct lite_batch_op *a)
{
	if (a->opcode >= LITE_BATCH_FAA) {
		lite_atomic_target(t, a->handle, a->offset);
		t->priority = a->priority;
		return;
	}
	memset(t, 0, sizeof(*t));
	t->handle = a->handle;
	t->offset = a->offset;
	t->length = a->length;
	/*
	 * No prefault (it could fault with other operations in flight): a
	 * WRITE whose bytes are not resident gets -EAGAIN from
	 * lite_bounce_post() and goes the single-operation way.
	 */
	t->access = a->opcode == LITE_BATCH_WRITE ? LITE_ACCESS_WRITE :
						   LITE_ACCESS_READ;
	t->priority = a->priority;
}

/*
 * Begins @e's operation (finishing older entries while no context is
 * free) and posts it. 0: in flight; else nothing is held.
 */
static int lite_batch_start(struct lite_batch_ctx *bc,
			    struct lite_batch_ent *e)
{
	const struct lite_batch_op *a = &e->a;
	void __user *ubuf = u64_to_user_ptr(a->buf);
	bool write = a->opcode == LITE_BATCH_WRITE;
	struct lite_op_target t;
	int ret;

	lite_batch_target(&t, a);
	for (;;) {
		t.no_wait = bc->nr > 0;
		ret = lite_op_begin(&e->op, bc->lf, &t);
		if (ret != -EAGAIN || !t.no_wait)
			break;
		lite_batch_finish_oldest(bc);
	}
	if (ret)
		return ret;
	if (a->opcode >= LITE_BATCH_FAA) {
		ret = lite_atomic_prepare(&e->op, &t, a->operand, a->swap,
					  a->opcode == LITE_BATCH_CAS);
		if (!ret)
			ret = lite_batch_post(&e->op, e->op.conn, e->op.grant,
					      true);
	} else {
		ret = lite_bounce_post(&e->op, write, a->offset, ubuf,
				       a->length);
	}
	if (ret)
		lite_op_end(&e->op);
	return ret;
}

/* One entry: checked, then in flight, or run at once when it must be. */
static void lite_batch_one(struct lite_batch_ctx *bc, u32 index)
{
	struct lite_batch_ent *e;
	struct lite_batch_op a;
	struct lite_op_target t = {};
	int ret;

	if (lite_batch_copy_in(bc, index, &a)) {
		bc->fault = -EFAULT;
		return;
	}
	a.result = 0;
	ret = lite_batch_check(&a);
	if (ret) {
		lite_batch_report(bc, index, &a, ret);
		return;
	}
	if (bc->nr == LITE_BATCH_WINDOW)
		lite_batch_finish_oldest(bc);
	e = &bc->ents[(bc->head + bc->nr) % LITE_BATCH_WINDOW];
	e->a = a;
	e->index = index;
	ret = lite_batch_start(bc, e);
	if (!ret) {
		bc->nr++;
		return;
	}
	if (ret == -EAGAIN && a.opcode == LITE_BATCH_WRITE) {
		/*
		 * Its bytes went away since they were faulted in: the
		 * single-operation path faults them in again and restarts,
		 * with nothing of the batch in flight.
		 */
		lite_batch_drain(bc);
		t.handle = a.handle;
		t.offset = a.offset;
		t.length = a.length;
		t.access = LITE_ACCESS_WRITE;
		t.prefault = u64_to_user_ptr(a.buf);
		ret = lite_op_rw_run(bc->lf, &t, true, u64_to_user_ptr(a.buf));
	}
	lite_batch_report(bc, index, &a, ret);
}

long lite_ioc_batch(struct lite_file *lf, void __user *arg)
{
	struct lite_batch __user *uarg = arg;
	struct lite_batch_ctx *bc;
	struct lite_batch b;
	long ret = 0;
	u32 i, done;

	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	if (!b.count || b.count > LITE_BATCH_MAX || b.flags || b.reserved)
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(b.ops),
		       (size_t)b.count * sizeof(struct lite_batch_op)))
		return -EFAULT;
	/* One allocation per call: the window does not fit on the stack. */
	bc = kmalloc(sizeof(*bc), GFP_KERNEL);
	if (!bc)
		return -ENOMEM;
	bc->lf = lf;
	bc->uops = u64_to_user_ptr(b.ops);
	bc->failed = 0;
	bc->fault = 0;
	bc->head = 0;
	bc->nr = 0;
	for (i = 0; i < b.count && !bc->fault; i++) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		lite_batch_one(bc, i);
	}
	done = bc->fault ? i - 1 : i;
	lite_batch_drain(bc);
	lite_ops_stat_add(LITE_ST_BATCHES, 1);
	/* Nothing is held now: the results may fault their way back. */
	for (i = 0; i < done && !ret; i++) {
		if (put_user(bc->res[i].error, &bc->uops[i].error) ||
		    put_user(bc->res[i].result, &bc->uops[i].result))
			ret = -EFAULT;
	}
	if (!ret)
		ret = bc->fault;
	if (!ret && put_user(bc->failed, &uarg->failed))
		ret = -EFAULT;
	kfree(bc);
	return ret;
}
