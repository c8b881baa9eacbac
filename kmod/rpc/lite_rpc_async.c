// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC's asynchronous calls: LITE_IOC_RPC_CALL with LITE_RPC_ASYNC
 * and LITE_IOC_RPC_WAIT.
 *
 * An asynchronous call is a synchronous one cut in two: the submit takes
 * a slot, stages and posts the request, and returns a token; WAIT collects
 * the answers of many tokens at once. Nothing is allocated per call: the
 * call's state (its reply buffer, its deadline, whom to wake) lives in its
 * reply slot, which it holds (and with it a reference on the binding) until
 * it is collected or the file closes. A token names the slot in the file's
 * rpc_calls xarray; whoever erases it from there owns the collection, so
 * two threads waiting for one token never both collect it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "lite_rpc_internal.h"

static u64 lite_rpc_token(struct lite_file *lf, u32 idx)
{
	return (u64)lf->tag << 32 | idx;
}

static bool lite_rpc_token_index(struct lite_file *lf, u64 token, u32 *idx)
{
	*idx = (u32)token;
	return (u32)(token >> 32) == lf->tag && *idx;
}

/*
 * The token is reserved (invisible to RPC_WAIT: xa_load() finds nothing)
 * and written to the caller before the post, and the call is published
 * only once it is posted: until then nobody but this submit can reach the
 * slot or the binding's reference, so every failure is undone here once,
 * with what it took (nothing posted: the whole slot; a failed post: the
 * caller's hold). After the publish the call belongs to RPC_WAIT or the
 * file's close, and nothing here touches it again.
 */
int lite_rpc_async_submit(struct lite_file *lf, struct lite_rpc_cslot *s,
			  const struct lite_rpc_call *c, unsigned long deadline,
			  u64 __user *token_out)
{
	void *old;
	u32 idx;
	int ret;

	s->async_reply = c->reply;
	s->async_reply_max = c->reply_max;
	s->async_deadline = deadline;
	/* Before the post: the reply may come before it returns. */
	s->async_wait = &lf->rpc_call_wait;
	ret = xa_alloc_cyclic(&lf->rpc_calls, &idx, NULL, XA_LIMIT(1, U32_MAX),
			      &lf->rpc_call_next, GFP_KERNEL);
	if (ret < 0) {
		lite_rpc_slot_untake(s);
		return ret;
	}
	if (put_user(lite_rpc_token(lf, idx), token_out)) {
		xa_release(&lf->rpc_calls, idx);
		lite_rpc_slot_untake(s);
		return -EFAULT;
	}
	ret = lite_rpc_slot_post(s, c->req_len, false, deadline);
	if (ret) {
		xa_release(&lf->rpc_calls, idx);
		lite_rpc_slot_finish(s);
		return ret;
	}
	/* Into the reserved entry: no allocation, so it cannot fail. */
	old = xa_store(&lf->rpc_calls, idx, s, GFP_KERNEL);
	WARN_ON_ONCE(xa_is_err(old));
	return 0;
}

/* Whether the call behind @idx can be collected now (or is gone). */
static bool lite_rpc_async_ready(struct lite_file *lf, u32 idx)
{
	struct lite_rpc_cslot *s;
	bool ready;

	rcu_read_lock();
	s = xa_load(&lf->rpc_calls, idx);
	ready = !s || READ_ONCE(s->state) == LITE_CSLOT_DONE ||
		time_after_eq(jiffies, READ_ONCE(s->async_deadline));
	rcu_read_unlock();
	return ready;
}

/* Whether at least @need of @res[0..@n) can be collected now. */
static bool lite_rpc_async_enough(struct lite_file *lf,
				  const struct lite_rpc_result *res, u32 n,
				  u32 need)
{
	u32 i, ready = 0, idx;

	for (i = 0; i < n && ready < need; i++) {
		lite_rpc_token_index(lf, res[i].call, &idx);
		ready += lite_rpc_async_ready(lf, idx);
	}
	return ready >= need;
}

/* The latest deadline among @res: no wait needs to go past it. */
static unsigned long lite_rpc_async_last_deadline(struct lite_file *lf,
						  const struct lite_rpc_result *res,
						  u32 n)
{
	unsigned long last = jiffies;
	struct lite_rpc_cslot *s;
	u32 i, idx;

	rcu_read_lock();
	for (i = 0; i < n; i++) {
		lite_rpc_token_index(lf, res[i].call, &idx);
		s = xa_load(&lf->rpc_calls, idx);
		if (s && time_after(READ_ONCE(s->async_deadline), last))
			last = READ_ONCE(s->async_deadline);
	}
	rcu_read_unlock();
	return last;
}

/*
 * Takes the call behind @idx out of the file if it can be collected: NULL
 * if it cannot yet, or another thread collected it (*@gone set).
 */
