// SPDX-License-Identifier: GPL-2.0
/*
 * LITE locks and barriers, the home's side (lite_sync.h): one kernel
 * thread serves "lite.sync.<node id>" and owns every lock and barrier of
 * the LMRs this node hosts. Only that thread reads or changes them, so
 * they need no lock of their own; the events other contexts report (a peer
 * down, an LMR freed) reach it through a small queue.
 *
 * A waiting LOCK or BARRIER keeps its request slot (the client's ring at
 * this service) until it is answered: the reply is the grant. The client
 * bounds how many it leaves waiting per home (lite_sync_client.c), so its
 * UNLOCKs always find a slot.
 *
 * Whoever sent a frame, every field is checked (lite_sync_req_check()),
 * a lock is released only by the (node, file, token) that holds it, and a
 * barrier remembers at most LITE_SYNC_MEMBERS_MAX participants. A holder
 * loses its lock to the next waiter only when its file closes (DIED) or
 * the manager fails its node (lite_sync_peer_failed()), never on this
 * node's own verdict that the peer is unreachable: that verdict may be a
 * cut link, with the holder still in its critical section.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "upcall/lite_upcall.h"
#include "lite_kernel.h"
#include "rpc/lite_rpc.h"
#include "lite_sync.h"

/* Nodes that may use this home's locks (read when the service registers). */
static unsigned int lite_sync_nodes = 64;

static int lite_param_set_sync_nodes(const char *val,
				     const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_RPC_CLIENTS_MAX);
}

static const struct kernel_param_ops lite_sync_nodes_ops = {
	.set = lite_param_set_sync_nodes,
	.get = param_get_uint,
};

module_param_cb(sync_nodes, &lite_sync_nodes_ops, &lite_sync_nodes, 0444);
MODULE_PARM_DESC(sync_nodes, "how many nodes (this one included) may use the locks and barriers this node hosts, 1..1025 (default 64): each has a 4 KiB ring here");

/* A LOCK or BARRIER waiting for its answer. */
struct lite_sync_waiter {
	struct list_head node;
	struct lite_kreq req;
	u64 token;
	u64 file_id;
	struct lite_sync_member *m;	/* a BARRIER's participant */
};

struct lite_sync_lock {
	struct list_head waiters;	/* FIFO */
	bool held;
	/* The next grant says the previous holder died. */
	bool owner_died;
	/*
	 * The current hold was granted with the owner-died mark: if its caller
	 * cancels (it never learned of the grant), the mark passes on.
	 */
	bool hold_told_died;
	struct lite_sync_hold owner;
};

/* A file that arrived at a barrier once; or one still to hear it broke. */
struct lite_sync_member {
	struct list_head node;
	u32 client;
	u64 file_id;
	int err;			/* on the broken list: what it hears */
	u32 waiting;			/* its arrivals this round */
	/* A round passed with it: a participant, even if a later wait ends. */
	bool passed;
};

struct lite_sync_barrier {
	struct list_head waiting;	/* this round's arrivals */
	struct list_head members;
	struct list_head broken;	/* survivors of a break, not yet told */
	u32 nr_members;			/* on members and broken */
	u32 count;			/* this round's, 0 before its first */
	u32 arrived;
};

enum lite_sync_event_kind {
	LITE_SYNC_EV_PEER_DOWN,		/* its connections: drop its waits */
	LITE_SYNC_EV_PEER_FAILED,	/* the manager's verdict: its holds too */
	LITE_SYNC_EV_LMR_GONE,
};

struct lite_sync_event {
	struct list_head node;
	enum lite_sync_event_kind kind;
	u64 id;				/* node id or LMR id */
};

/* The thread's alone. */
static DEFINE_XARRAY(lite_sync_locks);
static DEFINE_XARRAY(lite_sync_barriers);
static struct lite_kservice *lite_sync_svc;
static u32 lite_sync_served_id;

