// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: LMR memory this node hosts (LITE_CMD_LMR_*).
 *
 * The agent allocates an LMR's memory here when the cluster manager picks
 * this node as its home. The memory is zeroed, physically contiguous chunks
 * of at most LITE_LMR_MAX_ORDER (the buddy allocator's largest order), each
 * DMA-mapped on the RDMA device under the node's address. With
 * key_mode=global peers reach them with the device's global key and the DMA
 * addresses, nothing registered per LMR. With key_mode=lmr the chunks are
 * two memory regions over the same pages (lite_lmr_mr.c): a read-write one
 * whose rkey is the LMR's key and a read-only one whose rkey is its read
 * key, shown to peers as one chunk: the regions' address range.
 *
 * Lifetimes. The table (lite_lmrs, under lite_lmr_mutex) holds a reference
 * to each hosted LMR; a grant to a hosted LMR held by an application of
 * this node holds another, so LMR_FREE takes the LMR out of the table,
 * revokes the grants and frees the pages once the last operation on them
 * has put its grant. The memory region and DMA mapping go with the last
 * reference or with the device (lite_lmrs_device_removed()), whichever
 * comes first, both under lite_lmr_unmap_mutex; the region is invalidated
 * before the pages go. The last reference is dropped in process context
 * (grants put theirs from process context, see lite_slot_put()).
 *
 * An LMR becomes visible (in lite_lmrs, counted against the quota) only
 * once the agent has its LMR_ALLOC reply: until then its id is reserved in
 * the table (lookups see nothing), and if the reply cannot be delivered the
 * allocation is undone, so the agent never sees a failure for memory that
 * stays hosted. lite_lmr_get() looks up under the xarray's own lock, not
 * lite_lmr_mutex, so an UPCALL_COMPLETE does not wait behind an allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <net/genetlink.h>

#include "lite_mem.h"
#include "transport/lite_conn.h"
#include "lite_grant.h"
#include "lite_lmr.h"

/* All LMRs this node hosts together, in MiB. */
const struct lite_mem_ops *lite_mem_ops;

void lite_mem_set_ops(const struct lite_mem_ops *ops)
{
	lite_mem_ops = ops;
}

unsigned int lite_lmr_quota_mib = 512;

static int lite_param_set_quota(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 1048576);
}

static const struct kernel_param_ops lite_quota_ops = {
	.set = lite_param_set_quota,
	.get = param_get_uint,
};

module_param_cb(lmr_quota_mib, &lite_quota_ops, &lite_lmr_quota_mib, 0444);
MODULE_PARM_DESC(lmr_quota_mib, "memory for the LMRs this node hosts, 1..1048576 MiB (default 512)");

/* Chunks of one LMR: what a map answer and the LMR_ALLOC reply carry. */
#define LITE_LMR_CHUNKS_MAX \
	min_t(u64, LITE_CHUNKS_PER_NEST, LITE_NL_CHUNKS_FIT)

/* lmr id -> struct lite_lmr; changed under lite_lmr_mutex. */
DEFINE_XARRAY(lite_lmrs);
/* The table, every LMR's id, epoch and releasing mark, the quarantine list. */
DEFINE_MUTEX(lite_lmr_mutex);
/*
 * Bytes of every committed LMR whose pages are not freed yet: hosted ones
 * and freed ones a revoked grant still holds. Counted at commit (under
 * lite_lmr_mutex, which orders it after the quota check) and given back
 * when the pages go (lite_lmr_release(), any context): a free does not make
 * room while the memory is still held.
 */
static atomic64_t lite_lmr_bytes = ATOMIC64_INIT(0);

LIST_HEAD(lite_lmrs_all);	/* every LMR with memory, hosted or not */
DEFINE_SPINLOCK(lite_lmr_dma_lock);
/*
 * Serializes taking an LMR's region and DMA mappings down (the last put,
 * LMR_FREE's quarantine, device removal), which sleeps for the region's
 * invalidation, so device removal returns only once none is left on the
 * device. Taken after lite_lmr_mutex, before lite_lmr_dma_lock.
 */
