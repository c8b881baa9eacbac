// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: control calls through the node agent (the LMR calls are in
 * lite_upcall_lmr.c, RPC's in lite_rpc_upcall.c).
 *
 * The ioctl sends an upcall (LITE_CMD_UPCALL) to the attached agent's
 * netlink port and waits, killable and at most upcall_timeout_ms, for the
 * agent's LITE_CMD_UPCALL_COMPLETE. A pending upcall is on lite_upcalls
 * under lite_upcall_lock (a spinlock: the agent's socket going away is
 * reported in atomic context); whoever takes it off the list answers it:
 *  - the completion (the agent's answer, or "agent gone"), which fills in
 *    the result and then completes the waiter;
 *  - the waiter giving up (timeout or fatal signal): a late answer then
 *    finds no such upcall (ENOENT), and the agent gives a map's grant back.
 * If the waiter finds its upcall already taken it waits for that answer,
 * which is being written without blocking for long.
 *
 * A pending upcall counts against its user's share (max_upcalls_per_uid,
 * EDQUOT) before the node's (LITE_UPCALLS_MAX, EAGAIN), and a MAP reserves
 * its grant against max_grants_per_uid (lite_file.c) before it is sent.
 * What a call leaves behind is charged to the caller's memcg: the record
 * here, and the grant, which the agent's answer allocates in the caller's
 * memcg (docs/datapath.md, "Per-user limits").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <net/genetlink.h>

#include "lite_upcall.h"
#include "mem/lite_grant.h"
#include "lite_upcall.h"

/* How long a control call (ALLOC, MAP, FREE) waits for the agent. */
const struct lite_upcall_ops *lite_upcall_ops;

void lite_upcall_set_ops(const struct lite_upcall_ops *ops)
{
	lite_upcall_ops = ops;
}

unsigned int lite_upcall_timeout_ms = 10000;

static int lite_param_set_upcall_timeout(const char *val,
					 const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, 600000);
}

static const struct kernel_param_ops lite_upcall_timeout_ops = {
	.set = lite_param_set_upcall_timeout,
	.get = param_get_uint,
};

module_param_cb(upcall_timeout_ms, &lite_upcall_timeout_ops,
		&lite_upcall_timeout_ms, 0444);
MODULE_PARM_DESC(upcall_timeout_ms, "how long LMR control calls wait for the node agent, 100..600000 ms (default 10000)");

/* Pending upcalls at most; more fail with EAGAIN. */
#define LITE_UPCALLS_MAX	1024

/*
 * One uid's share of LITE_UPCALLS_MAX (more fail with EDQUOT, not EAGAIN):
 * a quarter by default, so one user stuck on a slow manager, or flooding
 * it, leaves three quarters to everyone else, and still has more calls in
 * flight than an application waiting on each of them needs.
 */
static unsigned int lite_max_upcalls_per_uid = LITE_UPCALLS_MAX / 4;

static int lite_param_set_max_upcalls(const char *val,
				      const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_UPCALLS_MAX);
}

static const struct kernel_param_ops lite_max_upcalls_ops = {
	.set = lite_param_set_max_upcalls,
	.get = param_get_uint,
};

module_param_cb(max_upcalls_per_uid, &lite_max_upcalls_ops,
		&lite_max_upcalls_per_uid, 0644);
MODULE_PARM_DESC(max_upcalls_per_uid, "ALLOC/MAP/FREE calls one uid may have waiting for the agent, 1..1024 (default 256); more fail with EDQUOT");

static LIST_HEAD(lite_upcalls);
static unsigned int lite_nr_upcalls;
static u64 lite_upcall_last_id;
static DEFINE_SPINLOCK(lite_upcall_lock);

static void lite_upcall_release(struct kref *ref)
{
	struct lite_upcall *up = container_of(ref, struct lite_upcall, ref);

	if (up->file)
		fput(up->file);
	if (up->grant_charge)
		lite_user_uncharge_grant(up->grant_charge);
	mem_cgroup_put(up->memcg);
	lite_user_put(up->user);
	put_group_info(up->groups);
	kfree(up);
}

