// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: what one uid holds on this node across all its files (grants, upcalls),
 * and its limits.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "lite_mem.h"

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
