// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC: this node's bindings to services, here or on peers. A binding
 * has one reply slot per slot of its ring at the server; slot s stages the
 * request written into ring slot s and takes its reply.
 *
 * A slot in use is held by up to three parties (holds, a mask): the
 * request's send completion, the peer's answer (the reply, or a message's
 * credit) and the caller. It is free again when all three let go, so
 * neither a late reply, nor a send completion that comes after the reply,
 * ever lands in a slot that another call took meanwhile. A caller that
 * gives up (timeout, fatal signal) leaves its slot ABANDONED: the slot
 * stays taken until its reply comes, which is dropped and counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "transport/lite_conn.h"
#include "ops/lite_ops.h"
#include "lite_rpc_internal.h"

enum {
	LITE_HOLD_SEND = 1,
	LITE_HOLD_PEER = 2,
	LITE_HOLD_CALLER = 4,
	LITE_HOLD_ALL = 7,
};

/*
 * How long GONE's answer waits for this node's requests posted and not
 * completed. Posted work completes or is flushed within the QPs' retry
 * bounds, so this is a safety net: past it no RELEASED is sent, and the
 * server's fence keeps the ring (it never hears a RELEASED that a late
 * write could follow).
 */
#define LITE_RPC_RELEASE_WAIT_MS	30000

/*
 * (server node, port) -> live binding; RCU reads. GONE takes one out in a
 * receive completion (softirq), so the xarray's lock is taken with bottom
 * halves off everywhere else (the _bh calls).
 */
static DEFINE_XARRAY_FLAGS(lite_rpc_bindings, XA_FLAGS_LOCK_BH);

static unsigned long lite_rpc_binding_key(u32 node, u32 port)
{
	return ((unsigned long)node << LITE_RPC_IMM_PORT_BITS) | port;
}

static void lite_rpc_binding_free_work(struct work_struct *work)
{
	struct lite_rpc_binding *b = container_of(work, typeof(*b), free_work);

	/* The server's NIC may still write until its connections are gone. */
	if (b->dead != -ECONNREFUSED)
		lite_conns_wait_closed();
	/*
	 * Killed on this node's verdict alone (the server is still the same
	 * peer): the server may hold its ring and answer later over new
	 * connections, so the pages are never handed back to the allocator
	 * while its key could reach them (lite_rpc_mem_free()).
	 */
	lite_rpc_mem_free(&b->mem, b->local_verdict);
	lite_rpc_user_uncharge(b->owner, LITE_RPC_CHARGE_BINDING, 0);
	bitmap_free(b->free_map);
	lite_uncount(LITE_CNT_RPC_BINDINGS);
	kfree_rcu(b, rcu);
}

static void lite_rpc_binding_release(struct kref *ref)
{
	struct lite_rpc_binding *b = container_of(ref, typeof(*b), ref);

	/* Process context: it may wait for connections to close. */
	queue_work(lite_wq, &b->free_work);
}

void lite_rpc_binding_get(struct lite_rpc_binding *b)
{
	kref_get(&b->ref);
}

void lite_rpc_binding_put(struct lite_rpc_binding *b)
{
	kref_put(&b->ref, lite_rpc_binding_release);
}

struct lite_rpc_binding *lite_rpc_binding_find(u64 service_id, u32 node,
					       u32 port)
{
	struct lite_rpc_binding *b;

	rcu_read_lock();
	b = xa_load(&lite_rpc_bindings, lite_rpc_binding_key(node, port));
	if (b && (b->service_id != service_id || READ_ONCE(b->dead) ||
		  !kref_get_unless_zero(&b->ref)))
		b = NULL;
	rcu_read_unlock();
	return b;
}

static void lite_rpc_send_done(struct ib_cq *cq, struct ib_wc *wc);

int lite_rpc_binding_create(const struct lite_rpc_open_ans *ans, bool kernel,
			    struct lite_rpc_binding **out)
{
	u32 need = max(ans->max_request, ans->max_reply);
	struct lite_rpc_binding *b;
	struct lite_device *ldev;
	u32 slot_bytes, i, owner;
	int ret;