DEFINE_MUTEX(lite_lmr_unmap_mutex);
/* Freed with LITE_ATTR_QUARANTINE: pages kept until unload (lite_lmr_exit()). */
LIST_HEAD(lite_lmrs_quarantined);

/* Unmaps the chunks mapped on lmr->ldev; returns the device's reference. */
struct lite_device *lite_lmr_unmap_locked(struct lite_lmr *lmr)
{
	struct lite_device *ldev = lmr->ldev;
	u32 i;

	lockdep_assert_held(&lite_lmr_dma_lock);
	if (!ldev)
		return NULL;
	for (i = 0; i < lmr->nr_mapped; i++)
		ib_dma_unmap_page(ldev->ibdev, lmr->chunks[i].dma,
				  PAGE_SIZE << lmr->chunks[i].order,
				  DMA_BIDIRECTIONAL);
	lmr->nr_mapped = 0;
	lmr->ldev = NULL;
	return ldev;
}

/* Process context: invalidates, unmaps and frees the memory. */
static void lite_lmr_release(struct kref *ref)
{
	struct lite_lmr *lmr = container_of(ref, struct lite_lmr, ref);
	struct lite_device *ldev;
	u32 i;

	might_sleep();
	mutex_lock(&lite_lmr_unmap_mutex);
	/* The region first: until it is invalid the NIC may still write. */
	lite_lmr_mr_drop(lmr);
	spin_lock(&lite_lmr_dma_lock);
	list_del(&lmr->all);
	ldev = lite_lmr_unmap_locked(lmr);
	spin_unlock(&lite_lmr_dma_lock);
	mutex_unlock(&lite_lmr_unmap_mutex);
	if (ldev)
		lite_device_put(ldev);
	if (lmr->leak) {
		pr_err("LMR %llu (%s): its memory region could not be deregistered; its %llu bytes are never freed\n",
		       lmr->lmr_id, lmr->name, lmr->size);
		lite_count(LITE_CNT_LMRS_QUARANTINED);
		lite_count_add(LITE_CNT_QUARANTINED_BYTES, lmr->size);
		return;
	}
	for (i = 0; i < lmr->nr_chunks; i++)
		__free_pages(lmr->chunks[i].page, lmr->chunks[i].order);
	if (lmr->counted) {
		atomic64_sub(lmr->size, &lite_lmr_bytes);
		lite_count_add(LITE_CNT_LMR_BYTES, -(s64)lmr->size);
	}
	kvfree(lmr);
}

void lite_lmr_put(struct lite_lmr *lmr)
{
	kref_put(&lmr->ref, lite_lmr_release);
}

/*
 * The table's reference is dropped only after xa_erase(), which takes the
 * xarray's lock: an LMR found under that lock still has it. Reserved ids
 * (an allocation not yet answered) read as NULL.
 */
struct lite_lmr *lite_lmr_get(u64 lmr_id)
{
	struct lite_lmr *lmr;

	xa_lock(&lite_lmrs);
	lmr = xa_load(&lite_lmrs, lmr_id);
	if (lmr)
		kref_get(&lmr->ref);
	xa_unlock(&lite_lmrs);
	return lmr;
}

void lite_lmr_set_unhosted(struct lite_lmr *lmr)
{
	lmr->unhosted = true;
}

bool lite_lmr_unhosted(const struct lite_lmr *lmr)
{
	return lmr->unhosted;
}

/*
 * What peers are told: the chunks with the global key, or in lmr mode the
 * region as one chunk (its address range is contiguous whatever the pages).
 */
static u32 lite_lmr_nr_shown(const struct lite_lmr *lmr)
{
	return lite_key_mode == LITE_KEY_MODE_LMR ? 1 : lmr->nr_chunks;
}

