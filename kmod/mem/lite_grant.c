// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the grants applications on this node hold (LITE_IOC_MAP answers),
 * LITE_CMD_GRANT_REVOKE and LITE_CMD_GRANT_GET.
 *
 * A grant is referenced by the node's table (grant id -> grant, until its
 * handle is unmapped or its file closed), by its handle and by every
 * operation running on it. Lookups from the data path are lock-free, so
 * grants are freed after an RCU grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/genetlink.h>

#include "lite_mem.h"
#include "transport/lite_conn.h"
#include "lite_grant.h"

/* grant id -> struct lite_grant; changed under lite_grants_mutex. */
static DEFINE_XARRAY(lite_grants);
static DEFINE_MUTEX(lite_grants_mutex);
/* Module unload: no netlink family any more, so no UNMAP upcall. */
static bool lite_grants_exiting;

/*
 * Process context: the last put of a grant into an LMR hosted here puts the
 * LMR, and its last put (lite_lmr_release()) sleeps for the regions'
 * invalidation. Every final grant put is in process context today
 * (lite_slot_put() defers to release_work when grants are left); keep it so.
 */
static void lite_grant_release(struct kref *ref)
{
	struct lite_grant *grant = container_of(ref, struct lite_grant, ref);

	if (grant->hosted)
		lite_lmr_put(grant->hosted);
	/* Counted against its user until it is really gone (parked too). */
	if (grant->user)
		lite_user_uncharge_grant(grant->user);
	/* The last put kvfree()s, which defers a vfree. */
	if (grant->groups)
		put_group_info(grant->groups);
	kvfree_rcu(grant, rcu);
}

void lite_grant_put(struct lite_grant *grant)
{
	kref_put(&grant->ref, lite_grant_release);
}

