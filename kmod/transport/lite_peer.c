// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the peer table and each peer's connection state.
 *
 * A peer is another node LITE keeps qps_per_peer RC connections to. Of each
 * pair, the node with the smaller id initiates all connections and retries
 * failed ones with a bounded, jittered exponential backoff for as long as
 * the peer is wanted; the other node only accepts (lite_conn_accept.c).
 * The peer is CONNECTED while all of its connections are up. A new
 * incarnation of a peer is a new struct lite_peer: the old one is detached
 * from the table, its connections torn down, and its late rdma_cm events
 * find it removed.
 *
 * This node itself is a peer too, outside the table: the loopback peer
 * connects qps_per_peer RC QPs to the node's own listener, so operations on
 * LMRs this node hosts go through its RDMA device like every other, and
 * their atomics are atomic with respect to those of remote nodes. It sends
 * no events and is counted apart (loopback_qps).
 *
 * The data path looks peers and their connections up under RCU, with no
 * lock: the table is an xarray, conns[] is published with
 * rcu_assign_pointer() and cleared before the connection's teardown is
 * queued, and peers and connections are freed after a grace period.
 *
 * With peer_auth, each peer holds the pair secret as a keyed hmac(sha256)
 * transform (lite_conn*.c use it under lite_lock), the acceptor's
 * outstanding challenge per QP index and the initiator's challenge to
 * answer per index; a peer without a secret is not connected to.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "lite_conn.h"
#include "lite_transport.h"

/* Initiator retry delays: doubled after each failure, jitter added. */
#define LITE_RETRY_MIN_MS 100
#define LITE_RETRY_MAX_MS 2000

/* node id -> struct lite_peer; changed under lite_lock. */
static DEFINE_XARRAY(lite_peers);
static unsigned int lite_nr_peers;	/* under lite_lock */
static bool lite_peers_stopping;	/* under lite_lock: module unload */
/* This node's loopback peer; written under lite_lock. */
static struct lite_peer __rcu *lite_self_peer;

static void lite_peer_release(struct kref *ref)
{
	struct lite_peer *peer = container_of(ref, struct lite_peer, ref);

	/* The data path never looks at the secret: no grace period for it. */
	if (peer->mac_tfm)
		crypto_free_shash(peer->mac_tfm);	/* kfree_sensitive() inside */
	kfree_rcu(peer, rcu);
}