/* Shared with the thread. */
static DEFINE_SPINLOCK(lite_sync_events_lock);
static LIST_HEAD(lite_sync_events);
/* Unload: the thread is gone, peers and LMRs still go (nobody to tell). */
static bool lite_sync_exiting;
static DECLARE_WAIT_QUEUE_HEAD(lite_sync_idle_wait);
static u32 lite_sync_want_id;		/* 0: no identity yet */
static struct task_struct *lite_sync_thread;

static void lite_sync_answer(const struct lite_kreq *req, int err, u32 result)
{
	struct lite_sync_reply r = {
		.err = cpu_to_le32(-err), .result = cpu_to_le32(result),
	};
	int ret;

	/* A one-way request (lite.ko sends none today): nobody to tell. */
	if (req->oneway) {
		if (err)
			pr_warn_ratelimited("sync: a one-way request from node %u failed: %d\n",
					    req->client_node, err);
		ret = lite_kservice_release(lite_sync_svc, req);
	} else {
		ret = lite_kservice_reply(lite_sync_svc, req, &r, sizeof(r));
	}

	if (ret && ret != -EHOSTDOWN && ret != -ECONNREFUSED)
		pr_warn_ratelimited("sync: answer to node %u: %d\n",
				    req->client_node, ret);
}

static void lite_sync_waiter_end(struct lite_sync_waiter *w, int err,
				 u32 result)
{
	list_del(&w->node);
	lite_sync_answer(&w->req, err, result);
	kfree(w);
}

/* ---- locks ---- */

static struct lite_sync_lock *lite_sync_lock_get(u64 lmr_id)
{
	struct lite_sync_lock *l = xa_load(&lite_sync_locks, lmr_id);

	if (l)
		return l;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return NULL;
	INIT_LIST_HEAD(&l->waiters);
	if (xa_err(xa_store(&lite_sync_locks, lmr_id, l, GFP_KERNEL))) {
		kfree(l);
		return NULL;
	}
	return l;
}

static void lite_sync_grant(struct lite_sync_lock *l, const struct lite_kreq *req,
			    u64 token, u64 file_id)
{
	l->held = true;
	l->owner.node = req->client_node;
	l->owner.file_id = file_id;
	l->owner.token = token;
	lite_sync_answer(req, 0, l->owner_died ? LITE_SYNC_OWNER_DIED : 0);
	l->hold_told_died = l->owner_died;
	l->owner_died = false;
}

/* The holder lets go (@died: its file or node is gone): the next waiter's. */
static void lite_sync_release(u64 lmr_id, struct lite_sync_lock *l, bool died)
{
	struct lite_sync_waiter *w;

	l->held = false;
	l->owner_died |= died;
	w = list_first_entry_or_null(&l->waiters, struct lite_sync_waiter, node);
	if (w) {
		list_del(&w->node);
		lite_sync_grant(l, &w->req, w->token, w->file_id);
		kfree(w);
		return;
	}
	/* Kept while the next holder must hear of the death. */
	if (!l->owner_died) {
		xa_erase(&lite_sync_locks, lmr_id);
		kfree(l);
	}
}

static void lite_sync_lock_req(const struct lite_kreq *req,
			       const struct lite_sync_req *r, bool try)
{
	u64 lmr_id = le64_to_cpu(r->lmr_id);
	struct lite_sync_lock *l = lite_sync_lock_get(lmr_id);
	struct lite_sync_waiter *w;

	if (!l) {
		lite_sync_answer(req, -ENOMEM, 0);
		return;
	}
	if (!l->held) {
		lite_sync_grant(l, req, le64_to_cpu(r->token),
				le64_to_cpu(r->file_id));
		return;
	}
	if (try) {
		lite_sync_answer(req, -EBUSY, 0);
		return;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		lite_sync_answer(req, -ENOMEM, 0);
		return;
	}
	w->req = *req;
	w->token = le64_to_cpu(r->token);
	w->file_id = le64_to_cpu(r->file_id);
	list_add_tail(&w->node, &l->waiters);
}

