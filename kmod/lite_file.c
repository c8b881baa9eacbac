// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: open files of /dev/lite and the handles in them.
 *
 * A handle is (the file's random 32-bit tag << 32) | an index into the
 * file's table, allocated cyclically, so a handle from another open file,
 * or one already unmapped, is not found (EBADF) for a long while. The table
 * holds a reference to each handle's grant; lookups are lock-free (RCU plus
 * kref_get_unless_zero()), which is why grants are freed after a grace
 * period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "lite_internal.h"
#include "lite_rpc.h"
#include "lite_sync.h"
#include "lite_grant.h"

/*
 * Per-user limits (outside review #8, docs/datapath.md "Per-user limits"):
 * every user of /dev/lite (0660, group lite) may map, and every grant is
 * kernel memory (about 300 bytes plus 24 per chunk, up to ~96 KiB), so one
 * user's grants, across all of its files, are counted against
 * max_grants_per_uid. A MAP reserves its grant before its upcall is sent
 * (so a user at the limit costs no manager round
 * trip) and the installed grant keeps the charge until it is freed, also
 * while it is parked. Root is no exception: its processes have their own
 * share, and a root service with a leak must not get the memory back
 * either; the parameter is writable for a node that needs more.
 *
 * One entry per uid with anything charged, in a small hash table under a
 * spinlock: taken once per MAP, upcall and grant free, never per
 * operation. Irq-safe because the last grant reference may go in any
 * context.
 */
#define LITE_MAX_GRANTS_PER_UID_LIMIT	BIT(20)

unsigned int lite_max_grants_per_uid = 4096;

static int lite_param_set_max_grants(const char *val,
				     const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_MAX_GRANTS_PER_UID_LIMIT);
}

static const struct kernel_param_ops lite_max_grants_ops = {
	.set = lite_param_set_max_grants,
	.get = param_get_uint,
};

module_param_cb(max_grants_per_uid, &lite_max_grants_ops,
		&lite_max_grants_per_uid, 0644);
MODULE_PARM_DESC(max_grants_per_uid, "grants (mapped handles) one uid may hold on this node across all its files, 1..1048576 (default 4096); more MAPs fail with EDQUOT");

static DEFINE_HASHTABLE(lite_users, 6);
static DEFINE_SPINLOCK(lite_users_lock);

static struct lite_user *lite_user_find_locked(u32 uid)
{
	struct lite_user *user;

	lockdep_assert_held(&lite_users_lock);
	hash_for_each_possible(lite_users, user, node, uid) {
		if (user->uid == uid)
			return user;
	}
	return NULL;
}

struct lite_user *lite_user_get(u32 uid)
{
	struct lite_user *user, *fresh;
	unsigned long flags;

	spin_lock_irqsave(&lite_users_lock, flags);
	user = lite_user_find_locked(uid);
	if (user)
		user->refs++;
	spin_unlock_irqrestore(&lite_users_lock, flags);
	if (user)
		return user;

	/*
	 * Shared by every process of the uid and kept only while one of them
	 * has something charged, so not charged to whichever memcg came first.
	 */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return NULL;
	fresh->uid = uid;
	fresh->refs = 1;
	spin_lock_irqsave(&lite_users_lock, flags);
	user = lite_user_find_locked(uid);
	if (user) {
		user->refs++;
	} else {
		hash_add(lite_users, &fresh->node, uid);
		user = fresh;
		fresh = NULL;
	}
	spin_unlock_irqrestore(&lite_users_lock, flags);
	kfree(fresh);
	return user;
}

static void lite_user_put_locked(struct lite_user *user)
{
	lockdep_assert_held(&lite_users_lock);
	if (--user->refs)
		return;
	WARN_ON_ONCE(user->grants || user->upcalls);
	hash_del(&user->node);
	kfree(user);
}

void lite_user_put(struct lite_user *user)
{
	unsigned long flags;

	spin_lock_irqsave(&lite_users_lock, flags);
	lite_user_put_locked(user);
	spin_unlock_irqrestore(&lite_users_lock, flags);
}

int lite_user_charge_grant(struct lite_user *user)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&lite_users_lock, flags);
	if (user->grants >= READ_ONCE(lite_max_grants_per_uid)) {
		ret = -EDQUOT;
	} else {
		user->grants++;
		user->refs++;
	}
	spin_unlock_irqrestore(&lite_users_lock, flags);
	if (ret)
		lite_count(LITE_CNT_USER_GRANTS_REFUSED);
	return ret;
}

void lite_user_uncharge_grant(struct lite_user *user)
{
	unsigned long flags;

	spin_lock_irqsave(&lite_users_lock, flags);
	if (!WARN_ON_ONCE(!user->grants))
		user->grants--;
	lite_user_put_locked(user);
	spin_unlock_irqrestore(&lite_users_lock, flags);
}

struct lite_file *lite_file_new(void)
{
	struct lite_file *lf;

