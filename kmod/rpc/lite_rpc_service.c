// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC: the services this node serves. A service has max_clients
 * rings, allocated at registration; LITE_CMD_RPC_BIND gives one to a
 * client node. A request slot goes EMPTY -> QUEUED (its immediate came)
 * -> TAKEN (a RECV gave it to a server thread, with a new generation in
 * its id) -> REPLYING (its reply or credit posted) -> EMPTY. The client
 * writes a slot only while it is EMPTY to it, i.e. after the reply or
 * credit reached it; a new request may so arrive before the send
 * completion of the reply here, and REPLYING counts as EMPTY for it.
 *
 * Unregistering and the fence are lite_rpc_service_end.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "transport/lite_conn.h"
#include "lite_rpc_internal.h"

/* Orders registration, bind and the end of services (process context). */
DEFINE_MUTEX(lite_rpc_mutex);
/* port -> service, from registration until the fence is done. */
static DEFINE_XARRAY_ALLOC1(lite_rpc_ports);
/* Cursors of the kernel's ports and of everyone else's. */
static u32 lite_rpc_next_port, lite_rpc_next_kport;

static void lite_rpc_service_free_rcu(struct rcu_head *rcu)
{
	struct lite_rpc_service *svc = container_of(rcu, typeof(*svc), rcu);
	u32 i;

	for (i = 0; i < svc->nr_rings; i++)
		kfree(svc->rings[i].slots);
	kvfree(svc);
}

static void lite_rpc_service_free_work(struct work_struct *work)
{
	struct lite_rpc_service *svc =
		container_of(work, typeof(*svc), free_work);
	u32 i;

	/* The fence ended every ring's device part, or kept it reachable. */
	for (i = 0; i < svc->nr_rings; i++)
		lite_rpc_mem_free(&svc->rings[i].mem, svc->rings[i].keep);
	xa_destroy(&svc->by_node);
	lite_device_put(svc->ldev);
	mem_cgroup_put(svc->memcg);
	lite_rpc_user_uncharge(svc->owner, LITE_RPC_CHARGE_SERVICE, 0);
	/* Receive completions look at it under RCU. */
	call_rcu(&svc->rcu, lite_rpc_service_free_rcu);
}

/* The last reference may go in a completion: the pages go in a work. */
static void lite_rpc_service_release(struct kref *ref)
{
	struct lite_rpc_service *svc = container_of(ref, typeof(*svc), ref);

	queue_work(lite_wq, &svc->free_work);
}

void lite_rpc_service_get(struct lite_rpc_service *svc)
{
	kref_get(&svc->ref);
}

void lite_rpc_service_put(struct lite_rpc_service *svc)
{
	kref_put(&svc->ref, lite_rpc_service_release);
}

int lite_rpc_service_create(const struct lite_rpc_service_args *args,
			    struct lite_rpc_service **out)
{
	bool kernel = !strncmp(args->name, LITE_RPC_RESERVED_PREFIX,
			       strlen(LITE_RPC_RESERVED_PREFIX));
	u32 need = max(args->max_request, args->max_reply);
	u32 owner = kernel ? LITE_RPC_UID_NONE : args->uid;
	struct lite_rpc_service *svc;
	struct lite_device *ldev;
	u32 slot_bytes, i;
	int ret;