void lite_upcall_put(struct lite_upcall *up)
{
	kref_put(&up->ref, lite_upcall_release);
}

struct lite_upcall *lite_upcall_new(u32 kind)
{
	struct lite_upcall *up;

	/* The caller's memory: charged to its memcg (ioctl context). */
	up = kzalloc(sizeof(*up), GFP_KERNEL_ACCOUNT);
	if (!up)
		return NULL;
	kref_init(&up->ref);
	init_completion(&up->done);
	up->kind = kind;
	up->uid = from_kuid_munged(&init_user_ns, current_euid());
	up->gid = from_kgid_munged(&init_user_ns, current_egid());
	up->pid = task_tgid_nr(current);
	up->user = lite_user_get(up->uid);
	if (!up->user) {
		kfree(up);
		return NULL;
	}
	/* A reference, not a copy: the cred's own list, shared. */
	up->groups = get_current_groups();
	return up;
}

/* Under lite_upcall_lock: takes @up off the list; its reference is ours. */
static void lite_upcall_unlink_locked(struct lite_upcall *up)
{
	lockdep_assert_held(&lite_upcall_lock);
	list_del(&up->entry);
	up->pending = false;
	lite_nr_upcalls--;
	up->user->upcalls--;
}

/*
 * Takes @up off the list if it still is; the list's reference is then
 * ours. False if someone else took it first (answered or given up).
 */
bool lite_upcall_claim(struct lite_upcall *up)
{
	bool mine;

	spin_lock(&lite_upcall_lock);
	mine = up->pending;
	if (mine)
		lite_upcall_unlink_locked(up);
	spin_unlock(&lite_upcall_lock);
	return mine;
}

/* The pending upcall @id with a reference of the caller's, or NULL. */
static struct lite_upcall *lite_upcall_find(u64 id)
{
	struct lite_upcall *up;

	spin_lock(&lite_upcall_lock);
	list_for_each_entry(up, &lite_upcalls, entry) {
		if (up->id == id) {
			kref_get(&up->ref);
			spin_unlock(&lite_upcall_lock);
			return up;
		}
	}
	spin_unlock(&lite_upcall_lock);
	return NULL;
}

/*
 * Before the answer of a claimed upcall: false if its waiter has left (it
 * hears nothing), true if it will hear the answer.
 */
bool lite_upcall_heard(struct lite_upcall *up)
{
	return atomic_cmpxchg(&up->waiter, LITE_WAITER_WAITING,
			      LITE_WAITER_ANSWERED) != LITE_WAITER_GONE;
}

/* Answers a claimed upcall and drops the list's reference. */
void lite_upcall_answer(struct lite_upcall *up, int err)
{
	lite_upcall_heard(up);
	up->err = err;
	complete(&up->done);
	lite_upcall_put(up);
}

void lite_upcalls_agent_gone(u32 portid)
{
	struct lite_upcall *up, *tmp;
	LIST_HEAD(gone);

	spin_lock(&lite_upcall_lock);
	list_for_each_entry_safe(up, tmp, &lite_upcalls, entry) {
		if (up->portid != portid)
			continue;
		lite_upcall_unlink_locked(up);
		list_add_tail(&up->entry, &gone);
	}
	spin_unlock(&lite_upcall_lock);
	list_for_each_entry_safe(up, tmp, &gone, entry) {
		list_del(&up->entry);
		lite_count(LITE_CNT_UPCALLS_NOTCONN);
		lite_upcall_answer(up, -ENOTCONN);
	}
}

static bool lite_upcall_withdraw(struct lite_upcall *up);

/*
 * LITE_ATTR_GROUPS (the first LITE_GROUPS_MAX of @gi, in the initial user
 * namespace like the uid and gid) and LITE_ATTR_GROUPS_TRUNCATED if there
 * were more: the manager's group class looks at them (uapi/lite.h). Written
 * in place in the message, no copy.
 */