u32 lite_grant_chunk_index(const struct lite_grant *grant, u64 offset)
{
	u32 lo = 0, hi = grant->nr_chunks - 1;

	/* The last chunk that starts at or before @offset. */
	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (grant->chunks[mid].offset <= offset)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

bool lite_grant_id_known(u64 grant_id)
{
	bool known;

	mutex_lock(&lite_grants_mutex);
	known = !!xa_load(&lite_grants, grant_id);
	mutex_unlock(&lite_grants_mutex);
	return known;
}

int lite_grant_install(struct lite_file *lf, struct lite_grant *grant,
		       u64 *handle)
{
	int ret;

	mutex_lock(&lite_grants_mutex);
	/*
	 * LMR_FREE marks the LMR under this mutex in the pass that revokes
	 * its grants: a grant is either in the table before that pass (and
	 * revoked by it) or refused here.
	 */
	if (grant->hosted && lite_lmr_unhosted(grant->hosted)) {
		ret = -ESTALE;
		goto out;
	}
	/* The table takes the caller's reference. */
	ret = xa_insert(&lite_grants, grant->grant_id, grant, GFP_KERNEL);
	if (ret == -EBUSY)
		ret = -EEXIST;
	if (ret)
		goto out;
	ret = lite_file_handle_add(lf, grant, handle);
	if (ret) {
		xa_erase(&lite_grants, grant->grant_id);
		goto out;
	}
	lite_count(LITE_CNT_GRANTS);
out:
	mutex_unlock(&lite_grants_mutex);
	return ret;
}

void lite_grant_forget(struct lite_grant *grant)
{
	bool mine;

	mutex_lock(&lite_grants_mutex);
	mine = xa_load(&lite_grants, grant->grant_id) == grant;
	if (mine) {
		xa_erase(&lite_grants, grant->grant_id);
		lite_uncount(LITE_CNT_GRANTS);
	}
	mutex_unlock(&lite_grants_mutex);
	if (mine)
		lite_grant_put(grant);
}

void lite_grants_revoke_lmr(u64 lmr_id, struct lite_lmr *lmr)
{
	struct lite_grant *grant;
	unsigned long idx;

	mutex_lock(&lite_grants_mutex);
	xa_for_each(&lite_grants, idx, grant) {
		if (grant->lmr_id == lmr_id || (lmr && grant->hosted == lmr))
			WRITE_ONCE(grant->revoked, -ESTALE);
	}
	if (lmr)
		lite_lmr_set_unhosted(lmr);
	mutex_unlock(&lite_grants_mutex);
}

void lite_grant_key_refused(struct lite_grant *grant)
{
	/* The first refusal only: one count, one line per grant. */
	if (cmpxchg(&grant->revoked, 0, -ESTALE))
		return;
	lite_count(LITE_CNT_GRANTS_KEY_REFUSED);
	pr_warn_ratelimited("grant %llu (LMR %llu on node %u): the home refused its key: revoked\n",
			    grant->grant_id, grant->lmr_id, grant->home_node_id);
}

/* Marks @grant revoked and waits for its operations in flight (see .h). */
static long lite_grant_drain(struct lite_grant *grant, unsigned long timeout,
			     bool killable)
{
	long left;

	WRITE_ONCE(grant->revoked, -ESTALE);
	/* Pairs with smp_mb__after_atomic() in lite_grant_op_get(). */
	smp_mb();
	if (!atomic_read(&grant->ops))
		return 1;
	lite_count(LITE_CNT_GRANT_DRAIN_WAITS);
	if (killable)
		left = wait_event_killable_timeout(grant->drained,
						   !atomic_read(&grant->ops),
						   timeout);
	else
		left = wait_event_timeout(grant->drained,
					  !atomic_read(&grant->ops), timeout);
	if (left <= 0)
		lite_count(LITE_CNT_GRANT_DRAIN_TIMEOUTS);
	return left;
}

int lite_grant_revoke_wait(struct lite_grant *grant, unsigned long timeout)
{
	long left = lite_grant_drain(grant, timeout, true);

	if (left > 0)
		return 0;
	return left ? -EINTR : -ETIMEDOUT;
}

/* Slack past the RC transport's own bound: completion and release work. */
#define LITE_DRAIN_SLACK_MS	1000

unsigned long lite_grant_drain_jiffies(void)
{
	unsigned int ms = max(READ_ONCE(lite_op_timeout_ms),
			      READ_ONCE(lite_peer_timeout_ms) + LITE_DRAIN_SLACK_MS);

	return msecs_to_jiffies(ms);
}

/* Drained and out of every file: out of the table, and the agent hears. */
static void lite_grant_given_back(struct lite_grant *grant)
{
	lite_grant_forget(grant);
	if (!READ_ONCE(lite_grants_exiting))
		lite_mem_ops->grant_given_back(grant);
}

void lite_grant_unmap_work(struct work_struct *work)
{
	struct lite_grant *grant = container_of(work, struct lite_grant,
						unmap_work);

	/* The table's reference kept it; forgetting drops that one. */
	kref_get(&grant->ref);
	lite_grant_given_back(grant);
	lite_uncount(LITE_CNT_GRANTS_PARKED);
	lite_grant_put(grant);
}

void lite_grant_parked_drained(struct lite_grant *grant)
{
	if (!test_and_set_bit(0, &grant->unmap_queued))
		queue_work(lite_wq, &grant->unmap_work);
}

void lite_grant_unmap(struct lite_grant *grant, unsigned long deadline)
{
	long left = time_after(deadline, jiffies) ? deadline - jiffies : 0;

	if (lite_grant_drain(grant, left, false) > 0) {
		lite_grant_given_back(grant);
		lite_grant_put(grant);
		return;
	}
	/*
	 * Still in flight: acknowledging now would let the manager free (or
	 * hand out again) memory a posted work request may still write.
	 * Park it in the table, revoked, until its last operation ends.
	 */
	pr_warn_ratelimited("grant %#llx unmapped with %d operations still in flight; given back once they end\n",
			    grant->grant_id, atomic_read(&grant->ops));
	lite_count(LITE_CNT_GRANTS_PARKED);
	WRITE_ONCE(grant->parked, true);
	/* Pairs with lite_grant_op_put()'s atomic_dec_and_test(). */
	smp_mb();
	if (!atomic_read(&grant->ops))
		lite_grant_parked_drained(grant);
	lite_grant_put(grant);
}

int lite_nl_grant_revoke(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_grant *grant;
	struct nlattr *attr;
	u64 id;
	int ret;

	if (!lite_nl_require(info, LITE_ATTR_GRANT_ID, "LITE_ATTR_GRANT_ID"))
		return -EINVAL;
	attr = info->attrs[LITE_ATTR_GRANT_ID];
	id = nla_get_u64(attr);
	if (!id) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_GRANT_ID: grant id 0 is reserved");
		return -EINVAL;
	}
	/*
	 * The owner check and the mark under lite_owner_rwsem (its read
	 * side), the drain after it: waiting needs no owner, and a writer
	 * queued behind a long drain would stall every checked command.
	 */
	lite_nl_owner_lock(false);
	ret = lite_nl_check_owner(info);
	grant = NULL;
	if (!ret) {
		mutex_lock(&lite_grants_mutex);
		grant = xa_load(&lite_grants, id);
		if (grant) {
			WRITE_ONCE(grant->revoked, -ESTALE);
			kref_get(&grant->ref);
		}
		mutex_unlock(&lite_grants_mutex);
	}
	lite_nl_owner_unlock(false);
	if (ret)
		return ret;
	if (!grant) {
		GENL_SET_ERR_MSG(info, "no such grant on this node");
		return -ENOENT;
	}
	/*
	 * Drained before the answer: when it is 0, nothing of the grant is in
	 * flight on this node, nor will be. Bounded by how long an operation
	 * or a posted work request can last (lite_grant_drain_jiffies()). A
	 * grant its application unmapped while operations were in flight is
	 * still here (parked), so this answers ETIMEDOUT, not ENOENT, until
	 * it has drained. (Not under lite_owner_rwsem: see above.)
	 */
	ret = lite_grant_revoke_wait(grant, lite_grant_drain_jiffies());
	if (ret == -ETIMEDOUT)
		GENL_SET_ERR_MSG(info, "revoked, but operations on the grant are still in flight");
	lite_grant_put(grant);
	return ret;
}