	slot_bytes = max_t(u32, ALIGN(need, LITE_RPC_SLOT_ALIGN),
			   LITE_RPC_SLOT_ALIGN);
	if (!ans->depth || ans->depth > LITE_RPC_DEPTH_MAX ||
	    (u64)ans->depth * slot_bytes > LITE_RPC_RING_MAX)
		return -EIO;
	/* Its maker's, for as long as it lives (also past its handles). */
	owner = kernel ? LITE_RPC_UID_NONE :
			 from_kuid_munged(&init_user_ns, current_euid());
	ret = lite_rpc_user_charge(owner, LITE_RPC_CHARGE_BINDING, 0);
	if (ret)
		return ret;
	ret = lite_node_device_get(&ldev);
	if (ret) {
		lite_rpc_user_uncharge(owner, LITE_RPC_CHARGE_BINDING, 0);
		return ret;
	}
	b = kzalloc(struct_size(b, slots, ans->depth), GFP_KERNEL_ACCOUNT);
	if (b) {
		struct lite_peer *peer;

		rcu_read_lock();
		peer = lite_peer_lookup_rcu(ans->node_id);
		if (peer)
			b->incarnation = peer->incarnation;
		rcu_read_unlock();
		if (!peer) {
			kfree(b);
			lite_device_put(ldev);
			lite_rpc_user_uncharge(owner, LITE_RPC_CHARGE_BINDING, 0);
			return -EHOSTDOWN;
		}
	}
	if (!b) {
		lite_device_put(ldev);
		lite_rpc_user_uncharge(owner, LITE_RPC_CHARGE_BINDING, 0);
		return -ENOMEM;
	}
	b->owner = owner;
	b->kernel = kernel;
	b->free_map = bitmap_zalloc(ans->depth, GFP_KERNEL_ACCOUNT);
	if (!b->free_map) {
		ret = -ENOMEM;
		goto err;
	}
	ret = lite_rpc_mem_alloc(ldev, (size_t)ans->depth * slot_bytes, owner,
				 &b->mem);
	if (ret)
		goto err;
	lite_device_put(ldev);
	kref_init(&b->ref);
	b->service_id = ans->service_id;
	b->node_id = ans->node_id;
	b->port = ans->port;
	b->max_request = ans->max_request;
	b->max_reply = ans->max_reply;
	b->depth = ans->depth;
	b->slot_bytes = slot_bytes;
	spin_lock_init(&b->lock);
	init_waitqueue_head(&b->credit_wait);
	INIT_WORK(&b->free_work, lite_rpc_binding_free_work);
	for (i = 0; i < b->depth; i++) {
		b->slots[i].b = b;
		b->slots[i].index = i;
		b->slots[i].cqe.done = lite_rpc_send_done;
		init_completion(&b->slots[i].done);
	}
	bitmap_fill(b->free_map, b->depth);
	b->free_slots = b->depth;
	lite_count(LITE_CNT_RPC_BINDINGS);
	*out = b;
	return 0;
err:
	bitmap_free(b->free_map);
	kfree(b);
	lite_device_put(ldev);
	lite_rpc_user_uncharge(owner, LITE_RPC_CHARGE_BINDING, 0);
	return ret;
}

/* Drops a binding that was never installed (nobody else knows it). */
void lite_rpc_binding_discard(struct lite_rpc_binding *b)
{
	b->dead = -ECONNREFUSED;	/* no peer ever had its address */
	lite_rpc_binding_put(b);
}

int lite_rpc_binding_install(struct lite_rpc_binding *b,
			     const struct lite_rpc_bind_ans *ring,
			     struct lite_rpc_binding **out)
{
	unsigned long key = lite_rpc_binding_key(b->node_id, b->port);
	struct lite_rpc_binding *old;
	int ret;

	if (ring->depth != b->depth || ring->slot_bytes != b->slot_bytes)
		return -ESTALE;
	mutex_lock(&lite_rpc_mutex);
	old = xa_load(&lite_rpc_bindings, key);
	if (old && old->service_id == b->service_id && !READ_ONCE(old->dead)) {
		/* Another open on this node bound it first: share that one. */
		lite_rpc_binding_get(old);
		mutex_unlock(&lite_rpc_mutex);
		*out = old;
		return 1;
	}
	b->ring_addr = ring->ring_addr;
	b->ring_key = ring->ring_key;
	b->live = true;
	/* The table's reference. */
	lite_rpc_binding_get(b);
	old = xa_store_bh(&lite_rpc_bindings, key, b, GFP_KERNEL);
	ret = xa_err(old);
	if (ret) {
		b->live = false;
		lite_rpc_binding_put(b);
		mutex_unlock(&lite_rpc_mutex);
		return ret;
	}
	mutex_unlock(&lite_rpc_mutex);
	/* A dead binding the table still held (its service replaced). */
	if (old)
		lite_rpc_binding_put(old);
	*out = b;
	return 0;
}