static void lite_lmr_chunk(const void *obj, u32 i, u64 *addr, u64 *len)
{
	const struct lite_lmr *lmr = obj;

	/* Chunks whose device is gone have no address any more. */
	if (lite_key_mode == LITE_KEY_MODE_LMR) {
		*addr = lmr->nr_mapped ? lmr->iova : 0;
		*len = lmr->size;
		return;
	}
	*addr = lmr->nr_mapped > i ? lmr->chunks[i].dma : 0;
	*len = lmr->chunks[i].length;
}

/*
 * Only the home can check a MAP answer against the memory itself: a grant
 * whose chunks are not this LMR's mapped chunks would send the data path's
 * RDMA to whatever those addresses are now.
 */
int lite_lmr_check_grant(struct lite_lmr *lmr, const struct lite_grant *g,
			 struct genl_info *info)
{
	int ret = 0;
	u32 i;

	/* A read-only grant may carry the read key (key_mode=lmr). */
	bool key_ok = g->memory_key == lmr->memory_key ||
		      (lmr->read_key && g->memory_key == lmr->read_key &&
		       !(g->access & LITE_ACCESS_WRITE));

	if (g->size != lmr->size || g->nr_chunks != lite_lmr_nr_shown(lmr) ||
	    !key_ok) {
		GENL_SET_ERR_MSG(info, "size, chunk count or key differ from the hosted LMR's");
		return -ESTALE;
	}
	spin_lock(&lite_lmr_dma_lock);
	/* nr_mapped is 0 once the device went (its DMA addresses with it). */
	if (lmr->nr_mapped != lmr->nr_chunks) {
		GENL_SET_ERR_MSG(info, "the hosted LMR is not mapped on an RDMA device");
		ret = -ESTALE;
	}
	for (i = 0; !ret && i < g->nr_chunks; i++) {
		u64 addr, len;

		lite_lmr_chunk(lmr, i, &addr, &len);
		if (g->chunks[i].addr != addr || g->chunks[i].length != len) {
			GENL_SET_ERR_MSG(info, "the answer's chunks are not the hosted LMR's");
			ret = -ESTALE;
		}
	}
	spin_unlock(&lite_lmr_dma_lock);
	return ret;
}

/*
 * Allocates and maps the chunks, largest blocks first, smaller ones (down
 * to order @floor) when the page allocator has none. Bounded: every pass
 * either adds a chunk (at most lmr's capacity) or lowers the order.
 */
static int lite_lmr_fill(struct lite_lmr *lmr, u32 max_chunks,
			 unsigned int floor)
{
	struct ib_device *ibdev = lmr->ldev->ibdev;
	unsigned int cap = LITE_LMR_MAX_ORDER;
	u64 left = lmr->size;

	while (left) {
		unsigned long pages = DIV_ROUND_UP(left, PAGE_SIZE);
		unsigned int order = max(floor, min_t(unsigned int, cap,
						      ilog2(pages)));
		struct lite_lmr_chunk *c;
		struct page *page;
		u64 dma;

		if (lmr->nr_chunks == max_chunks)
			return -ENOMEM;
		page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN |
				   __GFP_NORETRY, order);
		if (!page) {
			if (order <= floor)
				return -ENOMEM;
			cap = order - 1;
			continue;
		}
		dma = ib_dma_map_page(ibdev, page, 0, PAGE_SIZE << order,
				      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, dma)) {
			__free_pages(page, order);
			return -ENOMEM;
		}
		c = &lmr->chunks[lmr->nr_chunks];
		c->page = page;
		c->order = order;
		c->dma = dma;
		c->length = min_t(u64, PAGE_SIZE << order, left);
		/* Mapped chunks are counted under the lock the unmap takes. */
		spin_lock(&lite_lmr_dma_lock);
		lmr->nr_chunks++;
		lmr->nr_mapped = lmr->nr_chunks;
		spin_unlock(&lite_lmr_dma_lock);
		left -= c->length;
		cond_resched();
	}
	return 0;
}

