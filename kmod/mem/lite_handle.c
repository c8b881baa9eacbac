// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the handles of an open /dev/lite file.
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
#include <linux/rcupdate.h>
#include <linux/xarray.h>

#include "lite_mem.h"
#include "lite_grant.h"

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

/*
 * @lf is closing and no ioctl of it runs any more, so no handle is added
 * meanwhile.
 */
void lite_file_handles_release(struct lite_file *lf)
{
	struct lite_grant *grant;
	unsigned long idx, deadline;

	/*
	 * Revoke every grant first, then wait for all of them with one
	 * deadline: a file with many stuck grants keeps its closing task
	 * (uninterruptible, perhaps dying) for one drain bound, not one per
	 * grant. What has not drained by then is parked (lite_grant_unmap()).
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