static void lite_grant_chunk(const void *obj, u32 i, u64 *addr, u64 *len)
{
	const struct lite_grant *grant = obj;

	*addr = grant->chunks[i].addr;
	*len = grant->chunks[i].length;
}

static int lite_nl_put_grant(struct sk_buff *msg, const struct lite_grant *g)
{
	if (nla_put_u64_64bit(msg, LITE_ATTR_GRANT_ID, g->grant_id,
			      LITE_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_LMR_ID, g->lmr_id, LITE_ATTR_PAD) ||
	    nla_put_string(msg, LITE_ATTR_NAME, g->name) ||
	    nla_put_u32(msg, LITE_ATTR_NODE_ID, g->home_node_id) ||
	    nla_put_u32(msg, LITE_ATTR_ACCESS, g->access) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_EPOCH, g->epoch, LITE_ATTR_PAD) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_SIZE, g->size, LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, g->memory_key) ||
	    nla_put_u64_64bit(msg, LITE_ATTR_INCARNATION, g->incarnation,
			      LITE_ATTR_PAD) ||
	    nla_put_s64(msg, LITE_ATTR_GRANTED_AT_MS, g->granted_at_ms,
			LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_UID, g->uid) ||
	    nla_put_u32(msg, LITE_ATTR_GID, g->gid) ||
	    nla_put_u32(msg, LITE_ATTR_PID, g->pid) ||
	    (READ_ONCE(g->revoked) && nla_put_flag(msg, LITE_ATTR_REVOKED)))
		return -EMSGSIZE;
	return 0;
}

/*
 * cb->args[0]: the grant id to resume at; cb->args[1]: the chunk to resume
 * at in it; cb->args[2]: set when done. A grant whose chunks do not fit in
 * one message goes on in the next ones.
 */
int lite_nl_grant_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lite_grant *grant;
	unsigned long idx;
	int ret = 0;

	if (cb->args[2])
		return 0;
	mutex_lock(&lite_grants_mutex);
	xa_for_each_start(&lite_grants, idx, grant, cb->args[0]) {
		u32 next = idx == cb->args[0] ? cb->args[1] : 0;
		void *hdr;

		if (next >= grant->nr_chunks)
			next = 0;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &lite_genl_family,
				  NLM_F_MULTI, LITE_CMD_GRANT_GET);
		if (!hdr || lite_nl_put_grant(skb, grant) ||
		    lite_nl_put_chunks(skb, grant, grant->nr_chunks, &next,
				       lite_grant_chunk)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			cb->args[0] = idx;
			cb->args[1] = next;
			ret = skb->len ? 0 : -EMSGSIZE;
			goto out;
		}
		genlmsg_end(skb, hdr);
		if (next < grant->nr_chunks) {
			cb->args[0] = idx;
			cb->args[1] = next;
			goto out;
		}
	}
	cb->args[2] = 1;
out:
	mutex_unlock(&lite_grants_mutex);
	return ret ? ret : skb->len;
}

/*
 * Module unload, after every connection is destroyed: every file is closed
 * and every operation has ended, so the only grants left are parked ones
 * whose unmap work is queued on lite_wq. A context drops its grants before
 * its connection, and lite_peers_exit() returned only once every
 * connection's operations were gone, so those works were queued before
 * this flush starts. (Not drain_workqueue(): a device added meanwhile may
 * still queue the listen work from outside.)
 */
void lite_grants_exit(void)
{
	WRITE_ONCE(lite_grants_exiting, true);
	flush_workqueue(lite_wq);
	WARN_ON(!xa_empty(&lite_grants));
	xa_destroy(&lite_grants);
}
