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
 * This file holds the connection itself (its CQ and QP, lifetime and
 * teardown), the initiator's steps and the rdma_cm event handler;
 * lite_conn_accept.c the acceptor's checks and accept; lite_peer_auth.c
 * who may connect a QP (the privileged source port and, with peer_auth,
 * the challenge-response). lite_conn.h has the structure,
 * lite_conn_internal.h what only these three files share.
 *
 * Lifetime: a connection belongs to its rdma_cm id. Handlers never destroy
 * their own id, except for a refused request, where returning non-zero
 * lets rdma_cm do it; everything else is torn down by destroy_work, after
 * which no handler can run for the connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/in.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "lite_conn_internal.h"

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

/*
 * How long a peer that stops answering may take to fail the connections
 * (and the operations) to it: the RC ACK timeout and retries, and the RNR
 * timer and retries, are derived from it (lite_rc_timers.h). Read when a
 * connection is made; every node must use the same value.
 */
unsigned int lite_peer_timeout_ms = LITE_PEER_TIMEOUT_DEFAULT_MS;

static int lite_param_set_peer_timeout(const char *val,
				       const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, LITE_PEER_TIMEOUT_MIN_MS,
				     LITE_PEER_TIMEOUT_MAX_MS);
}

static const struct kernel_param_ops lite_peer_timeout_ops = {
	.set = lite_param_set_peer_timeout,
	.get = param_get_uint,
};

module_param_cb(peer_timeout_ms, &lite_peer_timeout_ops, &lite_peer_timeout_ms,
		0644);
MODULE_PARM_DESC(peer_timeout_ms,
		 "a peer that stops answering fails its connections within this, in ms, 100..60000 (default 1000); for connections made after a change");

void lite_conn_timers(struct rdma_cm_id *id, struct lite_rc_timers *t)
{
	int ret;

	lite_rc_timers_for(READ_ONCE(lite_peer_timeout_ms), t);
	/* Both apply when rdma_cm moves the QP to RTR and RTS. */
	ret = rdma_set_ack_timeout(id, t->ack_timeout);
	if (!ret)
		ret = rdma_set_min_rnr_timer(id, t->min_rnr_timer);
	if (ret)
		pr_warn_ratelimited("cannot set the RC timers: %d\n", ret);
}

/*
 * Connections closed and not yet torn down, in close order: a closed
 * connection is appended with the next sequence number, its teardown takes
 * it off, and lite_conns_wait_closed() waits until none closed up to its
 * own sequence number is left, i.e. the list's head came later or the
 * list is empty. A spinlock: destroy_work takes it off without lite_lock.
 */
static DEFINE_SPINLOCK(lite_conns_closing_lock);
static LIST_HEAD(lite_conns_closing);
static u64 lite_conns_close_seq;	/* under lite_conns_closing_lock */
static DECLARE_WAIT_QUEUE_HEAD(lite_conns_closed_wait);

static void lite_conn_closing_add(struct lite_conn *conn)
{
	spin_lock(&lite_conns_closing_lock);
	conn->close_seq = ++lite_conns_close_seq;
	list_add_tail(&conn->closing, &lite_conns_closing);
	spin_unlock(&lite_conns_closing_lock);
}

static void lite_conn_closing_done(struct lite_conn *conn)
{
	spin_lock(&lite_conns_closing_lock);
	list_del(&conn->closing);
	spin_unlock(&lite_conns_closing_lock);
	wake_up_all(&lite_conns_closed_wait);
}

/* Every connection closed with a sequence number up to @seq is torn down. */
static bool lite_conns_closed_upto(u64 seq)
{
	struct lite_conn *first;
	bool done;

	spin_lock(&lite_conns_closing_lock);
	first = list_first_entry_or_null(&lite_conns_closing, struct lite_conn,
					 closing);
	done = !first || first->close_seq > seq;
	spin_unlock(&lite_conns_closing_lock);
	return done;
}

int lite_conns_wait_closed(void)
{
	u64 seq;

	might_sleep();
	spin_lock(&lite_conns_closing_lock);
	seq = lite_conns_close_seq;
	spin_unlock(&lite_conns_closing_lock);
	return wait_event_killable(lite_conns_closed_wait,
				   lite_conns_closed_upto(seq));
}