	slot_bytes = max_t(u32, ALIGN(need, LITE_RPC_SLOT_ALIGN),
			   LITE_RPC_SLOT_ALIGN);
	if ((u64)args->depth * slot_bytes > LITE_RPC_RING_MAX)
		return -EINVAL;
	/* Before anything is allocated or the manager asked. */
	ret = lite_rpc_user_charge(owner, LITE_RPC_CHARGE_SERVICE, 0);
	if (ret)
		return ret;
	ret = lite_node_device_get(&ldev);
	if (ret)
		goto err_charge;
	/*
	 * The rings' headers only (about 150 bytes each); their slots and
	 * pages come with the client node that binds each (lite_rpc_bind).
	 */
	svc = kvzalloc(struct_size(svc, rings, args->max_clients),
		       GFP_KERNEL_ACCOUNT);
	if (!svc) {
		lite_device_put(ldev);
		ret = -ENOMEM;
		goto err_charge;
	}
	kref_init(&svc->ref);
	svc->args = *args;
	svc->ldev = ldev;
	svc->owner = owner;
	svc->memcg = get_mem_cgroup_from_mm(current->mm);
	svc->slot_bytes = slot_bytes;
	svc->ring_bytes = PAGE_ALIGN((u64)args->depth * slot_bytes);
	spin_lock_init(&svc->lock);
	INIT_LIST_HEAD(&svc->queue);
	init_waitqueue_head(&svc->recv_wait);
	init_waitqueue_head(&svc->fence_wait);
	xa_init(&svc->by_node);
	INIT_DELAYED_WORK(&svc->fence_work, lite_rpc_fence_work);
	INIT_WORK(&svc->free_work, lite_rpc_service_free_work);
	svc->nr_rings = args->max_clients;
	for (i = 0; i < svc->nr_rings; i++) {
		svc->rings[i].svc = svc;
		svc->rings[i].index = i;
	}
	/* lite.ko's own services have ports nobody else can take. */
	mutex_lock(&lite_rpc_mutex);
	if (kernel)
		ret = xa_alloc_cyclic(&lite_rpc_ports, &svc->port, svc,
				      XA_LIMIT(1, LITE_RPC_KERNEL_PORTS),
				      &lite_rpc_next_kport, GFP_KERNEL);
	else
		ret = xa_alloc_cyclic(&lite_rpc_ports, &svc->port, svc,
				      XA_LIMIT(LITE_RPC_KERNEL_PORTS + 1,
					       LITE_RPC_PORT_MAX),
				      &lite_rpc_next_port, GFP_KERNEL);
	mutex_unlock(&lite_rpc_mutex);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err;
	}
	lite_count(LITE_CNT_RPC_SERVICES);
	*out = svc;
	return 0;
err:
	/* Never published: no peer knows the rings (freed by the release). */
	lite_rpc_service_put(svc);
	return ret;
err_charge:
	lite_rpc_user_uncharge(owner, LITE_RPC_CHARGE_SERVICE, 0);
	return ret;
}

/* A ring's request slots, with its first client (process context). */
static struct lite_rpc_rslot *lite_rpc_ring_slots(struct lite_rpc_service *svc,
						  struct lite_rpc_ring *ring)
{
	struct lite_rpc_rslot *slots;
	u32 j;

	slots = kcalloc(svc->args.depth, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots)
		return NULL;
	for (j = 0; j < svc->args.depth; j++) {
		slots[j].ring = ring;
		slots[j].index = j;
	}
	return slots;
}

void lite_rpc_port_release(struct lite_rpc_service *svc, bool quarantine)
{
	mutex_lock(&lite_rpc_mutex);
	if (quarantine) {
		/* NULL in an allocating xarray: reserved, found by nobody. */
		xa_store(&lite_rpc_ports, svc->port, NULL, GFP_KERNEL);
		pr_warn("port %u stays reserved until unload\n", svc->port);
	} else {
		xa_erase(&lite_rpc_ports, svc->port);
	}
	mutex_unlock(&lite_rpc_mutex);
}

void lite_rpc_ports_exit(void)
{
	mutex_lock(&lite_rpc_mutex);
	xa_destroy(&lite_rpc_ports);
	mutex_unlock(&lite_rpc_mutex);
}

void lite_rpc_service_publish(struct lite_rpc_service *svc, u64 service_id)
{
	spin_lock_bh(&svc->lock);
	svc->service_id = service_id;
	svc->published = true;
	spin_unlock_bh(&svc->lock);
}

/* A published, not closing service at @port with a reference, or NULL. */
static struct lite_rpc_service *lite_rpc_service_find(u32 port)
{
	struct lite_rpc_service *svc;