struct crypto_shash *lite_peer_key_alloc(const u8 *secret)
{
	struct crypto_shash *tfm;
	int ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	ret = crypto_shash_setkey(tfm, secret, LITE_PEER_SECRET_LEN);
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

/*
 * A synchronous shash: no sleeping, so the rdma_cm handlers may call it
 * (they run in process context under lite_lock anyway). Concurrent digests
 * on one transform are safe; only setkey is not, and nobody re-keys one.
 */
int lite_peer_mac(void *key, const void *data, size_t len, u8 *mac)
{
	u8 digest[SHA256_DIGEST_SIZE];
	int ret;

	ret = crypto_shash_tfm_digest(key, data, len, digest);
	if (!ret)
		memcpy(mac, digest, LITE_CM_MAC_LEN);
	memzero_explicit(digest, sizeof(digest));
	return ret;
}

static enum lite_counter lite_peer_qp_counter(const struct lite_peer *peer)
{
	return peer->loopback ? LITE_CNT_LOOPBACK_QPS : LITE_CNT_QPS_CONNECTED;
}

void lite_peer_put(struct lite_peer *peer)
{
	kref_put(&peer->ref, lite_peer_release);
}

static void lite_peer_info_locked(const struct lite_peer *peer,
				  struct lite_peer_info *info)
{
	info->node_id = peer->node_id;
	info->incarnation = peer->incarnation;
	info->addr = peer->addr;
	strscpy(info->name, peer->name, sizeof(info->name));
	info->state = peer->state;
	info->role = peer->initiator ? LITE_PEER_ROLE_INITIATOR :
				       LITE_PEER_ROLE_ACCEPTOR;
	info->qps_connected = peer->connected;
	info->last_refusal = peer->last_refusal;
	info->refused_by = peer->refused_by;
	info->refusals = peer->refusals;
	/* A look for dumps, without qos.lock: each field is one word. */
	info->qos_rate_bps = READ_ONCE(peer->qos.q.rate_bps);
	info->qos_rtt_base_ns = READ_ONCE(peer->qos.q.rtt_base_ns);
	info->qos_rtt_last_ns = READ_ONCE(peer->qos.q.rtt_last_ns);
	info->qos_rule = READ_ONCE(peer->qos.q.rule);
}

static void lite_peer_event_locked(const struct lite_peer *peer, u8 cmd,
				   int qp_index, int reason)
{
	struct lite_peer_info info;

	if (peer->loopback)
		return;
	lite_peer_info_locked(peer, &info);
	lite_nl_peer_event(cmd, &info, qp_index, reason);
}

/*
 * Queues the connect work (initiator only), after the backoff delay if
 * @backoff. A pending run is left alone, so several connections failing
 * together cause one retry and one doubling of the delay.
 */
static void lite_peer_schedule_locked(struct lite_peer *peer, bool backoff)
{
	unsigned long delay = 0;

	lockdep_assert_held(&lite_lock);
	if (!peer->initiator || peer->removed || lite_peers_stopping ||
	    delayed_work_pending(&peer->connect_work))
		return;
	if (backoff) {
		unsigned int ms = peer->backoff_ms;

		/* Jitter: nodes that failed together do not retry together. */
		ms += get_random_u32_below(ms / 2 + 1);
		delay = msecs_to_jiffies(ms);
		peer->backoff_ms = min(peer->backoff_ms * 2, LITE_RETRY_MAX_MS);
	}
	if (queue_delayed_work(lite_wq, &peer->connect_work, delay))
		kref_get(&peer->ref);
}

/* The connect work, now, even if a retry is pending (answering a challenge). */
static void lite_peer_connect_now_locked(struct lite_peer *peer)
{
	lockdep_assert_held(&lite_lock);
	if (!peer->initiator || peer->removed || lite_peers_stopping)
		return;
	/* False: it was idle (or running) and is queued now, so one more ref. */
	if (!mod_delayed_work(lite_wq, &peer->connect_work, 0))
		kref_get(&peer->ref);
}

void lite_peer_refused_locked(struct lite_peer *peer, u16 reason, u8 by)
{
	lockdep_assert_held(&lite_lock);
	peer->last_refusal = reason;
	peer->refused_by = by;
	peer->refusals++;
}

/*
 * peer_auth and no pair secret for @peer: it is not connected to until
 * the agent gives one (lite_peer_add() said so, and schedules the connect
 * work then).
 */
static void lite_peer_no_key_locked(struct lite_peer *peer)
{
	lite_peer_refused_locked(peer, LITE_REFUSAL_NO_KEY, LITE_REFUSED_BY_NODE);
	if (!peer->failure_reported) {
		peer->failure_reported = true;
		lite_peer_event_locked(peer, LITE_CMD_EVENT_PEER_FAILED, -1, ENOKEY);
	}
}

static void lite_peer_connect_work(struct work_struct *work)
{
	struct lite_peer *peer = container_of(to_delayed_work(work),
					      struct lite_peer, connect_work);
	unsigned int i;
	u64 answer;
	int ret;

	mutex_lock(&lite_lock);
	if (lite_peer_auth && !peer->mac_tfm && !peer->removed &&
	    !lite_peers_stopping) {
		lite_peer_no_key_locked(peer);
		goto out;
	}
	for (i = 0; i < lite_qps_per_peer; i++) {
		if (peer->removed || lite_peers_stopping)
			break;
		if (lite_slot_locked(peer->conns[i]))
			continue;
		answer = peer->answers[i];
		peer->answers[i] = 0;
		ret = lite_conn_start_locked(peer, i, answer);
		if (ret) {
			/* Nothing was started for this slot: try again later. */
			pr_debug("peer %s: cannot start QP %u: %d\n",
				 peer->label, i, ret);
			lite_count(LITE_CNT_CONNECT_ERRORS);
			if (!peer->failure_reported) {
				peer->failure_reported = true;
				lite_peer_event_locked(peer, LITE_CMD_EVENT_PEER_FAILED,
						       i, -ret);
			}
			lite_peer_schedule_locked(peer, true);
			break;
		}
	}
out:
	mutex_unlock(&lite_lock);
	lite_peer_put(peer);
}

void lite_peer_conn_up_locked(struct lite_conn *conn)
{
	struct lite_peer *peer = conn->peer;

	lockdep_assert_held(&lite_lock);
	if (peer->loopback && !conn->active) {
		/* The accepting end of a loopback connection. */
		if (!peer->removed &&
		    lite_slot_locked(peer->accepted[conn->index]) == conn)
			lite_count(LITE_CNT_LOOPBACK_QPS);
		return;
	}
	if (peer->removed || lite_slot_locked(peer->conns[conn->index]) != conn)
		return;
	peer->connected++;
	lite_count(lite_peer_qp_counter(peer));
	if (peer->connected < lite_qps_per_peer ||
	    peer->state == LITE_PEER_CONNECTED)
		return;
	peer->state = LITE_PEER_CONNECTED;
	peer->failure_reported = false;
	/* PEER_GET shows why a peer does not connect, not why it once did not. */
	peer->last_refusal = 0;
	peer->refused_by = 0;
	peer->backoff_ms = LITE_RETRY_MIN_MS;
	if (peer->loopback) {
		pr_info("node %u: %u loopback QPs connected\n", peer->node_id,
			peer->connected);
		return;
	}
	pr_info("peer %s (incarnation %llu, %pI4): %u QPs connected\n",
		peer->label, peer->incarnation, &peer->addr, peer->connected);
	lite_peer_event_locked(peer, LITE_CMD_EVENT_PEER_CONNECTED, -1, 0);
}

/*
 * @conn, in its peer's slot, went down (@was_up) or failed to come up. A
 * connected peer always reports the loss; a connecting one reports the
 * first failure the connection code deems worth it (@report), once.
 */
void lite_peer_conn_lost_locked(struct lite_conn *conn, bool was_up, int reason,
				bool report)
{
	struct lite_peer *peer = conn->peer;

	lockdep_assert_held(&lite_lock);
	if (peer->loopback && !conn->active) {
		/* The initiating end notices too, and reconnects. */
		if (lite_slot_locked(peer->accepted[conn->index]) != conn)
			return;
		RCU_INIT_POINTER(peer->accepted[conn->index], NULL);
		if (was_up)
			lite_uncount(LITE_CNT_LOOPBACK_QPS);
		return;
	}
	if (lite_slot_locked(peer->conns[conn->index]) != conn)
		return;
	RCU_INIT_POINTER(peer->conns[conn->index], NULL);
	if (was_up) {
		peer->connected--;
		lite_uncount(lite_peer_qp_counter(peer));
		if (!peer->loopback)
			lite_count(LITE_CNT_DISCONNECTS);
	} else if (!peer->loopback) {
		lite_count(LITE_CNT_CONNECT_ERRORS);
	}
	if (peer->removed)
		return;

	if (peer->state == LITE_PEER_CONNECTED) {
		peer->state = LITE_PEER_CONNECTING;
		report = true;
		if (peer->loopback)
			pr_warn("node %u: loopback QP %u lost (error %d), reconnecting\n",
				peer->node_id, conn->index, -reason);
		else
			pr_warn("peer %s (incarnation %llu, %pI4): QP %u lost (error %d), %s\n",
				peer->label, peer->incarnation, &peer->addr,
				conn->index, -reason,
				peer->initiator ? "reconnecting" :
						  "waiting for it to reconnect");
	}
	if (report && !peer->failure_reported) {
		peer->failure_reported = true;
		lite_peer_event_locked(peer, LITE_CMD_EVENT_PEER_FAILED,
				       conn->index, reason);
	}
	lite_peer_schedule_locked(peer, true);
}

/*
 * @conn's RC retries ran out: its peer has not answered for about
 * peer_timeout_ms. Its other connections lead to the same node, so they
 * are failed now too (their operations in flight are flushed with
 * EHOSTDOWN, new ones find no connection up and get EHOSTDOWN) instead of
 * each waiting out its own retries. The agent hears EHOSTDOWN, once per
 * such verdict, and passes it on to the manager; the initiator keeps
 * reconnecting with its backoff, which is how a peer that was only slow
 * comes back.
 */
void lite_peer_unreachable_locked(struct lite_conn *conn)
{
	struct lite_peer *peer = conn->peer;
	struct lite_conn *other;
	unsigned int i;

	lockdep_assert_held(&lite_lock);
	if (conn->state == LITE_CONN_DEAD)
		return;		/* failed with the others already */
	if (peer->loopback || peer->removed ||
	    lite_slot_locked(peer->conns[conn->index]) != conn) {
		lite_conn_kill_locked(conn, EHOSTDOWN, true);
		return;
	}
	pr_warn("peer %s (incarnation %llu, %pI4): QP %u got no answer within peer_timeout_ms (%u ms): failing its %u connections\n",
		peer->label, peer->incarnation, &peer->addr, conn->index,
		READ_ONCE(lite_peer_timeout_ms), peer->connected);
	/*
	 * One event, once all are down (so it says 0 connected), even if an
	 * earlier loss was reported already: this verdict is news.
	 */
	peer->failure_reported = true;
	lite_conn_kill_locked(conn, EHOSTDOWN, false);
	for (i = 0; i < ARRAY_SIZE(peer->conns); i++) {
		other = lite_slot_locked(peer->conns[i]);
		if (other)
			lite_conn_kill_locked(other, EHOSTDOWN, false);
	}
	lite_transport_ops->peer_down_locked(peer->node_id);
	lite_peer_event_locked(peer, LITE_CMD_EVENT_PEER_FAILED, conn->index,
			       EHOSTDOWN);
}

void lite_peer_conn_challenged_locked(struct lite_conn *conn, u64 challenge)
{
	struct lite_peer *peer = conn->peer;

	lockdep_assert_held(&lite_lock);
	/* Not a failure: no counter, no event, no backoff. */
	if (lite_slot_locked(peer->conns[conn->index]) == conn) {
		RCU_INIT_POINTER(peer->conns[conn->index], NULL);
		if (!peer->removed) {
			peer->answers[conn->index] = challenge;
			lite_peer_connect_now_locked(peer);
		}
	}
	lite_conn_close_locked(conn);
}

/*
 * Takes @peer out of service: closes its connections, cancels its retry and
 * drops the table's reference. The caller has taken it out of the table.
 */
static void lite_peer_detach_locked(struct lite_peer *peer)
{
	struct lite_peer_info info;
	struct lite_conn *conn;
	unsigned int i;

	lockdep_assert_held(&lite_lock);
	/* The event tells what the peer was when it was removed. */
	lite_peer_info_locked(peer, &info);
	peer->removed = true;
	for (i = 0; i < ARRAY_SIZE(peer->conns); i++) {
		conn = lite_slot_locked(peer->conns[i]);
		if (conn) {
			RCU_INIT_POINTER(peer->conns[i], NULL);
			if (conn->state == LITE_CONN_UP) {
				lite_uncount(lite_peer_qp_counter(peer));
				if (!peer->loopback)
					lite_count(LITE_CNT_DISCONNECTS);
			}
			lite_conn_close_locked(conn);
		}
		conn = lite_slot_locked(peer->accepted[i]);
		if (conn) {
			RCU_INIT_POINTER(peer->accepted[i], NULL);
			if (conn->state == LITE_CONN_UP)
				lite_uncount(LITE_CNT_LOOPBACK_QPS);
			lite_conn_close_locked(conn);
		}
	}
	peer->connected = 0;
	/* Calls to it fail now; its rings go once its connections are torn down. */
	lite_transport_ops->peer_down_locked(peer->node_id);
	/*
	 * The manager's verdict (removed, or replaced by a new incarnation):
	 * only now do its locks pass on (docs/locks.md, "Failures").
	 */
	lite_transport_ops->peer_failed_locked(peer->node_id);
	/* A running connect work sees ->removed and drops its own reference. */
	if (cancel_delayed_work(&peer->connect_work))
		lite_peer_put(peer);
	if (peer->loopback) {
		pr_info("node %u (incarnation %llu): loopback closed\n",
			peer->node_id, peer->incarnation);
		lite_peer_put(peer);
		return;
	}
	lite_nr_peers--;
	lite_uncount(LITE_CNT_PEERS);
	pr_info("peer %s (incarnation %llu, %pI4) removed\n", peer->label,
		peer->incarnation, &peer->addr);
	lite_nl_peer_event(LITE_CMD_EVENT_PEER_REMOVED, &info, -1, 0);
	lite_peer_put(peer);
}

/*
 * @name ("" for none) and the label are never changed, so log lines may
 * read them from any context.
 */
static struct lite_peer *lite_peer_alloc(const struct lite_node_id *pid,
					 const char *name)
{
	struct lite_peer *peer;

	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return NULL;
	kref_init(&peer->ref);
	peer->node_id = pid->id;
	peer->incarnation = pid->incarnation;
	peer->addr = pid->addr;
	strscpy(peer->name, name, sizeof(peer->name));
	if (name[0])
		snprintf(peer->label, sizeof(peer->label), "%s (%u)", name,
			 pid->id);
	else
		snprintf(peer->label, sizeof(peer->label), "%u", pid->id);
	peer->state = LITE_PEER_CONNECTING;
	peer->backoff_ms = LITE_RETRY_MIN_MS;
	INIT_DELAYED_WORK(&peer->connect_work, lite_peer_connect_work);
	lite_transport_ops->peer_init(peer);
	return peer;
}

/*
 * A new pair secret *@key for the known @peer, swapped whole: connections
 * made with the old one stay, new ones use the new one. *@key becomes the
 * old transform, for the caller to free. NULL *@key (peer_auth off): nothing.
 */
static void lite_peer_rekey_locked(struct lite_peer *peer,
				   struct crypto_shash **key)
{
	struct crypto_shash *old = peer->mac_tfm;

