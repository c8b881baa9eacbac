// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC's data path: LITE_IOC_RPC_CALL, _SEND, _RECV and _REPLY.
 *
 * A call: handle -> binding (lock-free) -> a free slot (its credit) ->
 * the request copied into the slot -> one WRITE_WITH_IMM into the same
 * slot of the ring at the server -> sleep until the reply's immediate
 * completes the slot -> the reply copied to the caller. No allocation,
 * one copy each way (the user's buffers are not pinned: a copy of a
 * request that fits a slot costs less than pinning and mapping it).
 * A server takes requests where the NIC put them, in its mapping of the
 * rings, and answers from there (LITE_RPC_REPLY_IN_PLACE) or from its
 * own buffer (one copy into the slot). Asynchronous calls are in
 * lite_rpc_async.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "lite_rpc_internal.h"

unsigned int lite_rpc_timeout_ms = 10000;

static int lite_param_set_rpc_timeout(const char *val,
				      const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_RPC_TIMEOUT_MAX_MS);
}

static const struct kernel_param_ops lite_rpc_timeout_ops = {
	.set = lite_param_set_rpc_timeout,
	.get = param_get_uint,
};

module_param_cb(rpc_timeout_ms, &lite_rpc_timeout_ops, &lite_rpc_timeout_ms,
		0644);
MODULE_PARM_DESC(rpc_timeout_ms, "An RPC call's or message's timeout when it gives none, 1..3600000 ms (default 10000)");

unsigned long lite_rpc_deadline(u32 timeout_ms)
{
	if (!timeout_ms)
		timeout_ms = READ_ONCE(lite_rpc_timeout_ms);
	return jiffies + msecs_to_jiffies(timeout_ms);
}

/* Tries to stage a request without sleeping in a fault with a slot held. */
#define LITE_RPC_STAGE_TRIES	4

/*
 * Takes a slot of @b (as lite_rpc_slot_take()) and stages @len bytes of
 * the user's @src in it. The pages are faulted in before the slot is
 * taken and copied with page faults off, so a request whose pages are slow
 * to come (FUSE, swap) waits without holding a credit other callers of the
 * node's binding need. Only if the pages keep going away does the copy
 * fault with the slot held; that is safe too: the post checks that the
 * binding is alive under its lock.
 */
static int lite_rpc_take_staged(struct lite_rpc_binding *b,
				const void __user *src, u32 len, bool nonblock,
				unsigned long deadline, u8 state,
				struct lite_rpc_cslot **out)
{
	unsigned int tries;
	void *slot;
	int ret;

	for (tries = 1; ; tries++) {
		if (fault_in_readable((const char __user *)src, len))
			return -EFAULT;
		ret = lite_rpc_slot_take(b, nonblock, deadline, state, out);
		if (ret)
			return ret;
		slot = b->mem.vaddr + (u64)(*out)->index * b->slot_bytes;
		if (!copy_from_user_nofault(slot, src, len))
			return 0;
		if (tries == LITE_RPC_STAGE_TRIES)
			break;
		lite_rpc_slot_untake(*out);
	}
	if (!copy_from_user(slot, src, len))
		return 0;
	lite_rpc_slot_untake(*out);
	return -EFAULT;
}

long lite_ioc_rpc_call(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_call __user *uarg = arg;
	struct lite_rpc_binding *b;
	struct lite_rpc_cslot *s;
	struct lite_rpc_call c;
	unsigned long deadline;
	u64 posted = 0;
	void *slot;
	u8 prio;
	int ret;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.flags & ~(LITE_RPC_NONBLOCK | LITE_RPC_ASYNC) ||
	    c.timeout_ms > LITE_RPC_TIMEOUT_MAX_MS)
		return -EINVAL;
	ret = lite_prio_resolve(lf, c.priority, &prio);
	if (ret)
		return ret;
	b = lite_rpc_handle_binding(lf, c.service);
	if (!b)
		return -EBADF;
	if (c.req_len > b->max_request) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = lite_qos_node_admit(b->node_id, prio, c.req_len,
				  c.flags & LITE_RPC_NONBLOCK);
	if (ret)
		goto out;
	deadline = lite_rpc_deadline(c.timeout_ms);
	ret = lite_rpc_take_staged(b, u64_to_user_ptr(c.request), c.req_len,
				   c.flags & LITE_RPC_NONBLOCK, deadline,
				   LITE_CSLOT_CALL, &s);
	if (ret)
		goto out;
	slot = b->mem.vaddr + (u64)s->index * b->slot_bytes;
	if (c.flags & LITE_RPC_ASYNC) {
		ret = lite_rpc_async_submit(lf, s, &c, deadline, &uarg->call);
		if (ret)
			goto out;	/* the submit gave the slot back */
		/* The call keeps its slot and the binding until collected. */
		return 0;
	}
	if (prio == LITE_PRIO_HIGH)
		posted = ktime_get_ns();
	ret = lite_rpc_slot_post(s, c.req_len, false, deadline);
	if (ret) {
		lite_rpc_slot_finish(s);
		goto out;
	}
	ret = lite_rpc_slot_wait(s, deadline);
	if (ret) {
		/* A failed call is done with its slot; an abandoned one is not. */
		if (ret != -ETIMEDOUT && ret != -EINTR)
			lite_rpc_slot_finish(s);
		goto out;
	}
	if (posted)
		lite_qos_node_rtt(b->node_id, ktime_get_ns() - posted);
	c.reply_len = s->len;
	if (copy_to_user(u64_to_user_ptr(c.reply), slot,
			 min(c.reply_len, c.reply_max)))
		ret = -EFAULT;
	else if (c.reply_len > c.reply_max)
		ret = -EOVERFLOW;
	lite_rpc_slot_finish(s);
	if (put_user(c.reply_len, &uarg->reply_len))
		ret = -EFAULT;
