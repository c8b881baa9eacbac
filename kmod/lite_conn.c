// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: one reliable-connected queue pair to a peer, set up with rdma_cm.
 *
 * Initiator: create an id, resolve the peer's address and route from this
 * node's address, create the CQ and QP on the device's global-key PD, and
 * connect with a struct lite_cm_req (who we are, whom we mean, which QP of
 * how many). Acceptor: check every field of the request against this
 * node's identity and peer table, create the CQ and QP, accept with a
 * struct lite_cm_rep; refuse with a struct lite_cm_rej that says why, so
 * the initiator knows whether to retry quietly (the acceptor has not been
 * told about it yet) or report a real mismatch. The initiator checks the
 * reply the same way.
 *
 * Lifetime: a connection belongs to its rdma_cm id. Handlers never destroy
 * their own id, except for a refused request, where returning non-zero
 * lets rdma_cm do it; everything else is torn down by destroy_work, after
 * which no handler can run for the connection.
 *
 * A request from this node's own loopback peer (lite_peer.c) is accepted
 * too; its accepting end is kept in the peer's accepted[] and never used
 * for operations.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/in.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "lite_internal.h"
#include "lite_wire.h"

#define LITE_RESOLVE_TIMEOUT_MS 2000

/*
 * Queue sizes for the one-sided operations and write-with-immediate
 * messages to come; one more of each for ib_drain_qp().
 */
#define LITE_QP_SEND_WR		256
#define LITE_QP_RECV_WR		256
#define LITE_QP_SEND_SGE	16
#define LITE_RD_ATOMIC_MAX	16

static_assert(sizeof(struct lite_cm_req) == 40);
static_assert(sizeof(struct lite_cm_rep) == 24);
static_assert(sizeof(struct lite_cm_rej) == 24);

static void lite_conn_release(struct kref *ref)
{
	struct lite_conn *conn = container_of(ref, struct lite_conn, ref);

	if (conn->ldev)
		lite_device_put(conn->ldev);
	lite_peer_put(conn->peer);
	/* The data path may still look at it under RCU. */
	kfree_rcu(conn, rcu);
}

static void lite_conn_put(struct lite_conn *conn)
{
	kref_put(&conn->ref, lite_conn_release);
}

static void lite_conn_destroy_work(struct work_struct *work)
{
	struct lite_conn *conn = container_of(work, struct lite_conn,
					      destroy_work);

	/*
	 * No new operation starts on it (ops_dying, ordered against their
	 * inflight count); disconnecting moves the QP to the error state,
	 * which completes every work request on it with a flush error, and
	 * the operations they belong to end. Then the QP can go.
	 * rdma_destroy_id() waits for a handler still running.
	 */
	WRITE_ONCE(conn->ops_dying, true);
	smp_mb();	/* pairs with lite_ops' inflight increment */
	wake_up_all(&conn->wait);
	if (conn->established)
		rdma_disconnect(conn->cm_id);
	if (conn->qp_created) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		/* Even if the disconnect could not do it. */
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	}
	wait_event(conn->wait, !atomic_read(&conn->inflight));
	if (conn->qp_created)
		rdma_destroy_qp(conn->cm_id);
	if (conn->cq)
		ib_free_cq(conn->cq);
	rdma_destroy_id(conn->cm_id);
	lite_conn_put(conn);
}

/* A fatal QP event, reported from a context that cannot take lite_lock. */
static void lite_conn_error_work(struct work_struct *work)
{
	struct lite_conn *conn = container_of(work, struct lite_conn,
					      error_work);

	mutex_lock(&lite_lock);
	lite_conn_kill_locked(conn, EIO, true);
	mutex_unlock(&lite_lock);
	lite_conn_put(conn);
}

void lite_conn_close_locked(struct lite_conn *conn)
{
	lockdep_assert_held(&lite_lock);
	if (conn->state == LITE_CONN_DEAD)
		return;
	conn->state = LITE_CONN_DEAD;
	WRITE_ONCE(conn->ops_ready, false);
	queue_work(lite_wq, &conn->destroy_work);
}

