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
 * arrives before it. A DIED, CANCEL or UNLOCK that finds the home
 * unreachable is sent again over a new binding: the home keeps a cut-off
 * node's locks (only the manager's verdict passes them on), so it must
 * still hear that they are let go.
 *
 * File ids and tokens are random 64-bit values: the home releases a lock
 * only for the (node, file, token) that holds it, and nobody can guess
 * another file's (lite_sync_rules.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "mem/lite_grant.h"
#include "upcall/lite_upcall.h"
#include "lite_kernel.h"
#include "rpc/lite_rpc_internal.h"
#include "lite_sync.h"

/* One uid's share of a home's LITE_SYNC_WAIT_BUDGET (lite_sync_rules.h). */
static unsigned int lite_sync_waits_per_uid = LITE_SYNC_WAITS_PER_UID_DEFAULT;

static int lite_param_set_waits_per_uid(const char *val,
					const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_SYNC_WAIT_BUDGET);
}

static const struct kernel_param_ops lite_sync_waits_per_uid_ops = {
	.set = lite_param_set_waits_per_uid,
	.get = param_get_uint,
};

module_param_cb(sync_waits_per_uid, &lite_sync_waits_per_uid_ops,
		&lite_sync_waits_per_uid, 0644);
MODULE_PARM_DESC(sync_waits_per_uid, "LOCKs and BARRIERs one uid may have waiting at one home node, 1..48 (default 16; the node has 48 per home); more fail with EDQUOT");

/* How long a release is sent again while its home is unreachable. */
#define LITE_SYNC_RETRY_MS		(10 * 60 * 1000)

struct lite_sync_binding {
	struct kref ref;		/* the table's and each user's */
	struct rcu_head rcu;
	u32 node;
	struct lite_kclient *kc;
	/*
	 * Every LOCK and BARRIER that holds one of the binding's slots: from
	 * before it is sent until its slot is free again (after a timeout or
	 * a signal, until its CANCEL is answered, which comes after the
	 * wait's own answer).
	 */
	spinlock_t budget_lock;
	struct lite_sync_budget budget;
	wait_queue_head_t budget_wait;
};

struct lite_sync_work {
	struct delayed_work work;
	u32 node;			/* the home */
	struct lite_sync_binding *b;	/* with a reference; NULL: open one */
	struct lite_sync_req req;
	/* A CANCEL's: the wait's budget, given back once it is answered. */
	bool budget;
	u32 uid;
	unsigned long give_up;		/* its retries, until then */
	unsigned int delay_ms;
	struct list_head retry;		/* on lite_sync_retries while it waits */
};

static DEFINE_XARRAY(lite_sync_bindings);	/* home node id -> binding */
static DEFINE_MUTEX(lite_sync_bind_mutex);	/* opening and dropping */
static struct workqueue_struct *lite_sync_wq;
/* Releases waiting to be sent again; none is queued again once stopping. */
static DEFINE_SPINLOCK(lite_sync_retry_lock);
static LIST_HEAD(lite_sync_retries);
static bool lite_sync_stopping;

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
	spin_lock_init(&b->budget_lock);
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

static void lite_sync_budget_give(struct lite_sync_binding *b, u32 uid)
{
	spin_lock(&b->budget_lock);
	lite_sync_budget_put(&b->budget, uid);
	spin_unlock(&b->budget_lock);
	wake_up(&b->budget_wait);
}

/* The home could not be reached (or answer) over this binding. */
static bool lite_sync_unreachable(int ret)
{
	return ret == -EHOSTDOWN || ret == -ECONNREFUSED || ret == -ETIMEDOUT;
}

/*
 * A release (DIED, CANCEL, UNLOCK) the home did not get: again, over a new
 * binding, with a backoff, until the home has it, its service is gone
 * (ENOTCONN: it restarted or failed, and forgot the file), or
 * LITE_SYNC_RETRY_MS is over. True if queued again.
 */