	if (!*key)
		return;
	peer->mac_tfm = *key;
	*key = old;
	peer->no_key_reported = false;
	pr_info("peer %s: pair secret %s\n", peer->label,
		old ? "replaced" : "set");
	/* An initiator without a secret was waiting for it. */
	if (!old)
		lite_peer_schedule_locked(peer, false);
}

int lite_peer_add(const struct lite_node_id *pid, const u8 *secret,
		  struct netlink_ext_ack *extack)
{
	struct lite_peer *peer, *old, *other;
	struct crypto_shash *key = NULL;
	struct lite_node_id self;
	unsigned long idx;
	int ret = 0;

	/* Keyed before lite_lock: allocating it may load the algorithm. */
	if (secret && lite_peer_auth) {
		key = lite_peer_key_alloc(secret);
		if (IS_ERR(key)) {
			ret = PTR_ERR(key);
			NL_SET_ERR_MSG(extack, "cannot key hmac(sha256) with the pair secret");
			return ret == -ENOMEM ? ret : -EOPNOTSUPP;
		}
	}
	peer = lite_peer_alloc(pid, pid->name);
	if (!peer) {
		ret = -ENOMEM;
		goto free_key;
	}

	mutex_lock(&lite_lock);
	if (!lite_node_get_locked(&self)) {
		NL_SET_ERR_MSG(extack, "the node identity is not set: set the node first");
		ret = -ENXIO;
		goto out;
	}
	if (pid->id == self.id) {
		NL_SET_ERR_MSG(extack, "the peer's node id is this node's own");
		ret = -EINVAL;
		goto out;
	}
	if (pid->addr == self.addr) {
		NL_SET_ERR_MSG(extack, "the peer's address is this node's own");
		ret = -EINVAL;
		goto out;
	}
	if (pid->name[0] && !strcmp(pid->name, self.name)) {
		NL_SET_ERR_MSG(extack, "the peer's name is this node's own");
		ret = -EINVAL;
		goto out;
	}
	old = xa_load(&lite_peers, pid->id);
	if (old && old->incarnation == pid->incarnation && secret &&
	    old->addr == pid->addr && !strcmp(old->name, pid->name)) {
		lite_peer_rekey_locked(old, &key);
		goto out;
	}
	if (old && old->incarnation == pid->incarnation) {
		NL_SET_ERR_MSG(extack, "the peer is already known with this incarnation");
		ret = -EEXIST;
		goto out;
	}
	if (old && old->incarnation > pid->incarnation) {
		NL_SET_ERR_MSG(extack, "the peer is known with a newer incarnation");
		ret = -ESTALE;
		goto out;
	}
	xa_for_each(&lite_peers, idx, other) {
		if (other != old && other->addr == pid->addr) {
			NL_SET_ERR_MSG(extack, "another peer has this address");
			ret = -EEXIST;
			goto out;
		}
		/* Lookups by name must find one node. */
		if (other != old && pid->name[0] &&
		    !strcmp(other->name, pid->name)) {
			NL_SET_ERR_MSG(extack, "another peer has this name");
			ret = -EEXIST;
			goto out;
		}
	}
	if (!old && lite_nr_peers >= LITE_MAX_PEERS) {
		NL_SET_ERR_MSG(extack, "too many peers");
		ret = -ENOSPC;
		goto out;
	}