	rcu_read_lock();
	svc = xa_load(&lite_rpc_ports, port);
	if (svc && (!READ_ONCE(svc->published) || READ_ONCE(svc->closing) ||
		    !kref_get_unless_zero(&svc->ref)))
		svc = NULL;
	rcu_read_unlock();
	return svc;
}

/* ---- arrivals (softirq) ---- */

void lite_rpc_refuse(u32 node, u32 port, u32 slot)
{
	lite_rpc_stat(LITE_RPC_ST_REFUSED);
	lite_rpc_post_ctrl(node, 0, port,
			   lite_rpc_imm(LITE_RPC_KIND_REPLY, port,
					LITE_RPC_STATUS_REFUSED, slot));
}

void lite_rpc_service_arrival(u32 node, u32 port, bool oneway, u32 slot,
			      u32 len)
{
	struct lite_rpc_service *svc;
	struct lite_rpc_ring *ring;
	struct lite_rpc_rslot *s;
	bool refuse = false;

	lite_rpc_stat(LITE_RPC_ST_REQUESTS_IN);
	rcu_read_lock();
	svc = xa_load(&lite_rpc_ports, port);
	ring = svc ? xa_load(&svc->by_node, node) : NULL;
	if (!ring) {
		rcu_read_unlock();
		/* No such service (any more): the caller hears it at once. */
		if (!oneway)
			lite_rpc_refuse(node, port, slot);
		else
			lite_rpc_stat(LITE_RPC_ST_DROPPED);
		return;
	}
	spin_lock(&svc->lock);
	if (ring->node_id != node || slot >= svc->args.depth ||
	    len > svc->args.max_request) {
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
		goto unlock;
	}
	s = &ring->slots[slot];
	if (s->state != LITE_RSLOT_EMPTY && s->state != LITE_RSLOT_REPLYING) {
		/* The client wrote a slot that was not its to write. */
		lite_rpc_stat(LITE_RPC_ST_DROPPED);
		goto unlock;
	}
	if (svc->closing) {
		s->state = LITE_RSLOT_EMPTY;
		refuse = !oneway;
		goto unlock;
	}
	s->state = LITE_RSLOT_QUEUED;
	s->oneway = oneway;
	s->len = len;
	list_add_tail(&s->queue, &svc->queue);
	svc->queued++;
	wake_up(&svc->recv_wait);
unlock:
	spin_unlock(&svc->lock);
	rcu_read_unlock();
	if (refuse)
		lite_rpc_refuse(node, port, slot);
}

void lite_rpc_service_released(u32 node, u32 port)
{
	struct lite_rpc_service *svc;
	struct lite_rpc_ring *ring;

	rcu_read_lock();
	svc = xa_load(&lite_rpc_ports, port);
	ring = svc ? xa_load(&svc->by_node, node) : NULL;
	if (ring) {
		spin_lock(&svc->lock);
		if (ring->gone_sent)
			ring->released = true;
		spin_unlock(&svc->lock);
	}
	rcu_read_unlock();
}

/* ---- RECV and REPLY ---- */

int lite_rpc_service_take(struct lite_rpc_service *svc,
			  struct lite_rpc_request *out, u32 max)
{
	struct lite_rpc_rslot *s;
	u32 n = 0;

	spin_lock_bh(&svc->lock);
	if (svc->closing) {
		spin_unlock_bh(&svc->lock);
		return -ECONNREFUSED;
	}
	while (n < max && !list_empty(&svc->queue)) {
		s = list_first_entry(&svc->queue, struct lite_rpc_rslot, queue);
		list_del(&s->queue);
		svc->queued--;
		s->state = LITE_RSLOT_TAKEN;
		s->gen++;
		out[n].id = lite_rpc_req_id(s);
		out[n].offset = s->ring->index * svc->ring_bytes +
				(u64)s->index * svc->slot_bytes;
		out[n].length = s->len;
		out[n].client_node = s->ring->node_id;
		out[n].flags = s->oneway ? LITE_RPC_REQ_ONEWAY : 0;
		out[n].reserved = 0;
		n++;
	}
	spin_unlock_bh(&svc->lock);
	return n;
}