static void lite_sync_unlock_req(const struct lite_kreq *req,
				 const struct lite_sync_req *r)
{
	u64 lmr_id = le64_to_cpu(r->lmr_id);
	struct lite_sync_lock *l = xa_load(&lite_sync_locks, lmr_id);

	if (!l || !l->held ||
	    !lite_sync_hold_is(&l->owner, req->client_node,
			       le64_to_cpu(r->file_id), le64_to_cpu(r->token))) {
		lite_sync_answer(req, -EPERM, 0);
		return;
	}
	lite_sync_release(lmr_id, l, false);
	lite_sync_answer(req, 0, 0);
}

/* ---- barriers ---- */

static struct lite_sync_barrier *lite_sync_barrier_get(u64 lmr_id)
{
	struct lite_sync_barrier *b = xa_load(&lite_sync_barriers, lmr_id);

	if (b)
		return b;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return NULL;
	INIT_LIST_HEAD(&b->waiting);
	INIT_LIST_HEAD(&b->members);
	INIT_LIST_HEAD(&b->broken);
	if (xa_err(xa_store(&lite_sync_barriers, lmr_id, b, GFP_KERNEL))) {
		kfree(b);
		return NULL;
	}
	return b;
}

static void lite_sync_barrier_put(u64 lmr_id, struct lite_sync_barrier *b)
{
	if (list_empty(&b->waiting) && list_empty(&b->members) &&
	    list_empty(&b->broken)) {
		xa_erase(&lite_sync_barriers, lmr_id);
		kfree(b);
	}
}

static struct lite_sync_member *lite_sync_member_find(struct list_head *list,
						      u32 client, u64 file_id)
{
	struct lite_sync_member *m;

	list_for_each_entry(m, list, node)
		if (m->client == client && m->file_id == file_id)
			return m;
	return NULL;
}

static void lite_sync_member_free(struct lite_sync_barrier *b,
				  struct lite_sync_member *m)
{
	list_del(&m->node);
	b->nr_members--;
	kfree(m);
}

/*
 * An arrival's wait ends: cancelled by its caller (answered ECANCELED), or
 * dropped unanswered (@err 0: its node's ring is gone). Either way it has
 * not arrived. A file no round has passed with is no participant yet: its
 * cancelled last wait forgets it (else every cancelled arrival would stay
 * a member). A dropped one stays: its node may come back, or be failed,
 * which breaks the barrier.
 */
static void lite_sync_arrival_end(struct lite_sync_barrier *b,
				  struct lite_sync_waiter *w, int err)
{
	struct lite_sync_member *m = w->m;

	if (err) {
		lite_sync_waiter_end(w, err, 0);
	} else {
		list_del(&w->node);
		kfree(w);
	}
	if (!--b->arrived)
		b->count = 0;
	if (!--m->waiting && !m->passed && err)
		lite_sync_member_free(b, m);
}

static bool lite_sync_gone(u32 client, u64 file_id, u32 dead_node,
			   u64 dead_file)
{
	return client == dead_node && (!dead_file || file_id == dead_file);
}

/*
 * A participant is gone (file @dead_file of node @dead_node; every file of
 * it with @dead_file 0): this round fails with @err, and every other
 * participant not waiting now hears @err at its next arrival.
 */
static void lite_sync_barrier_break(struct lite_sync_barrier *b, int err,
				    u32 dead_node, u64 dead_file)
{
	struct lite_sync_waiter *w, *wn;
	struct lite_sync_member *m, *mn;

	list_for_each_entry_safe(m, mn, &b->members, node) {
		if (m->waiting || lite_sync_gone(m->client, m->file_id,
						 dead_node, dead_file)) {
			lite_sync_member_free(b, m);
		} else {
			m->err = err;
			list_move_tail(&m->node, &b->broken);
		}
	}
	list_for_each_entry_safe(w, wn, &b->waiting, node)
		lite_sync_waiter_end(w, err, 0);
	b->arrived = 0;
	b->count = 0;
}

