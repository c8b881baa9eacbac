// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the LMR control calls (ALLOC, MAP, FREE) through the node agent,
 * for /dev/lite's ioctls and for kernel callers (lite_kapi_mem.c): each
 * takes its uapi struct as a kernel copy, checks it, and fills its answer
 * and the manager's message in. The ioctls copy in and out around them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <net/genetlink.h>

#include "mem/lite_grant.h"
#include "lite_upcall.h"

static int lite_alloc_put(struct sk_buff *msg, const void *arg)
{
	const struct lite_alloc *a = arg;

	return nla_put_string(msg, LITE_ATTR_NAME, a->name) ||
	       nla_put_u64_64bit(msg, LITE_ATTR_SIZE, a->size_bytes,
				 LITE_ATTR_PAD) ||
	       nla_put_u32(msg, LITE_ATTR_MODE, a->mode) ||
	       nla_put_u32(msg, LITE_ATTR_NODE_ID, a->home_node_id);
}

int lite_lmr_alloc_run(struct lite_alloc *a)
{
	struct lite_upcall *up;
	int ret;

	memset(a->message, 0, sizeof(a->message));
	a->lmr_id = 0;
	if (a->flags || a->reserved || !lite_user_name_valid(a->name) ||
	    !a->size_bytes || a->size_bytes > LITE_LMR_SIZE_MAX ||
	    (a->mode & ~0666U))
		return -EINVAL;

	up = lite_upcall_new(LITE_UPCALL_ALLOC);
	if (!up)
		return -ENOMEM;
	ret = lite_upcall_call(up, lite_alloc_put, a, a->message);
	if (!ret)
		a->lmr_id = up->lmr_id;
	lite_upcall_put(up);
	return ret;
}

long lite_ioc_alloc(struct lite_file *lf, void __user *arg)
{
	struct lite_alloc __user *uarg = arg;
	struct lite_alloc a;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	ret = lite_lmr_alloc_run(&a);
	if (copy_to_user(uarg, &a, sizeof(a)))
		return -EFAULT;
	return ret;
}

static int lite_map_put(struct sk_buff *msg, const void *arg)
{
	const struct lite_map *m = arg;

	return nla_put_string(msg, LITE_ATTR_NAME, m->name) ||
	       nla_put_u32(msg, LITE_ATTR_ACCESS, m->access);
}

int lite_lmr_map_run(struct lite_file *lf, struct lite_map *m)
{
	struct lite_upcall *up;
	int ret;

	memset(m->message, 0, sizeof(m->message));
	m->handle = 0;
	m->lmr_id = 0;
	m->size_bytes = 0;
	m->home_node_id = 0;
	if (m->flags || m->reserved || !lite_user_name_valid(m->name) ||
	    !m->access || (m->access & ~(LITE_ACCESS_READ | LITE_ACCESS_WRITE)))
		return -EINVAL;

	up = lite_upcall_new(LITE_UPCALL_MAP);
	if (!up)
		return -ENOMEM;
	/* The grant is reserved now: a user at the limit costs no round trip. */
	ret = lite_user_charge_grant(up->user);
	if (ret)
		goto out;
	up->grant_charge = up->user;
	up->memcg = get_mem_cgroup_from_mm(current->mm);
	up->lf = lf;
	/* The answer may touch @lf after a killed caller has left. */
	up->file = lite_file_pin(lf);
	up->access = m->access;
	ret = lite_upcall_call(up, lite_map_put, m, m->message);
	if (!ret) {
		m->handle = up->handle;
		m->lmr_id = up->lmr_id;
		m->size_bytes = up->size;
		m->home_node_id = up->home_node_id;
	}
out:
	lite_upcall_put(up);
	return ret;
}

long lite_ioc_map(struct lite_file *lf, void __user *arg)
{
	struct lite_map __user *uarg = arg;
	struct lite_map m;
	int ret;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	ret = lite_lmr_map_run(lf, &m);
	if (copy_to_user(uarg, &m, sizeof(m))) {
		/* The caller never learns the handle: drop it. */
		if (!ret)
			lite_file_handle_drop(lf, m.handle);
		ret = -EFAULT;
	}
	return ret;
}

static int lite_free_put(struct sk_buff *msg, const void *arg)
{
	const struct lite_free *f = arg;

	return nla_put_string(msg, LITE_ATTR_NAME, f->name);
}

int lite_lmr_free_run(struct lite_free *f)
{
	struct lite_upcall *up;
	int ret;

	memset(f->message, 0, sizeof(f->message));
	if (f->flags || f->reserved || !lite_user_name_valid(f->name))
		return -EINVAL;

	up = lite_upcall_new(LITE_UPCALL_FREE);
	if (!up)
		return -ENOMEM;
	ret = lite_upcall_call(up, lite_free_put, f, f->message);
	lite_upcall_put(up);
	return ret;
}

long lite_ioc_free(struct lite_file *lf, void __user *arg)
{
	struct lite_free __user *uarg = arg;
	struct lite_free f;
	int ret;

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	ret = lite_lmr_free_run(&f);
	if (copy_to_user(uarg, &f, sizeof(f)))
		return -EFAULT;
	return ret;
}