/* ---- slots ---- */

static void lite_rpc_slot_let_go(struct lite_rpc_cslot *s, u8 hold)
{
	struct lite_rpc_binding *b = s->b;

	lockdep_assert_held(&b->lock);
	if (!(s->holds & hold))
		return;
	s->holds &= ~hold;
	if (s->holds)
		return;
	s->state = LITE_CSLOT_FREE;
	set_bit(s->index, b->free_map);
	b->free_slots++;
	wake_up(&b->credit_wait);
}

/* The call in @s has its answer (s->err, s->len): its caller may take it. */
static void lite_rpc_slot_done_locked(struct lite_rpc_cslot *s)
{
	s->state = LITE_CSLOT_DONE;
	complete(&s->done);
	if (s->async_wait)
		wake_up(s->async_wait);
	lite_rpc_slot_let_go(s, LITE_HOLD_PEER);
}

/* A call in @s ends with @err before its reply (dead binding, send failed). */
static void lite_rpc_slot_fail(struct lite_rpc_cslot *s, int err)
{
	switch (s->state) {
	case LITE_CSLOT_CALL:
		s->err = err;
		s->len = 0;
		lite_rpc_slot_done_locked(s);
		break;
	case LITE_CSLOT_ABANDONED:
	case LITE_CSLOT_MSG:
		lite_rpc_slot_let_go(s, LITE_HOLD_PEER);
		break;
	}
}

int lite_rpc_slot_take(struct lite_rpc_binding *b, bool nonblock,
		       unsigned long deadline, u8 state,
		       struct lite_rpc_cslot **out)
{
	struct lite_rpc_cslot *s;
	bool waited = false;
	unsigned long bit;
	long left;
	int ret;

	spin_lock_bh(&b->lock);
	for (;;) {
		ret = b->dead;
		if (ret)
			break;
		if (b->free_slots) {
			bit = find_first_bit(b->free_map, b->depth);
			clear_bit(bit, b->free_map);
			b->free_slots--;
			s = &b->slots[bit];
			s->state = state;
			s->holds = LITE_HOLD_ALL;
			s->err = 0;
			s->len = 0;
			s->async_wait = NULL;
			reinit_completion(&s->done);
			*out = s;
			break;
		}
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		if (!waited) {
			lite_rpc_stat(LITE_RPC_ST_NO_CREDIT);
			waited = true;
		}
		left = (long)(deadline - jiffies);
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		spin_unlock_bh(&b->lock);
		left = wait_event_killable_timeout(b->credit_wait,
						   READ_ONCE(b->free_slots) ||
						   READ_ONCE(b->dead), left);
		spin_lock_bh(&b->lock);
		if (left < 0) {
			ret = -EINTR;
			break;
		}
	}
	spin_unlock_bh(&b->lock);
	return ret;
}

/* Nothing was posted from @s: it is free again. */
void lite_rpc_slot_untake(struct lite_rpc_cslot *s)
{
	struct lite_rpc_binding *b = s->b;

	spin_lock_bh(&b->lock);
	lite_rpc_slot_let_go(s, LITE_HOLD_ALL);
	spin_unlock_bh(&b->lock);
}

static void lite_rpc_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_rpc_cslot *s = container_of(wc->wr_cqe, typeof(*s), cqe);
	struct lite_rpc_binding *b = s->b;
	int err = lite_rpc_send_end(cq, wc);

	spin_lock(&b->lock);
	if (s->state == LITE_CSLOT_MSG) {
		s->err = err;
		complete(&s->done);
	}
	if (err) {
		if (err == -EHOSTDOWN)
			lite_rpc_stat(LITE_RPC_ST_HOSTDOWN);
		lite_rpc_slot_fail(s, err);
	}
	lite_rpc_slot_let_go(s, LITE_HOLD_SEND);
	spin_unlock(&b->lock);
	if (atomic_dec_and_test(&b->posts_inflight))
		wake_up_all(&b->credit_wait);
}

