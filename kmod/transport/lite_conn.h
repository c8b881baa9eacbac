/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: one RC connection (rdma_cm id, CQ, QP) to a peer, for the files
 * that reach into one: the connection's own (lite_conn.c,
 * lite_peer_auth.c, lite_conn_accept.c), the peer table (lite_peer.c),
 * which starts and ends connections, and the data path (lite_ops*.c,
 * through lite_ops_internal.h), which posts on their QPs. The rdma_cm
 * handlers the listener calls are in lite_transport.h.
 */
#ifndef LITE_CONN_H
#define LITE_CONN_H

#include "lite_transport.h"
#include "lite_rc_timers.h"

enum lite_conn_state {
	LITE_CONN_CONNECTING,	/* resolving, connecting or accepting */
	LITE_CONN_UP,		/* established */
	LITE_CONN_DEAD,		/* out of its peer's slot; teardown queued */
};

/*
 * Until it is DEAD a connection sits in peer->conns[index]. Its verbs
 * resources and rdma_cm id are torn down by destroy_work; the structure
 * lives on while error_work holds a reference.
 */
struct lite_conn {
	/*
	 * Held by the rdma_cm id's lifetime and by a queued error_work.
	 * Freed after an RCU grace period (see struct lite_peer).
	 */
	struct kref ref;
	struct rcu_head rcu;
	struct lite_peer *peer;		/* holds a reference */
	struct rdma_cm_id *cm_id;
	struct lite_device *ldev;	/* with a reference, once the QP exists */
	/*
	 * Send completions (one-sided operations, RPC sends), which a waiting
	 * caller may reap itself (lite_spin_wait()), and receive completions
	 * (RPC), which only the softirq handles, in order.
	 */
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct work_struct destroy_work;
	/* The QP's end, once @inflight is 0 (bit 0 of @reaped: queued). */
	struct work_struct reap_work;
	unsigned long reaped;
	struct work_struct error_work;	/* a fatal QP event: fail the conn */
	/*
	 * From its close until destroy_work has destroyed its QP, on the
	 * closing list in close order, @close_seq its place
	 * (lite_conns_wait_closed(); under lite_conns_closing_lock).
	 */
	struct list_head closing;
	u64 close_seq;
	u16 index;
	bool active;			/* this node initiated it */
	/*
	 * Why a completion failed the QP (lite_conn_wc_error(), any
	 * context): EHOSTDOWN when the peer stopped answering, ESTALE when
	 * it refused a grant's key, read by error_work. 0: any other fatal
	 * error.
	 */
	int fail_reason;
	/*
	 * The QP is lite.ko's, not rdma_cm's (ib_create_qp(), not
	 * rdma_create_qp()): an authenticating initiator moves it out of INIT
	 * itself, only once the reply is verified.
	 */
	bool own_qp;
	/* Under lite_lock. */
	enum lite_conn_state state;
	bool qp_created;
	bool established;		/* was up at some point */
	u64 answer;			/* initiator (peer_auth): the challenge to answer */
	struct lite_cm_req2 req;	/* initiator (peer_auth): the request sent */

	/*
	 * One-sided operations (lite_ops.c). An operation counts itself in
	 * inflight from before it posts until its last work request has
	 * completed and its buffers are unmapped; the connection holds one
	 * count of its own until its teardown, which sets ops_dying, moves
	 * the QP to error (which flushes everything posted) and drops it:
	 * the put that brings inflight to 0 queues reap_work, which destroys
	 * the QP and CQs.
	 */
	struct ib_qp *qp;
	bool ops_ready;			/* up: operations may start (acquire/release) */
	bool ops_dying;			/* teardown started (READ_ONCE) */
	atomic_t inflight;
	atomic_t sq_credits;		/* free send queue entries */
	u32 max_sge;			/* SGEs per RDMA READ/WRITE work request */
	/*
	 * The other end's global key takes no remote atomics (LITE_CM_NO_ATOMICS
	 * in its request or reply): FAA and CAS fail with EOPNOTSUPP before
	 * they reach it, since its NAK would put this shared QP in error.
	 */
	bool no_atomics;
	wait_queue_head_t wait;		/* inflight reaching 0, credits coming back */

