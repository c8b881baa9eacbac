// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the acceptor's side of a connection, on the node's listener
 * (lite_node.c): check every field of a request against this node's
 * identity and peer table, create the CQ and QP, accept with a struct
 * lite_cm_rep (version 2: struct lite_cm_rep2, its MAC answering the
 * request's); refuse with a struct lite_cm_rej (lite_cm_rej2) that says
 * why, and count, remember and log the refusal. Who may connect at all
 * (the source port, the challenge-response) is lite_peer_auth.c's.
 *
 * Only a request that passed every check replaces the connection in its
 * slot; a refused one leaves the slot's QP alone. A request from this
 * node's own loopback peer is accepted too; its accepting end is kept in
 * the peer's accepted[] and never used for operations.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <rdma/ib_cm.h>

#include "lite_conn_internal.h"

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
	struct lite_cm_node me = *self;
	struct lite_conn *conn, *old;
	struct lite_rc_timers timers;
	struct lite_cm_rep2 rep2;
	struct lite_cm_rep rep;
	int ret;

	conn = lite_conn_alloc(peer, index, false);
	if (!conn)
		return LITE_REJ_NO_RESOURCES;
	conn->cm_id = id;
	/* Our ACK timeout and RNR timer; the retry counts came in the REQ. */
	lite_conn_timers(id, &timers);
	ret = lite_conn_create_qp_locked(conn, id, false);
	if (!ret) {
		/* Atomics: what we lack in the reply, what it lacks from its request. */
		me.flags = conn->ldev->atomics ? 0 : LITE_CM_NO_ATOMICS;
		conn->no_atomics = lite_cm_req_flags(ev->param.conn.private_data,
						     lite_peer_auth) &
				   LITE_CM_NO_ATOMICS;
	}
	if (!ret && lite_peer_auth)
		ret = lite_cm_fill_rep2(&rep2, &me,
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
		lite_cm_fill_rep(&rep, &me, index);
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
	/* The initiator's QP retries RNR this often (it is in our REP). */
	param.rnr_retry_count = timers.rnr_retry_count;
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
 * refused request changes nothing but, when none was outstanding, the
 * challenge of its slot (lite_wire.h): the QP connected there stays.
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