/* The oldest connection whose teardown is not done, for the log. */
static void lite_conns_report_closing(void)
{
	struct lite_conn *first;

	spin_lock(&lite_conns_closing_lock);
	first = list_first_entry_or_null(&lite_conns_closing, struct lite_conn,
					 closing);
	if (first)
		pr_warn("waiting for the teardown of peer %s QP %u: %d operations still count in it\n",
			first->peer->label, first->index,
			atomic_read(&first->inflight));
	spin_unlock(&lite_conns_closing_lock);
}

void lite_conns_wait_closed_all(void)
{
	u64 seq;

	might_sleep();
	spin_lock(&lite_conns_closing_lock);
	seq = lite_conns_close_seq;
	spin_unlock(&lite_conns_closing_lock);
	while (!wait_event_timeout(lite_conns_closed_wait,
				   lite_conns_closed_upto(seq), 10 * HZ))
		lite_conns_report_closing();
}

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

/* After the QP: a CQ outlives the QPs that complete on it. */
static void lite_conn_free_cqs(struct lite_conn *conn)
{
	if (conn->send_cq)
		ib_free_cq(conn->send_cq);
	if (conn->recv_cq)
		ib_free_cq(conn->recv_cq);
	conn->send_cq = NULL;
	conn->recv_cq = NULL;
}

/*
 * The second half of a teardown, once no operation counts in the
 * connection (lite_conn_ops_put() queues it): the QP, its CQs and the
 * rdma_cm id go.
 */
static void lite_conn_reap_work(struct work_struct *work)
{
	struct lite_conn *conn = container_of(work, struct lite_conn,
					      reap_work);

	lite_conn_destroy_qp(conn);
	lite_conn_free_cqs(conn);
	rdma_destroy_id(conn->cm_id);
	lite_conn_closing_done(conn);
	lite_conn_put(conn);
}

void lite_conn_ops_drained(struct lite_conn *conn)
{
	/* Once: a late lookup may take the count from 0 and back. */
	if (!test_and_set_bit(0, &conn->reaped))
		queue_work(lite_wq, &conn->reap_work);
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
	if (conn->ldev)		/* and those waiting for a context */
		lite_transport_ops->conn_dying(conn->ldev);
	if (conn->established)
		rdma_disconnect(conn->cm_id);
	if (conn->qp_created) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		/* Even if the disconnect could not do it. */
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
	}
	/*
	 * The connection's own count: whoever drops the last one queues the
	 * rest (lite_conn_reap_work()). Nothing here waits for the
	 * operations, so a teardown never holds a lite_wq worker (review
	 * 2026-11-28 H1); lite_conns_wait_closed() and device removal wait
	 * for the reap instead.
	 */
	if (atomic_dec_and_test(&conn->inflight))
		lite_conn_ops_drained(conn);
}

/* A fatal QP event, reported from a context that cannot take lite_lock. */
static void lite_conn_error_work(struct work_struct *work)
{
	struct lite_conn *conn = container_of(work, struct lite_conn,
					      error_work);

	int reason = READ_ONCE(conn->fail_reason);

	mutex_lock(&lite_lock);
	if (conn->state != LITE_CONN_DEAD)
		lite_count(LITE_CNT_QP_ERRORS);
	if (reason == EHOSTDOWN)
		lite_peer_unreachable_locked(conn);
	else
		lite_conn_kill_locked(conn, reason ? reason : EIO, true);
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
	lite_conn_closing_add(conn);
	queue_work(lite_wq, &conn->destroy_work);
}

void lite_conn_fail(struct lite_conn *conn)
{
	/* The QP exists, so the destroy path still holds a reference. */
	kref_get(&conn->ref);
	if (!queue_work(lite_wq, &conn->error_work))
		lite_conn_put(conn);
}