int lite_upcall_put_groups(struct sk_buff *msg, const struct group_info *gi)
{
	int ngroups = gi ? gi->ngroups : 0;
	int n = min_t(int, ngroups, LITE_GROUPS_MAX);
	struct nlattr *attr;
	u32 *out;
	int i;

	attr = nla_reserve(msg, LITE_ATTR_GROUPS, n * sizeof(u32));
	if (!attr)
		return -EMSGSIZE;
	out = nla_data(attr);
	for (i = 0; i < n; i++)
		out[i] = from_kgid_munged(&init_user_ns, gi->gid[i]);
	if (ngroups > LITE_GROUPS_MAX &&
	    nla_put_flag(msg, LITE_ATTR_GROUPS_TRUNCATED))
		return -EMSGSIZE;
	return 0;
}

/*
 * A new upcall message for @up: puts it on the list (giving it its id and
 * the agent's port) and starts the message with the common attributes.
 */
struct sk_buff *lite_upcall_start(struct lite_upcall *up, void **hdr)
{
	struct sk_buff *msg;
	int ret = 0;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return ERR_PTR(-ENOMEM);

	spin_lock(&lite_upcall_lock);
	if (!lite_nl_agent_portid(&up->portid)) {
		ret = -ENOTCONN;
	} else if (up->user->upcalls >= READ_ONCE(lite_max_upcalls_per_uid)) {
		/* The user's own share first: EDQUOT says it is theirs. */
		ret = -EDQUOT;
	} else if (lite_nr_upcalls >= LITE_UPCALLS_MAX) {
		ret = -EAGAIN;
	} else {
		up->id = ++lite_upcall_last_id;
		up->pending = true;
		kref_get(&up->ref);
		list_add_tail(&up->entry, &lite_upcalls);
		lite_nr_upcalls++;
		up->user->upcalls++;
	}
	spin_unlock(&lite_upcall_lock);
	if (ret) {
		if (ret == -ENOTCONN)
			lite_count(LITE_CNT_UPCALLS_NOTCONN);
		else if (ret == -EDQUOT)
			lite_count(LITE_CNT_USER_UPCALLS_REFUSED);
		nlmsg_free(msg);
		return ERR_PTR(ret);
	}

	*hdr = genlmsg_put(msg, 0, 0, &lite_genl_family, 0, LITE_CMD_UPCALL);
	if (!*hdr ||
	    nla_put_u64_64bit(msg, LITE_ATTR_UPCALL_ID, up->id, LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_UPCALL_KIND, up->kind) ||
	    nla_put_u32(msg, LITE_ATTR_UID, up->uid) ||
	    nla_put_u32(msg, LITE_ATTR_GID, up->gid) ||
	    nla_put_u32(msg, LITE_ATTR_PID, up->pid) ||
	    lite_upcall_put_groups(msg, up->groups)) {
		/* Off the pending list too, or it would stay there for good. */
		lite_upcall_withdraw(up);
		nlmsg_free(msg);
		return ERR_PTR(-EMSGSIZE);
	}
	return msg;
}

/* Takes @up off the list if it still is; true if we did. */
static bool lite_upcall_withdraw(struct lite_upcall *up)
{
	bool mine;

	spin_lock(&lite_upcall_lock);
	mine = up->pending;
	if (mine)
		lite_upcall_unlink_locked(up);
	spin_unlock(&lite_upcall_lock);
	if (mine)
		lite_upcall_put(up);
	return mine;
}

/*
 * Sends the message and waits for the answer. Returns 0 or a negative
 * errno; the answer's details are in @up.
 */