static struct lite_rpc_cslot *lite_rpc_async_take(struct lite_file *lf,
						  u32 idx, bool *gone)
{
	struct lite_rpc_cslot *s;

	xa_lock(&lf->rpc_calls);
	s = xa_load(&lf->rpc_calls, idx);
	*gone = !s;
	if (s && (READ_ONCE(s->state) == LITE_CSLOT_DONE ||
		  time_after_eq(jiffies, s->async_deadline)))
		__xa_erase(&lf->rpc_calls, idx);
	else
		s = NULL;
	xa_unlock(&lf->rpc_calls);
	return s;
}

/* Collects @s into @r: its reply copied out, its slot and binding let go. */
static void lite_rpc_async_collect(struct lite_rpc_cslot *s,
				   struct lite_rpc_result *r)
{
	struct lite_rpc_binding *b = s->b;
	void *slot = b->mem.vaddr + (u64)s->index * b->slot_bytes;
	int err;

	err = lite_rpc_slot_resolve(s, -ETIMEDOUT);
	r->reply_len = 0;
	if (err != -ETIMEDOUT) {
		if (!err) {
			r->reply_len = s->len;
			if (copy_to_user(u64_to_user_ptr(s->async_reply), slot,
					 min(s->len, s->async_reply_max)))
				err = -EFAULT;
			else if (s->len > s->async_reply_max)
				err = -EOVERFLOW;
		}
		lite_rpc_slot_finish(s);
	}
	r->error = err;
	lite_rpc_binding_put(b);
}

/* Checks every token of @res: known to this file, none twice. */
static int lite_rpc_async_check(struct lite_file *lf,
				const struct lite_rpc_result *res, u32 n)
{
	u32 i, j, idx;

	for (i = 0; i < n; i++) {
		if (!lite_rpc_token_index(lf, res[i].call, &idx) ||
		    !xa_load(&lf->rpc_calls, idx))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (res[j].call == res[i].call)
				return -EINVAL;
	}
	return 0;
}

long lite_ioc_rpc_wait(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_wait __user *uarg = arg;
	struct lite_rpc_result *res;
	struct lite_rpc_cslot *s;
	struct lite_rpc_wait w;
	unsigned long until;
	u32 i, idx, need;
	bool gone;
	long left;
	int ret;

	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	if (w.flags & ~LITE_RPC_WAIT_ALL || !w.count ||
	    w.count > LITE_RPC_WAIT_MAX)
		return -EINVAL;
	/* One allocation per wait, not per call: 64 results are 1 KiB. */
	res = memdup_array_user(u64_to_user_ptr(w.results), w.count,
				sizeof(*res));
	if (IS_ERR(res))
		return PTR_ERR(res);
	ret = lite_rpc_async_check(lf, res, w.count);
	if (ret)
		goto out;
	need = w.flags & LITE_RPC_WAIT_ALL ? w.count : 1;
	/* Every call ends by its own deadline: so does the wait. */
	until = lite_rpc_async_last_deadline(lf, res, w.count);
	left = w.timeout_ms == U32_MAX ? LONG_MAX :
					 (long)msecs_to_jiffies(w.timeout_ms);
	left = min_t(long, left, (long)(until - jiffies) + 1);
	if (left > 0) {
		left = wait_event_killable_timeout(lf->rpc_call_wait,
						   lite_rpc_async_enough(lf, res, w.count, need),
						   left);
		if (left < 0) {
			ret = -EINTR;
			goto out;
		}
	}
	w.done = 0;
	for (i = 0; i < w.count; i++) {
		lite_rpc_token_index(lf, res[i].call, &idx);
		s = lite_rpc_async_take(lf, idx, &gone);
		if (s) {
			lite_rpc_async_collect(s, &res[i]);
			w.done++;
		} else {
			/* Collected by another thread meanwhile: not ours. */
			res[i].error = gone ? -EALREADY : -EINPROGRESS;
			res[i].reply_len = 0;
		}
	}
	/* What was collected is gone from the file: report it whatever. */
	if (copy_to_user(u64_to_user_ptr(w.results), res,
			 w.count * sizeof(*res)) ||
	    put_user(w.done, &uarg->done))
		ret = -EFAULT;
out:
	kfree(res);
	return ret;
}

void lite_rpc_async_release(struct lite_file *lf)
{
	struct lite_rpc_cslot *s;
	unsigned long idx;

	/* Each call left is abandoned: its reply, when it comes, is dropped. */
	xa_for_each(&lf->rpc_calls, idx, s) {
		struct lite_rpc_binding *b = s->b;

		xa_erase(&lf->rpc_calls, idx);
		if (lite_rpc_slot_resolve(s, -ECANCELED) != -ECANCELED)
			lite_rpc_slot_finish(s);
		lite_rpc_binding_put(b);
	}
	xa_destroy(&lf->rpc_calls);
}