void lite_conn_fail(struct lite_conn *conn)
{
	/* The QP exists, so the destroy path still holds a reference. */
	kref_get(&conn->ref);
	if (!queue_work(lite_wq, &conn->error_work))
		lite_conn_put(conn);
}

void lite_conn_kill_locked(struct lite_conn *conn, int reason, bool report)
{
	bool was_up = conn->state == LITE_CONN_UP;

	if (conn->state == LITE_CONN_DEAD)
		return;
	lite_conn_close_locked(conn);
	lite_peer_conn_lost_locked(conn, was_up, reason, report);
}

static struct lite_conn *lite_conn_alloc(struct lite_peer *peer, u16 index,
					 bool active)
{
	struct lite_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	kref_get(&peer->ref);
	conn->peer = peer;
	conn->index = index;
	conn->active = active;
	conn->state = LITE_CONN_CONNECTING;
	atomic_set(&conn->inflight, 0);
	init_waitqueue_head(&conn->wait);
	INIT_WORK(&conn->destroy_work, lite_conn_destroy_work);
	INIT_WORK(&conn->error_work, lite_conn_error_work);
	return conn;
}

/*
 * Undoes lite_conn_alloc() and the QP, for a conn that never got into its
 * peer's slot; rdma_cm destroys its id.
 */
static void lite_conn_free_now(struct lite_conn *conn)
{
	conn->state = LITE_CONN_DEAD;
	if (conn->qp_created)
		rdma_destroy_qp(conn->cm_id);
	if (conn->cq)
		ib_free_cq(conn->cq);
	lite_conn_put(conn);
}

static void lite_qp_event(struct ib_event *ev, void *ctx)
{
	struct lite_conn *conn = ctx;

	switch (ev->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		pr_warn_ratelimited("peer %s QP %u: %s\n", conn->peer->label,
				    conn->index, ib_event_msg(ev->event));
		lite_conn_fail(conn);
		break;
	default:
		pr_debug("peer %s QP %u: %s\n", conn->peer->label,
			 conn->index, ib_event_msg(ev->event));
		break;
	}
}

/* The CQ and the RC QP of @conn on @id's device, with the global-key PD. */
static int lite_conn_create_qp_locked(struct lite_conn *conn,
				      struct rdma_cm_id *id)
{
	struct ib_device *ibdev = id->device;
	struct ib_qp_init_attr attr = {};
	struct lite_device *ldev;
	int send_wr, recv_wr, cqe, sge, ret;

	ldev = lite_device_get(ibdev);
	if (!ldev)
		return -ENODEV;
	conn->ldev = ldev;
	if (ldev->dying)
		return -ENODEV;

	send_wr = min(LITE_QP_SEND_WR, ibdev->attrs.max_qp_wr - 1);
	recv_wr = min(LITE_QP_RECV_WR, ibdev->attrs.max_qp_wr - 1);
	cqe = min(send_wr + recv_wr + 2, ibdev->attrs.max_cqe);
	conn->cq = ib_alloc_cq(ibdev, conn, cqe,
			       conn->index % max(ibdev->num_comp_vectors, 1),
			       IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}

	attr.event_handler = lite_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.cap.max_send_wr = send_wr + 1;
	attr.cap.max_recv_wr = recv_wr + 1;
	/* RDMA READ may take fewer SGEs than the other work requests. */
	sge = max(min3(LITE_QP_SEND_SGE, ibdev->attrs.max_send_sge,
		       ibdev->attrs.max_sge_rd), 1);
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(id, ldev->pd, &attr);
	if (ret)
		return ret;
	conn->qp_created = true;
	conn->qp = id->qp;
	conn->max_sge = sge;
	/* The extra entry stays free, as for ib_drain_qp(). */
	atomic_set(&conn->sq_credits, send_wr);
	return 0;
}

static u8 lite_rd_atomic(int device_max)
{
	return clamp(device_max, 0, LITE_RD_ATOMIC_MAX);
}