out:
	lite_rpc_binding_put(b);
	return ret;
}

long lite_ioc_rpc_send(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_send __user *uarg = arg;
	struct lite_rpc_binding *b;
	struct lite_rpc_cslot *s;
	struct lite_rpc_send m;
	unsigned long deadline;
	u8 prio;
	int ret;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	if (m.flags & ~LITE_RPC_NONBLOCK || m.timeout_ms > LITE_RPC_TIMEOUT_MAX_MS)
		return -EINVAL;
	ret = lite_prio_resolve(lf, m.priority, &prio);
	if (ret)
		return ret;
	b = lite_rpc_handle_binding(lf, m.service);
	if (!b)
		return -EBADF;
	if (m.len > b->max_request) {
		ret = -EMSGSIZE;
		goto out;
	}
	ret = lite_qos_node_admit(b->node_id, prio, m.len,
				  m.flags & LITE_RPC_NONBLOCK);
	if (ret)
		goto out;
	deadline = lite_rpc_deadline(m.timeout_ms);
	ret = lite_rpc_take_staged(b, u64_to_user_ptr(m.msg), m.len,
				   m.flags & LITE_RPC_NONBLOCK, deadline,
				   LITE_CSLOT_MSG, &s);
	if (ret)
		goto out;
	ret = lite_rpc_slot_post(s, m.len, true, deadline);
	if (ret) {
		lite_rpc_slot_finish(s);
		goto out;
	}
	ret = lite_rpc_msg_wait(s);
out:
	lite_rpc_binding_put(b);
	return ret;
}

long lite_ioc_rpc_reply(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_reply __user *uarg = arg;
	struct lite_rpc_service *svc;
	struct lite_rpc_reply r;
	int ret;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.flags & ~(LITE_RPC_REPLY_IN_PLACE | LITE_RPC_REPLY_RELEASE))
		return -EINVAL;
	svc = lite_rpc_handle_service(lf, r.service);
	if (!svc)
		return -EBADF;
	ret = lite_rpc_service_answer(svc, r.id, u64_to_user_ptr(r.data), NULL,
				      r.len, r.flags, lite_rpc_deadline(0));
	lite_rpc_service_put(svc);
	return ret;
}

/* Requests taken per batch: what one RECV holds on its stack. */
#define LITE_RPC_RECV_BATCH	16

/* Takes up to @max requests to @out; how many, or an errno. */
static int lite_rpc_recv_take(struct lite_rpc_service *svc,
			      struct lite_rpc_request __user *out, u32 max)
{
	struct lite_rpc_request reqs[LITE_RPC_RECV_BATCH];
	int total = 0, n;

	while (total < max) {
		n = lite_rpc_service_take(svc, reqs,
					  min_t(u32, max - total,
						LITE_RPC_RECV_BATCH));
		if (n <= 0)
			return total ?: n;
		/* Taken requests stay taken: nobody else may answer them. */
		if (copy_to_user(out + total, reqs, n * sizeof(reqs[0])))
			return -EFAULT;
		total += n;
		if (n < LITE_RPC_RECV_BATCH)
			break;
	}
	return total;
}

long lite_ioc_rpc_recv(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_recv __user *uarg = arg;
	struct lite_rpc_request __user *out;
	struct lite_rpc_service *svc;
	struct lite_rpc_recv r;
	long left;
	int n;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.flags || !r.max || r.max > LITE_RPC_RECV_MAX ||
	    (r.reply_flags & ~(LITE_RPC_REPLY_IN_PLACE |
			       LITE_RPC_REPLY_RELEASE)))
		return -EINVAL;
	svc = lite_rpc_handle_service(lf, r.service);
	if (!svc)
		return -EBADF;
	out = u64_to_user_ptr(r.requests);
	if (r.reply_id) {
		n = lite_rpc_service_answer(svc, r.reply_id,
					    u64_to_user_ptr(r.reply_data), NULL,
					    r.reply_len, r.reply_flags,
					    lite_rpc_deadline(0));
		if (n)
			goto out;
	}
	n = lite_rpc_recv_take(svc, out, r.max);
	if (!n && r.timeout_ms) {
		left = r.timeout_ms == U32_MAX ? MAX_SCHEDULE_TIMEOUT :
						 msecs_to_jiffies(r.timeout_ms);
		left = wait_event_killable_timeout(svc->recv_wait,
						   READ_ONCE(svc->queued) ||
						   READ_ONCE(svc->closing),
						   left);
		if (left < 0) {
			n = -EINTR;
			goto out;
		}
		n = lite_rpc_recv_take(svc, out, r.max);
	}
	if (n >= 0 && put_user((u32)n, &uarg->count))
		n = -EFAULT;
out:
	lite_rpc_service_put(svc);
	return n < 0 ? n : 0;
}

