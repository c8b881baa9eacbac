// SPDX-License-Identifier: GPL-2.0
/*
 * LITE locks and barriers, the caller's side (lite_sync.h): LITE_IOC_SYNC
 * checks the handle and sends one request to the LMR's home over a binding
 * to its "lite.sync.<id>" service, opened on first use (the one manager
 * round trip) and kept until the home fails.
 *
 * What must reach the home even if the caller is gone (a CANCEL after a
 * timeout or a fatal signal, a DIED when a file closes) is sent from an
 * ordered workqueue: never killable, and a CANCEL queued before a DIED
 * arrives before it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "lite_grant.h"
#include "lite_internal.h"
#include "lite_kernel.h"
#include "lite_rpc_internal.h"
#include "lite_sync.h"

/*
 * LOCKs and BARRIERs one node leaves waiting at one home: fewer than the
 * home's request slots for this node, so that UNLOCK, TRYLOCK and CANCEL
 * always find one (a holder's UNLOCK stuck behind the waiters it would
 * wake would be a deadlock).
 */
#define LITE_SYNC_WAIT_BUDGET	(LITE_SYNC_DEPTH - 16)

struct lite_sync_binding {
	struct kref ref;		/* the table's and each user's */
	struct rcu_head rcu;
	u32 node;
	struct lite_kclient *kc;
	atomic_t waits;			/* LOCK and BARRIER out */
	wait_queue_head_t budget_wait;
};

struct lite_sync_work {
	struct work_struct work;
	struct lite_sync_binding *b;	/* with a reference */
	struct lite_sync_req req;
};

static DEFINE_XARRAY(lite_sync_bindings);	/* home node id -> binding */
static DEFINE_MUTEX(lite_sync_bind_mutex);	/* opening and dropping */
static struct workqueue_struct *lite_sync_wq;
static atomic64_t lite_sync_last_token;
static atomic64_t lite_sync_last_file;

static void lite_sync_binding_free(struct kref *ref)
{
	struct lite_sync_binding *b = container_of(ref, struct lite_sync_binding,
						   ref);

	lite_kclient_close(b->kc);
	kfree_rcu(b, rcu);
}

static void lite_sync_binding_put(struct lite_sync_binding *b)
{
	kref_put(&b->ref, lite_sync_binding_free);
}

static struct lite_sync_binding *lite_sync_binding_find(u32 node)
{
	struct lite_sync_binding *b;

	rcu_read_lock();
	b = xa_load(&lite_sync_bindings, node);
	if (b && !kref_get_unless_zero(&b->ref))
		b = NULL;
	rcu_read_unlock();
	return b;
}

/* The binding to @node's service, opened if need be (through the agent). */
static struct lite_sync_binding *lite_sync_binding_get(u32 node)
{
	struct lite_sync_binding *b = lite_sync_binding_find(node);
	char name[32];
	int ret;

	if (b)
		return b;
	mutex_lock(&lite_sync_bind_mutex);
	b = lite_sync_binding_find(node);
	if (b)
		goto out;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		b = ERR_PTR(-ENOMEM);
		goto out;
	}
	snprintf(name, sizeof(name), "lite.sync.%u", node);
	ret = lite_kclient_open(name, &b->kc);
	/* Only lite.ko registers lite.* names: this one is the home's own. */
	if (!ret && lite_kclient_node(b->kc) != node) {
		lite_kclient_close(b->kc);
		ret = -EPROTO;
	}
	if (ret) {
		kfree(b);
		/* No such service: the home's agent has not registered it. */
		b = ERR_PTR(ret == -ENOENT ? -ENOTCONN : ret);
		goto out;
	}
	b->node = node;
	atomic_set(&b->waits, 0);
	init_waitqueue_head(&b->budget_wait);
	kref_init(&b->ref);
	ret = xa_err(xa_store(&lite_sync_bindings, node, b, GFP_KERNEL));
	if (ret) {
		lite_sync_binding_put(b);
		b = ERR_PTR(ret);
		goto out;
	}
	kref_get(&b->ref);
out:
	mutex_unlock(&lite_sync_bind_mutex);
	return b;
}

/* The home failed or lost its service: the next request opens anew. */
static void lite_sync_binding_drop(struct lite_sync_binding *b)
{
	bool dropped;

	mutex_lock(&lite_sync_bind_mutex);
	dropped = xa_cmpxchg(&lite_sync_bindings, b->node, b, NULL, 0) == b;
	mutex_unlock(&lite_sync_bind_mutex);
	if (dropped)
		lite_sync_binding_put(b);
}