/* A negative errno from an rdma_cm event's status, else @fallback. */
static int lite_status_errno(int status, int fallback)
{
	return status < 0 && status > -MAX_ERRNO ? -status : fallback;
}

int lite_conn_start_locked(struct lite_peer *peer, u16 index)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct lite_node_id self;
	struct lite_conn *conn;
	struct rdma_cm_id *id;
	int ret;

	lockdep_assert_held(&lite_lock);
	if (!lite_node_get_locked(&self))
		return -ENXIO;
	conn = lite_conn_alloc(peer, index, true);
	if (!conn)
		return -ENOMEM;
	id = rdma_create_id(&init_net, lite_conn_event, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		lite_conn_put(conn);
		return PTR_ERR(id);
	}
	conn->cm_id = id;
	WRITE_ONCE(peer->conns[index], conn);
	if (!peer->loopback)
		lite_count(LITE_CNT_CONNECT_ATTEMPTS);

	/* From this node's RDMA address, so the right device is used. */
	src.sin_addr.s_addr = self.addr;
	dst.sin_addr.s_addr = peer->addr;
	dst.sin_port = htons(lite_cm_port);
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, LITE_RESOLVE_TIMEOUT_MS);
	if (ret)
		lite_conn_kill_locked(conn, -ret, true);
	return 0;
}

static int lite_conn_connect_locked(struct lite_conn *conn)
{
	struct rdma_cm_id *id = conn->cm_id;
	struct lite_peer *peer = conn->peer;
	struct lite_cm_node src, dst = {
		.id = peer->node_id,
		.incarnation = peer->incarnation,
	};
	struct rdma_conn_param param = {};
	struct lite_node_id self;
	struct lite_cm_req req;
	int ret;

	if (!lite_node_get_locked(&self))
		return -ENXIO;
	ret = lite_conn_create_qp_locked(conn, id);
	if (ret)
		return ret;

	src.id = self.id;
	src.incarnation = self.incarnation;
	lite_cm_fill_req(&req, &src, &dst, conn->index, lite_qps_per_peer);

	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.responder_resources = lite_rd_atomic(id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = lite_rd_atomic(id->device->attrs.max_qp_init_rd_atom);
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;	/* retry forever on receiver not ready */
	return rdma_connect_locked(id, &param);
}

static void lite_conn_established_locked(struct lite_conn *conn,
					 const struct rdma_cm_event *ev)
{
	int ret;

	if (conn->active) {
		/* The reply must come from the peer and incarnation we meant. */
		struct lite_cm_node peer = {
			.id = conn->peer->node_id,
			.incarnation = conn->peer->incarnation,
		};

		ret = lite_cm_check_rep(ev->param.conn.private_data,
					ev->param.conn.private_data_len, &peer,
					conn->index);
		if (ret) {
			pr_warn_ratelimited("peer %s QP %u: bad reply (error %d), disconnecting\n",
					    conn->peer->label, conn->index, ret);
			/* Disconnect it in the teardown. */
			conn->established = true;
			lite_conn_kill_locked(conn, -ret, true);
			return;
		}
	}
	conn->state = LITE_CONN_UP;
	conn->established = true;
	/* Publishes the QP and its queue accounting to the data path. */
	smp_store_release(&conn->ops_ready, true);
	lite_peer_conn_up_locked(conn);
}

/*
 * The acceptor refused. Quiet retries when it only has not caught up yet
 * (no listener, no identity, does not know us or our incarnation yet);
 * a reported failure for a real mismatch.
 */
static void lite_conn_rejected_locked(struct lite_conn *conn,
				      struct rdma_cm_event *ev)
{
	const void *data;
	int reason = ECONNREFUSED, why;
	bool report = true;
	u8 len = 0;

	lite_count(LITE_CNT_REJECTS_RECEIVED);
	data = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	why = lite_cm_rej_reason(data, len);
	if (why) {
		if (lite_cm_rej_is_transient(why))
			report = false;
		else if (why == LITE_REJ_WRONG_NODE || why == LITE_REJ_STALE)
			reason = ESTALE;
		else
			reason = EPROTO;
		pr_debug("peer %s QP %u: refused, reason %d\n",
			 conn->peer->label, conn->index, why);
	} else {
		/* Nobody listens there (yet): lite.ko not loaded or node unset. */
		if (ev->status == IB_CM_REJ_INVALID_SERVICE_ID)
			report = false;
		pr_debug("peer %s QP %u: rejected: %s\n", conn->peer->label,
			 conn->index, rdma_reject_msg(conn->cm_id, ev->status));
	}
	lite_conn_kill_locked(conn, reason, report);
}

int lite_conn_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct lite_conn *conn = id->context;
	int ret;

	mutex_lock(&lite_lock);
	pr_debug("peer %s QP %u: %s (%d)\n", conn->peer->label, conn->index,
		 rdma_event_msg(ev->event), ev->status);
	if (conn->state == LITE_CONN_DEAD)
		goto out;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, LITE_RESOLVE_TIMEOUT_MS);
		if (ret)
			lite_conn_kill_locked(conn, -ret, true);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = lite_conn_connect_locked(conn);
		if (ret)
			lite_conn_kill_locked(conn, -ret, true);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		lite_conn_established_locked(conn, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		lite_conn_rejected_locked(conn, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		lite_conn_kill_locked(conn, lite_status_errno(ev->status, EHOSTUNREACH),
				      true);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		/* The initiator retries; the acceptor just waits for it. */
		lite_conn_kill_locked(conn, lite_status_errno(ev->status, ETIMEDOUT),
				      conn->active);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		lite_conn_kill_locked(conn, ECONNRESET, conn->active);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * rdma_cm waits for this id to be destroyed; destroy_work
		 * does that, outside this handler.
		 */
		lite_conn_kill_locked(conn, ENODEV, true);
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		lite_conn_kill_locked(conn, ENETRESET, true);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&lite_lock);
	return 0;
}

