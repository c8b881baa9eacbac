// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC's control path: LITE_IOC_RPC_REGISTER, _OPEN and _CLOSE, the
 * RPC handles of an open file, mmap of a service's rings, and the netlink
 * commands LITE_CMD_RPC_BIND and LITE_CMD_RPC_SERVICE_GET.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/genetlink.h>

#include "lite_rpc_internal.h"
#include "upcall/lite_upcall.h"

/* ---- handles ---- */

static void lite_rpc_handle_end(struct lite_rpc_handle *h);

static bool lite_rpc_handle_index(struct lite_file *lf, u64 handle, u32 *idx)
{
	u32 low = (u32)handle;

	if ((u32)(handle >> 32) != lf->tag || low < LITE_RPC_HANDLE_BASE)
		return false;
	*idx = low - LITE_RPC_HANDLE_BASE;
	return *idx < LITE_HANDLES_MAX;
}

static u64 lite_rpc_handle_value(struct lite_file *lf, u32 idx)
{
	return (u64)lf->tag << 32 | (LITE_RPC_HANDLE_BASE + idx);
}

/*
 * Publishes @h: from here a sibling thread may close it and free @h (and
 * end what it held), so the caller reads nothing of either afterwards but
 * the index returned in *@idx.
 */
static int lite_rpc_handle_add(struct lite_file *lf, struct lite_rpc_handle *h,
			       u32 *idx, u64 *handle)
{
	int ret;

	ret = xa_alloc_cyclic(&lf->rpc_handles, idx, NULL,
			      XA_LIMIT(0, LITE_HANDLES_MAX - 1), &lf->rpc_next,
			      GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -EMFILE : ret;
	h->index = *idx;
	lite_count(LITE_CNT_HANDLES);
	*handle = lite_rpc_handle_value(lf, *idx);
	/* Into the reserved entry: no allocation. */
	xa_store(&lf->rpc_handles, *idx, h, GFP_KERNEL);
	return 0;
}

/* Ends the handle @idx this ioctl just made, unless a sibling closed it. */
static void lite_rpc_handle_unmake(struct lite_file *lf, u32 idx,
				   struct lite_rpc_handle *h)
{
	if (xa_cmpxchg(&lf->rpc_handles, idx, h, NULL, GFP_KERNEL) == h)
		lite_rpc_handle_end(h);
}

/*
 * The handle @handle of @lf if it is of the kind @serve asks for, with a
 * reference taken on what it holds (a service or a binding); else NULL.
 */
static struct lite_rpc_handle *lite_rpc_handle_get(struct lite_file *lf,
						   u64 handle, bool serve)
{
	struct lite_rpc_handle *h;
	u32 idx;

	if (!lite_rpc_handle_index(lf, handle, &idx))
		return NULL;
	rcu_read_lock();
	h = xa_load(&lf->rpc_handles, idx);
	if (h && (h->serve != serve ||
		  !kref_get_unless_zero(serve ? &h->svc->ref : &h->b->ref)))
		h = NULL;
	rcu_read_unlock();
	return h;
}

struct lite_rpc_service *lite_rpc_handle_service(struct lite_file *lf,
						 u64 handle)
{
	struct lite_rpc_handle *h = lite_rpc_handle_get(lf, handle, true);

	return h ? h->svc : NULL;
}

struct lite_rpc_binding *lite_rpc_handle_binding(struct lite_file *lf,
						 u64 handle)
{
	struct lite_rpc_handle *h = lite_rpc_handle_get(lf, handle, false);

	return h ? h->b : NULL;
}

void lite_rpc_stop_service(struct lite_rpc_service *svc)
{
	bool published = svc->published;

	lite_rpc_service_close(svc);
	if (published)
		lite_upcall_rpc_unregister(&svc->args, svc->service_id);
	lite_rpc_service_put(svc);
}

/* Ends what a handle out of its file held. Process context. */
static void lite_rpc_handle_end(struct lite_rpc_handle *h)
{
	lite_uncount(LITE_CNT_HANDLES);
	if (h->serve)
		lite_rpc_stop_service(h->svc);
	else
		lite_rpc_binding_put(h->b);
	kfree_rcu(h, rcu);
}

void lite_rpc_file_release(struct lite_file *lf)
{
	struct lite_rpc_handle *h;
	unsigned long idx;

	xa_for_each(&lf->rpc_handles, idx, h) {
		xa_erase(&lf->rpc_handles, idx);
		lite_rpc_handle_end(h);
		cond_resched();
	}
	xa_destroy(&lf->rpc_handles);
}

long lite_ioc_rpc_close(struct lite_file *lf, void __user *uarg)
{
	struct lite_rpc_close c;
	struct lite_rpc_handle *h;
	u32 idx;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.flags || c.reserved)
		return -EINVAL;
	if (!lite_rpc_handle_index(lf, c.service, &idx))
		return -EBADF;
	h = xa_erase(&lf->rpc_handles, idx);
	if (!h)
		return -EBADF;
	lite_rpc_handle_end(h);
	return 0;
}