/* One request and its answer: 0, the home's errno, or the call's. */
static int lite_sync_call(struct lite_sync_binding *b,
			  const struct lite_sync_req *req, u32 timeout_ms,
			  u32 *result)
{
	struct lite_sync_reply reply;
	u32 len = 0;
	int ret;

	ret = lite_kclient_call(b->kc, req, sizeof(*req), &reply, sizeof(reply),
				&len, timeout_ms);
	if (ret == -EHOSTDOWN || ret == -ECONNREFUSED)
		lite_sync_binding_drop(b);
	if (ret)
		return ret;
	if (len != sizeof(reply))
		return -EPROTO;
	if (result)
		*result = le32_to_cpu(reply.result);
	return -(int)le32_to_cpu(reply.err);
}

static void lite_sync_work_fn(struct work_struct *work)
{
	struct lite_sync_work *w = container_of(work, struct lite_sync_work,
						work);
	int ret = lite_sync_call(w->b, &w->req, 0, NULL);

	if (ret && ret != -EHOSTDOWN && ret != -ECONNREFUSED)
		pr_warn_ratelimited("sync: %s to node %u failed: %d\n",
				    le16_to_cpu(w->req.op) == LITE_SYNC_REQ_DIED ?
				    "a closed file's release" : "a cancel",
				    w->b->node, ret);
	lite_sync_binding_put(w->b);
	kfree(w);
}

/* Sends @req from the workqueue; takes a reference to @b. */
static void lite_sync_queue(struct lite_sync_binding *b,
			    const struct lite_sync_req *req)
{
	struct lite_sync_work *w = kzalloc(sizeof(*w), GFP_KERNEL | __GFP_NOFAIL);

	kref_get(&b->ref);
	w->b = b;
	w->req = *req;
	INIT_WORK(&w->work, lite_sync_work_fn);
	queue_work(lite_sync_wq, &w->work);
}

static u64 lite_sync_file_id(struct lite_file *lf)
{
	u64 id = READ_ONCE(lf->sync_id);

	if (!id) {
		u64 next = atomic64_inc_return(&lite_sync_last_file);

		id = cmpxchg(&lf->sync_id, 0, next) ?: next;
	}
	return id;
}