/* Checks a connection request; 0 and the peer and index, or a REJ reason. */
static int lite_conn_check_req_locked(struct rdma_cm_id *id,
				      const struct rdma_cm_event *ev,
				      const struct lite_cm_node *self,
				      struct lite_peer **peerp, u16 *indexp)
{
	const struct sockaddr_in *from;
	struct lite_cm_node src;
	struct lite_peer *peer;
	int why;

	why = lite_cm_check_req(ev->param.conn.private_data,
				ev->param.conn.private_data_len, self,
				lite_qps_per_peer, &src, indexp);
	if (why)
		return why;
	peer = lite_peer_find_locked(src.id);
	if (!peer)
		return LITE_REJ_UNKNOWN_PEER;
	if (src.incarnation < peer->incarnation)
		return LITE_REJ_STALE;
	if (src.incarnation > peer->incarnation)
		return LITE_REJ_NEWER;
	from = (const struct sockaddr_in *)&id->route.addr.dst_addr;
	if (from->sin_family != AF_INET || from->sin_addr.s_addr != peer->addr)
		return LITE_REJ_ADDRESS;
	*peerp = peer;
	return 0;
}

/*
 * A request from this node to itself: lite_cm_check_req() has checked the
 * header and refused it only because the initiator's id is not smaller
 * (@why, LITE_REJ_ROLE). 0 and the loopback peer and index, or a reason.
 */
