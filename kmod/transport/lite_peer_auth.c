// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: who may connect a QP to this node, and to whom this node's QPs
 * connect (lite_conn.c has the connections, lite_conn_accept.c the
 * acceptor's other checks).
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
 *
 * Here: the initiator's privileged source port and the acceptor's check
 * of it, the acceptor's check of a version 2 request (the challenge issued
 * and consumed, the MAC verified), the initiator's check of the reply, and
 * the authenticated initiator's own QP moved INIT, RTR, RTS by hand once
 * that reply has passed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <rdma/ib_cm.h>

#include "lite_conn_internal.h"

/* Privileged ports tried per connection attempt before giving up on it. */
#define LITE_BIND_TRIES 16

/*
 * Binds @id to @addr and a privileged source port, the acceptor's first
 * check (LITE_REJ_PORT). rdma_cm gives ports below 1024 to
 * CAP_NET_BIND_SERVICE only (cma_use_port()); this runs in lite_wq's
 * kworkers, with the kernel's credentials. lite.ko's ids share ports
 * (reuseaddr), so a port is busy only when another kernel user of rdma_cm
 * holds it without reuseaddr: then the next is tried. The rotating start
 * spreads connections over the range (iWARP's TCP needs distinct 4-tuples).
 */
int lite_conn_bind_locked(struct rdma_cm_id *id, __be32 addr)
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

/*
 * Where a request on @id comes from: the peer's address, and a privileged
 * port (rdma_cm puts the initiator's bound port in its header; only
 * CAP_NET_BIND_SERVICE gets one below 1024). Port 0 is no bound port.
 */
int lite_conn_check_from(const struct rdma_cm_id *id,
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
 * Checks a version 2 request, cheapest first; the secret is touched only
 * for a request from the peer's address and a privileged port. A first
 * request gets a challenge (LITE_REJ_CHALLENGE); an answer must carry the
 * one outstanding for its slot, which it consumes, right or wrong, and a
 * MAC over both identities, this node's incarnation included. 0 and the
 * peer and index, or a REJ reason (and the peer, once the request named a
 * known one).
 */
int lite_conn_check_req2_locked(struct rdma_cm_id *id,
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
	/* What a forged request can and cannot do here: lite_wire.h. */
	if (!req.challenge) {
		lite_cm_challenge_for_first(challenge, get_random_u64(), now);
		return LITE_REJ_CHALLENGE;
	}
	if (!lite_cm_challenge_matches(challenge, req.challenge, now))
		return LITE_REJ_AUTH;
	why = lite_cm_verify_req2(data, self, lite_peer_mac, peer->mac_tfm);
	if (!why)
		lite_cm_challenge_consume(challenge);
	return why;
}

/*
 * The initiator's check of the acceptor's reply: it must come from the peer
 * and incarnation we meant and, authenticated, answer our very request
 * under the pair's secret. 0 or a negative errno (-EKEYREJECTED: the MAC).
 */
int lite_conn_check_reply_locked(struct lite_conn *conn,
				 const struct rdma_cm_event *ev)
{
	struct lite_peer *peer = conn->peer;
	struct lite_cm_node node = {
		.id = peer->node_id,
		.incarnation = peer->incarnation,
	};
	int ret;

	if (!lite_peer_auth)
		ret = lite_cm_check_rep(ev->param.conn.private_data,
					ev->param.conn.private_data_len,
					&node, conn->index);
	else
		ret = lite_cm_check_rep2(ev->param.conn.private_data,
					 ev->param.conn.private_data_len, &node,
					 &conn->req, lite_peer_mac,
					 peer->mac_tfm);
	if (!ret) {
		/* Before ops_ready: the data path reads it without a lock. */
		conn->no_atomics = lite_cm_rep_flags(ev->param.conn.private_data,
						     lite_peer_auth) &
				   LITE_CM_NO_ATOMICS;
	} else if (ret == -EKEYREJECTED) {
		lite_count(LITE_CNT_REP_AUTH_FAILED);
		lite_peer_refused_locked(peer, LITE_REFUSAL_REPLY_AUTH,
					 LITE_REFUSED_BY_NODE);
		pr_warn_ratelimited("peer %s QP %u: the reply failed authentication (pair secret mismatch?)\n",
				    peer->label, conn->index);
	} else {
		pr_warn_ratelimited("peer %s QP %u: bad reply (error %d)\n",
				    peer->label, conn->index, ret);
	}
	return ret;
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

/* Moves @conn's own QP to @state with the attributes rdma_cm has for @id. */
int lite_conn_qp_to(struct lite_conn *conn, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = 0, ret;

	ret = rdma_init_qp_attr(conn->cm_id, &attr, &mask);
	if (!ret)
		ret = ib_modify_qp(conn->qp, &attr, mask);
	return ret;
}

/*
 * CONNECT_RESPONSE: the reply to an authenticated request, on IB and RoCE,
 * where our own QP is still in INIT: it takes no packet before the reply
 * is proven. Then INIT, RTR, RTS as rdma_cm would (cma_rep_recv()) and the
 * RTU, which rdma_accept() sends on the active side.
 */
void lite_conn_response_locked(struct lite_conn *conn,
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