static void lite_rpc_reply_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_rpc_rslot *s = container_of(wc->wr_cqe, typeof(*s), cqe);
	struct lite_rpc_service *svc = s->ring->svc;

	lite_rpc_send_end(cq, wc);
	spin_lock(&svc->lock);
	if (s->state == LITE_RSLOT_REPLYING)
		s->state = LITE_RSLOT_EMPTY;
	spin_unlock(&svc->lock);
	if (atomic_dec_and_test(&svc->replies_inflight))
		wake_up(&svc->fence_wait);
	lite_rpc_service_put(svc);
}

/* The TAKEN slot @id names, or an errno; under the service's lock. */
static struct lite_rpc_rslot *lite_rpc_slot_of(struct lite_rpc_service *svc,
					       u64 id)
{
	u32 r = ((u32)id >> 12) & 0xfffff, slot = id & 0xfff;
	struct lite_rpc_ring *ring;
	struct lite_rpc_rslot *s;

	if (r >= svc->nr_rings || slot >= svc->args.depth ||
	    !svc->rings[r].slots)
		return ERR_PTR(-EINVAL);
	ring = &svc->rings[r];
	s = &ring->slots[slot];
	if (s->state != LITE_RSLOT_TAKEN || s->gen != (u32)(id >> 32)) {
		/* Its client went down after the take: the request is gone. */
		if (!ring->node_id && s->gen == (u32)(id >> 32))
			return ERR_PTR(-EHOSTDOWN);
		return ERR_PTR(-EINVAL);
	}
	return s;
}

/*
 * Posts @s's answer, under the service's lock, if the slot is still the
 * one the server answers (ANSWERING, generation @gen, its ring still bound
 * to the client) and the service is not closing: closing and GONE, peer
 * down and a re-bind all change that under the same lock, so no answer
 * follows them, and a ring's reply address is read with its binding. Only
 * posted answers are counted in replies_inflight, which GONE waits for.
 */
static int lite_rpc_answer_post(struct lite_rpc_service *svc,
				struct lite_rpc_rslot *s, u32 gen, u32 imm,
				u64 off, u32 len, unsigned long deadline)
{
	struct lite_rpc_ring *ring = s->ring;
	int ret;

	for (;;) {
		spin_lock_bh(&svc->lock);
		if (s->state != LITE_RSLOT_ANSWERING || s->gen != gen ||
		    !ring->node_id || svc->closing) {
			ret = ring->node_id ? -ECONNREFUSED : -EHOSTDOWN;
			spin_unlock_bh(&svc->lock);
			return ret;
		}
		s->state = LITE_RSLOT_REPLYING;
		lite_rpc_service_get(svc);
		atomic_inc(&svc->replies_inflight);
		ret = lite_rpc_post(ring->node_id, ring->incarnation, svc->port,
				    &s->cqe, &ring->mem, ring->mem.dma + off,
				    len, ring->reply_addr +
				    (u64)s->index * ring->reply_slot_bytes,
				    ring->reply_key, imm);
		if (ret) {
			/* Again (EAGAIN), or its client is unreachable. */
			s->state = ret == -EAGAIN ? LITE_RSLOT_ANSWERING :
						    LITE_RSLOT_EMPTY;
			atomic_dec(&svc->replies_inflight);
		}
		spin_unlock_bh(&svc->lock);
		if (!ret)
			return 0;
		/* The reference taken for the completion that never comes. */
		lite_rpc_service_put(svc);
		wake_up(&svc->fence_wait);
		if (ret != -EAGAIN)
			return -EHOSTDOWN;
		/* Every entry of every QP to the node is in use: rare. */
		if (time_after(jiffies, deadline))
			ret = -ETIMEDOUT;
		else if (fatal_signal_pending(current))
			ret = -EINTR;
		if (ret != -EAGAIN) {
			spin_lock_bh(&svc->lock);
			if (s->state == LITE_RSLOT_ANSWERING && s->gen == gen)
				s->state = LITE_RSLOT_EMPTY;
			spin_unlock_bh(&svc->lock);
			return ret;
		}
		usleep_range(20, 100);
	}
}