/*
 * Posts under the binding's lock after checking that it is alive: GONE and
 * peer down kill it under that lock, so once they have, nothing is posted
 * from it any more, and GONE's answer (RELEASED) waits only for what was
 * posted before (posts_inflight), which completes in bounded time. A
 * request staged slowly (its user page faulting) is refused here, never
 * written into a ring its server has let go.
 */
int lite_rpc_slot_post(struct lite_rpc_cslot *s, u32 len, bool oneway,
		       unsigned long deadline)
{
	struct lite_rpc_binding *b = s->b;
	u32 imm;
	int ret;

	imm = lite_rpc_imm(oneway ? LITE_RPC_KIND_MSG : LITE_RPC_KIND_CALL,
			   b->port, 0, s->index);
	for (;;) {
		spin_lock_bh(&b->lock);
		ret = b->dead;
		if (!ret) {
			atomic_inc(&b->posts_inflight);
			ret = lite_rpc_post(b->node_id, b->incarnation,
					    raw_smp_processor_id(), &s->cqe,
					    &b->mem,
					    b->mem.dma +
					    (u64)s->index * b->slot_bytes, len,
					    b->ring_addr +
					    (u64)s->index * b->slot_bytes,
					    b->ring_key, imm);
			if (ret && atomic_dec_and_test(&b->posts_inflight))
				wake_up_all(&b->credit_wait);
		}
		if (ret && ret != -EAGAIN)
			lite_rpc_slot_let_go(s, LITE_HOLD_SEND | LITE_HOLD_PEER);
		spin_unlock_bh(&b->lock);
		if (ret != -EAGAIN)
			break;
		/* Every entry of every QP to the node is in use: rare. */
		if (time_after(jiffies, deadline))
			ret = -ETIMEDOUT;
		else if (fatal_signal_pending(current))
			ret = -EINTR;
		if (ret != -EAGAIN) {
			spin_lock_bh(&b->lock);
			lite_rpc_slot_let_go(s, LITE_HOLD_SEND | LITE_HOLD_PEER);
			spin_unlock_bh(&b->lock);
			break;
		}
		usleep_range(20, 100);
	}
	if (ret)
		return ret;
	lite_rpc_stat(oneway ? LITE_RPC_ST_MSGS : LITE_RPC_ST_CALLS);
	return 0;
}

int lite_rpc_slot_resolve(struct lite_rpc_cslot *s, int give_up)
{
	struct lite_rpc_binding *b = s->b;
	int ret;

	spin_lock_bh(&b->lock);
	s->async_wait = NULL;
	if (s->state == LITE_CSLOT_DONE) {
		ret = s->err;
	} else {
		/* The reply, if it comes, frees the slot. */
		s->state = LITE_CSLOT_ABANDONED;
		lite_rpc_slot_let_go(s, LITE_HOLD_CALLER);
		ret = give_up;
		if (ret == -ETIMEDOUT)
			lite_rpc_stat(LITE_RPC_ST_TIMEOUTS);
	}
	spin_unlock_bh(&b->lock);
	return ret;
}

int lite_rpc_slot_wait(struct lite_rpc_cslot *s, unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	if (left > 0) {
		/* The reply completes on a receive CQ: watched, not reaped. */
		lite_spin_wait(NULL, &s->done);
		left = wait_for_completion_killable_timeout(&s->done, left);
	}
	return lite_rpc_slot_resolve(s, left < 0 ? -EINTR : -ETIMEDOUT);
}

void lite_rpc_slot_finish(struct lite_rpc_cslot *s)
{
	spin_lock_bh(&s->b->lock);
	lite_rpc_slot_let_go(s, LITE_HOLD_CALLER);
	spin_unlock_bh(&s->b->lock);
}

int lite_rpc_msg_wait(struct lite_rpc_cslot *s)
{
	int ret;

	/* The send completes or is flushed: a bound wait, not killable. */
	wait_for_completion(&s->done);
	spin_lock_bh(&s->b->lock);
	ret = s->err;
	lite_rpc_slot_let_go(s, LITE_HOLD_CALLER);
	spin_unlock_bh(&s->b->lock);
	return ret;
}

/* ---- what the server sends (softirq) ---- */

static struct lite_rpc_binding *lite_rpc_binding_rcu(u32 node, u32 port)
{
	return xa_load(&lite_rpc_bindings, lite_rpc_binding_key(node, port));
}

static void lite_rpc_binding_end(struct lite_rpc_binding *b, u32 node,
				 u32 port);

