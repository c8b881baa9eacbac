/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: what the connection's files share, and nobody else sees: the
 * connection itself and the initiator (lite_conn.c), who may connect
 * (lite_peer_auth.c) and the acceptor (lite_conn_accept.c). Everything
 * here runs in process context under lite_lock.
 */
#ifndef LITE_CONN_INTERNAL_H
#define LITE_CONN_INTERNAL_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "lite_conn.h"
#include "lite_wire.h"

/* lite_conn.c: the connection, the initiator's steps, the event handler. */

/* A new CONNECTING connection for QP @index of @peer, holding a reference. */
struct lite_conn *lite_conn_alloc(struct lite_peer *peer, u16 index,
				  bool active);
/* Undoes lite_conn_alloc() and the QP, for a conn never in its slot. */
void lite_conn_free_now(struct lite_conn *conn);
/*
 * The CQ and the RC QP of @conn on @id's device; @own: lite.ko's QP, left
 * in INIT, else rdma_cm's.
 */
int lite_conn_create_qp_locked(struct lite_conn *conn,
			       struct rdma_cm_id *id, bool own);
/* RDMA READ/atomic depth: the device's @device_max, capped. */
u8 lite_rd_atomic(int device_max);
/*
 * The RC timers for peer_timeout_ms, set on @id (ACK timeout, RNR timer)
 * for rdma_cm to apply to the QP; the retry counts are the caller's to put
 * in its conn param.
 */
void lite_conn_timers(struct rdma_cm_id *id, struct lite_rc_timers *t);
/* @conn is established: publishes it to the data path and its peer. */
void lite_conn_up_locked(struct lite_conn *conn);

/* lite_peer_auth.c: the privileged port and the challenge-response. */

/* Binds @id to @addr and a privileged source port. */
int lite_conn_bind_locked(struct rdma_cm_id *id, __be32 addr);
/*
 * A request on @id from @peer's address and a privileged port: 0 or a
 * REJ reason.
 */
int lite_conn_check_from(const struct rdma_cm_id *id,
			 const struct lite_peer *peer);
/*
 * Checks a version 2 request, issuing or consuming its slot's challenge:
 * 0 and the peer and index, or a REJ reason (and the peer, once known).
 */
int lite_conn_check_req2_locked(struct rdma_cm_id *id,
				const struct rdma_cm_event *ev,
				const struct lite_cm_node *self,
				struct lite_peer **peerp, u16 *indexp);
/* The initiator's check of the reply in @ev: 0 or a negative errno. */
int lite_conn_check_reply_locked(struct lite_conn *conn,
				 const struct rdma_cm_event *ev);
/* Moves @conn's own QP to @state with the attributes rdma_cm has for it. */
int lite_conn_qp_to(struct lite_conn *conn, enum ib_qp_state state);
/* CONNECT_RESPONSE: checks the reply, then INIT, RTR, RTS and the RTU. */
void lite_conn_response_locked(struct lite_conn *conn,
			       const struct rdma_cm_event *ev);

#endif /* LITE_CONN_INTERNAL_H */