int lite_rpc_service_answer(struct lite_rpc_service *svc, u64 id,
			    const void __user *data, const void *kdata,
			    u32 len, u32 flags, unsigned long deadline)
{
	bool release = flags & LITE_RPC_REPLY_RELEASE;
	struct lite_rpc_rslot *s;
	struct lite_rpc_ring *ring;
	u64 base, off;
	u32 imm, gen;
	void *to;
	int ret;

	spin_lock_bh(&svc->lock);
	s = lite_rpc_slot_of(svc, id);
	if (IS_ERR(s)) {
		spin_unlock_bh(&svc->lock);
		return PTR_ERR(s);
	}
	if (s->oneway != release || (release && len)) {
		spin_unlock_bh(&svc->lock);
		return -EINVAL;
	}
	if (len > svc->args.max_reply) {
		spin_unlock_bh(&svc->lock);
		return -EMSGSIZE;
	}
	ring = s->ring;
	base = (u64)s->index * svc->slot_bytes;
	off = base;
	if (flags & LITE_RPC_REPLY_IN_PLACE) {
		u64 map = ring->index * svc->ring_bytes + base;
		u64 at = (u64)(uintptr_t)data;

		/* Checked without a sum that could wrap around. */
		if (at < map || at - map > svc->slot_bytes ||
		    len > svc->slot_bytes - (at - map)) {
			spin_unlock_bh(&svc->lock);
			return -EINVAL;
		}
		off = base + (at - map);
	}
	/* Nobody else answers it, nor may its client write it, meanwhile. */
	s->state = LITE_RSLOT_ANSWERING;
	gen = s->gen;
	/* The ring's pages stay while the service lives (the caller's ref). */
	to = ring->mem.vaddr + off;
	spin_unlock_bh(&svc->lock);

	if (len && !(flags & LITE_RPC_REPLY_IN_PLACE) && kdata) {
		memcpy(to, kdata, len);
	} else if (len && !(flags & LITE_RPC_REPLY_IN_PLACE) &&
		   copy_from_user(to, data, len)) {
		spin_lock_bh(&svc->lock);
		if (s->state == LITE_RSLOT_ANSWERING && s->gen == gen)
			s->state = LITE_RSLOT_TAKEN;
		spin_unlock_bh(&svc->lock);
		return -EFAULT;
	}
	if (release)
		imm = lite_rpc_imm(LITE_RPC_KIND_CTRL, svc->port,
				   LITE_RPC_CTRL_CREDIT, s->index);
	else
		imm = lite_rpc_imm(LITE_RPC_KIND_REPLY, svc->port,
				   LITE_RPC_STATUS_OK, s->index);
	s->cqe.done = lite_rpc_reply_done;
	ret = lite_rpc_answer_post(svc, s, gen, imm, off, len, deadline);
	if (ret)
		return ret;
	spin_lock_bh(&svc->lock);
	svc->served++;
	spin_unlock_bh(&svc->lock);
	if (!release)
		lite_rpc_stat(LITE_RPC_ST_REPLIES_SENT);
	return 0;
}

/* ---- LITE_CMD_RPC_BIND ---- */

static bool lite_rpc_client_known(u32 node, u64 inc)
{
	struct lite_peer *peer;
	bool known;

	rcu_read_lock();
	peer = lite_peer_lookup_rcu(node);
	known = peer && peer->incarnation == inc;
	rcu_read_unlock();
	return known;
}

int lite_rpc_service_bind(const struct lite_rpc_bind_req *req,
			  struct lite_rpc_bind_ans *ans)
{
	struct lite_rpc_service *svc;
	struct lite_rpc_ring *ring = NULL;
	bool wait_closed = false;
	int ret = 0;
	u32 i, j;