/*
 * RPC rings and reply slots count against the same quota as LMRs: both are
 * memory this node keeps for peers to write into.
 */
int lite_lmr_quota_charge(u64 bytes)
{
	u64 quota = (u64)READ_ONCE(lite_lmr_quota_mib) << 20;
	s64 old = atomic64_read(&lite_lmr_bytes);

	do {
		if (bytes > quota || (u64)old > quota - bytes)
			return -ENOSPC;
	} while (!atomic64_try_cmpxchg(&lite_lmr_bytes, &old, old + bytes));
	return 0;
}

void lite_lmr_quota_uncharge(u64 bytes)
{
	atomic64_sub(bytes, &lite_lmr_bytes);
}

/* Under lite_lmr_mutex: a new LMR, hosted, or an error with a message. */
static int lite_lmr_create_locked(const struct lite_lmr_args *a,
				  struct genl_info *info, struct lite_lmr **out)
{
	u64 quota = (u64)lite_lmr_quota_mib << 20;
	unsigned int floor = 0;
	struct lite_device *ldev;
	struct lite_lmr *lmr;
	u64 max_chunks;
	int ret;

	if (xa_load(&lite_lmrs, a->lmr_id)) {
		GENL_SET_ERR_MSG(info, "this lmr id is hosted here already");
		return -EEXIST;
	}
	if (a->size > quota ||
	    (u64)atomic64_read(&lite_lmr_bytes) > quota - a->size) {
		GENL_SET_ERR_MSG(info, "the node's LMR quota (lmr_quota_mib) is used up");
		return -ENOSPC;
	}
	/*
	 * A map answer carries one chunk nest (LITE_CHUNKS_PER_NEST), and so
	 * does the reply: on kernels that pad 64-bit attributes fewer fit.
	 */
	if (DIV_ROUND_UP_ULL(a->size, LITE_LMR_CHUNK_MAX) > LITE_LMR_CHUNKS_MAX) {
		GENL_SET_ERR_MSG(info, "an LMR this large needs more than 2048 chunks");
		return -ENOMEM;
	}
	max_chunks = min_t(u64, LITE_LMR_CHUNKS_MAX,
			   DIV_ROUND_UP_ULL(a->size, PAGE_SIZE));

	ret = lite_node_device_get(&ldev);
	if (ret == -ENXIO) {
		GENL_SET_ERR_MSG(info, "the node identity is not set");
		return ret;
	}
	if (ret) {
		GENL_SET_ERR_MSG(info, "no RDMA device with keys ready has the node address");
		return ret;
	}
	if (lite_key_mode == LITE_KEY_MODE_LMR &&
	    lite_lmr_floor(ldev, a->size, &floor)) {
		GENL_SET_ERR_MSG(info, "too large for one memory region of the RDMA device");
		lite_device_put(ldev);
		return -ENOMEM;
	}

	lmr = kvzalloc(struct_size(lmr, chunks, max_chunks), GFP_KERNEL);
	if (!lmr) {
		lite_device_put(ldev);
		return -ENOMEM;
	}
	kref_init(&lmr->ref);
	lmr->lmr_id = a->lmr_id;
	lmr->size = a->size;
	lmr->uid = a->uid;
	lmr->gid = a->gid;
	lmr->mode = a->mode;
	memcpy(lmr->name, a->name, sizeof(lmr->name));
	lmr->memory_key = ldev->global_rkey;
	/*
	 * On the list before any chunk is mapped, so a device removal (which
	 * takes lite_lmr_mutex first) sees every mapping.
	 */
	lmr->ldev = ldev;
	spin_lock(&lite_lmr_dma_lock);
	list_add_tail(&lmr->all, &lite_lmrs_all);
	spin_unlock(&lite_lmr_dma_lock);