	lf = kzalloc(sizeof(*lf), GFP_KERNEL);
	if (!lf)
		return NULL;
	xa_init_flags(&lf->handles, XA_FLAGS_ALLOC);
	xa_init_flags(&lf->rpc_handles, XA_FLAGS_ALLOC);
	xa_init_flags(&lf->rpc_calls, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&lf->rpc_call_wait);
	xa_init(&lf->sync_homes);
	xa_init(&lf->sync_held);
	/* Never 0, so no handle is 0. */
	lf->tag = get_random_u32() | 1;
	return lf;
}

int lite_file_open(struct inode *inode, struct file *file)
{
	struct lite_file *lf = lite_file_new();

	if (!lf)
		return -ENOMEM;
	lf->file = file;
	file->private_data = lf;
	lite_prio_file_init(lf, false);
	return nonseekable_open(inode, file);
}

/*
 * The handle's grant is out of @lf: give it back to the manager, once
 * nothing of it is in flight here (operations that found the handle before
 * it went, or that their callers left, end first).
 */
static void lite_file_unmapped(struct lite_grant *grant,
			       unsigned long deadline)
{
	lite_uncount(LITE_CNT_HANDLES);
	lite_grant_unmap(grant, deadline);
}

struct file *lite_file_pin(struct lite_file *lf)
{
	return get_file(lf->file);
}

int lite_file_release(struct inode *inode, struct file *file)
{
	struct lite_file *lf = file->private_data;
	struct lite_grant *grant;
	unsigned long idx, deadline;

	/*
	 * Asynchronous calls let go of their bindings first; then services,
	 * whose callers hear ECONNREFUSED at once.
	 */
	lite_rpc_async_release(lf);
	lite_rpc_file_release(lf);
	/* Its locks go to their next waiters, marked: the holder died. */
	lite_sync_file_release(lf);
	/*
	 * Revoke every grant first, then wait for all of them with one
	 * deadline: a file with many stuck grants keeps its closing task
	 * (uninterruptible, perhaps dying) for one drain bound, not one per
	 * grant. What has not drained by then is parked (lite_grant_unmap()).
	 * No ioctl of the file runs any more, so no handle is added meanwhile.
	 */
	xa_for_each(&lf->handles, idx, grant)
		WRITE_ONCE(grant->revoked, -ESTALE);
	deadline = jiffies + lite_grant_drain_jiffies();
	xa_for_each(&lf->handles, idx, grant) {
		xa_erase(&lf->handles, idx);
		lite_file_unmapped(grant, deadline);
		cond_resched();
	}
	xa_destroy(&lf->handles);
	/* io_uring held the file for each command: none is left. */
	if (lf->uring_user)
		lite_user_put(lf->uring_user);
	kfree(lf);
	return 0;
}

static bool lite_handle_index(struct lite_file *lf, u64 handle, u32 *idx)
{
	if ((u32)(handle >> 32) != lf->tag)
		return false;
	*idx = (u32)handle;
	return *idx < LITE_HANDLES_MAX;
}

struct lite_grant *lite_file_grant_get(struct lite_file *lf, u64 handle)
{
	struct lite_grant *grant;
	u32 idx;

	if (!lite_handle_index(lf, handle, &idx))
		return NULL;
	rcu_read_lock();
	grant = xa_load(&lf->handles, idx);
	if (grant && !kref_get_unless_zero(&grant->ref))
		grant = NULL;
	rcu_read_unlock();
	return grant;
}