/* ---- REGISTER ---- */

static bool lite_rpc_name_reserved(const char *name)
{
	return !strncmp(name, LITE_RPC_RESERVED_PREFIX,
			strlen(LITE_RPC_RESERVED_PREFIX));
}

/* "lite." names are lite.ko's own services: no file registers or opens one. */
static int lite_rpc_name_refuse(char __user *message)
{
	static const char why[] =
		"names beginning with \"lite.\" are lite.ko's own";

	if (copy_to_user(message, why, sizeof(why)))
		return -EFAULT;
	return -EPERM;
}

int lite_rpc_service_args_check(const struct lite_rpc_register *r,
				struct lite_rpc_service_args *a)
{
	u32 need, slot;

	if (r->flags || !lite_user_name_valid(r->name) || (r->mode & ~0777U) ||
	    r->max_request > LITE_RPC_MSG_MAX ||
	    r->max_reply > LITE_RPC_MSG_MAX ||
	    r->depth > LITE_RPC_DEPTH_MAX ||
	    r->max_clients > LITE_RPC_CLIENTS_MAX)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	strscpy(a->name, r->name, sizeof(a->name));
	a->mode = r->mode;
	a->max_request = r->max_request;
	a->max_reply = r->max_reply;
	a->depth = r->depth ?: 16;
	a->max_clients = r->max_clients ?: 16;
	need = max(a->max_request, a->max_reply);
	slot = max_t(u32, ALIGN(need, LITE_RPC_SLOT_ALIGN),
		     LITE_RPC_SLOT_ALIGN);
	if ((u64)a->depth * slot > LITE_RPC_RING_MAX)
		return -EINVAL;
	a->uid = from_kuid_munged(&init_user_ns, current_euid());
	a->gid = from_kgid_munged(&init_user_ns, current_egid());
	a->pid = task_tgid_nr(current);
	return 0;
}

int lite_rpc_start_service(const struct lite_rpc_service_args *args,
			   struct lite_rpc_service **out, char *message)
{
	struct lite_rpc_service *svc;
	u64 service_id = 0;
	int ret;

	ret = lite_rpc_service_create(args, &svc);
	if (ret)
		return ret;
	ret = lite_upcall_rpc_register(args, svc->port, &service_id, message);
	if (ret) {
		lite_rpc_service_close(svc);
		lite_rpc_service_put(svc);
		return ret;
	}
	lite_rpc_service_publish(svc, service_id);
	*out = svc;
	return 0;
}

long lite_ioc_rpc_register(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_register __user *uarg = arg;
	struct lite_rpc_service_args args;
	struct lite_rpc_service *svc;
	struct lite_rpc_handle *h;
	struct lite_rpc_register r;
	u32 idx = 0;
	int ret;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	ret = lite_rpc_service_args_check(&r, &args);
	if (ret)
		return lite_early_error(uarg->message, ret);
	/*
	 * "lite." names are lite.ko's own services (lite.sync.<node id>): a
	 * process serving one would answer other nodes' lock requests.
	 */
	if (lite_rpc_name_reserved(r.name))
		return lite_rpc_name_refuse(uarg->message);
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return lite_early_error(uarg->message, -ENOMEM);
	memset(r.message, 0, sizeof(r.message));
	ret = lite_rpc_start_service(&args, &svc, r.message);
	if (ret) {
		kfree(h);
		goto out;
	}
	h->serve = true;
	h->svc = svc;
	/* Read before the handle is published (lite_rpc_handle_add()). */
	r.service_id = svc->service_id;
	r.port = svc->port;
	r.slot_bytes = svc->slot_bytes;
	r.ring_bytes = svc->ring_bytes;
	r.map_bytes = svc->ring_bytes * svc->nr_rings;
	r.depth = args.depth;
	r.max_clients = args.max_clients;
	ret = lite_rpc_handle_add(lf, h, &idx, &r.service);
	if (ret) {
		h->index = 0;
		lite_count(LITE_CNT_HANDLES);	/* lite_rpc_handle_end() */
		lite_rpc_handle_end(h);
		goto out;
	}
	r.map_offset = (u64)(idx + 1) << 32;
out:
	if (copy_to_user(uarg, &r, sizeof(r))) {
		if (!ret)
			lite_rpc_handle_unmake(lf, idx, h);
		return -EFAULT;
	}
	return ret;
}