void lite_rpc_binding_reply(u32 node, u32 port, u8 code, u32 slot, u32 len)
{
	struct lite_rpc_binding *b;
	struct lite_rpc_cslot *s;
	bool refused = false;

	rcu_read_lock();
	b = lite_rpc_binding_rcu(node, port);
	if (!b || slot >= b->depth) {
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
		goto out;
	}
	s = &b->slots[slot];
	spin_lock(&b->lock);
	if (s->state == LITE_CSLOT_CALL && (s->holds & LITE_HOLD_PEER)) {
		if (code == LITE_RPC_STATUS_OK && len <= b->slot_bytes) {
			s->err = 0;
			s->len = len;
			lite_rpc_stat(LITE_RPC_ST_REPLIES_IN);
		} else {
			s->err = code == LITE_RPC_STATUS_OK ? -EIO :
							      -ECONNREFUSED;
			if (s->err == -ECONNREFUSED) {
				lite_rpc_stat(LITE_RPC_ST_REFUSED);
				refused = true;
			}
		}
		lite_rpc_slot_done_locked(s);
	} else if (s->state == LITE_CSLOT_ABANDONED &&
		   (s->holds & LITE_HOLD_PEER)) {
		lite_rpc_stat(LITE_RPC_ST_LATE_REPLIES);
		lite_rpc_slot_let_go(s, LITE_HOLD_PEER);
	} else {
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
	}
	spin_unlock(&b->lock);
	/*
	 * The server has no ring for this node on that port any more: the
	 * service went, or it dropped our ring on its own verdict that we
	 * were unreachable (we never heard a GONE). Nothing can be served
	 * through this binding again, so end it as GONE does; the next open
	 * binds anew instead of finding this one.
	 */
	if (refused)
		lite_rpc_binding_end(b, node, port);
out:
	rcu_read_unlock();
}

void lite_rpc_binding_credit(u32 node, u32 port, u32 slot)
{
	struct lite_rpc_binding *b;
	struct lite_rpc_cslot *s;

	rcu_read_lock();
	b = lite_rpc_binding_rcu(node, port);
	if (b && slot < b->depth) {
		s = &b->slots[slot];
		spin_lock(&b->lock);
		if (s->state == LITE_CSLOT_MSG && (s->holds & LITE_HOLD_PEER))
			lite_rpc_slot_let_go(s, LITE_HOLD_PEER);
		else
			lite_rpc_stat(LITE_RPC_ST_DROPPED);
		spin_unlock(&b->lock);
	} else {
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
	}
	rcu_read_unlock();
}

/* Fails every call of @b with @err; it takes no new one. Locked. */
static void lite_rpc_binding_kill_locked(struct lite_rpc_binding *b, int err)
{
	u32 i;

	b->dead = err;
	for (i = 0; i < b->depth; i++)
		if (b->slots[i].holds)
			lite_rpc_slot_fail(&b->slots[i], err);
	wake_up_all(&b->credit_wait);
}

/* GONE's answer: once nothing of ours is in flight, RELEASED. */
static void lite_rpc_release_work(struct work_struct *work)
{
	struct lite_rpc_binding *b =
		container_of(work, typeof(*b), released_work);

	/* Killed under its lock: nothing is posted from it after this. */
	if (wait_event_timeout(b->credit_wait,
			       !atomic_read(&b->posts_inflight),
			       msecs_to_jiffies(LITE_RPC_RELEASE_WAIT_MS)))
		lite_rpc_post_ctrl(b->node_id, b->incarnation, b->port,
				   lite_rpc_imm(LITE_RPC_KIND_CTRL, b->port,
						LITE_RPC_CTRL_RELEASED, 0));
	else
		pr_warn("binding to port %u of node %u: requests still posted after %u ms, no RELEASED (the server keeps the ring)\n",
			b->port, b->node_id, LITE_RPC_RELEASE_WAIT_MS);
	/* The table's reference; its free work reuses released_work. */
	lite_rpc_binding_put(b);
}

void lite_rpc_binding_gone(u32 node, u32 port)
{
	struct lite_rpc_binding *b;

	rcu_read_lock();
	b = lite_rpc_binding_rcu(node, port);
	if (b)
		lite_rpc_binding_end(b, node, port);
	else
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
	rcu_read_unlock();
}

