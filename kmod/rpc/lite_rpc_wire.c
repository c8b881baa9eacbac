// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC on the wire: every connection keeps receives posted for the
 * immediates peers send (a receive has no buffer: a WRITE_WITH_IMM's bytes
 * go where its sender wrote them, and a SEND_WITH_IMM of RPC carries none),
 * each completion is dispatched by its immediate (lite_rpc_imm.h) and the
 * connection's peer, and sends are posted on a peer's connections with the
 * same accounting as one-sided operations (inflight, send queue entries).
 *
 * A service's traffic to one client (replies, credits, GONE) goes on the
 * QP the port picks when it is up, so it arrives in the order it was sent
 * and on one CQ: GONE never overtakes a reply.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>

#include "ops/lite_ops_internal.h"
#include "lite_rpc_internal.h"

static int lite_rpc_wc_errno(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return 0;
	case IB_WC_REM_ACCESS_ERR:
		/* The ring or reply slots are gone at the other end. */
		return -ECONNREFUSED;
	default:
		return -EHOSTDOWN;
	}
}

int lite_rpc_send_end(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_conn *conn = cq->cq_context;

	atomic_inc(&conn->sq_credits);
	if (wq_has_sleeper(&conn->wait))
		wake_up(&conn->wait);
	if (wc->status != IB_WC_SUCCESS) {
		lite_rpc_stat(LITE_RPC_ST_SEND_ERRORS);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			lite_conn_wc_error(conn, wc->status);
	}
	lite_conn_ops_put(conn);
	return lite_rpc_wc_errno(wc->status);
}

/*
 * An up connection to @node (incarnation @inc, 0: any) with a send queue
 * entry, counted in its inflight: QP @pref first (lite_ops.c's lookup).
 */
static int lite_rpc_conn_get(u32 node, u64 inc, unsigned int pref,
			     struct lite_conn **out)
{
	int ret = lite_conn_ops_get_from(node, inc, pref, out);

	if (ret)
		return ret == -ESTALE ? -EHOSTDOWN : ret;
	if (!lite_sq_take(*out, 1)) {
		lite_conn_ops_put(*out);
		return -EAGAIN;
	}
	return 0;
}

int lite_rpc_post(u32 node, u64 inc, unsigned int pref, struct ib_cqe *cqe,
		  const struct lite_rpc_mem *mem, u64 dma, u32 len, u64 raddr,
		  u32 rkey, u32 imm)
{
	struct ib_rdma_wr wr = {};
	struct lite_conn *conn;
	struct ib_sge sge;
	int ret;

	ret = lite_rpc_conn_get(node, inc, pref, &conn);
	if (ret)
		return ret;
	wr.wr.wr_cqe = cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = cpu_to_be32(imm);
	if (len) {
		/* The device must be the one the bytes are mapped on. */
		if (WARN_ON_ONCE(conn->ldev != mem->ldev)) {
			ret = -EHOSTDOWN;
			goto err;
		}
		sge.addr = dma;
		sge.length = len;
		sge.lkey = mem->lkey;
		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wr.remote_addr = raddr;
		wr.rkey = rkey;
	} else {
		/* No bytes: a send of nothing, no remote address to check. */
		wr.wr.opcode = IB_WR_SEND_WITH_IMM;
	}
	ret = ib_post_send(conn->qp, &wr.wr, NULL);
	if (ret) {
		ret = -EHOSTDOWN;
		goto err;
	}
	return 0;
err:
	atomic_inc(&conn->sq_credits);
	lite_conn_ops_put(conn);
	lite_rpc_stat(LITE_RPC_ST_SEND_ERRORS);
	return ret;
}

static void lite_rpc_ctrl_done(struct ib_cq *cq, struct ib_wc *wc)
{
	lite_rpc_send_end(cq, wc);
}

static struct ib_cqe lite_rpc_ctrl_cqe = { .done = lite_rpc_ctrl_done };

int lite_rpc_post_ctrl(u32 node, u64 inc, unsigned int pref, u32 imm)
{
	return lite_rpc_post(node, inc, pref, &lite_rpc_ctrl_cqe, NULL, 0, 0,
			     0, 0, imm);
}

/* ---- receives ---- */

static int lite_rpc_post_recv(struct lite_conn *conn)
{
	struct ib_recv_wr wr = {
		.wr_cqe = &conn->rpc_recv_cqe,
		.num_sge = 0,
	};

	return ib_post_recv(conn->qp, &wr, NULL);
}

static void lite_rpc_dispatch(u32 node, const struct lite_rpc_imm *m,
			      u32 len)
{
	switch (m->kind) {
	case LITE_RPC_KIND_CALL:
	case LITE_RPC_KIND_MSG:
		lite_rpc_service_arrival(node, m->port,
					 m->kind == LITE_RPC_KIND_MSG, m->slot,
					 len);
		break;
	case LITE_RPC_KIND_REPLY:
		lite_rpc_binding_reply(node, m->port, m->code, m->slot, len);
		break;
	default:
		if (m->code == LITE_RPC_CTRL_CREDIT)
			lite_rpc_binding_credit(node, m->port, m->slot);
		else if (m->code == LITE_RPC_CTRL_GONE)
			lite_rpc_binding_gone(node, m->port);
		else
			lite_rpc_service_released(node, m->port);
		break;
	}
}

static void lite_rpc_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_conn *conn = cq->cq_context;
	struct lite_rpc_imm m;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			lite_conn_wc_error(conn, wc->status);
		return;
	}
	if ((wc->wc_flags & IB_WC_WITH_IMM) &&
	    lite_rpc_imm_decode(be32_to_cpu(wc->ex.imm_data), &m))
		lite_rpc_dispatch(conn->peer->node_id, &m, wc->byte_len);
	else
		lite_rpc_stat(LITE_RPC_ST_DROPPED);

	/* Counted, so that the teardown does not destroy the QP under us. */
	atomic_inc(&conn->inflight);
	/* Pairs with the smp_mb() in lite_conn_destroy_work(). */
	smp_mb__after_atomic();
	if (!READ_ONCE(conn->ops_dying) && lite_rpc_post_recv(conn))
		lite_conn_fail(conn);
	lite_conn_ops_put(conn);
}

int lite_rpc_conn_post_recvs(struct lite_conn *conn)
{
	u32 i;
	int ret;

	conn->rpc_recv_cqe.done = lite_rpc_recv_done;
	for (i = 0; i < conn->recv_wrs; i++) {
		ret = lite_rpc_post_recv(conn);
		if (ret)
			return ret;
	}
	return 0;
}

void lite_rpc_peer_down_locked(u32 node_id)
{
	lockdep_assert_held(&lite_lock);
	lite_rpc_bindings_peer_down(node_id);
	lite_rpc_services_peer_down(node_id);
}