int lite_upcall_send_wait(struct lite_upcall *up, struct sk_buff *msg,
			  void *hdr)
{
	long left;
	int ret;

	genlmsg_end(msg, hdr);
	ret = genlmsg_unicast(&init_net, msg, up->portid);
	if (ret) {
		lite_upcall_withdraw(up);
		if (ret == -EAGAIN)
			return -EAGAIN;
		lite_count(LITE_CNT_UPCALLS_NOTCONN);
		return -ENOTCONN;
	}
	lite_count(LITE_CNT_UPCALLS_SENT);

	left = wait_for_completion_killable_timeout(&up->done,
						    msecs_to_jiffies(lite_upcall_timeout_ms));
	if (left <= 0 && lite_upcall_withdraw(up)) {
		if (left == 0) {
			lite_count(LITE_CNT_UPCALLS_TIMED_OUT);
			return -ETIMEDOUT;
		}
		lite_count(LITE_CNT_UPCALLS_INTERRUPTED);
		return -EINTR;
	}
	/*
	 * Answered (the wait above consumed the completion), or being answered
	 * right now by someone who took it off the pending table first: wait
	 * for that answer, killably. A waiter killed here leaves unless the
	 * answer is already on its way (then it comes without blocking); the
	 * one answering sees that it left and undoes the answer's effect
	 * (a MAP's handle).
	 */
	if (left <= 0 && wait_for_completion_killable(&up->done)) {
		if (atomic_cmpxchg(&up->waiter, LITE_WAITER_WAITING,
				   LITE_WAITER_GONE) == LITE_WAITER_WAITING) {
			lite_count(LITE_CNT_UPCALLS_INTERRUPTED);
			return -EINTR;
		}
		wait_for_completion(&up->done);
	}
	return up->err;
}

/* Removes an upcall that was never sent. */
int lite_upcall_abort(struct lite_upcall *up, struct sk_buff *msg, int err)
{
	nlmsg_free(msg);
	lite_upcall_withdraw(up);
	return err;
}

int lite_upcall_call(struct lite_upcall *up,
		     int (*put)(struct sk_buff *msg, const void *arg),
		     const void *arg, char *message)
{
	struct sk_buff *msg;
	void *hdr;
	int ret;

	msg = lite_upcall_start(up, &hdr);
	if (IS_ERR(msg))
		return PTR_ERR(msg);
	if (put(msg, arg))
		return lite_upcall_abort(up, msg, -EMSGSIZE);
	ret = lite_upcall_send_wait(up, msg, hdr);
	if (message)
		memcpy(message, up->message, LITE_MESSAGE_BUF);
	return ret;
}

/*
 * A control call that fails before the manager answers leaves no stale
 * text in the caller's `message`: the uapi promises it NUL-terminated.
 */
long lite_early_error(char __user *message, long err)
{
	if (clear_user(message, LITE_MESSAGE_BUF))
		return -EFAULT;
	return err;
}

bool lite_user_name_valid(const char *name)
{
	return memchr(name, 0, LITE_NAME_BUF) && lite_name_valid(name);
}

struct sk_buff *lite_upcall_notice_start(u32 kind, u32 uid, u32 gid, u32 pid,
					 const struct group_info *groups,
					 void **hdr, u32 *portid)
{
	struct sk_buff *msg;
	bool attached;
	u64 id;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	spin_lock(&lite_upcall_lock);
	attached = lite_nl_agent_portid(portid);
	id = ++lite_upcall_last_id;
	spin_unlock(&lite_upcall_lock);
	if (!attached)
		goto drop;
	*hdr = genlmsg_put(msg, 0, 0, &lite_genl_family, 0, LITE_CMD_UPCALL);
	if (!*hdr ||
	    nla_put_u64_64bit(msg, LITE_ATTR_UPCALL_ID, id, LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_UPCALL_KIND, kind) ||
	    nla_put_u32(msg, LITE_ATTR_UID, uid) ||
	    nla_put_u32(msg, LITE_ATTR_GID, gid) ||
	    nla_put_u32(msg, LITE_ATTR_PID, pid) ||
	    lite_upcall_put_groups(msg, groups))
		goto drop;
	return msg;
drop:
	nlmsg_free(msg);
	return NULL;
}

void lite_upcall_notice_send(struct sk_buff *msg, void *hdr, u32 portid)
{
	genlmsg_end(msg, hdr);
	if (genlmsg_unicast(&init_net, msg, portid))
		lite_count(LITE_CNT_UPCALLS_NOTCONN);
	else
		lite_count(LITE_CNT_UPCALLS_SENT);
}