/* ---- OPEN ---- */

/* Under lite_rpc_bind_mutex: find the binding again, else make it. */
static int lite_rpc_bind_locked(const struct lite_rpc_open_ans *ans,
				bool kernel, struct lite_rpc_binding **out,
				char *message)
{
	struct lite_rpc_bind_ans ring = {};
	struct lite_rpc_binding *b;
	int ret;

	*out = lite_rpc_binding_find(ans->service_id, ans->node_id, ans->port);
	if (*out)
		return 0;
	ret = lite_rpc_binding_create(ans, kernel, &b);
	if (ret)
		return ret;
	ret = lite_upcall_rpc_bind(ans->service_id, &b->mem, b->slot_bytes,
				   &ring, message);
	if (!ret)
		ret = lite_rpc_binding_install(b, &ring, out);
	if (ret) {
		/* Not ours to keep: another open's, or none (an error). */
		lite_rpc_binding_discard(b);
		return ret < 0 ? ret : 0;
	}
	return 0;
}

/*
 * One binding is made at a time on this node: two first opens of a service
 * racing would each have the server bind the node's ring, and the server
 * would send replies to the reply slots of whichever came last, which the
 * other open then discards. Later opens find the binding without it.
 */
static DEFINE_MUTEX(lite_rpc_bind_mutex);

/* This node's binding to the service @ans names: found, or made. */
static int lite_rpc_bind(const struct lite_rpc_open_ans *ans, bool kernel,
			 struct lite_rpc_binding **out, char *message)
{
	int ret;

	*out = lite_rpc_binding_find(ans->service_id, ans->node_id, ans->port);
	if (*out)
		return 0;
	if (mutex_lock_killable(&lite_rpc_bind_mutex))
		return -EINTR;
	ret = lite_rpc_bind_locked(ans, kernel, out, message);
	mutex_unlock(&lite_rpc_bind_mutex);
	return ret;
}

/*
 * lite.ko's own services ("lite." names) are bound apart: their bindings
 * are marked kernel, and neither kind of open is handed the other's, even
 * if the manager resolved a name to the other's service.
 */
int lite_rpc_open_service(const char *name, struct lite_rpc_open_ans *ans,
			  struct lite_rpc_binding **out, char *message)
{
	bool kernel = lite_rpc_name_reserved(name);
	int ret = lite_upcall_rpc_open(name, ans, message);

	if (!ret)
		ret = lite_rpc_bind(ans, kernel, out, message);
	if (!ret && (*out)->kernel != kernel) {
		lite_rpc_binding_put(*out);
		ret = -EPERM;
	}
	return ret;
}

long lite_ioc_rpc_open(struct lite_file *lf, void __user *arg)
{
	struct lite_rpc_open __user *uarg = arg;
	struct lite_rpc_open_ans ans = {};
	struct lite_rpc_binding *b;
	struct lite_rpc_handle *h;
	struct lite_rpc_open o;
	u32 idx = 0;
	int ret;

	if (copy_from_user(&o, uarg, sizeof(o)))
		return -EFAULT;
	if (o.flags || o.reserved || !lite_user_name_valid(o.name))
		return lite_early_error(uarg->message, -EINVAL);
	/*
	 * The lock service (lite.sync.<node>) trusts its requests' fields: it
	 * is spoken to only by lite.ko's sync client, never by a process.
	 */
	if (lite_rpc_name_reserved(o.name))
		return lite_rpc_name_refuse(uarg->message);
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return lite_early_error(uarg->message, -ENOMEM);
	memset(o.message, 0, sizeof(o.message));
	ret = lite_rpc_open_service(o.name, &ans, &b, o.message);
	if (ret) {
		kfree(h);
		goto out;
	}
	h->b = b;
	/* Read before the handle is published (lite_rpc_handle_add()). */
	o.service_id = ans.service_id;
	o.node_id = ans.node_id;
	lite_rpc_binding_limits(b, &o.max_request, &o.max_reply, &o.depth);
	ret = lite_rpc_handle_add(lf, h, &idx, &o.service);
	if (ret) {
		lite_rpc_binding_put(b);
		kfree(h);
		goto out;
	}
out:
	if (copy_to_user(uarg, &o, sizeof(o))) {
		if (!ret)
			lite_rpc_handle_unmake(lf, idx, h);
		return -EFAULT;
	}
	return ret;
}

/* ---- mmap ---- */

/*
 * The mapping holds a reference to its service; its pages come on first
 * touch (a ring is allocated when its first client binds). Each page is
 * referenced by the mapping too, so it outlives the service's end.
 */