	peer->initiator = self.id < pid->id;
	peer->mac_tfm = key;
	key = NULL;
	/* Replacing an entry allocates nothing, so @old stays if this fails. */
	ret = xa_err(xa_store(&lite_peers, pid->id, peer, GFP_KERNEL));
	if (ret)
		goto out;
	lite_nr_peers++;
	lite_count(LITE_CNT_PEERS);
	if (old)
		lite_peer_detach_locked(old);
	pr_info("peer %s (incarnation %llu, %pI4) added; %s\n", peer->label,
		peer->incarnation, &peer->addr,
		peer->initiator ? "connecting" : "waiting for it to connect");
	if (lite_peer_auth && !peer->mac_tfm) {
		/* Once: its refused requests are counted, not logged again. */
		peer->no_key_reported = true;
		pr_warn("peer %s: added without a pair secret: %s until the agent gives one\n",
			peer->label, peer->initiator ?
			"not connecting to it" : "refusing its connections");
	}
	lite_peer_schedule_locked(peer, false);
	peer = NULL;
out:
	mutex_unlock(&lite_lock);
	if (peer)
		lite_peer_put(peer);	/* frees its key, if it took one */
free_key:
	if (key)
		crypto_free_shash(key);
	return ret;
}

int lite_peer_remove(u32 node_id, u64 incarnation, struct netlink_ext_ack *extack)
{
	struct lite_peer *peer;
	int ret = 0;

	mutex_lock(&lite_lock);
	peer = xa_load(&lite_peers, node_id);
	if (!peer) {
		NL_SET_ERR_MSG(extack, "no such peer");
		ret = -ENOENT;
	} else if (incarnation && incarnation != peer->incarnation) {
		NL_SET_ERR_MSG(extack, "the peer has another incarnation");
		ret = -ESTALE;
	} else {
		xa_erase(&lite_peers, node_id);
		lite_peer_detach_locked(peer);
	}
	mutex_unlock(&lite_lock);
	return ret;
}

int lite_peers_visit(unsigned long *next, lite_peer_fn fn, void *arg)
{
	struct lite_peer_info info;
	struct lite_peer *peer;
	unsigned long idx;
	int ret = 0;

	mutex_lock(&lite_lock);
	xa_for_each_start(&lite_peers, idx, peer, *next) {
		lite_peer_info_locked(peer, &info);
		ret = fn(&info, arg);
		if (ret) {
			*next = idx;
			goto out;
		}
	}
	*next = ULONG_MAX;
out:
	mutex_unlock(&lite_lock);
	return ret;
}

unsigned int lite_peers_count_locked(void)
{
	lockdep_assert_held(&lite_lock);
	return lite_nr_peers;
}

struct lite_peer *lite_peer_find_locked(u32 node_id)
{
	lockdep_assert_held(&lite_lock);
	return xa_load(&lite_peers, node_id);
}

struct lite_peer *lite_peer_find_name_locked(const char *name)
{
	struct lite_peer *peer;
	unsigned long idx;

