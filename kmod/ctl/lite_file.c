// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: open files of /dev/lite: open, release, and the ioctls about the
 * node and the file's handles (UNMAP, NODE, NODE_LOOKUP). The handle table
 * itself is mem/lite_handle.c; per-uid limits are mem/lite_user.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "lite_ctl.h"
#include "rpc/lite_rpc.h"
#include "sync/lite_sync.h"
#include "mem/lite_grant.h"

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

int lite_file_release(struct inode *inode, struct file *file)
{
	struct lite_file *lf = file->private_data;

	/*
	 * Asynchronous calls let go of their bindings first; then services,
	 * whose callers hear ECONNREFUSED at once.
	 */
	lite_rpc_async_release(lf);
	lite_rpc_file_release(lf);
	/* Its locks go to their next waiters, marked: the holder died. */
	lite_sync_file_release(lf);
	/*
	 * Revoke every grant, then wait for all of them with one deadline
	 * (mem/lite_handle.c). No ioctl of the file runs any more, so no
	 * handle is added meanwhile.
	 */
	lite_file_handles_release(lf);
	/* io_uring held the file for each command: none is left. */
	if (lf->uring_user)
		lite_user_put(lf->uring_user);
	kfree(lf);
	return 0;
}

long lite_ioc_unmap(struct lite_file *lf, void __user *arg)
{
	struct lite_unmap __user *uarg = arg;
	struct lite_unmap u;

	if (copy_from_user(&u, uarg, sizeof(u)))
		return -EFAULT;
	if (u.flags || u.reserved)
		return -EINVAL;
	return lite_file_unmap(lf, u.handle);
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

long lite_ioc_node(struct lite_file *lf, void __user *arg)
{
	struct lite_node_info __user *uarg = arg;
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

long lite_ioc_node_lookup(struct lite_file *lf, void __user *arg)
{
	struct lite_node_lookup __user *uarg = arg;
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