/* Kills @b and takes it out of the table, RELEASED owed. Under RCU. */
static void lite_rpc_binding_end(struct lite_rpc_binding *b, u32 node,
				 u32 port)
{
	unsigned long key = lite_rpc_binding_key(node, port);

	spin_lock(&b->lock);
	if (b->dead) {
		spin_unlock(&b->lock);
		return;
	}
	lite_rpc_binding_kill_locked(b, -ECONNREFUSED);
	spin_unlock(&b->lock);
	/*
	 * Out of the table; its reference goes with RELEASED. If the peer
	 * went down meanwhile its end took the table's reference, and no
	 * RELEASED is owed.
	 */
	if (xa_cmpxchg(&lite_rpc_bindings, key, b, NULL, GFP_ATOMIC) == b) {
		INIT_WORK(&b->released_work, lite_rpc_release_work);
		queue_work(lite_wq, &b->released_work);
	}
}

/*
 * Whether @node is still the peer @inc, i.e. it is down only in this
 * node's view (its QPs timed out): it was not removed nor replaced, and
 * may still hold what it had of ours. Under lite_lock.
 */
bool lite_rpc_peer_still(u32 node, u64 inc)
{
	struct lite_peer *peer;
	bool still;

	rcu_read_lock();
	peer = lite_peer_lookup_rcu(node);
	still = peer && !peer->removed && peer->incarnation == inc;
	rcu_read_unlock();
	return still;
}

/*
 * The next binding of the table from *@key on, referenced (the walks below
 * sleep or run long: a binding GONE took out may be freed meanwhile), or
 * NULL; *@key is its.
 */
static struct lite_rpc_binding *lite_rpc_binding_next(unsigned long *key)
{
	struct lite_rpc_binding *b;

	rcu_read_lock();
	for (;;) {
		b = xa_find(&lite_rpc_bindings, key, ULONG_MAX, XA_PRESENT);
		if (!b || kref_get_unless_zero(&b->ref))
			break;
		(*key)++;
	}
	rcu_read_unlock();
	return b;
}

void lite_rpc_bindings_peer_down(u32 node)
{
	struct lite_rpc_binding *b;
	unsigned long key;

	for (key = 0; (b = lite_rpc_binding_next(&key)); key++) {
		if (b->node_id != node) {
			lite_rpc_binding_put(b);
			continue;
		}
		spin_lock_bh(&b->lock);
		if (!b->dead) {
			lite_rpc_binding_kill_locked(b, -EHOSTDOWN);
			lite_rpc_stat(LITE_RPC_ST_HOSTDOWN);
		}
		b->local_verdict = lite_rpc_peer_still(node, b->incarnation);
		spin_unlock_bh(&b->lock);
		if (xa_cmpxchg_bh(&lite_rpc_bindings, key, b, NULL,
				  GFP_KERNEL) == b)
			lite_rpc_binding_put(b);
		lite_rpc_binding_put(b);
	}
}

void lite_rpc_bindings_device_removed(struct lite_device *ldev)
{
	struct lite_rpc_binding *b;
	unsigned long key;

	/* No connection on @ldev is left: the bindings die like peers. */
	for (key = 0; (b = lite_rpc_binding_next(&key)); key++) {
		if (b->mem.ldev != ldev) {
			lite_rpc_binding_put(b);
			continue;
		}
		spin_lock_bh(&b->lock);
		if (!b->dead)
			lite_rpc_binding_kill_locked(b, -EHOSTDOWN);
		spin_unlock_bh(&b->lock);
		/* Its handles may keep it: the device part goes now. */
		lite_rpc_mem_unmap(&b->mem);
		if (xa_cmpxchg_bh(&lite_rpc_bindings, key, b, NULL,
				  GFP_KERNEL) == b)
			lite_rpc_binding_put(b);
		lite_rpc_binding_put(b);
	}
}

void lite_rpc_bindings_exit(void)
{
	struct lite_rpc_binding *b;
	unsigned long key;

	xa_for_each(&lite_rpc_bindings, key, b) {
		xa_erase_bh(&lite_rpc_bindings, key);
		lite_rpc_binding_put(b);
	}
	flush_workqueue(lite_wq);
	rcu_barrier();
}

void lite_rpc_binding_limits(const struct lite_rpc_binding *b,
			     u32 *max_request, u32 *max_reply, u32 *depth)
{
	*max_request = b->max_request;
	*max_reply = b->max_reply;
	*depth = b->depth;
}