	lockdep_assert_held(&lite_lock);
	if (!name[0])
		return NULL;
	xa_for_each(&lite_peers, idx, peer) {
		if (!strcmp(peer->name, name))
			return peer;
	}
	return NULL;
}

struct lite_peer *lite_peer_lookup_rcu(u32 node_id)
{
	struct lite_peer *peer = rcu_dereference(lite_self_peer);

	if (peer && peer->node_id == node_id)
		return peer;
	return xa_load(&lite_peers, node_id);
}

static struct lite_peer *lite_self_peer_locked(void)
{
	return rcu_dereference_protected(lite_self_peer,
					 lockdep_is_held(&lite_lock));
}

struct lite_peer *lite_loopback_peer_locked(void)
{
	lockdep_assert_held(&lite_lock);
	return lite_self_peer_locked();
}

/*
 * Replaces the loopback peer with one for @self (NULL: none). The same
 * identity again keeps the existing one and its connections.
 */
int lite_loopback_set_locked(const struct lite_node_id *self,
			     struct crypto_shash **key)
{
	struct lite_peer *old = lite_self_peer_locked(), *peer = NULL;

	lockdep_assert_held(&lite_lock);
	if (self && old && old->node_id == self->id &&
	    old->incarnation == self->incarnation && old->addr == self->addr)
		return 0;
	if (self && !lite_peers_stopping) {
		/*
		 * Unnamed: the node's name may change under the same
		 * identity, a peer's never does (lite_node.c has the name).
		 */
		peer = lite_peer_alloc(self, "");
		if (!peer)
			return -ENOMEM;
		peer->loopback = true;
		peer->initiator = true;
		if (key) {
			peer->mac_tfm = *key;
			*key = NULL;
		}
	}
	rcu_assign_pointer(lite_self_peer, peer);
	if (old)
		lite_peer_detach_locked(old);
	if (peer) {
		pr_info("node %u (incarnation %llu): connecting %u loopback QPs\n",
			peer->node_id, peer->incarnation, lite_qps_per_peer);
		lite_peer_schedule_locked(peer, false);
	}
	return 0;
}

static void lite_peer_conns_device_removed_locked(struct lite_peer *peer,
						  struct lite_device *ldev)
{
	struct lite_conn *conn;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(peer->conns); i++) {
		conn = lite_slot_locked(peer->conns[i]);
		if (conn && conn->ldev == ldev)
			lite_conn_kill_locked(conn, ENODEV, true);
		conn = lite_slot_locked(peer->accepted[i]);
		if (conn && conn->ldev == ldev)
			lite_conn_kill_locked(conn, ENODEV, true);
	}
}