static bool lite_sync_again(struct lite_sync_work *w, int ret)
{
	bool again;

	if (!lite_sync_unreachable(ret) || time_after(jiffies, w->give_up))
		return false;
	if (w->budget)
		lite_sync_budget_give(w->b, w->uid);
	w->budget = false;
	if (w->b)
		lite_sync_binding_put(w->b);
	w->b = NULL;
	w->delay_ms = min(2 * w->delay_ms + 100, 8000U);
	spin_lock(&lite_sync_retry_lock);
	again = !lite_sync_stopping;
	if (again) {
		if (list_empty(&w->retry))
			list_add_tail(&w->retry, &lite_sync_retries);
		queue_delayed_work(lite_sync_wq, &w->work,
				   msecs_to_jiffies(w->delay_ms));
	}
	spin_unlock(&lite_sync_retry_lock);
	return again;
}

/*
 * A closed file's DIED waits while a release of the same file to the same
 * home is being sent again (an UNLOCK the home has not heard yet): sent
 * first, it would release that lock as died and tell the next holder so,
 * though the file had let go of it. True if put off.
 */
static bool lite_sync_died_waits(struct lite_sync_work *w)
{
	struct lite_sync_work *o;
	bool waits = false;

	spin_lock(&lite_sync_retry_lock);
	list_for_each_entry(o, &lite_sync_retries, retry) {
		if (o != w && o->node == w->node &&
		    o->req.file_id == w->req.file_id) {
			waits = !lite_sync_stopping;
			break;
		}
	}
	if (waits) {
		if (list_empty(&w->retry))
			list_add_tail(&w->retry, &lite_sync_retries);
		queue_delayed_work(lite_sync_wq, &w->work,
				   msecs_to_jiffies(100));
	}
	spin_unlock(&lite_sync_retry_lock);
	return waits;
}

static void lite_sync_work_fn(struct work_struct *work)
{
	struct lite_sync_work *w = container_of(to_delayed_work(work),
						struct lite_sync_work, work);
	u16 op = le16_to_cpu(w->req.op);
	struct lite_sync_binding *b;
	int ret;

	if (op == LITE_SYNC_REQ_DIED && lite_sync_died_waits(w))
		return;
	if (!w->b) {
		b = lite_sync_binding_get(w->node);
		if (!IS_ERR(b))
			w->b = b;
		ret = PTR_ERR_OR_ZERO(b);
	}
	if (w->b)
		ret = lite_sync_call(w->b, &w->req, 0, NULL);
	if (lite_sync_again(w, ret))
		return;
	if (ret && ret != -EHOSTDOWN && ret != -ECONNREFUSED && ret != -ENOTCONN &&
	    ret != -EPERM)
		pr_warn_ratelimited("sync: %s to node %u failed: %d\n",
				    op == LITE_SYNC_REQ_DIED ? "a closed file's release" :
				    op == LITE_SYNC_REQ_CANCEL ? "a cancel" : "an unlock",
				    w->node, ret);
	if (w->budget)
		lite_sync_budget_give(w->b, w->uid);
	spin_lock(&lite_sync_retry_lock);
	list_del(&w->retry);
	spin_unlock(&lite_sync_retry_lock);
	if (w->b)
		lite_sync_binding_put(w->b);
	kfree(w);
}

/*
 * Sends @req to @node from the workqueue, over @b (referenced here) or, if
 * NULL, a binding opened there. A CANCEL takes over its wait's budget
 * (@uid's) when @budget.
 */
static void lite_sync_queue(u32 node, struct lite_sync_binding *b,
			    const struct lite_sync_req *req, bool budget,
			    u32 uid)
{
	struct lite_sync_work *w = kzalloc(sizeof(*w), GFP_KERNEL | __GFP_NOFAIL);

	if (b)
		kref_get(&b->ref);
	w->node = node;
	w->b = b;
	w->req = *req;
	w->budget = budget;
	w->uid = uid;
	w->give_up = jiffies + msecs_to_jiffies(LITE_SYNC_RETRY_MS);
	INIT_LIST_HEAD(&w->retry);
	INIT_DELAYED_WORK(&w->work, lite_sync_work_fn);
	queue_delayed_work(lite_sync_wq, &w->work, 0);
}