	/*
	 * RPC (lite_rpc_wire.c): receives with no buffer, for the
	 * immediates of the WRITE_WITH_IMMs and SEND_WITH_IMMs peers post.
	 */
	struct ib_cqe rpc_recv_cqe;
	u32 recv_wrs;			/* receives kept posted */
};

/* A slot of conns[] or accepted[], read under lite_lock. */
#define lite_slot_locked(slot) \
	rcu_dereference_protected(slot, lockdep_is_held(&lite_lock))

/*
 * Starts connecting QP @index of @peer, answering @challenge (0: a first
 * request). Under lite_lock, in process context with CAP_NET_BIND_SERVICE
 * (lite_wq): it binds a privileged source port.
 */
int lite_conn_start_locked(struct lite_peer *peer, u16 index, u64 challenge);
/* Takes @conn out of its peer's slot and queues its teardown. */
void lite_conn_kill_locked(struct lite_conn *conn, int reason, bool report);
/* Marks @conn DEAD and queues its teardown; the caller cleared the slot. */
void lite_conn_close_locked(struct lite_conn *conn);
/* A failed work request: kill the connection from any context. */
void lite_conn_fail(struct lite_conn *conn);
/*
 * A work request of @conn completed with @status (not success, not a
 * flush): kill the connection from any context and, when the peer stopped
 * answering (retries exhausted), every connection to that peer.
 */
void lite_conn_wc_error(struct lite_conn *conn, enum ib_wc_status status);
/*
 * @conn's peer stopped answering: fail all of its connections with
 * EHOSTDOWN and report it (lite_peer.c).
 */
void lite_peer_unreachable_locked(struct lite_conn *conn);

/*
 * Returns once every connection closed before the call (its peer removed
 * or failed, its device removed, itself failed or refused) has had its
 * teardown done: its QP moved to the error state, every work request on it
 * completed (flushed) and the operations they belong to ended, and the QP,
 * CQ and rdma_cm id destroyed. So no work request of this node posted on
 * those connections is outstanding, and the peers' requests to this node
 * over them can no longer be executed. What it does not cover: connections
 * still up, and those whose failure is only queued (error_work) at the
 * call, which are closed afterwards: remove the peer first (PEER_REMOVE
 * closes its connections under lite_lock), then call this.
 *
 * -EINTR on a fatal signal, else 0. Process context, holding no lock that
 * the rdma_cm handlers (lite_lock) or lite_wq's works take: a teardown
 * waits for a handler still running (rdma_destroy_id()). It waits on the
 * teardowns only, not on lite_wq as a whole (whose other works may wait
 * for netlink callers), and a teardown waits for nothing but the flush of
 * its own QP and the operations counted in the connection to end, which
 * never wait for a user page fault (lite_ops_buf.c).
 */
int lite_conns_wait_closed(void);

/*
 * Every operation counted in @conn is over and its teardown has begun:
 * queues the rest of the teardown (lite_conn_ops_put(), any context, under
 * RCU).
 */
void lite_conn_ops_drained(struct lite_conn *conn);
/*
 * lite_conns_wait_closed() not killable, for device removal and module
 * unload, whose callers cannot give up: logs what it still waits for
 * every 10 s.
 */
void lite_conns_wait_closed_all(void);

/* peer_timeout_ms (lite_conn.c): see lite_rc_timers.h. */
extern unsigned int lite_peer_timeout_ms;

/* lite_conn_ops.c */
/*
 * A connected QP to @home, counted in its inflight: lock-free, under RCU,
 * trying its QPs from index @first (mod qps_per_peer). -EHOSTDOWN if the
 * node is unknown, older than @epoch, or has no connection up; -ESTALE if
 * it is newer (a restarted home). @epoch 0: any incarnation.
 */
int lite_conn_ops_get_from(u32 home, u64 epoch, unsigned int first,
			   struct lite_conn **out);
/* Takes @n free send queue entries of @conn, or none (false). */
bool lite_sq_take(struct lite_conn *conn, int n);
/* Drops a connection's inflight count; the conn is freed after RCU. */
void lite_conn_ops_put(struct lite_conn *conn);

#endif /* LITE_CONN_H */