/*
 * @ldev is going away (ib_client remove). Mark it so no new QP uses its
 * PD, fail every connection on it (initiators retry, on whatever device then
 * serves the address), and wait until their QPs and CQs are destroyed: the
 * caller frees the PD next. The wait is on our own teardown work, which
 * does not depend on the device staying usable.
 */
void lite_peers_device_removed(struct lite_device *ldev)
{
	struct lite_peer *peer;
	unsigned long idx;

	mutex_lock(&lite_lock);
	ldev->dying = true;
	xa_for_each(&lite_peers, idx, peer)
		lite_peer_conns_device_removed_locked(peer, ldev);
	peer = lite_self_peer_locked();
	if (peer)
		lite_peer_conns_device_removed_locked(peer, ldev);
	mutex_unlock(&lite_lock);
	flush_workqueue(lite_wq);
	/* Each ends once its operations' flushed work requests complete. */
	lite_conns_wait_closed_all();
}

/* Module unload: the netlink family and the listener are gone already. */
void lite_peers_exit(void)
{
	struct lite_peer *peer;
	unsigned long idx;

	mutex_lock(&lite_lock);
	lite_peers_stopping = true;
	lite_loopback_set_locked(NULL, NULL);
	xa_for_each(&lite_peers, idx, peer) {
		xa_erase(&lite_peers, idx);
		lite_peer_detach_locked(peer);
	}
	mutex_unlock(&lite_lock);
	/* Every connection's teardown, and connect works that saw ->removed. */
	flush_workqueue(lite_wq);
	lite_conns_wait_closed_all();
	xa_destroy(&lite_peers);
}