	ret = lite_lmr_fill(lmr, max_chunks, floor);
	if (!ret && lite_key_mode == LITE_KEY_MODE_LMR) {
		ret = lite_lmr_register(lmr, floor);
		if (ret && ret != -ENOMEM)
			GENL_SET_ERR_MSG(info, "the LMR's memory region could not be registered");
	}
	/* The id is ours (checked above, under the mutex); xa_store cannot fail. */
	if (!ret)
		ret = xa_reserve(&lite_lmrs, lmr->lmr_id, GFP_KERNEL);
	if (ret) {
		if (ret == -ENOMEM)
			GENL_SET_ERR_MSG(info, "no memory for the LMR");
		lite_lmr_put(lmr);
		return ret;
	}
	*out = lmr;
	return 0;
}

/* Under lite_lmr_mutex: a reserved LMR becomes hosted. */
static void lite_lmr_commit_locked(struct lite_lmr *lmr)
{
	lockdep_assert_held(&lite_lmr_mutex);
	WARN_ON(xa_is_err(xa_store(&lite_lmrs, lmr->lmr_id, lmr, GFP_KERNEL)));
	lmr->counted = true;
	atomic64_add(lmr->size, &lite_lmr_bytes);
	lite_count(LITE_CNT_LMRS);
	lite_count_add(LITE_CNT_LMR_BYTES, lmr->size);
}

static int lite_nl_put_lmr(struct sk_buff *msg, const struct lite_lmr *lmr,
			   bool all)
{
	if (nla_put_u64_64bit(msg, LITE_ATTR_LMR_ID, lmr->lmr_id,
			      LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, lmr->memory_key) ||
	    (lmr->read_key &&
	     nla_put_u32(msg, LITE_ATTR_READ_KEY, lmr->read_key)))
		return -EMSGSIZE;
	if (all &&
	    (nla_put_string(msg, LITE_ATTR_NAME, lmr->name) ||
	     nla_put_u64_64bit(msg, LITE_ATTR_SIZE, lmr->size, LITE_ATTR_PAD) ||
	     nla_put_u32(msg, LITE_ATTR_UID, lmr->uid) ||
	     nla_put_u32(msg, LITE_ATTR_GID, lmr->gid) ||
	     nla_put_u32(msg, LITE_ATTR_MODE, lmr->mode) ||
	     nla_put_u64_64bit(msg, LITE_ATTR_EPOCH, lmr->epoch,
			       LITE_ATTR_PAD) ||
	     (lmr->releasing && nla_put_flag(msg, LITE_ATTR_RELEASING))))
		return -EMSGSIZE;
	return 0;
}

int lite_nl_lmr_alloc(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_lmr_args a;
	struct lite_lmr *lmr;
	struct sk_buff *msg;
	u32 next = 0;
	void *hdr;
	int ret;

	ret = lite_nl_check_owner(info);
	if (!ret)
		ret = lite_nl_lmr_alloc_args(info, &a);
	if (ret)
		return ret;

	mutex_lock(&lite_lmr_mutex);
	/* A gauge tests read to see that other commands run meanwhile. */
	lite_count(LITE_CNT_LMR_ALLOCS_RUNNING);
	ret = lite_lmr_create_locked(&a, info, &lmr);
	if (ret)
		goto out;
	/* One message however many chunks: the reply is sized for them. */
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE + LITE_NL_CHUNK_BYTES(lmr->nr_chunks),
			  GFP_KERNEL);
	ret = -ENOMEM;
	if (!msg)
		goto undo;
	hdr = genlmsg_put_reply(msg, info, &lite_genl_family, 0,
				LITE_CMD_LMR_ALLOC);
	ret = -EMSGSIZE;
	if (!hdr || lite_nl_put_lmr(msg, lmr, false) ||
	    lite_nl_put_chunks(msg, lmr, lite_lmr_nr_shown(lmr), &next,
			       lite_lmr_chunk) ||
	    next != lite_lmr_nr_shown(lmr)) {
		nlmsg_free(msg);
		goto undo;
	}
	genlmsg_end(msg, hdr);
	/*
	 * Reply first, commit after: a reply that cannot be queued (the
	 * agent's receive buffer is full, or its socket is gone) was not
	 * delivered, so the allocation is undone and the doit's error is
	 * the answer. Nothing else can have seen the reserved id meanwhile.
	 */
	ret = genlmsg_reply(msg, info);
	if (ret) {
		GENL_SET_ERR_MSG(info, "the reply could not be delivered; nothing allocated");
		goto undo;
	}
	lite_lmr_commit_locked(lmr);
	pr_debug("hosting LMR %llu (%s), %llu bytes in %u chunks\n",
		 lmr->lmr_id, lmr->name, lmr->size, lmr->nr_chunks);
	goto out;

