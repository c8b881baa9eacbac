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
 *
 * Every QP is on the global-key PD, so who may connect one is the
 * question. Both wire versions: the initiator binds a privileged source
 * port, which rdma_cm gives only to CAP_NET_BIND_SERVICE, and the acceptor
 * refuses any other (LITE_REJ_PORT). With peer_auth (wire version 2), each
 * connection is a challenge-response under the pair's secret: the first
 * request is answered with a reject carrying a fresh challenge, the second
 * (a new rdma_cm id for the same slot) carries it and a MAC over both
 * identities; only a request that passes replaces what is in its slot, and
 * the reply carries a MAC the initiator checks while its QP (its own, not
 * rdma_cm's) is still in INIT, so no packet reaches the PD before both ends
 * are proven. docs/kernel-peers.md, "Peer authentication".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/in.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "lite_internal.h"
#include "lite_wire.h"

#define LITE_RESOLVE_TIMEOUT_MS 2000
/* Privileged ports tried per connection attempt before giving up on it. */
#define LITE_BIND_TRIES 16

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
static_assert(sizeof(struct lite_cm_req2) == 56);	/* all a REQ leaves */
static_assert(sizeof(struct lite_cm_rep2) == 56);
static_assert(sizeof(struct lite_cm_rej2) == 32);
static_assert(LITE_CM_SECRET_LEN == LITE_PEER_SECRET_LEN);
/* The uapi names refusals with the wire's reasons. */
#define LITE_SAME_REASON(x) ((int)LITE_REFUSAL_##x == (int)LITE_REJ_##x)
static_assert(LITE_SAME_REASON(BAD_REQUEST) && LITE_SAME_REASON(WRONG_NODE) &&
	      LITE_SAME_REASON(STALE) && LITE_SAME_REASON(PARAMS) &&
	      LITE_SAME_REASON(ROLE) && LITE_SAME_REASON(ADDRESS) &&
	      LITE_SAME_REASON(AUTH) && LITE_SAME_REASON(PORT) &&
	      LITE_SAME_REASON(NO_KEY) &&
	      (int)LITE_REFUSAL_REPLY_AUTH > (int)LITE_REJ_NO_KEY);

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

static void lite_conn_destroy_qp(struct lite_conn *conn)
{
	if (!conn->qp_created)
		return;
	if (conn->own_qp)
		ib_destroy_qp(conn->qp);
	else
		rdma_destroy_qp(conn->cm_id);
	conn->qp_created = false;
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
	lite_conn_destroy_qp(conn);
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
	/*
	 * Out of its slot before its teardown is queued: destroy_work may
	 * free it at once (kfree_rcu), and only readers that could still
	 * find it in the slot are covered by that grace period.
	 */
	lite_peer_conn_lost_locked(conn, was_up, reason, report);
	lite_conn_close_locked(conn);
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
	lite_conn_destroy_qp(conn);
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

/* Moves @conn's own QP to @state with the attributes rdma_cm has for @id. */
static int lite_conn_qp_to(struct lite_conn *conn, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = 0, ret;

	ret = rdma_init_qp_attr(conn->cm_id, &attr, &mask);
	if (!ret)
		ret = ib_modify_qp(conn->qp, &attr, mask);
	return ret;
}

/*
 * The CQ and the RC QP of @conn on @id's device, with the global-key PD.
 * @own: lite.ko's QP, left in INIT (rdma_cm does not move it); else
 * rdma_cm's (rdma_create_qp()), which it moves to RTR and RTS itself.
 */
static int lite_conn_create_qp_locked(struct lite_conn *conn,
				      struct rdma_cm_id *id, bool own)
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
	if (own) {
		struct ib_qp *qp;

		attr.port_num = id->port_num;
		qp = ib_create_qp(ldev->pd, &attr);
		if (IS_ERR(qp))
			return PTR_ERR(qp);
		conn->own_qp = true;
		conn->qp = qp;
	} else {
		ret = rdma_create_qp(id, ldev->pd, &attr);
		if (ret)
			return ret;
		conn->qp = id->qp;
	}
	conn->qp_created = true;
	conn->max_sge = sge;
	/* The extra entry stays free, as for ib_drain_qp(). */
	atomic_set(&conn->sq_credits, send_wr);
	/* As rdma_create_qp() leaves its QPs: INIT takes no traffic yet. */
	return own ? lite_conn_qp_to(conn, IB_QPS_INIT) : 0;
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

/*
 * Binds @id to @addr and a privileged source port, the acceptor's first
 * check (LITE_REJ_PORT). rdma_cm gives ports below 1024 to
 * CAP_NET_BIND_SERVICE only (cma_use_port()); this runs in lite_wq's
 * kworkers, with the kernel's credentials. lite.ko's ids share ports
 * (reuseaddr), so a port is busy only when another kernel user of rdma_cm
 * holds it without reuseaddr: then the next is tried. The rotating start
 * spreads connections over the range (iWARP's TCP needs distinct 4-tuples).
 */
static int lite_conn_bind_locked(struct rdma_cm_id *id, __be32 addr)
{
	static unsigned int next;	/* under lite_lock */
	const unsigned int range = LITE_CM_SRC_PORT_MAX - LITE_CM_SRC_PORT_MIN + 1;
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = addr,
	};
	unsigned int i;
	int ret;

	lockdep_assert_held(&lite_lock);
	ret = rdma_set_reuseaddr(id, 1);
	if (ret)
		return ret;
	for (i = 0; i < LITE_BIND_TRIES; i++) {
		src.sin_port = htons(LITE_CM_SRC_PORT_MIN + next++ % range);
		ret = rdma_bind_addr(id, (struct sockaddr *)&src);
		if (ret != -EADDRINUSE && ret != -EADDRNOTAVAIL)
			break;
	}
	return ret;
}

int lite_conn_start_locked(struct lite_peer *peer, u16 index, u64 challenge)
{
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
	conn->answer = challenge;
	id = rdma_create_id(&init_net, lite_conn_event, conn, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		lite_conn_put(conn);
		return PTR_ERR(id);
	}
	conn->cm_id = id;
	rcu_assign_pointer(peer->conns[index], conn);
	/* An answer to a challenge is the same attempt's second request. */
	if (!peer->loopback && !challenge)
		lite_count(LITE_CNT_CONNECT_ATTEMPTS);

	/* From this node's RDMA address, so the right device is used. */
	dst.sin_addr.s_addr = peer->addr;
	dst.sin_port = htons(lite_cm_port);
	ret = lite_conn_bind_locked(id, self.addr);
	if (!ret)
		ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
					LITE_RESOLVE_TIMEOUT_MS);
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
	bool own;
	int ret;

	if (!lite_node_get_locked(&self))
		return -ENXIO;
	/*
	 * Authenticated, lite.ko keeps its QP in INIT until the reply is
	 * proven. Not on iWARP, where the provider connects the QP itself.
	 */
	own = lite_peer_auth && rdma_cap_ib_cm(id->device, id->port_num);
	ret = lite_conn_create_qp_locked(conn, id, own);
	if (ret)
		return ret;

	src.id = self.id;
	src.incarnation = self.incarnation;
	if (lite_peer_auth) {
		if (!peer->mac_tfm)
			return -ENOKEY;
		ret = lite_cm_fill_req2(&conn->req, &src, &dst, conn->index,
					lite_qps_per_peer, get_random_u64(),
					conn->answer, lite_peer_mac,
					peer->mac_tfm);
		if (ret)
			return ret;
		param.private_data = &conn->req;
		param.private_data_len = sizeof(conn->req);
		param.qp_num = conn->qp->qp_num;	/* used when it is our own */
	} else {
		lite_cm_fill_req(&req, &src, &dst, conn->index,
				 lite_qps_per_peer);
		param.private_data = &req;
		param.private_data_len = sizeof(req);
	}
	param.responder_resources = lite_rd_atomic(id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = lite_rd_atomic(id->device->attrs.max_qp_init_rd_atom);
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;	/* retry forever on receiver not ready */
	return rdma_connect_locked(id, &param);
}

static void lite_conn_up_locked(struct lite_conn *conn)
{
	conn->state = LITE_CONN_UP;
	conn->established = true;
	/* Publishes the QP and its queue accounting to the data path. */
	smp_store_release(&conn->ops_ready, true);
	lite_peer_conn_up_locked(conn);
}

/*
 * The initiator's check of the acceptor's reply: it must come from the peer
 * and incarnation we meant and, authenticated, answer our very request
 * under the pair's secret. 0 or a negative errno (-EKEYREJECTED: the MAC).
 */
static int lite_conn_check_reply_locked(struct lite_conn *conn,
					const struct rdma_cm_event *ev)
{
	struct lite_peer *peer = conn->peer;
	struct lite_cm_node node = {
		.id = peer->node_id,
		.incarnation = peer->incarnation,
	};
	int ret;

	if (!lite_peer_auth)
		return lite_cm_check_rep(ev->param.conn.private_data,
					 ev->param.conn.private_data_len,
					 &node, conn->index);
	ret = lite_cm_check_rep2(ev->param.conn.private_data,
				 ev->param.conn.private_data_len, &node,
				 &conn->req, lite_peer_mac, peer->mac_tfm);
	if (ret == -EKEYREJECTED) {
		lite_count(LITE_CNT_REP_AUTH_FAILED);
		lite_peer_refused_locked(peer, LITE_REFUSAL_REPLY_AUTH,
					 LITE_REFUSED_BY_NODE);
		pr_warn_ratelimited("peer %s QP %u: the reply failed authentication (pair secret mismatch?)\n",
				    peer->label, conn->index);
	} else if (ret) {
		pr_warn_ratelimited("peer %s QP %u: bad reply (error %d)\n",
				    peer->label, conn->index, ret);
	}
	return ret;
}

/*
 * ESTABLISHED: the acceptor got our RTU (passive), or the reply came to a
 * QP rdma_cm moved to RTS (active: version 1, and iWARP, whose QPs the
 * provider connects; there the check comes just after the QP could take
 * traffic, see docs/kernel-peers.md).
 */
static void lite_conn_established_locked(struct lite_conn *conn,
					 const struct rdma_cm_event *ev)
{
	int ret;

	if (conn->active) {
		ret = lite_conn_check_reply_locked(conn, ev);
		if (ret) {
			/* Disconnect it in the teardown. */
			conn->established = true;
			lite_conn_kill_locked(conn, -ret, true);
			return;
		}
	}
	lite_conn_up_locked(conn);
}

/* The reject an initiator sends for a reply it does not take. */
static int lite_conn_reply_rej_reason(int err)
{
	switch (err) {
	case -EKEYREJECTED:
		return LITE_REJ_AUTH;
	case -ESTALE:
		return LITE_REJ_WRONG_NODE;
	default:
		return LITE_REJ_BAD_REQUEST;
	}
}

/*
 * CONNECT_RESPONSE: the reply to an authenticated request, on IB and RoCE,
 * where our own QP is still in INIT: it takes no packet before the reply
 * is proven. Then INIT, RTR, RTS as rdma_cm would (cma_rep_recv()) and the
 * RTU, which rdma_accept() sends on the active side.
 */
static void lite_conn_response_locked(struct lite_conn *conn,
				      const struct rdma_cm_event *ev)
{
	struct lite_cm_node self = {};
	struct lite_node_id nid;
	struct lite_cm_rej2 rej;
	int ret;

	ret = lite_conn_check_reply_locked(conn, ev);
	if (ret) {
		if (lite_node_get_locked(&nid)) {
			self.id = nid.id;
			self.incarnation = nid.incarnation;
		}
		lite_cm_fill_rej2(&rej, &self, lite_conn_reply_rej_reason(ret), 0);
		rdma_reject(conn->cm_id, &rej, sizeof(rej),
			    IB_CM_REJ_CONSUMER_DEFINED);
		lite_conn_kill_locked(conn, -ret, true);
		return;
	}
	ret = lite_conn_qp_to(conn, IB_QPS_INIT);
	if (!ret)
		ret = lite_conn_qp_to(conn, IB_QPS_RTR);
	if (!ret)
		ret = lite_conn_qp_to(conn, IB_QPS_RTS);
	if (ret) {
		pr_warn_ratelimited("peer %s QP %u: cannot move the QP to RTS: %d\n",
				    conn->peer->label, conn->index, ret);
		rdma_reject(conn->cm_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		lite_conn_kill_locked(conn, -ret, true);
		return;
	}
	/* On failure it has sent a reject; the teardown moves the QP to ERR. */
	ret = rdma_accept(conn->cm_id, NULL);
	if (ret) {
		lite_conn_kill_locked(conn, -ret, true);
		return;
	}
	lite_conn_up_locked(conn);
}

/* Refusals worth remembering for PEER_GET (enum lite_refusal). */
static bool lite_refusal_noted(int why)
{
	return why && why <= LITE_REJ_NO_KEY && why != LITE_REJ_CHALLENGE &&
	       !lite_cm_rej_is_transient(why);
}

/* The errno a refusal is reported with (LITE_CMD_EVENT_PEER_FAILED). */
static int lite_refusal_errno(int why)
{
	switch (why) {
	case LITE_REJ_WRONG_NODE:
	case LITE_REJ_STALE:
		return -ESTALE;
	case LITE_REJ_AUTH:
		return -EKEYREJECTED;
	case LITE_REJ_NO_KEY:
		return -ENOKEY;
	default:
		return -EPROTO;
	}
}

/*
 * The acceptor refused our request (or, on the acceptor, the initiator
 * refused our reply). A challenge is no refusal: the slot asks again at
 * once, answering it, but only for a first request, so forged challenges
 * cannot keep an initiator spinning. Quiet retries when the acceptor only
 * has not caught up yet (no listener, no identity, does not know us or our
 * incarnation yet); a reported failure for a real mismatch.
 */
static void lite_conn_rejected_locked(struct lite_conn *conn,
				      struct rdma_cm_event *ev)
{
	struct lite_peer *peer = conn->peer;
	int reason = ECONNREFUSED, why;
	bool report = true;
	const void *data;
	u64 challenge;
	u8 len = 0;

	data = rdma_consumer_reject_data(conn->cm_id, ev, &len);
	why = lite_cm_rej_reason(data, len);
	if (why == LITE_REJ_CHALLENGE && lite_peer_auth && conn->active &&
	    !conn->req.challenge) {
		challenge = lite_cm_rej_challenge(data, len);
		if (challenge) {
			lite_peer_conn_challenged_locked(conn, challenge);
			return;
		}
	}
	lite_count(LITE_CNT_REJECTS_RECEIVED);
	if (why) {
		if (lite_cm_rej_is_transient(why))
			report = false;
		else
			reason = -lite_refusal_errno(why);	/* positive here */
		if (lite_refusal_noted(why))
			lite_peer_refused_locked(peer, why, LITE_REFUSED_BY_PEER);
		if (why == LITE_REJ_AUTH || why == LITE_REJ_NO_KEY ||
		    why == LITE_REJ_PORT)
			pr_warn_ratelimited("peer %s QP %u: the peer refused our %s: %s\n",
					    peer->label, conn->index,
					    conn->active ? "request" : "reply",
					    lite_cm_rej_reason_name(why));
		else
			pr_debug("peer %s QP %u: refused, reason %d (%s)\n",
				 peer->label, conn->index, why,
				 lite_cm_rej_reason_name(why));
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
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		lite_conn_response_locked(conn, ev);
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

/*
 * Where a request on @id comes from: the peer's address, and a privileged
 * port (rdma_cm puts the initiator's bound port in its header; only
 * CAP_NET_BIND_SERVICE gets one below 1024). Port 0 is no bound port.
 */
static int lite_conn_check_from(const struct rdma_cm_id *id,
				const struct lite_peer *peer)
{
	const struct sockaddr_in *from =
		(const struct sockaddr_in *)&id->route.addr.dst_addr;
	u16 port;

	if (from->sin_family != AF_INET || from->sin_addr.s_addr != peer->addr)
		return LITE_REJ_ADDRESS;
	port = ntohs(from->sin_port);
	if (!port || port >= LITE_CM_PRIVILEGED_PORTS)
		return LITE_REJ_PORT;
	return 0;
}

/*
 * Checks a version 1 request; 0 and the peer and index, or a REJ reason
 * (and the peer, once the request named a known one).
 */
static int lite_conn_check_req_locked(struct rdma_cm_id *id,
				      const struct rdma_cm_event *ev,
				      const struct lite_cm_node *self,
				      struct lite_peer **peerp, u16 *indexp)
{
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
	*peerp = peer;
	if (src.incarnation < peer->incarnation)
		return LITE_REJ_STALE;
	if (src.incarnation > peer->incarnation)
		return LITE_REJ_NEWER;
	return lite_conn_check_from(id, peer);
}

/*
 * A version 1 request from this node to itself: lite_cm_check_req() has
 * checked the header and refused it only because the initiator's id is not
 * smaller (@why, LITE_REJ_ROLE). 0 and the loopback peer and index, or a
 * reason.
 */
static int lite_conn_check_loopback_locked(struct rdma_cm_id *id,
					   const struct rdma_cm_event *ev,
					   const struct lite_cm_node *self,
					   int why, struct lite_peer **peerp,
					   u16 *indexp)
{
	const struct lite_cm_req *req = ev->param.conn.private_data;
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
	peer = lite_loopback_peer_locked();
	if (!peer || peer->incarnation != self->incarnation)
		return LITE_REJ_NOT_READY;
	*peerp = peer;
	*indexp = index;
	return lite_conn_check_from(id, peer);
}

/*
 * Checks a version 2 request, cheapest first; the secret is touched only
 * for a request from the peer's address and a privileged port. A first
 * request gets a challenge (LITE_REJ_CHALLENGE); an answer must carry the
 * one outstanding for its slot, which it consumes, right or wrong, and a
 * MAC over both identities, this node's incarnation included. 0 and the
 * peer and index, or a REJ reason (and the peer, once the request named a
 * known one).
 */
static int lite_conn_check_req2_locked(struct rdma_cm_id *id,
				       const struct rdma_cm_event *ev,
				       const struct lite_cm_node *self,
				       struct lite_peer **peerp, u16 *indexp)
{
	const void *data = ev->param.conn.private_data;
	struct lite_cm_challenge *challenge;
	struct lite_cm_req2_info req;
	struct lite_peer *peer;
	u64 now;
	int why;

	why = lite_cm_check_req2(data, ev->param.conn.private_data_len, self,
				 lite_qps_per_peer, &req);
	if (why)
		return why;
	if (req.src.id == self->id) {
		peer = lite_loopback_peer_locked();
		if (!peer)
			return LITE_REJ_NOT_READY;
	} else {
		peer = lite_peer_find_locked(req.src.id);
		if (!peer)
			return LITE_REJ_UNKNOWN_PEER;
	}
	*peerp = peer;
	*indexp = req.qp_index;
	if (req.src.incarnation < peer->incarnation)
		return LITE_REJ_STALE;
	if (req.src.incarnation > peer->incarnation)
		return LITE_REJ_NEWER;
	why = lite_conn_check_from(id, peer);
	if (why)
		return why;
	if (!peer->mac_tfm)
		return LITE_REJ_NO_KEY;

	challenge = &peer->challenges[req.qp_index];
	now = ktime_to_ms(ktime_get());
	if (!req.challenge) {
		lite_cm_challenge_issue(challenge, get_random_u64(), now);
		return LITE_REJ_CHALLENGE;
	}
	if (!lite_cm_challenge_consume(challenge, req.challenge, now))
		return LITE_REJ_AUTH;
	return lite_cm_verify_req2(data, self, lite_peer_mac, peer->mac_tfm);
}

/*
 * Accepts the checked request on @id for QP @index of @peer: 0, a
 * lite_cm_rej_reason to refuse with, or a negative errno when
 * rdma_accept() failed (it has sent the reject itself).
 */
static int lite_conn_accept_locked(struct rdma_cm_id *id,
				   const struct rdma_cm_event *ev,
				   struct lite_peer *peer, u16 index,
				   const struct lite_cm_node *self)
{
	struct rdma_conn_param param = {};
	struct lite_conn *conn, *old;
	struct lite_cm_rep2 rep2;
	struct lite_cm_rep rep;
	int ret;

	conn = lite_conn_alloc(peer, index, false);
	if (!conn)
		return LITE_REJ_NO_RESOURCES;
	conn->cm_id = id;
	ret = lite_conn_create_qp_locked(conn, id, false);
	if (!ret && lite_peer_auth)
		ret = lite_cm_fill_rep2(&rep2, self,
					ev->param.conn.private_data,
					lite_peer_mac, peer->mac_tfm);
	if (ret) {
		lite_conn_free_now(conn);
		return LITE_REJ_NO_RESOURCES;
	}

	if (lite_peer_auth) {
		param.private_data = &rep2;
		param.private_data_len = sizeof(rep2);
	} else {
		lite_cm_fill_rep(&rep, self, index);
		param.private_data = &rep;
		param.private_data_len = sizeof(rep);
	}
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
		pr_warn_ratelimited("peer %s QP %u: accept failed: %d\n",
				    peer->label, index, ret);
		lite_conn_free_now(conn);
		return ret;
	}

	/*
	 * Only now, the request having passed every check, may the slot
	 * change. The initiator only reconnects a QP it lost: the old one is
	 * stale.
	 */
	if (peer->loopback) {
		old = lite_slot_locked(peer->accepted[index]);
		if (old)
			lite_conn_kill_locked(old, ECONNRESET, false);
		rcu_assign_pointer(peer->accepted[index], conn);
	} else {
		old = lite_slot_locked(peer->conns[index]);
		if (old)
			lite_conn_kill_locked(old, ECONNRESET, false);
		rcu_assign_pointer(peer->conns[index], conn);
		lite_count(LITE_CNT_ACCEPTS);
	}
	id->context = conn;
	return 0;
}

/* Counts, remembers and logs the refusal @why of a request on @id. */
static void lite_conn_refused_locked(struct rdma_cm_id *id,
				     struct lite_peer *peer, int why)
{
	const struct sockaddr *from =
		(const struct sockaddr *)&id->route.addr.dst_addr;

	switch (why) {
	case LITE_REJ_CHALLENGE:
		lite_count(LITE_CNT_CHALLENGES_ISSUED);
		return;		/* not a refusal */
	case LITE_REJ_AUTH:
		lite_count(LITE_CNT_REFUSED_AUTH);
		break;
	case LITE_REJ_PORT:
		lite_count(LITE_CNT_REFUSED_PORT);
		break;
	case LITE_REJ_NO_KEY:
		lite_count(LITE_CNT_REFUSED_NO_KEY);
		break;
	}
	lite_count(LITE_CNT_REJECTS_SENT);
	if (lite_cm_rej_is_transient(why))
		return;
	if (!peer) {
		pr_info_ratelimited("refused a connection request from %pISpc: %s\n",
				    from, lite_cm_rej_reason_name(why));
		return;
	}
	lite_peer_refused_locked(peer, why, LITE_REFUSED_BY_NODE);
	if (why == LITE_REJ_NO_KEY) {
		if (!peer->no_key_reported)
			pr_warn("peer %s: no pair secret; refusing its connection requests until the agent gives one\n",
				peer->label);
		peer->no_key_reported = true;
		return;
	}
	pr_warn_ratelimited("peer %s: refused a connection request from %pISpc: %s\n",
			    peer->label, from, lite_cm_rej_reason_name(why));
}

/*
 * A connection request on the node's listener; @id is the new id. A
 * refused request changes nothing but the challenge of its slot: the QP
 * connected there stays.
 */
int lite_conn_request(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct lite_cm_node *selfp = NULL;
	struct lite_cm_node self = {};
	struct lite_peer *peer = NULL;
	struct lite_node_id nid;
	struct lite_cm_rej2 rej2;
	struct lite_cm_rej rej;
	u64 challenge = 0;
	u16 index = 0;
	int why;

	mutex_lock(&lite_lock);
	if (lite_node_get_locked(&nid)) {
		self.id = nid.id;
		self.incarnation = nid.incarnation;
		selfp = &self;
	}
	if (lite_peer_auth) {
		why = lite_conn_check_req2_locked(id, ev, selfp, &peer, &index);
	} else {
		why = lite_conn_check_req_locked(id, ev, selfp, &peer, &index);
		if (why)
			why = lite_conn_check_loopback_locked(id, ev, selfp, why,
							      &peer, &index);
	}
	if (!why)
		why = lite_conn_accept_locked(id, ev, peer, index, &self);
	if (why <= 0) {
		mutex_unlock(&lite_lock);
		if (why)
			lite_count(LITE_CNT_REJECTS_SENT);
		/* Non-zero: rdma_cm destroys the new id. */
		return why;
	}

	if (why == LITE_REJ_CHALLENGE)
		challenge = peer->challenges[index].value;
	lite_conn_refused_locked(id, peer, why);
	mutex_unlock(&lite_lock);
	if (lite_peer_auth) {
		lite_cm_fill_rej2(&rej2, &self, why, challenge);
		rdma_reject(id, &rej2, sizeof(rej2), IB_CM_REJ_CONSUMER_DEFINED);
	} else {
		lite_cm_fill_rej(&rej, &self, why);
		rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	}
	/* Non-zero: rdma_cm destroys the new id. */
	return -ECONNREFUSED;
}