	svc = lite_rpc_service_find(req->port);
	if (!svc)
		return -ENOENT;
	if (svc->service_id != req->service_id) {
		ret = -ESTALE;
		goto out;
	}
	if (req->reply_slot_bytes < ALIGN(svc->args.max_reply,
					  LITE_RPC_SLOT_ALIGN) ||
	    req->reply_slot_bytes < ALIGN(svc->args.max_request,
					  LITE_RPC_SLOT_ALIGN)) {
		ret = -EINVAL;
		goto out;
	}
	if (!lite_rpc_client_known(req->node_id, req->incarnation)) {
		ret = -EHOSTDOWN;
		goto out;
	}
	mutex_lock(&lite_rpc_mutex);
	spin_lock_bh(&svc->lock);
	ring = xa_load(&svc->by_node, req->node_id);
	if (!ring) {
		for (i = 0; i < svc->nr_rings; i++) {
			if (!svc->rings[i].node_id) {
				ring = &svc->rings[i];
				break;
			}
		}
	}
	if (!ring || svc->closing) {
		spin_unlock_bh(&svc->lock);
		mutex_unlock(&lite_rpc_mutex);
		ret = ring ? -ENOENT : -EUSERS;
		goto out;
	}
	/*
	 * A ring's memory comes with its first client (binds are serialized
	 * by lite_rpc_mutex, so nobody else takes this ring meanwhile).
	 */
	if (!ring->mem.vaddr) {
		struct mem_cgroup *old_memcg;
		struct lite_rpc_rslot *slots;
		struct lite_rpc_mem mem;

		spin_unlock_bh(&svc->lock);
		/*
		 * Charged to the service's registrar (its memory cgroup and
		 * rpc_mib_per_uid), not to the agent this comes through; a
		 * registrar over its share is a node with no room for this
		 * client's ring (ENOSPC, as over rpc_quota_mib).
		 */
		old_memcg = set_active_memcg(svc->memcg);
		slots = lite_rpc_ring_slots(svc, ring);
		ret = slots ? lite_rpc_mem_alloc(svc->ldev, svc->ring_bytes,
						 svc->owner, &mem) : -ENOMEM;
		set_active_memcg(old_memcg);
		if (ret) {
			kfree(slots);
			mutex_unlock(&lite_rpc_mutex);
			ret = ret == -EDQUOT ? -ENOSPC : ret;
			goto out;
		}
		/* Under the lock: the server's page faults read it. */
		spin_lock_bh(&svc->lock);
		ring->slots = slots;
		ring->mem = mem;
	}
	/* A ring used before: its last client's writes may be in flight. */
	wait_closed = ring->incarnation != 0;
	if (ring->node_id) {
		/* The client lost its binding and makes a new one. */
		for (j = 0; j < svc->args.depth; j++) {
			struct lite_rpc_rslot *s = &ring->slots[j];

			if (s->state == LITE_RSLOT_QUEUED) {
				list_del(&s->queue);
				svc->queued--;
			}
			s->state = LITE_RSLOT_EMPTY;
			s->gen++;
		}
		xa_erase(&svc->by_node, ring->node_id);
		ring->node_id = 0;
		svc->clients--;
	}
	spin_unlock_bh(&svc->lock);
	if (wait_closed) {
		ret = lite_conns_wait_closed();
		if (ret) {
			mutex_unlock(&lite_rpc_mutex);
			goto out;
		}
		memset(ring->mem.vaddr, 0, ring->mem.bytes);
	}
	ring->incarnation = req->incarnation;
	ring->reply_addr = req->reply_addr;
	ring->reply_key = req->reply_key;
	ring->reply_slot_bytes = req->reply_slot_bytes;
	ring->gone_sent = false;
	ring->released = false;
	ret = xa_err(xa_store(&svc->by_node, req->node_id, ring, GFP_KERNEL));
	if (!ret) {
		spin_lock_bh(&svc->lock);
		ring->node_id = req->node_id;
		svc->clients++;
		spin_unlock_bh(&svc->lock);
		ans->ring_addr = ring->mem.addr;
		ans->ring_key = ring->mem.rkey;
		ans->depth = svc->args.depth;
		ans->slot_bytes = svc->slot_bytes;
	}
	mutex_unlock(&lite_rpc_mutex);
out:
	lite_rpc_service_put(svc);
	return ret;
}