static int lite_sync_args(const struct lite_sync *s)
{
	if (s->flags || s->reserved || s->result ||
	    s->timeout_ms > LITE_RPC_TIMEOUT_MAX_MS)
		return -EINVAL;
	switch (s->op) {
	case LITE_SYNC_BARRIER:
		return s->count && s->count <= LITE_SYNC_COUNT_MAX ? 0 : -EINVAL;
	case LITE_SYNC_LOCK:
	case LITE_SYNC_TRYLOCK:
	case LITE_SYNC_UNLOCK:
		return s->count ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

static bool lite_sync_budget_try(struct lite_sync_binding *b)
{
	return atomic_add_unless(&b->waits, 1, LITE_SYNC_WAIT_BUDGET);
}

/* Waits for a LOCK's or BARRIER's place in the budget, until @deadline. */
static int lite_sync_budget_take(struct lite_sync_binding *b,
				 unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	if (left <= 0)
		left = 1;
	left = wait_event_killable_timeout(b->budget_wait,
					   lite_sync_budget_try(b), left);
	if (left < 0)
		return -EINTR;
	return left ? 0 : -ETIMEDOUT;
}

static void lite_sync_budget_put(struct lite_sync_binding *b)
{
	atomic_dec(&b->waits);
	wake_up(&b->budget_wait);
}

/*
 * A lock this file now holds: remembered here, so that UNLOCK can be
 * checked without asking the home. If it cannot be, it is let go at once.
 */
static int lite_sync_held(struct lite_file *lf, struct lite_sync_binding *b,
			  struct lite_sync_req *req)
{
	int ret = xa_err(xa_store(&lf->sync_held, le64_to_cpu(req->lmr_id),
				  xa_mk_value(1), GFP_KERNEL));

	if (ret) {
		req->op = cpu_to_le16(LITE_SYNC_REQ_UNLOCK);
		lite_sync_queue(b, req);
	}
	return ret;
}

/*
 * UNLOCK is a one-way message: the caller's wait ends when it is sent (its
 * send completes), not when the home has handled it; the home handles a
 * node's requests in order, so this file's next request finds it done.
 */
static int lite_sync_unlock(struct lite_file *lf, struct lite_sync_binding *b,
			    const struct lite_sync_req *req, u32 timeout_ms)
{
	int ret;

	if (!xa_erase(&lf->sync_held, le64_to_cpu(req->lmr_id)))
		return -EPERM;
	ret = lite_kclient_send(b->kc, req, sizeof(*req), timeout_ms);
	if (ret == -EHOSTDOWN || ret == -ECONNREFUSED)
		lite_sync_binding_drop(b);
	return ret;
}

static int lite_sync_run(struct lite_file *lf, struct lite_sync *s)
{
	static const u16 ops[] = {
		[LITE_SYNC_LOCK] = LITE_SYNC_REQ_LOCK,
		[LITE_SYNC_TRYLOCK] = LITE_SYNC_REQ_TRYLOCK,
		[LITE_SYNC_UNLOCK] = LITE_SYNC_REQ_UNLOCK,
		[LITE_SYNC_BARRIER] = LITE_SYNC_REQ_BARRIER,
	};
	bool waits = s->op == LITE_SYNC_LOCK || s->op == LITE_SYNC_BARRIER;
	unsigned long deadline = lite_rpc_deadline(s->timeout_ms);
	struct lite_sync_binding *b;
	struct lite_sync_req req = {};
	struct lite_grant *grant;
	u32 home, left_ms, result = 0;
	u64 lmr_id;
	int ret;

	grant = lite_file_grant_get(lf, s->handle);
	if (!grant)
		return -EBADF;
	ret = READ_ONCE(grant->revoked);
	if (!ret && !(grant->access & LITE_ACCESS_WRITE))
		ret = -EACCES;
	home = grant->home_node_id;
	lmr_id = grant->lmr_id;
	lite_grant_put(grant);
	if (ret)
		return ret;

	b = lite_sync_binding_get(home);
	if (IS_ERR(b))
		return PTR_ERR(b);
	/* The home hears of this file when it closes. */
	if (s->op != LITE_SYNC_UNLOCK) {
		ret = xa_err(xa_store(&lf->sync_homes, home, xa_mk_value(1),
				      GFP_KERNEL));
		if (ret)
			goto out;
	}
	if (waits) {
		ret = lite_sync_budget_take(b, deadline);
		if (ret)
			goto out;
	}
	req.version = cpu_to_le16(LITE_SYNC_WIRE_VERSION);
	req.op = cpu_to_le16(ops[s->op]);
	req.count = cpu_to_le32(s->count);
	req.lmr_id = cpu_to_le64(lmr_id);
	req.token = cpu_to_le64(atomic64_inc_return(&lite_sync_last_token));
	req.file_id = cpu_to_le64(lite_sync_file_id(lf));
	left_ms = jiffies_to_msecs(max_t(long, 1, (long)(deadline - jiffies)));
	if (s->op == LITE_SYNC_UNLOCK) {
		ret = lite_sync_unlock(lf, b, &req, left_ms);
		goto out;
	}
	ret = lite_sync_call(b, &req, left_ms, &result);
	if (!ret && s->op != LITE_SYNC_BARRIER)
		ret = lite_sync_held(lf, b, &req);
	if (waits)
		lite_sync_budget_put(b);
	/*
	 * Gave up with the request perhaps out: the home forgets the wait, or
	 * lets go of what it granted meanwhile. After a timeout the caller
	 * waits for that (its next call then finds the home without it);
	 * a task being killed cannot wait, its workqueue sends it.
	 */
	if ((ret == -ETIMEDOUT || ret == -EINTR) && s->op != LITE_SYNC_UNLOCK) {
		req.op = cpu_to_le16(LITE_SYNC_REQ_CANCEL);
		if (ret != -ETIMEDOUT || lite_sync_call(b, &req, 0, NULL) == -EINTR)
			lite_sync_queue(b, &req);
	}
	s->result = result;
out:
	lite_sync_binding_put(b);
	return ret;
}

long lite_sync_ioctl(struct lite_file *lf, void __user *uarg)
{
	struct lite_sync s;
	int ret;

	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;
	ret = lite_sync_args(&s);
	if (ret)
		return ret;
	ret = lite_sync_run(lf, &s);
	if (ret)
		return ret;
	if (put_user(s.result, &((struct lite_sync __user *)uarg)->result))
		return -EFAULT;
	return 0;
}

void lite_sync_file_release(struct lite_file *lf)
{
	struct lite_sync_req req = {
		.version = cpu_to_le16(LITE_SYNC_WIRE_VERSION),
		.op = cpu_to_le16(LITE_SYNC_REQ_DIED),
		.file_id = cpu_to_le64(lf->sync_id),
	};
	struct lite_sync_binding *b;
	unsigned long node;
	void *entry;

	xa_for_each(&lf->sync_homes, node, entry) {
		/* No binding: the home failed, and forgot the file itself. */
		b = lite_sync_binding_find(node);
		if (!b)
			continue;
		lite_sync_queue(b, &req);
		lite_sync_binding_put(b);
	}
	xa_destroy(&lf->sync_homes);
	xa_destroy(&lf->sync_held);
}

int lite_sync_client_init(void)
{
	lite_sync_wq = alloc_ordered_workqueue("lite_sync", 0);
	return lite_sync_wq ? 0 : -ENOMEM;
}

void lite_sync_client_exit(void)
{
	struct lite_sync_binding *b;
	unsigned long node;

	/* No file is open: what they queued is all there is. */
	destroy_workqueue(lite_sync_wq);
	xa_for_each(&lite_sync_bindings, node, b) {
		xa_erase(&lite_sync_bindings, node);
		lite_sync_binding_put(b);
	}
	rcu_barrier();	/* kfree_rcu() of the bindings */
}