/* Random, never 0: nobody can name another file's locks or waits. */
static u64 lite_sync_random_id(void)
{
	u64 id;

	do {
		id = get_random_u64();
	} while (!id);
	return id;
}

/* A token fits an xarray value entry (sync_held keeps it): 63 bits. */
static u64 lite_sync_random_token(void)
{
	u64 token;

	do {
		token = get_random_u64() >> 1;
	} while (!token);
	return token;
}

static u64 lite_sync_file_id(struct lite_file *lf)
{
	u64 id = READ_ONCE(lf->sync_id);

	if (!id) {
		u64 next = lite_sync_random_id();

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

/*
 * Whether @uid may leave one more LOCK or BARRIER waiting at @b's home:
 * 0 (taken), or -EDQUOT (its share is full); -EAGAIN (the node's budget is
 * full) keeps the caller waiting.
 */
static int lite_sync_budget_try(struct lite_sync_binding *b, u32 uid)
{
	int ret;

	spin_lock(&b->budget_lock);
	ret = lite_sync_budget_take(&b->budget, uid,
				    READ_ONCE(lite_sync_waits_per_uid));
	spin_unlock(&b->budget_lock);
	return ret;
}

/* Waits for a LOCK's or BARRIER's place in the budget, until @deadline. */
static int lite_sync_budget_wait(struct lite_sync_binding *b, u32 uid,
				 unsigned long deadline)
{
	long left = (long)(deadline - jiffies);
	int ret;

	if (left <= 0)
		left = 1;
	left = wait_event_killable_timeout(b->budget_wait,
					   (ret = lite_sync_budget_try(b, uid)) !=
					   -EAGAIN, left);
	if (left < 0)
		return -EINTR;
	return left ? ret : -ETIMEDOUT;
}

/*
 * A lock this file now holds: remembered here, so that UNLOCK can be
 * checked without asking the home. If it cannot be, it is let go at once.
 */
static int lite_sync_held(struct lite_file *lf, struct lite_sync_binding *b,
			  struct lite_sync_req *req)
{
	int ret = xa_err(xa_store(&lf->sync_held, le64_to_cpu(req->lmr_id),
				  xa_mk_value(le64_to_cpu(req->token)),
				  GFP_KERNEL));

	if (ret) {
		req->op = cpu_to_le16(LITE_SYNC_REQ_UNLOCK);
		lite_sync_queue(b->node, b, req, false, 0);
	}
	return ret;
}

/*
 * UNLOCK is a call: the holder hears whether the home still counted it as
 * the holder (EPERM if not: its node was failed meanwhile, or the LMR
 * freed). Once the home has it, the file's next request finds the lock
 * released. If the home cannot be reached now (or the call's time ran
 * out), the workqueue sends it again until the home has it (or is failed,
 * and forgot the lock): the file does not hold it any more either way, and
 * a late copy releases nothing (it names this hold's token). It is not a
 * one-way message: one that found the home without this node's ring (the
 * home's own "unreachable" verdict drops it) would be lost unseen.
 */
static int lite_sync_unlock(struct lite_file *lf, struct lite_sync_binding *b,
			    struct lite_sync_req *req, u32 timeout_ms)
{
	void *held = xa_erase(&lf->sync_held, le64_to_cpu(req->lmr_id));
	int ret;

	if (!held)
		return -EPERM;
	/* The hold's token: the home checks it with the file id. */
	req->token = cpu_to_le64(xa_to_value(held));
	ret = lite_sync_call(b, req, timeout_ms, NULL);
	/*
	 * ECONNREFUSED: the home had dropped this node's ring (its own
	 * "unreachable" verdict, since lifted) and the binding is gone now.
	 * Once more at once over a new one, so that the UNLOCK is in before
	 * anything this file sends later (its DIED when it closes): sent
	 * again from the workqueue after a backoff, a DIED could overtake
	 * it and the next holder would be told the owner died.
	 */
	if (ret == -ECONNREFUSED) {
		struct lite_sync_binding *fresh = lite_sync_binding_get(b->node);

		if (!IS_ERR(fresh)) {
			ret = lite_sync_call(fresh, req, timeout_ms, NULL);
			lite_sync_binding_put(fresh);
		}
	}
	if (lite_sync_unreachable(ret) || ret == -EINTR) {
		lite_sync_queue(b->node, NULL, req, false, 0);
		ret = 0;
	}
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
	u32 uid = from_kuid(&init_user_ns, current_euid());
	bool budget = false;
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
	req.file_id = cpu_to_le64(lite_sync_file_id(lf));
	/* The home hears of this file when it closes. */
	if (s->op != LITE_SYNC_UNLOCK) {
		ret = xa_err(xa_store(&lf->sync_homes, home, xa_mk_value(1),
				      GFP_KERNEL));
		if (ret)
			goto out;
	}
	if (waits) {
		ret = lite_sync_budget_wait(b, uid, deadline);
		if (ret)
			goto out;
		budget = true;
	}
	req.version = cpu_to_le16(LITE_SYNC_WIRE_VERSION);
	req.op = cpu_to_le16(ops[s->op]);
	req.count = cpu_to_le32(s->count);
	req.lmr_id = cpu_to_le64(lmr_id);
	req.token = cpu_to_le64(lite_sync_random_token());
	left_ms = jiffies_to_msecs(max_t(long, 1, (long)(deadline - jiffies)));
	if (s->op == LITE_SYNC_UNLOCK) {
		ret = lite_sync_unlock(lf, b, &req, left_ms);
		goto out;
	}
	ret = lite_sync_call(b, &req, left_ms, &result);
	if (!ret && s->op != LITE_SYNC_BARRIER)
		ret = lite_sync_held(lf, b, &req);
	/*
	 * Gave up with the request perhaps out: the home forgets the wait, or
	 * lets go of what it granted meanwhile. After a timeout the caller
	 * waits for that (its next call then finds the home without it);
	 * a task being killed cannot wait, its workqueue sends it. The
	 * wait's slot is free once the CANCEL is answered (the home answers
	 * the wait first): its budget is given back then, not before.
	 */
	if (ret == -ETIMEDOUT || ret == -EINTR) {
		int cancel = -EINTR;

		req.op = cpu_to_le16(LITE_SYNC_REQ_CANCEL);
		req.count = 0;
		if (ret == -ETIMEDOUT)
			cancel = lite_sync_call(b, &req, 0, NULL);
		if (cancel == -EINTR) {
			lite_sync_queue(home, b, &req, budget, uid);
			budget = false;
		} else if (lite_sync_unreachable(cancel)) {
			lite_sync_queue(home, NULL, &req, false, 0);
		}
	}
	s->result = result;
out:
	if (budget)
		lite_sync_budget_give(b, uid);
	lite_sync_binding_put(b);
	return ret;
}

long lite_ioc_sync(struct lite_file *lf, void __user *uarg)
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
		/*
		 * No binding: the home failed (then its service is gone and
		 * the work's open says so), or was cut off, and still holds
		 * what the file held: the work opens a binding anew.
		 */
		b = lite_sync_binding_find(node);
		lite_sync_queue(node, b, &req, false, 0);
		if (b)
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
	struct lite_sync_work *w;
	unsigned long node;

	/*
	 * No file is open: what they queued is all there is; DIEDs waiting
	 * to be sent again are sent now, once.
	 */
	spin_lock(&lite_sync_retry_lock);
	lite_sync_stopping = true;
	list_for_each_entry(w, &lite_sync_retries, retry)
		mod_delayed_work(lite_sync_wq, &w->work, 0);
	spin_unlock(&lite_sync_retry_lock);
	destroy_workqueue(lite_sync_wq);
	xa_for_each(&lite_sync_bindings, node, b) {
		xa_erase(&lite_sync_bindings, node);
		lite_sync_binding_put(b);
	}
	rcu_barrier();	/* kfree_rcu() of the bindings */
}
