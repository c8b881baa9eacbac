// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC: the end of a service. Unregistering (RPC_CLOSE, the file's
 * close, a kernel caller's unregister) refuses what is queued or taken,
 * waits for the replies in flight, sends GONE to every client, and leaves
 * the rings to the fence (lite_rpc.h): a delayed work that ends them once
 * every client answered RELEASED or is down, and keeps what a silent
 * client could still reach. Device removal and unload end them at once:
 * no connection is left to reach them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>

#include "transport/lite_conn.h"
#include "lite_rpc_internal.h"

/* How long unregistering waits for RELEASED before keeping the rings. */
#define LITE_RPC_FENCE_MS	10000
#define LITE_RPC_FENCE_POLL_MS	50
/* How long it waits for its replies posted (not those being staged). */
#define LITE_RPC_DRAIN_MS	5000

/* ---- unregistering and the fence ---- */

/*
 * The fence is over: every ring either unreachable now (released, or its
 * client down and its connections closed) and ended on the device, or
 * kept (@timed_out and its client silent). The pages go with the last
 * reference (a REPLY may still be copying into one).
 */
static void lite_rpc_service_finish(struct lite_rpc_service *svc,
				    bool timed_out)
{
	bool waited = false, kept = false;
	u32 i;

	/*
	 * Once: the fence work, or device removal and unload after cancelling
	 * it (a running fence that re-queued itself is cancelled without
	 * finishing, whatever cancel_delayed_work_sync() returned).
	 */
	spin_lock_bh(&svc->lock);
	if (svc->finished) {
		spin_unlock_bh(&svc->lock);
		return;
	}
	svc->finished = true;
	spin_unlock_bh(&svc->lock);
	for (i = 0; i < svc->nr_rings; i++) {
		struct lite_rpc_ring *ring = &svc->rings[i];

		if (timed_out && ring->node_id && !ring->released) {
			ring->keep = true;
			kept = true;
			continue;
		}
		/* A client that went down: its connections end first. */
		if (ring->incarnation && !waited) {
			lite_conns_wait_closed();
			waited = true;
		}
		lite_rpc_mem_unmap(&ring->mem);
	}
	if (timed_out)
		pr_warn("service %s (port %u): clients did not release their rings in %u ms\n",
			svc->args.name, svc->port, LITE_RPC_FENCE_MS);
	/*
	 * A client that never answered GONE may still hold a live binding to
	 * this port: its requests must never be routed to a later service
	 * there, so the port is never reused (it stays reserved).
	 */
	lite_rpc_port_release(svc, kept);
	lite_uncount(LITE_CNT_RPC_SERVICES);
	lite_rpc_service_put(svc);
}

static bool lite_rpc_all_released(struct lite_rpc_service *svc)
{
	bool all = true;
	u32 i;

	spin_lock_bh(&svc->lock);
	for (i = 0; i < svc->nr_rings; i++)
		if (svc->rings[i].node_id && !svc->rings[i].released)
			all = false;
	spin_unlock_bh(&svc->lock);
	return all;
}

void lite_rpc_fence_work(struct work_struct *work)
{
	struct lite_rpc_service *svc =
		container_of(to_delayed_work(work), typeof(*svc), fence_work);

	if (lite_rpc_all_released(svc)) {
		lite_rpc_service_finish(svc, false);
		return;
	}
	if (time_after(jiffies, svc->fence_deadline)) {
		lite_rpc_service_finish(svc, true);
		return;
	}
	queue_delayed_work(lite_wq, &svc->fence_work,
			   msecs_to_jiffies(LITE_RPC_FENCE_POLL_MS));
}

/*
 * Closes @svc; the fence holds a reference of its own until it is over.
 * Refused and GONE sends go out under the lock: posting does not sleep.
 */