static void lite_rpc_vm_open(struct vm_area_struct *vma)
{
	lite_rpc_service_get(vma->vm_private_data);
}

static void lite_rpc_vm_close(struct vm_area_struct *vma)
{
	lite_rpc_service_put(vma->vm_private_data);
}

static vm_fault_t lite_rpc_vm_fault(struct vm_fault *vmf)
{
	struct lite_rpc_service *svc = vmf->vma->vm_private_data;
	/*
	 * From the service's base offset, not the VMA's start: after munmap
	 * or mprotect split the mapping, a part's vm_pgoff moves with it.
	 */
	u64 off = (u64)(vmf->pgoff & ((1UL << (32 - PAGE_SHIFT)) - 1)) <<
		  PAGE_SHIFT;
	struct lite_rpc_ring *ring;
	struct page *page = NULL;
	u64 r = div64_u64(off, svc->ring_bytes);

	if (r >= svc->nr_rings)
		return VM_FAULT_SIGBUS;
	ring = &svc->rings[r];
	spin_lock_bh(&svc->lock);
	if (ring->mem.vaddr)
		page = virt_to_page(ring->mem.vaddr + (off - r * svc->ring_bytes));
	spin_unlock_bh(&svc->lock);
	/* A ring no client has bound yet holds nothing to read. */
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct lite_rpc_vm_ops = {
	.open = lite_rpc_vm_open,
	.close = lite_rpc_vm_close,
	.fault = lite_rpc_vm_fault,
};

int lite_rpc_mmap(struct lite_file *lf, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	struct lite_rpc_service *svc;
	struct lite_rpc_handle *h;
	u32 idx;

	/* The offset REGISTER gave: (handle index + 1) << 32 bytes. */
	if (vma->vm_pgoff & ((1UL << (32 - PAGE_SHIFT)) - 1) ||
	    !(vma->vm_pgoff >> (32 - PAGE_SHIFT)))
		return -EINVAL;
	idx = (vma->vm_pgoff >> (32 - PAGE_SHIFT)) - 1;
	h = lite_rpc_handle_get(lf, lite_rpc_handle_value(lf, idx), true);
	if (!h)
		return -EBADF;
	svc = h->svc;
	if (len > svc->ring_bytes * svc->nr_rings) {
		lite_rpc_service_put(svc);
		return -EINVAL;
	}
	/*
	 * Fixed in size (mremap cannot grow it), and other users' requests
	 * stay out of core dumps. A fork keeps it: the child shares the file
	 * and may serve from it.
	 */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	/* The reference moves to the mapping (lite_rpc_vm_close()). */
	vma->vm_private_data = svc;
	vma->vm_ops = &lite_rpc_vm_ops;
	return 0;
}

/* ---- netlink ---- */

const struct nla_policy lite_nl_rpc_bind_policy[LITE_ATTR_MAX + 1] = {
	[LITE_ATTR_SERVICE_ID] = { .type = NLA_U64 },
	[LITE_ATTR_RPC_PORT] = NLA_POLICY_RANGE(NLA_U32, 1, LITE_RPC_PORT_MAX),
	[LITE_ATTR_NODE_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[LITE_ATTR_INCARNATION] = { .type = NLA_U64 },
	[LITE_ATTR_RPC_ADDR] = { .type = NLA_U64 },
	[LITE_ATTR_MEMORY_KEY] = { .type = NLA_U32 },
	/* The policy's bounds are s16: the top is checked below. */
	[LITE_ATTR_RPC_SLOT_BYTES] = NLA_POLICY_MIN(NLA_U32,
						    LITE_RPC_SLOT_ALIGN),
};

int lite_nl_rpc_bind(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_rpc_bind_ans ans = {};
	struct lite_rpc_bind_req req;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (!lite_nl_require(info, LITE_ATTR_SERVICE_ID, "LITE_ATTR_SERVICE_ID") ||
	    !lite_nl_require(info, LITE_ATTR_RPC_PORT, "LITE_ATTR_RPC_PORT") ||
	    !lite_nl_require(info, LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID") ||
	    !lite_nl_require(info, LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION") ||
	    !lite_nl_require(info, LITE_ATTR_RPC_ADDR, "LITE_ATTR_RPC_ADDR") ||
	    !lite_nl_require(info, LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY") ||
	    !lite_nl_require(info, LITE_ATTR_RPC_SLOT_BYTES, "LITE_ATTR_RPC_SLOT_BYTES"))
		return -EINVAL;
	req.service_id = nla_get_u64(info->attrs[LITE_ATTR_SERVICE_ID]);
	req.port = nla_get_u32(info->attrs[LITE_ATTR_RPC_PORT]);
	req.node_id = nla_get_u32(info->attrs[LITE_ATTR_NODE_ID]);
	req.incarnation = nla_get_u64(info->attrs[LITE_ATTR_INCARNATION]);
	req.reply_addr = nla_get_u64(info->attrs[LITE_ATTR_RPC_ADDR]);
	req.reply_key = nla_get_u32(info->attrs[LITE_ATTR_MEMORY_KEY]);
	req.reply_slot_bytes = nla_get_u32(info->attrs[LITE_ATTR_RPC_SLOT_BYTES]);
	if (req.reply_slot_bytes % LITE_RPC_SLOT_ALIGN ||
	    req.reply_slot_bytes > LITE_RPC_MSG_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[LITE_ATTR_RPC_SLOT_BYTES],
				    "LITE_ATTR_RPC_SLOT_BYTES: not a multiple of LITE_RPC_SLOT_ALIGN up to LITE_RPC_MSG_MAX");
		return -EINVAL;
	}
	ret = lite_rpc_service_bind(&req, &ans);
	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		GENL_SET_ERR_MSG(info, "no such service at this port");
		return ret;
	case -ESTALE:
		GENL_SET_ERR_MSG(info, "the service at this port has another id");
		return ret;
	case -EUSERS:
		GENL_SET_ERR_MSG(info, "the service has max_clients client nodes already");
		return ret;
	case -EHOSTDOWN:
		GENL_SET_ERR_MSG(info, "the client is not a peer with this incarnation");
		return ret;
	case -EINVAL:
		GENL_SET_ERR_MSG(info, "the client's reply slots are too small");
		return ret;
	default:
		return ret;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &lite_genl_family, 0,
				LITE_CMD_RPC_BIND);
	if (!hdr ||
	    nla_put_u64_64bit(msg, LITE_ATTR_RPC_ADDR, ans.ring_addr,
			      LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, ans.ring_key) ||
	    nla_put_u32(msg, LITE_ATTR_RPC_DEPTH, ans.depth) ||
	    nla_put_u32(msg, LITE_ATTR_RPC_SLOT_BYTES, ans.slot_bytes)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

struct lite_rpc_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int lite_rpc_dump_one(const struct lite_rpc_service_info *s, void *arg)
{
	struct lite_rpc_dump *d = arg;
	void *hdr;

	hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid,
			  d->cb->nlh->nlmsg_seq, &lite_genl_family, NLM_F_MULTI,
			  LITE_CMD_RPC_SERVICE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(d->skb, LITE_ATTR_SERVICE_ID, s->service_id,
			      LITE_ATTR_PAD) ||
	    nla_put_string(d->skb, LITE_ATTR_NAME, s->name) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_PORT, s->port) ||
	    nla_put_u32(d->skb, LITE_ATTR_UID, s->uid) ||
	    nla_put_u32(d->skb, LITE_ATTR_GID, s->gid) ||
	    nla_put_u32(d->skb, LITE_ATTR_PID, s->pid) ||
	    nla_put_u32(d->skb, LITE_ATTR_MODE, s->mode) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_MAX_REQUEST, s->max_request) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_MAX_REPLY, s->max_reply) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_DEPTH, s->depth) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_MAX_CLIENTS, s->max_clients) ||
	    nla_put_u32(d->skb, LITE_ATTR_RPC_CLIENTS, s->clients) ||
	    nla_put_u64_64bit(d->skb, LITE_ATTR_RPC_QUEUED, s->queued,
			      LITE_ATTR_PAD) ||
	    nla_put_u64_64bit(d->skb, LITE_ATTR_RPC_SERVED, s->served,
			      LITE_ATTR_PAD) ||
	    (s->closing && nla_put_flag(d->skb, LITE_ATTR_RPC_CLOSING))) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	return 0;
}

int lite_nl_rpc_service_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lite_rpc_dump d = { .skb = skb, .cb = cb };
	unsigned long next = cb->args[0] ?: 1;
	int ret;

	ret = lite_rpc_services_visit(&next, lite_rpc_dump_one, &d);
	cb->args[0] = next;
	/* A full message: the rest comes in the next one. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

/* ---- device removal and unload ---- */

void lite_rpc_device_removed(struct lite_device *ldev)
{
	lite_rpc_services_device_removed(ldev);
	lite_rpc_bindings_device_removed(ldev);
}

void lite_rpc_exit(void)
{
	lite_rpc_services_exit();
	lite_rpc_bindings_exit();
	lite_rpc_mem_exit();
}