static void lite_sync_barrier_req(const struct lite_kreq *req,
				  const struct lite_sync_req *r)
{
	u64 lmr_id = le64_to_cpu(r->lmr_id), file_id = le64_to_cpu(r->file_id);
	u32 count = le32_to_cpu(r->count);
	struct lite_sync_waiter *w, *wn;
	struct lite_sync_barrier *b;
	struct lite_sync_member *m;
	int err = -ENOMEM;

	b = lite_sync_barrier_get(lmr_id);
	if (!b) {
		lite_sync_answer(req, -ENOMEM, 0);
		return;
	}
	m = lite_sync_member_find(&b->broken, req->client_node, file_id);
	if (m) {
		lite_sync_answer(req, m->err, 0);
		lite_sync_member_free(b, m);
		lite_sync_barrier_put(lmr_id, b);
		return;
	}
	if (b->arrived && count != b->count) {
		lite_sync_answer(req, -EINVAL, 0);
		return;
	}
	m = lite_sync_member_find(&b->members, req->client_node, file_id);
	if (!m && b->nr_members >= LITE_SYNC_MEMBERS_MAX) {
		err = -EUSERS;
		goto refuse;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		goto refuse;
	if (!m) {
		m = kzalloc(sizeof(*m), GFP_KERNEL);
		if (!m) {
			kfree(w);
			goto refuse;
		}
		m->client = req->client_node;
		m->file_id = file_id;
		list_add_tail(&m->node, &b->members);
		b->nr_members++;
	}
	w->req = *req;
	w->token = le64_to_cpu(r->token);
	w->file_id = file_id;
	w->m = m;
	m->waiting++;
	list_add_tail(&w->node, &b->waiting);
	b->count = count;
	if (++b->arrived < count)
		return;
	list_for_each_entry_safe(w, wn, &b->waiting, node) {
		w->m->passed = true;
		w->m->waiting--;
		lite_sync_waiter_end(w, 0, 0);
	}
	b->arrived = 0;
	b->count = 0;
	return;
refuse:
	lite_sync_answer(req, err, 0);
	lite_sync_barrier_put(lmr_id, b);
}

/* ---- the end of waits and of participants ---- */

static bool lite_sync_waiter_is(const struct lite_sync_waiter *w, u32 node,
				u64 file_id, u64 token)
{
	return w->req.client_node == node && w->file_id == file_id &&
	       w->token == token;
}

/* @token's wait on @lmr_id ends: forgotten, or released if it was granted. */
static void lite_sync_cancel_req(const struct lite_kreq *req,
				 const struct lite_sync_req *r)
{
	u64 lmr_id = le64_to_cpu(r->lmr_id), token = le64_to_cpu(r->token);
	u64 file_id = le64_to_cpu(r->file_id);
	struct lite_sync_lock *l = xa_load(&lite_sync_locks, lmr_id);
	struct lite_sync_barrier *b = xa_load(&lite_sync_barriers, lmr_id);
	struct lite_sync_waiter *w, *wn;
	u32 node = req->client_node;

	if (l) {
		if (l->held && lite_sync_hold_is(&l->owner, node, file_id, token)) {
			/* Nobody ran under this hold: a death before it is untold. */
			lite_sync_release(lmr_id, l, l->hold_told_died);
			goto out;
		}
		list_for_each_entry_safe(w, wn, &l->waiters, node)
			if (lite_sync_waiter_is(w, node, file_id, token))
				lite_sync_waiter_end(w, -ECANCELED, 0);
	}
	if (b) {
		list_for_each_entry_safe(w, wn, &b->waiting, node)
			if (lite_sync_waiter_is(w, node, file_id, token))
				lite_sync_arrival_end(b, w, -ECANCELED);
		lite_sync_barrier_put(lmr_id, b);
	}
out:
	lite_sync_answer(req, 0, 0);
}

/*
 * @node's connections are down: its waits go unanswered (its ring went
 * with them); it may come back, so what it holds stays held and its
 * barriers stay whole.
 */
static void lite_sync_drop_node(u32 node)
{
	struct lite_sync_waiter *w, *wn;
	struct lite_sync_barrier *b;
	struct lite_sync_lock *l;
	unsigned long id;

	xa_for_each(&lite_sync_locks, id, l) {
		list_for_each_entry_safe(w, wn, &l->waiters, node) {
			if (w->req.client_node == node) {
				list_del(&w->node);
				kfree(w);
			}
		}
	}
	xa_for_each(&lite_sync_barriers, id, b) {
		list_for_each_entry_safe(w, wn, &b->waiting, node)
			if (w->req.client_node == node)
				lite_sync_arrival_end(b, w, 0);
		lite_sync_barrier_put(id, b);
	}
}

/*
 * File @file_id of @node is gone (@file_id 0: the node, and with it every
 * file; its waits were dropped already): its locks are released as died,
 * its waits forgotten, its barriers broken.
 */
static void lite_sync_forget(u32 node, u64 file_id, int err)
{
	struct lite_sync_waiter *w, *wn;
	struct lite_sync_member *m, *mn;
	struct lite_sync_barrier *b;
	struct lite_sync_lock *l;
	unsigned long id;

	if (!file_id)
		lite_sync_drop_node(node);
	xa_for_each(&lite_sync_locks, id, l) {
		list_for_each_entry_safe(w, wn, &l->waiters, node)
			if (lite_sync_gone(w->req.client_node, w->file_id,
					   node, file_id))
				lite_sync_waiter_end(w, -ECANCELED, 0);
		if (l->held && lite_sync_gone(l->owner.node, l->owner.file_id,
					      node, file_id))
			lite_sync_release(id, l, true);
	}
	xa_for_each(&lite_sync_barriers, id, b) {
		list_for_each_entry_safe(m, mn, &b->broken, node)
			if (lite_sync_gone(m->client, m->file_id, node, file_id))
				lite_sync_member_free(b, m);
		list_for_each_entry(m, &b->members, node) {
			if (lite_sync_gone(m->client, m->file_id, node, file_id)) {
				lite_sync_barrier_break(b, err, node, file_id);
				break;
			}
		}
		lite_sync_barrier_put(id, b);
	}
}

/* The LMR is freed: whoever waits on it hears ESTALE. */
static void lite_sync_lmr_forget(u64 lmr_id)
{
	struct lite_sync_lock *l = xa_erase(&lite_sync_locks, lmr_id);
	struct lite_sync_barrier *b = xa_erase(&lite_sync_barriers, lmr_id);
	struct lite_sync_waiter *w, *wn;
	struct lite_sync_member *m, *mn;

	if (l) {
		list_for_each_entry_safe(w, wn, &l->waiters, node)
			lite_sync_waiter_end(w, -ESTALE, 0);
		kfree(l);
	}
	if (b) {
		list_for_each_entry_safe(w, wn, &b->waiting, node)
			lite_sync_waiter_end(w, -ESTALE, 0);
		list_splice_init(&b->broken, &b->members);
		list_for_each_entry_safe(m, mn, &b->members, node)
			kfree(m);
		kfree(b);
	}
}

/* ---- the thread ---- */

static void lite_sync_handle(const struct lite_kreq *req)
{
	struct lite_sync_fields f;
	struct lite_sync_req r;
	struct lite_lmr *lmr;
	int err;

	if (req->len != sizeof(r)) {
		lite_sync_answer(req, -EPROTO, 0);
		return;
	}
	memcpy(&r, req->data, sizeof(r));
	f.version = le16_to_cpu(r.version);
	f.op = le16_to_cpu(r.op);
	f.count = le32_to_cpu(r.count);
	f.lmr_id = le64_to_cpu(r.lmr_id);
	f.token = le64_to_cpu(r.token);
	f.file_id = le64_to_cpu(r.file_id);
	err = lite_sync_req_check(&f);
	if (err) {
		pr_warn_ratelimited("sync: node %u sent a malformed request (op %u)\n",
				    req->client_node, f.op);
		lite_sync_answer(req, err, 0);
		return;
	}
	if (f.op == LITE_SYNC_REQ_DIED) {
		lite_sync_forget(req->client_node, f.file_id, -ECONNABORTED);
		lite_sync_answer(req, 0, 0);
		return;
	}
	if (f.op == LITE_SYNC_REQ_CANCEL) {
		lite_sync_cancel_req(req, &r);
		return;
	}
	/* Only LMRs this node hosts have locks and barriers here. */
	lmr = lite_lmr_get(f.lmr_id);
	if (!lmr || lite_lmr_unhosted(lmr)) {
		if (lmr)
			lite_lmr_put(lmr);
		lite_sync_answer(req, -ESTALE, 0);
		return;
	}
	lite_lmr_put(lmr);
	switch (f.op) {
	case LITE_SYNC_REQ_LOCK:
	case LITE_SYNC_REQ_TRYLOCK:
		lite_sync_lock_req(req, &r, f.op == LITE_SYNC_REQ_TRYLOCK);
		break;
	case LITE_SYNC_REQ_UNLOCK:
		lite_sync_unlock_req(req, &r);
		break;
	default:
		lite_sync_barrier_req(req, &r);
	}
}

static bool lite_sync_events_pending(void)
{
	return !list_empty_careful(&lite_sync_events);
}

static void lite_sync_run_events(void)
{
	struct lite_sync_event *ev, *n;
	LIST_HEAD(list);

	spin_lock_bh(&lite_sync_events_lock);
	list_splice_init(&lite_sync_events, &list);
	spin_unlock_bh(&lite_sync_events_lock);
	list_for_each_entry_safe(ev, n, &list, node) {
		if (ev->kind == LITE_SYNC_EV_PEER_DOWN)
			lite_sync_drop_node(ev->id);
		else if (ev->kind == LITE_SYNC_EV_PEER_FAILED)
			lite_sync_forget(ev->id, 0, -EHOSTDOWN);
		else
			lite_sync_lmr_forget(ev->id);
		kfree(ev);
	}
}

/* Drops every lock and barrier: the service is going, callers hear so. */
static void lite_sync_forget_all(void)
{
	unsigned long id;
	void *entry;

	xa_for_each(&lite_sync_locks, id, entry)
		lite_sync_lmr_forget(id);
	xa_for_each(&lite_sync_barriers, id, entry)
		lite_sync_lmr_forget(id);
}

static void lite_sync_stop_serving(void)
{
	if (!lite_sync_svc)
		return;
	lite_sync_forget_all();
	lite_kservice_unregister(lite_sync_svc);
	lite_sync_svc = NULL;
	lite_sync_served_id = 0;
}

/* Registers "lite.sync.<id>" through the agent; quiet retries until it works. */
static void lite_sync_start_serving(u32 id)
{
	struct lite_kservice_opts opts = {
		.mode = 0711,
		.max_request = sizeof(struct lite_sync_req),
		.max_reply = sizeof(struct lite_sync_reply),
		.depth = LITE_SYNC_DEPTH,
		.max_clients = READ_ONCE(lite_sync_nodes),
	};
	char name[32];
	int ret;

	snprintf(name, sizeof(name), "lite.sync.%u", id);
	ret = lite_kservice_register(name, &opts, &lite_sync_svc);
	if (ret) {
		lite_sync_svc = NULL;
		return;
	}
	lite_sync_served_id = id;
	pr_info("serving locks and barriers as %s\n", name);
}

/* Something for the thread to do without a service, or with one. */
static bool lite_sync_idle_news(u32 want)
{
	return kthread_should_stop() || READ_ONCE(lite_sync_want_id) != want;
}

static bool lite_sync_news(u32 want)
{
	return lite_sync_idle_news(want) || lite_sync_events_pending() ||
	       lite_kservice_pending(lite_sync_svc);
}

static int lite_sync_serve(void *arg)
{
	struct lite_kreq reqs[16];
	unsigned long retry = 0, backoff = HZ;
	u32 portid;
	int n, i;

	while (!kthread_should_stop()) {
		u32 want = READ_ONCE(lite_sync_want_id);

		if (lite_sync_svc && want != lite_sync_served_id)
			lite_sync_stop_serving();
		if (!lite_sync_svc) {
			lite_sync_run_events();	/* nothing to apply them to */
			/*
			 * Each try is an upcall: none without an agent, and
			 * fewer (1 s doubling to 8 s) while they fail.
			 */
			if (want && lite_nl_agent_portid(&portid) &&
			    time_after_eq(jiffies, retry)) {
				lite_sync_start_serving(want);
				retry = jiffies + backoff;
				backoff = lite_sync_svc ? HZ :
					  min_t(unsigned long, 2 * backoff, 8 * HZ);
			}
			if (!lite_sync_svc) {
				wait_event_interruptible_timeout(lite_sync_idle_wait,
								 lite_sync_idle_news(want),
								 want ? HZ : MAX_SCHEDULE_TIMEOUT);
				continue;
			}
		}
		wait_event_interruptible_timeout(*lite_kservice_waitq(lite_sync_svc),
						 lite_sync_news(want), HZ);
		lite_sync_run_events();
		n = lite_kservice_recv(lite_sync_svc, reqs, ARRAY_SIZE(reqs), 0);
		if (n == -ECONNREFUSED) {	/* unregistered under us */
			lite_sync_stop_serving();
			continue;
		}
		for (i = 0; i < n; i++)
			lite_sync_handle(&reqs[i]);
	}
	lite_sync_stop_serving();
	return 0;
}

static void lite_sync_wake(void)
{
	struct lite_kservice *svc = READ_ONCE(lite_sync_svc);

	wake_up(&lite_sync_idle_wait);
	if (svc)
		wake_up(lite_kservice_waitq(svc));
}

static void lite_sync_event(enum lite_sync_event_kind kind, u64 id)
{
	/* Small, and losing one would leave a dead holder's lock held. */
	struct lite_sync_event *ev = kzalloc(sizeof(*ev),
					     GFP_KERNEL | __GFP_NOFAIL);

	ev->kind = kind;
	ev->id = id;
	spin_lock_bh(&lite_sync_events_lock);
	if (!lite_sync_exiting) {
		list_add_tail(&ev->node, &lite_sync_events);
		ev = NULL;
	}
	spin_unlock_bh(&lite_sync_events_lock);
	kfree(ev);
	lite_sync_wake();
}

void lite_sync_peer_down(u32 node)
{
	lite_sync_event(LITE_SYNC_EV_PEER_DOWN, node);
}

void lite_sync_peer_failed(u32 node)
{
	lite_sync_event(LITE_SYNC_EV_PEER_FAILED, node);
}

void lite_sync_lmr_gone(u64 lmr_id)
{
	lite_sync_event(LITE_SYNC_EV_LMR_GONE, lmr_id);
}

void lite_sync_node_set(u32 node_id)
{
	WRITE_ONCE(lite_sync_want_id, node_id);
	lite_sync_wake();
}

int lite_sync_init(void)
{
	int ret = lite_sync_client_init();

	if (ret)
		return ret;
	lite_sync_thread = kthread_run(lite_sync_serve, NULL, "lite_sync");
	if (IS_ERR(lite_sync_thread)) {
		lite_sync_client_exit();
		return PTR_ERR(lite_sync_thread);
	}
	return 0;
}

void lite_sync_exit(void)
{
	struct lite_sync_event *ev, *n;

	lite_sync_client_exit();
	kthread_stop(lite_sync_thread);
	spin_lock_bh(&lite_sync_events_lock);
	lite_sync_exiting = true;
	spin_unlock_bh(&lite_sync_events_lock);
	list_for_each_entry_safe(ev, n, &lite_sync_events, node)
		kfree(ev);
}