undo:
	xa_release(&lite_lmrs, lmr->lmr_id);
	lite_lmr_put(lmr);
out:
	lite_uncount(LITE_CNT_LMR_ALLOCS_RUNNING);
	mutex_unlock(&lite_lmr_mutex);
	return ret;
}

/* Under lite_lmr_mutex: out of the table; the caller puts the reference. */
static void lite_lmr_unhost_locked(struct lite_lmr *lmr)
{
	xa_erase(&lite_lmrs, lmr->lmr_id);
	lite_uncount(LITE_CNT_LMRS);
	lite_mem_ops->lmr_gone(lmr->lmr_id);
}

int lite_nl_lmr_free(struct sk_buff *skb, struct genl_info *info)
{
	struct lite_lmr *lmr;
	bool quarantine;
	u64 id;
	int ret;

	ret = lite_nl_check_owner(info);
	if (ret)
		return ret;
	if (!lite_nl_require(info, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID"))
		return -EINVAL;
	ret = lite_nl_get_lmr_id(info, LITE_ATTR_LMR_ID, &id);
	if (ret)
		return ret;
	quarantine = nla_get_flag(info->attrs[LITE_ATTR_QUARANTINE]);
	/*
	 * The manager counts a failed holder as having acknowledged once this
	 * node removed it; its connections' QPs may still be flushing. So no
	 * page goes before every connection closed so far has its QP
	 * destroyed (a quarantine keeps the pages anyway).
	 */
	if (!quarantine) {
		ret = lite_conns_wait_closed();
		if (ret) {
			GENL_SET_ERR_MSG(info, "interrupted waiting for closed QPs; nothing freed");
			return ret;
		}
	}

	mutex_lock(&lite_lmr_mutex);
	lmr = xa_load(&lite_lmrs, id);
	if (lmr)
		lite_lmr_unhost_locked(lmr);
	mutex_unlock(&lite_lmr_mutex);
	if (!lmr) {
		GENL_SET_ERR_MSG(info, "no LMR with this id is hosted here");
		return -ENOENT;
	}
	/*
	 * Operations already running finish on their grant's reference. The
	 * pass also marks the LMR unhosted, so a MAP answer installed after
	 * it is refused rather than left unrevoked.
	 */
	lite_grants_revoke_lmr(id, lmr);
	if (quarantine) {
		lite_lmr_quarantine(lmr);
		return 0;
	}
	pr_debug("freed LMR %llu (%s)\n", id, lmr->name);
	lite_lmr_put(lmr);
	return 0;
}

int lite_nl_lmr_update(struct sk_buff *skb, struct genl_info *info)
{
	u64 id, new_id = 0, epoch = 0;
	struct lite_lmr *lmr;
	int ret;

	ret = lite_nl_check_owner(info);
	if (ret)
		return ret;
	if (!lite_nl_require(info, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID"))
		return -EINVAL;
	ret = lite_nl_get_lmr_id(info, LITE_ATTR_LMR_ID, &id);
	if (!ret && info->attrs[LITE_ATTR_NEW_LMR_ID])
		ret = lite_nl_get_lmr_id(info, LITE_ATTR_NEW_LMR_ID, &new_id);
	if (ret)
		return ret;
	if (info->attrs[LITE_ATTR_EPOCH])
		epoch = nla_get_u64(info->attrs[LITE_ATTR_EPOCH]);

	mutex_lock(&lite_lmr_mutex);
	lmr = xa_load(&lite_lmrs, id);
	if (!lmr) {
		GENL_SET_ERR_MSG(info, "no LMR with this id is hosted here");
		ret = -ENOENT;
		goto out;
	}
	if (new_id && new_id != id) {
		ret = xa_insert(&lite_lmrs, new_id, lmr, GFP_KERNEL);
		if (ret == -EBUSY) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[LITE_ATTR_NEW_LMR_ID],
					    "LITE_ATTR_NEW_LMR_ID: another hosted LMR has this id");
			ret = -EEXIST;
		}
		if (ret)
			goto out;
		xa_erase(&lite_lmrs, id);
		lmr->lmr_id = new_id;
	}
	if (info->attrs[LITE_ATTR_EPOCH])
		lmr->epoch = epoch;
	/* Sticky: a freed LMR never becomes live again under its id. */
	if (nla_get_flag(info->attrs[LITE_ATTR_RELEASING]))
		lmr->releasing = true;
out:
	mutex_unlock(&lite_lmr_mutex);
	return ret;
}

/*
 * cb->args[0]: the lmr id to resume at; cb->args[1]: the chunk to resume at
 * in it; cb->args[2]: set when done. An LMR whose chunks do not fit in one
 * message goes on in the next ones (same attributes, the following chunks).
 */
int lite_nl_lmr_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct lite_lmr *lmr;
	unsigned long idx;
	int ret = 0;

	if (cb->args[2])
		return 0;
	mutex_lock(&lite_lmr_mutex);
	xa_for_each_start(&lite_lmrs, idx, lmr, cb->args[0]) {
		u32 next = idx == cb->args[0] ? cb->args[1] : 0;
		void *hdr;

		if (next >= lite_lmr_nr_shown(lmr))
			next = 0;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &lite_genl_family,
				  NLM_F_MULTI, LITE_CMD_LMR_GET);
		if (!hdr ||
		    lite_nl_put_lmr(skb, lmr, true) ||
		    lite_nl_put_chunks(skb, lmr, lite_lmr_nr_shown(lmr), &next,
				       lite_lmr_chunk)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			cb->args[0] = idx;
			cb->args[1] = next;
			ret = skb->len ? 0 : -EMSGSIZE;
			goto out;
		}
		genlmsg_end(skb, hdr);
		if (next < lite_lmr_nr_shown(lmr)) {
			cb->args[0] = idx;
			cb->args[1] = next;
			goto out;
		}
	}
	cb->args[2] = 1;
out:
	mutex_unlock(&lite_lmr_mutex);
	return ret ? ret : skb->len;
}

/* Module unload: no netlink command or open file is left. */
void lite_lmr_exit(void)
{
	struct lite_lmr *lmr;
	unsigned long idx;

	struct lite_lmr *tmp;

	mutex_lock(&lite_lmr_mutex);
	xa_for_each(&lite_lmrs, idx, lmr) {
		lite_lmr_unhost_locked(lmr);
		lite_lmr_put(lmr);
	}
	/* Every QP is gone (lite_exit()): nothing can reach these pages. */
	list_for_each_entry_safe(lmr, tmp, &lite_lmrs_quarantined, quarantine) {
		list_del(&lmr->quarantine);
		lite_uncount(LITE_CNT_LMRS_QUARANTINED);
		lite_count_add(LITE_CNT_QUARANTINED_BYTES, -(s64)lmr->size);
		pr_info("freeing quarantined LMR %llu (%s)\n", lmr->lmr_id,
			lmr->name);
		lite_lmr_put(lmr);
	}
	mutex_unlock(&lite_lmr_mutex);
	xa_destroy(&lite_lmrs);
	WARN_ON(!list_empty(&lite_lmrs_all));
}