static int lite_conn_check_loopback_locked(struct rdma_cm_id *id,
					   const struct rdma_cm_event *ev,
					   const struct lite_cm_node *self,
					   int why, struct lite_peer **peerp,
					   u16 *indexp)
{
	const struct lite_cm_req *req = ev->param.conn.private_data;
	const struct sockaddr_in *from;
	struct lite_peer *peer;
	u16 index;

	if (why != LITE_REJ_ROLE || !self ||
	    be32_to_cpu(req->src_node_id) != self->id ||
	    be64_to_cpu(req->src_incarnation) != self->incarnation)
		return why;
	index = be16_to_cpu(req->qp_index);
	if (be16_to_cpu(req->qps_per_peer) != lite_qps_per_peer ||
	    index >= lite_qps_per_peer)
		return LITE_REJ_PARAMS;
	/* Stable: the loopback peer changes only under lite_lock. */
	rcu_read_lock();
	peer = lite_peer_lookup_rcu(self->id);
	rcu_read_unlock();
	if (!peer || !peer->loopback || peer->incarnation != self->incarnation)
		return LITE_REJ_NOT_READY;
	from = (const struct sockaddr_in *)&id->route.addr.dst_addr;
	if (from->sin_family != AF_INET || from->sin_addr.s_addr != peer->addr)
		return LITE_REJ_ADDRESS;
	*peerp = peer;
	*indexp = index;
	return 0;
}

/* A connection request on the node's listener; @id is the new id. */
int lite_conn_request(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct lite_cm_node self = {};
	struct rdma_conn_param param = {};
	struct lite_peer *peer = NULL;
	struct lite_conn *conn, *old;
	struct lite_node_id nid;
	struct lite_cm_rep rep;
	struct lite_cm_rej rej;
	bool have_self;
	u16 index = 0;
	int why, ret;

	mutex_lock(&lite_lock);
	have_self = lite_node_get_locked(&nid);
	if (have_self) {
		self.id = nid.id;
		self.incarnation = nid.incarnation;
	}
	why = lite_conn_check_req_locked(id, ev, have_self ? &self : NULL,
					 &peer, &index);
	if (why)
		why = lite_conn_check_loopback_locked(id, ev,
						      have_self ? &self : NULL,
						      why, &peer, &index);
	if (why)
		goto reject;

	conn = lite_conn_alloc(peer, index, false);
	if (!conn) {
		why = LITE_REJ_NO_RESOURCES;
		goto reject;
	}
	conn->cm_id = id;
	ret = lite_conn_create_qp_locked(conn, id);
	if (ret) {
		lite_conn_free_now(conn);
		why = LITE_REJ_NO_RESOURCES;
		goto reject;
	}

	lite_cm_fill_rep(&rep, &self, index);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.responder_resources =
		min(ev->param.conn.initiator_depth,
		    lite_rd_atomic(id->device->attrs.max_qp_rd_atom));
	param.initiator_depth =
		min(ev->param.conn.responder_resources,
		    lite_rd_atomic(id->device->attrs.max_qp_init_rd_atom));
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	ret = rdma_accept(id, &param);
	if (ret) {
		/* rdma_accept() has sent the reject itself. */
		pr_warn_ratelimited("peer %s QP %u: accept failed: %d\n",
				    peer->label, index, ret);
		lite_conn_free_now(conn);
		mutex_unlock(&lite_lock);
		lite_count(LITE_CNT_REJECTS_SENT);
		return ret;
	}

	/* The initiator only reconnects a QP it lost: the old one is stale. */
	if (peer->loopback) {
		old = peer->accepted[index];
		if (old)
			lite_conn_kill_locked(old, ECONNRESET, false);
		WRITE_ONCE(peer->accepted[index], conn);
	} else {
		old = peer->conns[index];
		if (old)
			lite_conn_kill_locked(old, ECONNRESET, false);
		WRITE_ONCE(peer->conns[index], conn);
		lite_count(LITE_CNT_ACCEPTS);
	}
	id->context = conn;
	mutex_unlock(&lite_lock);
	return 0;

reject:
	if (!lite_cm_rej_is_transient(why))
		pr_info_ratelimited("refused a connection from %pISc: reason %d\n",
				    &id->route.addr.dst_addr, why);
	lite_cm_fill_rej(&rej, &self, why);
	mutex_unlock(&lite_lock);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	lite_count(LITE_CNT_REJECTS_SENT);
	/* Non-zero: rdma_cm destroys the new id. */
	return -ECONNREFUSED;
}