int lite_file_handle_add(struct lite_file *lf, struct lite_grant *grant,
			 u64 *handle)
{
	u32 idx;
	int ret;

	kref_get(&grant->ref);
	ret = xa_alloc_cyclic(&lf->handles, &idx, grant,
			      XA_LIMIT(0, LITE_HANDLES_MAX - 1), &lf->next,
			      GFP_KERNEL);
	if (ret < 0) {
		lite_grant_put(grant);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	lite_count(LITE_CNT_HANDLES);
	*handle = (u64)lf->tag << 32 | idx;
	return 0;
}

struct lite_grant *lite_file_handle_remove(struct lite_file *lf, u64 handle)
{
	u32 idx;

	if (!lite_handle_index(lf, handle, &idx))
		return NULL;
	return xa_erase(&lf->handles, idx);
}

void lite_file_handle_drop(struct lite_file *lf, u64 handle)
{
	struct lite_grant *grant = lite_file_handle_remove(lf, handle);

	if (grant)
		lite_file_unmapped(grant, jiffies + lite_grant_drain_jiffies());
}

int lite_file_unmap(struct lite_file *lf, u64 handle)
{
	struct lite_grant *grant = lite_file_handle_remove(lf, handle);

	if (!grant)
		return -EBADF;
	lite_file_unmapped(grant, jiffies + lite_grant_drain_jiffies());
	return 0;
}

static long lite_ioctl_unmap(struct lite_file *lf, struct lite_unmap __user *uarg)
{
	struct lite_unmap u;

	if (copy_from_user(&u, uarg, sizeof(u)))
		return -EFAULT;
	if (u.flags || u.reserved)
		return -EINVAL;
	return lite_file_unmap(lf, u.handle);
	return 0;
}

struct lite_node_ctx {
	struct lite_member *members;
	u32 max;
	u32 num;
};

static int lite_node_one(const struct lite_peer_info *p, void *arg)
{
	struct lite_node_ctx *ctx = arg;

	if (ctx->num < ctx->max) {
		ctx->members[ctx->num].node_id = p->node_id;
		ctx->members[ctx->num].state = p->state;
		ctx->members[ctx->num].incarnation = p->incarnation;
	}
	ctx->num++;
	return 0;
}

static long lite_ioctl_node(struct lite_node_info __user *uarg)
{
	struct lite_node_ctx ctx = {};
	struct lite_node_info n;
	struct lite_node_id nid;
	unsigned long next = 0;
	bool set;
	long ret = 0;

	if (copy_from_user(&n, uarg, sizeof(n)))
		return -EFAULT;
	if (n.flags || n.reserved || n.max_members > LITE_MEMBERS_MAX ||
	    (n.max_members && !n.members))
		return -EINVAL;
	if (n.max_members) {
		ctx.members = kvcalloc(n.max_members, sizeof(*ctx.members),
				       GFP_KERNEL);
		if (!ctx.members)
			return -ENOMEM;
		ctx.max = n.max_members;
	}

	mutex_lock(&lite_lock);
	set = lite_node_get_locked(&nid);
	mutex_unlock(&lite_lock);
	n.node_id = 0;
	n.incarnation = 0;
	/* This node first, once it has an identity; then its peers. */
	if (set) {
		struct lite_peer_info self = {
			.node_id = nid.id,
			.incarnation = nid.incarnation,
			.state = LITE_PEER_CONNECTED,
		};

		n.node_id = nid.id;
		n.incarnation = nid.incarnation;
		lite_node_one(&self, &ctx);
		lite_peers_visit(&next, lite_node_one, &ctx);
	}
	n.num_members = ctx.num;
	if (ctx.max &&
	    copy_to_user(u64_to_user_ptr(n.members), ctx.members,
			 sizeof(*ctx.members) * min(ctx.num, ctx.max)))
		ret = -EFAULT;
	if (!ret && copy_to_user(uarg, &n, sizeof(n)))
		ret = -EFAULT;
	kvfree(ctx.members);
	return ret;
}

/* The same layout for 32- and 64-bit callers: no padding anywhere. */
static_assert(sizeof(struct lite_node_lookup) == LITE_NODE_NAME_BUF + 8);

/* By name (name[0] != 0) fills node_id, else by node_id fills name. */
static int lite_node_lookup_locked(struct lite_node_lookup *lk)
{
	struct lite_node_id self;
	struct lite_peer *peer;

	lockdep_assert_held(&lite_lock);
	if (!lite_node_get_locked(&self))
		return -ENOTCONN;
	if (lk->name[0]) {
		if (self.name[0] && !strcmp(lk->name, self.name)) {
			lk->node_id = self.id;
			return 0;
		}
		peer = lite_peer_find_name_locked(lk->name);
		if (!peer)
			return -ENOENT;
		lk->node_id = peer->node_id;
		return 0;
	}
	if (lk->node_id && lk->node_id == self.id) {
		strscpy_pad(lk->name, self.name, sizeof(lk->name));
		return 0;
	}
	peer = lite_peer_find_locked(lk->node_id);
	if (!peer)
		return -ENOENT;
	strscpy_pad(lk->name, peer->name, sizeof(lk->name));
	return 0;
}

static long lite_ioctl_node_lookup(struct lite_node_lookup __user *uarg)
{
	struct lite_node_lookup lk;
	int ret;

	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	if (lk.flags || (lk.name[0] && !lite_node_name_valid(lk.name)))
		return -EINVAL;
	mutex_lock(&lite_lock);
	ret = lite_node_lookup_locked(&lk);
	mutex_unlock(&lite_lock);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &lk, sizeof(lk)))
		return -EFAULT;
	return 0;
}

long lite_file_ioctl(struct lite_file *lf, unsigned int cmd, void __user *uarg)
{
	switch (cmd) {
	case LITE_IOC_NODE:
		return lite_ioctl_node(uarg);
	case LITE_IOC_ALLOC:
		return lite_ioctl_alloc(uarg);
	case LITE_IOC_MAP:
		return lite_ioctl_map(lf, uarg);
	case LITE_IOC_UNMAP:
		return lite_ioctl_unmap(lf, uarg);
	case LITE_IOC_FREE:
		return lite_ioctl_free(uarg);
	case LITE_IOC_NODE_LOOKUP:
		return lite_ioctl_node_lookup(uarg);
	default:
		return -ENOTTY;
	}
}
