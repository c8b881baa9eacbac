// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: taking a connected QP for work requests: the lock-free lookup the
 * one-sided operations, RPC, QoS and the peer probe share. A taker holds
 * the connection's inflight count, which its teardown waits for
 * (lite_conn_destroy_work()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/rcupdate.h>

#include "lite_conn.h"

void lite_conn_ops_put(struct lite_conn *conn)
{
	rcu_read_lock();
	/* 0 only once its teardown dropped the connection's own count. */
	if (atomic_dec_and_test(&conn->inflight))
		lite_conn_ops_drained(conn);
	rcu_read_unlock();
}

int lite_conn_ops_get_from(u32 home, u64 epoch, unsigned int first,
			   struct lite_conn **out)
{
	unsigned int k = READ_ONCE(lite_qps_per_peer), i;
	struct lite_peer *peer;
	struct lite_conn *conn;
	int ret = -EHOSTDOWN;

	rcu_read_lock();
	peer = lite_peer_lookup_rcu(home);
	if (!peer || peer->incarnation < epoch)
		goto out;
	if (epoch && peer->incarnation > epoch) {
		/* The home restarted: its memory behind this grant is gone. */
		ret = -ESTALE;
		goto out;
	}
	for (i = 0; i < k; i++) {
		conn = rcu_dereference(peer->conns[(first + i) % k]);
		/* Acquire: the QP and its accounting are set up before it. */
		if (!conn || !smp_load_acquire(&conn->ops_ready))
			continue;
		atomic_inc(&conn->inflight);
		/* Pairs with the smp_mb() in lite_conn_destroy_work(). */
		smp_mb__after_atomic();
		if (READ_ONCE(conn->ops_dying)) {
			lite_conn_ops_put(conn);
			continue;
		}
		*out = conn;
		ret = 0;
		break;
	}
out:
	rcu_read_unlock();
	return ret;
}

bool lite_sq_take(struct lite_conn *conn, int n)
{
	int old = atomic_read(&conn->sq_credits);

	do {
		if (old < n)
			return false;
	} while (!atomic_try_cmpxchg(&conn->sq_credits, &old, old - n));
	return true;
}
