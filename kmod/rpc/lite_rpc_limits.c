// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC's limits (docs/rpc.md "Limits"). Every user of /dev/lite may
 * call and serve, and RPC keeps kernel memory for as long as a service or
 * a binding lives (rings on the server's node, reply slots on the
 * client's; a binding outlives its handles: it is the node's cached way
 * to the service), so each uid has its own share:
 *
 *   rpc_services_per_uid  services a uid serves on this node (REGISTER:
 *                         EDQUOT beyond);
 *   rpc_bindings_per_uid  bindings a uid made on this node, each its first
 *                         OPEN of a service here (OPEN: EDQUOT beyond);
 *   rpc_mib_per_uid       ring and reply slot memory charged to a uid: the
 *                         rings of its services, allocated as client nodes
 *                         bind, and the reply slots of its bindings;
 *   rpc_quota_mib         all RPC memory of the node (apart from LMRs'
 *                         lmr_quota_mib: RPC cannot starve LMRs, nor the
 *                         other way round).
 *
 * The memory is also charged to the memory cgroup of the process that
 * registered the service or made the binding (lite_rpc_mem.c). lite.ko's
 * own services and bindings ("lite." names) are charged to nobody but the
 * node quota: they serve every user. Root is no exception otherwise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "lite_rpc_internal.h"

#define LITE_RPC_LIMIT_MAX	BIT(20)

unsigned int lite_rpc_services_per_uid = 64;
unsigned int lite_rpc_bindings_per_uid = 64;
unsigned int lite_rpc_mib_per_uid = 256;
unsigned int lite_rpc_quota_mib = 1024;

static int lite_param_set_rpc_limit(const char *val,
				    const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_RPC_LIMIT_MAX);
}

static const struct kernel_param_ops lite_rpc_limit_ops = {
	.set = lite_param_set_rpc_limit,
	.get = param_get_uint,
};

module_param_cb(rpc_services_per_uid, &lite_rpc_limit_ops,
		&lite_rpc_services_per_uid, 0644);
MODULE_PARM_DESC(rpc_services_per_uid, "RPC services one uid may serve on this node, 1..1048576 (default 64); more REGISTERs fail with EDQUOT");
module_param_cb(rpc_bindings_per_uid, &lite_rpc_limit_ops,
		&lite_rpc_bindings_per_uid, 0644);
MODULE_PARM_DESC(rpc_bindings_per_uid, "RPC bindings (services opened from this node) one uid may make, 1..1048576 (default 64); more first OPENs fail with EDQUOT");
module_param_cb(rpc_mib_per_uid, &lite_rpc_limit_ops, &lite_rpc_mib_per_uid,
		0644);
MODULE_PARM_DESC(rpc_mib_per_uid, "RPC ring and reply slot memory charged to one uid on this node, 1..1048576 MiB (default 256); beyond it OPENs fail with EDQUOT, binds of its services with ENOSPC");
module_param_cb(rpc_quota_mib, &lite_rpc_limit_ops, &lite_rpc_quota_mib,
		0644);
MODULE_PARM_DESC(rpc_quota_mib, "all RPC ring and reply slot memory of this node, apart from lmr_quota_mib, 1..1048576 MiB (default 1024); beyond it ENOSPC");

static atomic64_t lite_rpc_bytes = ATOMIC64_INIT(0);

int lite_rpc_quota_charge(u64 bytes)
{
	u64 quota = (u64)READ_ONCE(lite_rpc_quota_mib) << 20;
	s64 old = atomic64_read(&lite_rpc_bytes);

	do {
		if (bytes > quota || (u64)old > quota - bytes)
			return -ENOSPC;
	} while (!atomic64_try_cmpxchg(&lite_rpc_bytes, &old, old + bytes));
	return 0;
}

void lite_rpc_quota_uncharge(u64 bytes)
{
	atomic64_sub(bytes, &lite_rpc_bytes);
}

/* What one uid holds; kept while it holds anything. */
struct lite_rpc_user {
	struct hlist_node node;
	u32 uid;
	u32 services;
	u32 bindings;
	u64 bytes;
};

static DEFINE_HASHTABLE(lite_rpc_users, 6);
static DEFINE_SPINLOCK(lite_rpc_users_lock);

static struct lite_rpc_user *lite_rpc_user_find(u32 uid)
{
	struct lite_rpc_user *u;

	lockdep_assert_held(&lite_rpc_users_lock);
	hash_for_each_possible(lite_rpc_users, u, node, uid)
		if (u->uid == uid)
			return u;
	return NULL;
}

int lite_rpc_user_charge(u32 uid, enum lite_rpc_charge what, u64 n)
{
	struct lite_rpc_user *u, *fresh = NULL;
	int ret = 0;

	if (uid == LITE_RPC_UID_NONE)
		return 0;
again:
	spin_lock(&lite_rpc_users_lock);
	u = lite_rpc_user_find(uid);
	if (!u && !fresh) {
		spin_unlock(&lite_rpc_users_lock);
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
		if (!fresh)
			return -ENOMEM;
		goto again;
	}
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(lite_rpc_users, &u->node, uid);
	}
	switch (what) {
	case LITE_RPC_CHARGE_SERVICE:
		if (u->services >= READ_ONCE(lite_rpc_services_per_uid))
			ret = -EDQUOT;
		else
			u->services++;
		break;
	case LITE_RPC_CHARGE_BINDING:
		if (u->bindings >= READ_ONCE(lite_rpc_bindings_per_uid))
			ret = -EDQUOT;
		else
			u->bindings++;
		break;
	case LITE_RPC_CHARGE_BYTES:
		if (n > ((u64)READ_ONCE(lite_rpc_mib_per_uid) << 20) - u->bytes ||
		    u->bytes > (u64)READ_ONCE(lite_rpc_mib_per_uid) << 20)
			ret = -EDQUOT;
		else
			u->bytes += n;
		break;
	}
	/* A new entry that took nothing goes again. */
	if (ret && !u->services && !u->bindings && !u->bytes) {
		hash_del(&u->node);
		fresh = u;
	}
	spin_unlock(&lite_rpc_users_lock);
	kfree(fresh);
	return ret;
}

void lite_rpc_user_uncharge(u32 uid, enum lite_rpc_charge what, u64 n)
{
	struct lite_rpc_user *u, *gone = NULL;

	if (uid == LITE_RPC_UID_NONE)
		return;
	spin_lock(&lite_rpc_users_lock);
	u = lite_rpc_user_find(uid);
	if (!WARN_ON_ONCE(!u)) {
		switch (what) {
		case LITE_RPC_CHARGE_SERVICE:
			if (!WARN_ON_ONCE(!u->services))
				u->services--;
			break;
		case LITE_RPC_CHARGE_BINDING:
			if (!WARN_ON_ONCE(!u->bindings))
				u->bindings--;
			break;
		case LITE_RPC_CHARGE_BYTES:
			if (!WARN_ON_ONCE(u->bytes < n))
				u->bytes -= n;
			break;
		}
		if (!u->services && !u->bindings && !u->bytes) {
			hash_del(&u->node);
			gone = u;
		}
	}
	spin_unlock(&lite_rpc_users_lock);
	kfree(gone);
}