void lite_conn_wc_error(struct lite_conn *conn, enum ib_wc_status status)
{
	/*
	 * Retries exhausted: the peer has not answered for peer_timeout_ms.
	 * A remote access error: the peer refused a grant's key, which is
	 * the grant's end (lite_grant_key_refused()), not the peer's. Any
	 * other error is this QP's (a local error). Ordered before
	 * error_work reads it by queue_work().
	 */
	if (status == IB_WC_RETRY_EXC_ERR || status == IB_WC_RNR_RETRY_EXC_ERR)
		cmpxchg(&conn->fail_reason, 0, EHOSTDOWN);
	else if (status == IB_WC_REM_ACCESS_ERR)
		cmpxchg(&conn->fail_reason, 0, ESTALE);
	lite_conn_fail(conn);
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

struct lite_conn *lite_conn_alloc(struct lite_peer *peer, u16 index,
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
	/* Its own count, which its teardown drops. */
	atomic_set(&conn->inflight, 1);
	init_waitqueue_head(&conn->wait);
	INIT_LIST_HEAD(&conn->closing);
	INIT_WORK(&conn->destroy_work, lite_conn_destroy_work);
	INIT_WORK(&conn->reap_work, lite_conn_reap_work);
	INIT_WORK(&conn->error_work, lite_conn_error_work);
	return conn;
}

/*
 * Undoes lite_conn_alloc() and the QP, for a conn that never got into its
 * peer's slot; rdma_cm destroys its id.
 */
void lite_conn_free_now(struct lite_conn *conn)
{
	conn->state = LITE_CONN_DEAD;
	lite_conn_destroy_qp(conn);
	lite_conn_free_cqs(conn);
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

/*
 * The CQ and the RC QP of @conn on @id's device, with the global-key PD.
 * @own: lite.ko's QP, left in INIT (rdma_cm does not move it); else
 * rdma_cm's (rdma_create_qp()), which it moves to RTR and RTS itself.
 */
int lite_conn_create_qp_locked(struct lite_conn *conn,
			       struct rdma_cm_id *id, bool own)
{
	struct ib_device *ibdev = id->device;
	struct ib_qp_init_attr attr = {};
	struct lite_device *ldev;
	int send_wr, recv_wr, cqe, vector, sge, ret;

	ldev = lite_device_get(ibdev);
	if (!ldev)
		return -ENODEV;
	conn->ldev = ldev;
	if (ldev->dying)
		return -ENODEV;

	send_wr = min(LITE_QP_SEND_WR, ibdev->attrs.max_qp_wr - 1);
	recv_wr = min(LITE_QP_RECV_WR, ibdev->attrs.max_qp_wr - 1);
	/* One entry more each than the queues: ib_drain_qp()'s markers. */
	cqe = min(send_wr + 1, ibdev->attrs.max_cqe);
	vector = conn->index % max(ibdev->num_comp_vectors, 1);
	conn->send_cq = ib_alloc_cq(ibdev, conn, cqe, vector, IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->send_cq)) {
		ret = PTR_ERR(conn->send_cq);
		conn->send_cq = NULL;
		return ret;
	}
	cqe = min(recv_wr + 1, ibdev->attrs.max_cqe);
	conn->recv_cq = ib_alloc_cq(ibdev, conn, cqe, vector, IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->recv_cq)) {
		ret = PTR_ERR(conn->recv_cq);
		conn->recv_cq = NULL;
		return ret;
	}

	attr.event_handler = lite_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->send_cq;
	attr.recv_cq = conn->recv_cq;
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
	conn->recv_wrs = recv_wr;
	/* The extra entry stays free, as for ib_drain_qp(). */
	atomic_set(&conn->sq_credits, send_wr);
	/* As rdma_create_qp() leaves its QPs: INIT takes no traffic yet. */
	if (own) {
		ret = lite_conn_qp_to(conn, IB_QPS_INIT);
		if (ret)
			return ret;
	}
	/* Receives before the peer can send: none finds an empty queue. */
	return lite_transport_ops->conn_qp_ready(conn);
}

u8 lite_rd_atomic(int device_max)
{
	return clamp(device_max, 0, LITE_RD_ATOMIC_MAX);
}

/* A negative errno from an rdma_cm event's status, else @fallback. */
static int lite_status_errno(int status, int fallback)
{
	return status < 0 && status > -MAX_ERRNO ? -status : fallback;
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
	struct lite_rc_timers timers;
	struct lite_node_id self;
	struct lite_cm_req req;
	bool own;
	int ret;

	if (!lite_node_get_locked(&self))
		return -ENXIO;
	/* Before the QP: lite_conn_qp_to() takes its attributes from the id. */
	lite_conn_timers(id, &timers);
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
	src.flags = conn->ldev->atomics ? 0 : LITE_CM_NO_ATOMICS;
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
	/* Both ends' retries come from the REQ; our RNR retries from the REP. */
	param.retry_count = timers.retry_count;
	param.rnr_retry_count = timers.rnr_retry_count;
	return rdma_connect_locked(id, &param);
}

void lite_conn_up_locked(struct lite_conn *conn)
{
	conn->state = LITE_CONN_UP;
	conn->established = true;
	/* Publishes the QP and its queue accounting to the data path. */
	smp_store_release(&conn->ops_ready, true);
	lite_peer_conn_up_locked(conn);
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
