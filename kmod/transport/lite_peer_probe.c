// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: is a peer's kernel alive? (LITE_CMD_PEER_PROBE)
 *
 * The cluster manager judges a node by its agent's heartbeats, which stop
 * when the agent is stopped or starved even though the node's lite.ko, and
 * every mapping into its memory, still work. Before failing a node by its
 * lease alone the manager asks the node's peers, as SWIM's indirect probes
 * do (docs/controlplane.md). A peer answers with this probe: a zero-byte
 * RDMA WRITE on one of its RC connections to the node, which needs no key
 * or address (IBTA C9-88) and is acknowledged by the node's RDMA device
 * (its kernel, for a software provider) whatever its user space does. A
 * node that is gone does not acknowledge: the RC retries run out within
 * peer_timeout_ms and the connection is failed, as for any operation.
 *
 * The probe counts in the connection like an operation (its teardown waits
 * for the work request) and takes one send credit; it needs no operation
 * context, so a probe works while every context is busy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/smp.h>
#include <net/genetlink.h>

#include "lite_conn.h"
#include "lite_peer_probe.h"

struct lite_probe {
	struct ib_cqe cqe;
	struct completion done;
	struct lite_conn *conn;
	/* The waiter's and the work request's: a waiter may give up first. */
	refcount_t refs;
	int status;
};

static void lite_probe_put(struct lite_probe *probe)
{
	if (refcount_dec_and_test(&probe->refs))
		kfree(probe);
}

/* The send CQ's poller (softirq). */
static void lite_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_probe *probe = container_of(wc->wr_cqe, struct lite_probe,
						cqe);
	struct lite_conn *conn = probe->conn;

	if (wc->status != IB_WC_SUCCESS) {
		WRITE_ONCE(probe->status, -EHOSTDOWN);
		/* The QP is in the error state now: replace it. */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			lite_conn_wc_error(conn, wc->status);
	}
	atomic_inc(&conn->sq_credits);
	if (wq_has_sleeper(&conn->wait))
		wake_up(&conn->wait);
	complete(&probe->done);
	lite_conn_ops_put(conn);
	lite_probe_put(probe);
}

/* Longest a probe waits: the RC transport's verdict, with some slack. */
static unsigned long lite_probe_jiffies(void)
{
	return msecs_to_jiffies(2 * READ_ONCE(lite_peer_timeout_ms) + 1000);
}

/* Takes a send credit of @conn, waiting for one until @deadline. */
static int lite_probe_credit(struct lite_conn *conn, unsigned long deadline)
{
	bool took = lite_sq_take(conn, 1);
	long t;

	if (took)
		return 0;
	t = wait_event_killable_timeout(conn->wait,
					(took = lite_sq_take(conn, 1)) ||
					READ_ONCE(conn->ops_dying),
					max_t(long, 1, (long)(deadline - jiffies)));
	if (t < 0)
		return -EINTR;
	if (took)
		return 0;
	return t ? -EHOSTDOWN : -ETIMEDOUT;
}

int lite_peer_probe(u32 node_id, u64 *incarnation, u64 *round_trip_ns)
{
	unsigned long deadline = jiffies + lite_probe_jiffies();
	struct ib_rdma_wr wr = {};
	struct lite_probe *probe;
	struct lite_peer *peer;
	struct lite_conn *conn;
	u64 start;
	long t;
	int ret;

	rcu_read_lock();
	peer = lite_peer_lookup_rcu(node_id);
	rcu_read_unlock();
	if (!peer)
		return -ENOENT;
	/* Any incarnation: the answer names the one that acknowledged. */
	ret = lite_conn_ops_get_from(node_id, 0, raw_smp_processor_id(), &conn);
	if (ret)
		return ret;
	ret = lite_probe_credit(conn, deadline);
	if (ret)
		goto put_conn;
	if (READ_ONCE(conn->ops_dying)) {
		ret = -EHOSTDOWN;
		goto put_credit;
	}
	probe = kzalloc(sizeof(*probe), GFP_KERNEL);
	if (!probe) {
		ret = -ENOMEM;
		goto put_credit;
	}
	probe->cqe.done = lite_probe_done;
	probe->conn = conn;
	init_completion(&probe->done);
	refcount_set(&probe->refs, 2);
	*incarnation = conn->peer->incarnation;

	wr.wr.wr_cqe = &probe->cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	start = ktime_get_ns();
	ret = ib_post_send(conn->qp, &wr.wr, NULL);
	if (ret) {
		pr_warn_ratelimited("peer %s QP %u: cannot post a probe: %d\n",
				    conn->peer->label, conn->index, ret);
		kfree(probe);
		ret = -EIO;
		goto put_credit;
	}
	/* From here the completion gives the credit and the count back. */
	t = wait_for_completion_killable_timeout(&probe->done,
						 max_t(long, 1,
						       (long)(deadline - jiffies)));
	if (t > 0) {
		ret = READ_ONCE(probe->status);
		*round_trip_ns = ktime_get_ns() - start;
	} else {
		ret = t ? -EINTR : -ETIMEDOUT;
	}
	lite_probe_put(probe);
	return ret;

put_credit:
	atomic_inc(&conn->sq_credits);
	if (wq_has_sleeper(&conn->wait))
		wake_up(&conn->wait);
put_conn:
	lite_conn_ops_put(conn);
	return ret;
}

int lite_nl_peer_probe(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[LITE_ATTR_NODE_ID];
	u64 incarnation = 0, round_trip_ns = 0;
	struct sk_buff *msg;
	u32 node_id;
	void *hdr;
	int ret;

	if (!attr || !nla_get_u32(attr)) {
		GENL_SET_ERR_MSG(info, "PEER_PROBE needs LITE_ATTR_NODE_ID, not 0");
		return -EINVAL;
	}
	node_id = nla_get_u32(attr);
	ret = lite_peer_probe(node_id, &incarnation, &round_trip_ns);
	if (ret == -ENOENT)
		GENL_SET_ERR_MSG(info, "no such peer");
	else if (ret == -EHOSTDOWN)
		GENL_SET_ERR_MSG(info, "the peer did not acknowledge, or has no connected QP");
	if (ret)
		return ret;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &lite_genl_family, 0,
				LITE_CMD_PEER_PROBE);
	if (!hdr ||
	    nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_INCARNATION, incarnation,
			      LITE_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_PROBE_NS, round_trip_ns,
			      LITE_ATTR_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}