void lite_rpc_service_close(struct lite_rpc_service *svc)
{
	struct lite_rpc_rslot *s;
	long drained;
	u32 i, j;

	spin_lock_bh(&svc->lock);
	if (svc->closing) {
		spin_unlock_bh(&svc->lock);
		return;
	}
	svc->closing = true;
	/* The fence's reference, dropped when it is over. */
	lite_rpc_service_get(svc);
	INIT_LIST_HEAD(&svc->queue);
	svc->queued = 0;
	for (i = 0; i < svc->nr_rings; i++) {
		struct lite_rpc_ring *ring = &svc->rings[i];

		if (!ring->node_id)
			continue;
		for (j = 0; j < svc->args.depth; j++) {
			s = &ring->slots[j];
			/* An answer being staged is not posted after this. */
			if ((s->state == LITE_RSLOT_QUEUED ||
			     s->state == LITE_RSLOT_TAKEN ||
			     s->state == LITE_RSLOT_ANSWERING) && !s->oneway)
				lite_rpc_refuse(ring->node_id, svc->port, j);
			if (s->state != LITE_RSLOT_REPLYING)
				s->state = LITE_RSLOT_EMPTY;
		}
	}
	spin_unlock_bh(&svc->lock);
	wake_up_all(&svc->recv_wait);
	if (!svc->published) {
		lite_rpc_service_finish(svc, false);
		return;
	}
	/*
	 * GONE only after the last reply posted (closing is set: no other
	 * follows): it must not overtake one. Posted sends complete or are
	 * flushed in bounded time; if they did not, no GONE is sent and the
	 * fence keeps the rings its clients may still write.
	 */
	drained = wait_event_timeout(svc->fence_wait,
				     !atomic_read(&svc->replies_inflight),
				     msecs_to_jiffies(LITE_RPC_DRAIN_MS));
	if (!drained)
		pr_warn("service %s (port %u): replies still posted after %u ms: no GONE, its rings are kept\n",
			svc->args.name, svc->port, LITE_RPC_DRAIN_MS);
	spin_lock_bh(&svc->lock);
	for (i = 0; i < svc->nr_rings && drained; i++) {
		struct lite_rpc_ring *ring = &svc->rings[i];

		if (!ring->node_id)
			continue;
		ring->gone_sent = true;
		if (lite_rpc_post_ctrl(ring->node_id, ring->incarnation,
				       svc->port,
				       lite_rpc_imm(LITE_RPC_KIND_CTRL,
						    svc->port,
						    LITE_RPC_CTRL_GONE, 0)))
			/* Unreachable: peer down will release it. */
			pr_debug("service %s: no GONE to node %u\n",
				 svc->args.name, ring->node_id);
	}
	spin_unlock_bh(&svc->lock);
	svc->fence_deadline = jiffies + msecs_to_jiffies(LITE_RPC_FENCE_MS);
	queue_delayed_work(lite_wq, &svc->fence_work, 0);
}

/* ---- device removal and unload ---- */

void lite_rpc_services_device_removed(struct lite_device *ldev)
{
	struct lite_rpc_service *svc;
	unsigned long port = 0;

	/* No connection on @ldev is left (lite_peers_device_removed()). */
	while ((svc = lite_rpc_service_find_any(&port))) {
		if (svc->ldev == ldev) {
			lite_rpc_service_close(svc);
			/* Frees the rings now if the fence did not yet. */
			cancel_delayed_work_sync(&svc->fence_work);
			lite_rpc_service_finish(svc, false);
		}
		lite_rpc_service_put(svc);
		port++;
	}
}

void lite_rpc_services_exit(void)
{
	struct lite_rpc_service *svc;
	unsigned long port;

	/* Every file is closed, so every service is fencing: end them. */
	for (port = 0; (svc = lite_rpc_service_find_any(&port)); port++) {
		cancel_delayed_work_sync(&svc->fence_work);
		if (READ_ONCE(svc->closing))
			lite_rpc_service_finish(svc, false);
		lite_rpc_service_put(svc);
	}
	/* No QP is left: the ports kept reserved are free. */
	lite_rpc_ports_exit();
}