/* ---- peer down ---- */

/* @ring's client is gone: drop its requests and free the ring. Locked. */
static void lite_rpc_ring_drop_locked(struct lite_rpc_service *svc,
				      struct lite_rpc_ring *ring)
{
	u32 j;

	for (j = 0; j < svc->args.depth; j++) {
		struct lite_rpc_rslot *s = &ring->slots[j];

		if (s->state == LITE_RSLOT_QUEUED) {
			list_del(&s->queue);
			svc->queued--;
		}
		s->state = LITE_RSLOT_EMPTY;
	}
	xa_erase(&svc->by_node, ring->node_id);
	ring->node_id = 0;
	ring->released = true;
	svc->clients--;
}

void lite_rpc_services_peer_down(u32 node)
{
	struct lite_rpc_service *svc;
	struct lite_rpc_ring *ring;
	unsigned long port;

	/* Referenced: a service whose fence just ended may go meanwhile. */
	for (port = 0; (svc = lite_rpc_service_find_any(&port)); port++) {
		spin_lock_bh(&svc->lock);
		ring = xa_load(&svc->by_node, node);
		if (ring) {
			/*
			 * Down in this node's view only: the client still has
			 * the ring's key and may write, so its pages are never
			 * handed back while that key could reach them.
			 */
			if (lite_rpc_peer_still(node, ring->incarnation))
				ring->keep = true;
			lite_rpc_ring_drop_locked(svc, ring);
		}
		spin_unlock_bh(&svc->lock);
		lite_rpc_service_put(svc);
	}
}

/* ---- dump ---- */

void lite_rpc_service_info(struct lite_rpc_service *svc,
			   struct lite_rpc_service_info *info)
{
	spin_lock_bh(&svc->lock);
	info->service_id = svc->service_id;
	memcpy(info->name, svc->args.name, sizeof(info->name));
	info->uid = svc->args.uid;
	info->gid = svc->args.gid;
	info->pid = svc->args.pid;
	info->mode = svc->args.mode;
	info->port = svc->port;
	info->max_request = svc->args.max_request;
	info->max_reply = svc->args.max_reply;
	info->depth = svc->args.depth;
	info->max_clients = svc->args.max_clients;
	info->slot_bytes = svc->slot_bytes;
	info->ring_bytes = svc->ring_bytes;
	info->clients = svc->clients;
	info->queued = svc->queued;
	info->served = svc->served;
	info->published = svc->published;
	info->closing = svc->closing;
	spin_unlock_bh(&svc->lock);
}

struct lite_rpc_service *lite_rpc_service_find_any(unsigned long *port)
{
	struct lite_rpc_service *svc;

	rcu_read_lock();
	for (;;) {
		svc = xa_find(&lite_rpc_ports, port, LITE_RPC_PORT_MAX,
			      XA_PRESENT);
		if (!svc || kref_get_unless_zero(&svc->ref))
			break;
		(*port)++;
	}
	rcu_read_unlock();
	return svc;
}

int lite_rpc_services_visit(unsigned long *next, lite_rpc_service_fn fn,
			    void *arg)
{
	struct lite_rpc_service_info info;
	struct lite_rpc_service *svc;
	unsigned long port;
	int ret = 0;

	for (port = *next; ; port++) {
		svc = lite_rpc_service_find_any(&port);
		if (!svc)
			break;
		lite_rpc_service_info(svc, &info);
		lite_rpc_service_put(svc);
		if (!info.published)
			continue;
		ret = fn(&info, arg);
		if (ret)
			break;
	}
	*next = port;
	return ret;
}