/* In the background: nobody waits, and no agent is fine. */
void lite_upcall_unmap(const struct lite_grant *grant)
{
	struct sk_buff *msg;
	void *hdr;
	u32 portid;

	/* The requester's credentials: a close may run in another task. */
	msg = lite_upcall_notice_start(LITE_UPCALL_UNMAP, grant->uid,
				       grant->gid, grant->pid, grant->groups,
				       &hdr, &portid);
	if (!msg)
		return;
	if (nla_put_u64_64bit(msg, LITE_ATTR_GRANT_ID, grant->grant_id,
			      LITE_ATTR_PAD)) {
		nlmsg_free(msg);
		return;
	}
	lite_upcall_notice_send(msg, hdr, portid);
}

/* Is @node_id this node or a peer? */
static bool lite_home_known(u32 node_id)
{
	struct lite_node_id nid;
	bool known;

	mutex_lock(&lite_lock);
	known = (lite_node_get_locked(&nid) && nid.id == node_id) ||
		lite_peer_find_locked(node_id);
	mutex_unlock(&lite_lock);
	return known;
}

/* A MAP answer for an LMR homed here: takes its reference, or -ESTALE. */
static int lite_upcall_map_hosted(struct genl_info *info, struct lite_grant *g)
{
	g->hosted = lite_lmr_get(g->lmr_id);
	if (!g->hosted) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[LITE_ATTR_LMR_ID],
				    "LITE_ATTR_LMR_ID: the home is this node, and it hosts no LMR with this id (freed, or not allocated yet)");
		return -ESTALE;
	}
	return lite_lmr_check_grant(g->hosted, g, info);
}

/* A MAP's answer for @up (a reference of the caller's, still pending). */
static int lite_upcall_complete_map(struct genl_info *info,
				    struct lite_upcall *up)
{
	struct mem_cgroup *old_memcg;
	struct lite_grant *g;
	struct lite_node_id nid;
	u64 handle;
	int ret;

	/*
	 * The grant lives as long as the requester keeps it: charge it to the
	 * requester's memcg, not to the agent's task this runs in (the
	 * allocation is __GFP_ACCOUNT).
	 */
	old_memcg = set_active_memcg(up->memcg);
	ret = lite_nl_grant_parse(info, up->access, &g);
	set_active_memcg(old_memcg);
	if (ret)
		return ret;
	if (lite_grant_id_known(g->grant_id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[LITE_ATTR_GRANT_ID],
				    "LITE_ATTR_GRANT_ID: this grant is installed already");
		ret = -EEXIST;
		goto put;
	}
	if (!lite_upcall_claim(up)) {
		GENL_SET_ERR_MSG(info, "no such upcall is pending (answered or given up)");
		ret = -ENOENT;
		goto put;
	}
	/*
	 * The reservation becomes the grant's: released when the grant is
	 * freed, also if it is never installed (lite_grant_put() below).
	 */
	g->user = up->grant_charge;
	up->grant_charge = NULL;
	lite_count(LITE_CNT_UPCALLS_COMPLETED);
	if (!lite_home_known(g->home_node_id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[LITE_ATTR_NODE_ID],
				    "LITE_ATTR_NODE_ID: the home node is neither this node nor a peer");
		lite_upcall_answer(up, -EHOSTDOWN);
		ret = -EHOSTDOWN;
		goto put;
	}
	g->uid = up->uid;
	g->gid = up->gid;
	g->pid = up->pid;
	g->groups = get_group_info(up->groups);
	/*
	 * Memory hosted here stays until operations on it are done. The home
	 * checks the answer against the LMR itself rather than trust the
	 * agent's ordering of frees and maps: an LMR not hosted (freed, or
	 * its ALLOC not committed yet) or not the one described is refused.
	 */
	mutex_lock(&lite_lock);
	if (lite_node_get_locked(&nid) && nid.id == g->home_node_id) {
		mutex_unlock(&lite_lock);
		ret = lite_upcall_map_hosted(info, g);
		if (ret) {
			lite_upcall_answer(up, ret);
			goto put;
		}
	} else {
		mutex_unlock(&lite_lock);
	}
	ret = lite_grant_install(up->lf, g, &handle);
	if (ret) {
		if (ret == -ESTALE)
			GENL_SET_ERR_MSG(info, "the LMR is being freed on this node (its home)");
		else if (ret == -EMFILE)
			GENL_SET_ERR_MSG(info, "the application file is full of handles");
		else if (ret == -EEXIST)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[LITE_ATTR_GRANT_ID],
					    "LITE_ATTR_GRANT_ID: this grant is installed already");
		lite_upcall_answer(up, ret);
		goto put;
	}
	up->handle = handle;
	up->lmr_id = g->lmr_id;
	up->size = g->size;
	up->home_node_id = g->home_node_id;
	/* Nobody learns the handle: the grant goes back (UNMAP upcall). */
	if (!lite_upcall_heard(up))
		lite_file_handle_drop(up->lf, handle);
	lite_upcall_answer(up, 0);
	return 0;
put:
	lite_grant_put(g);
	return ret;
}

/*
 * The answer to @up (pending when found; the caller's reference): a MAP's
 * grant installed, an ALLOC's LMR id, or the manager's error.
 */
static int lite_upcall_complete_found(struct genl_info *info,
				      struct lite_upcall *up, u32 err)
{
	u64 lmr_id = 0;
	int ret;

	if (!err && up->kind == LITE_UPCALL_MAP)
		return lite_upcall_complete_map(info, up);
	if (!err && lite_upcall_is_rpc(up->kind))
		return lite_upcall_ops->complete_rpc(info, up);
	if (!err && up->kind == LITE_UPCALL_ALLOC) {
		if (!lite_nl_require(info, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID"))
			return -EINVAL;
		ret = lite_nl_get_lmr_id(info, LITE_ATTR_LMR_ID, &lmr_id);
		if (ret)
			return ret;
	}
	if (!lite_upcall_claim(up)) {
		GENL_SET_ERR_MSG(info, "no such upcall is pending (answered or given up)");
		return -ENOENT;
	}
	lite_count(LITE_CNT_UPCALLS_COMPLETED);
	/*
	 * An ALLOC whose caller was killed after the claim: nobody learns the
	 * LMR, so the agent must hear it and free it (a MAP's handle is
	 * dropped here instead; a FREE's effect is what was asked).
	 */
	if (!err && up->kind == LITE_UPCALL_ALLOC && !lite_upcall_heard(up)) {
		GENL_SET_ERR_MSG(info, "the caller left before the answer; free the LMR");
		lite_upcall_answer(up, -ECANCELED);
		return -ECANCELED;
	}
	up->lmr_id = lmr_id;
	if (err && info->attrs[LITE_ATTR_MESSAGE])
		nla_strscpy(up->message, info->attrs[LITE_ATTR_MESSAGE],
			    sizeof(up->message));
	lite_upcall_answer(up, -(int)err);
	return 0;
}

int lite_nl_upcall_complete(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_upcall *up;
	struct nlattr *attr;
	u32 err;
	u64 id;
	int ret;

	ret = lite_nl_check_agent(info);
	if (ret)
		return ret;
	if (!lite_nl_require(info, LITE_ATTR_UPCALL_ID, "LITE_ATTR_UPCALL_ID") ||
	    !lite_nl_require(info, LITE_ATTR_ERRNO, "LITE_ATTR_ERRNO"))
		return -EINVAL;
	attr = info->attrs[LITE_ATTR_UPCALL_ID];
	id = nla_get_u64(attr);
	if (!id) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_UPCALL_ID: upcall id 0 is reserved");
		return -EINVAL;
	}
	attr = info->attrs[LITE_ATTR_ERRNO];
	err = nla_get_u32(attr);
	/* 512 and up are the kernel's own restart codes, not for userspace. */
	if (err >= 512) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "LITE_ATTR_ERRNO: out of range (0..511)");
		return -EINVAL;
	}

	up = lite_upcall_find(id);
	if (!up) {
		GENL_SET_ERR_MSG(info, "no such upcall is pending (answered or given up)");
		return -ENOENT;
	}
	ret = lite_upcall_complete_found(info, up, err);
	lite_upcall_put(up);
	return ret;
}

/* Module unload: no file is open, so no upcall is pending. */
void lite_upcall_exit(void)
{
	WARN_ON(!list_empty(&lite_upcalls));
}
