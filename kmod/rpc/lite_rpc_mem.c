// SPDX-License-Identifier: GPL-2.0
/*
 * LITE RPC: the memory peers write into, a service's rings and a
 * binding's reply slots. Each piece is physically contiguous (at most
 * LITE_RPC_RING_MAX, so one block of the page allocator), which keeps an
 * RDMA address to a slot a plain offset, needs one region under
 * key_mode=lmr, and maps into the server process page by page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "lite_rpc_internal.h"

/* Pieces whose region could not be invalidated: never freed before unload. */
struct lite_rpc_leak {
	struct list_head entry;
	void *vaddr;
	size_t bytes;
};

static LIST_HEAD(lite_rpc_leaks);
static DEFINE_SPINLOCK(lite_rpc_leaks_lock);

static int lite_rpc_mem_register(struct lite_rpc_mem *mem)
{
	struct scatterlist sg;
	struct ib_mr *mr;

	sg_init_table(&sg, 1);
	sg_set_buf(&sg, mem->vaddr, mem->bytes);
	sg_dma_address(&sg) = mem->dma;
	sg_dma_len(&sg) = mem->bytes;
	/* Peers only write into rings and reply slots (RDMA WRITE with immediate). */
	mr = lite_mr_register(mem->ldev, &sg, 1, PAGE_SIZE,
			      mem->bytes >> PAGE_SHIFT,
			      IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	mem->mr = mr;
	mem->addr = mr->iova;
	mem->rkey = mr->rkey;
	return 0;
}

int lite_rpc_mem_alloc(struct lite_device *ldev, size_t bytes, u32 uid,
		       struct lite_rpc_mem *mem)
{
	struct ib_device *ibdev = ldev->ibdev;
	int ret;

	memset(mem, 0, sizeof(*mem));
	bytes = PAGE_ALIGN(bytes);
	if (!bytes || bytes > LITE_RPC_RING_MAX)
		return -EINVAL;
	if (lite_key_mode == LITE_KEY_MODE_LMR &&
	    (bytes >> PAGE_SHIFT) > ldev->max_fr_pages)
		return -EINVAL;
	ret = lite_rpc_user_charge(uid, LITE_RPC_CHARGE_BYTES, bytes);
	if (ret)
		return ret;
	ret = lite_rpc_quota_charge(bytes);
	if (ret)
		goto err_user;
	/*
	 * Split into order-0 pages: each can be mapped into the server.
	 * Charged to the active memory cgroup (the caller's, or the one the
	 * caller made active: a service's registrar's).
	 */
	mem->vaddr = alloc_pages_exact(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					      __GFP_NOWARN);
	if (!mem->vaddr) {
		ret = -ENOMEM;
		goto err_quota;
	}
	mem->uid = uid;
	mem->bytes = bytes;
	mem->dma = ib_dma_map_single(ibdev, mem->vaddr, bytes,
				     DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, mem->dma)) {
		ret = -ENOMEM;
		goto err_free;
	}
	kref_get(&ldev->ref);
	mem->ldev = ldev;
	mem->lkey = ldev->pd->local_dma_lkey;
	if (lite_key_mode == LITE_KEY_MODE_LMR) {
		ret = lite_rpc_mem_register(mem);
		if (ret)
			goto err_unmap;
	} else {
		mem->addr = mem->dma;
		mem->rkey = ldev->global_rkey;
	}
	return 0;

err_unmap:
	ib_dma_unmap_single(ibdev, mem->dma, bytes, DMA_BIDIRECTIONAL);
	lite_device_put(ldev);
	mem->ldev = NULL;
err_free:
	free_pages_exact(mem->vaddr, bytes);
	mem->vaddr = NULL;
err_quota:
	lite_rpc_quota_uncharge(bytes);
err_user:
	lite_rpc_user_uncharge(uid, LITE_RPC_CHARGE_BYTES, bytes);
	return ret;
}

/* The device's part: its region and DMA mapping. False if it stays open. */
static bool lite_rpc_mem_unmap_dev(struct lite_rpc_mem *mem)
{
	bool ended = true;

	if (!mem->ldev)
		return true;
	if (mem->mr && lite_mr_unregister(mem->ldev, mem->mr))
		ended = false;
	mem->mr = NULL;
	ib_dma_unmap_single(mem->ldev->ibdev, mem->dma, mem->bytes,
			    DMA_BIDIRECTIONAL);
	lite_device_put(mem->ldev);
	mem->ldev = NULL;
	return ended;
}

void lite_rpc_mem_unmap(struct lite_rpc_mem *mem)
{
	if (!lite_rpc_mem_unmap_dev(mem))
		mem->leak = true;
}

void lite_rpc_mem_free(struct lite_rpc_mem *mem, bool reachable)
{
	struct lite_rpc_leak *leak;
	/*
	 * A peer may still write: an invalidated region stops it
	 * (key_mode=lmr, also when lite_rpc_mem_unmap() ended it already);
	 * the global key cannot, so the pages stay.
	 */
	bool keep = reachable && lite_key_mode != LITE_KEY_MODE_LMR;

	if (!mem->vaddr)
		return;
	if (!lite_rpc_mem_unmap_dev(mem) || mem->leak)
		keep = true;
	/* Kept pages stay on the node's quota, not on the user's. */
	lite_rpc_user_uncharge(mem->uid, LITE_RPC_CHARGE_BYTES, mem->bytes);
	if (keep) {
		leak = kmalloc(sizeof(*leak), GFP_KERNEL | __GFP_NOFAIL);
		leak->vaddr = mem->vaddr;
		leak->bytes = mem->bytes;
		spin_lock(&lite_rpc_leaks_lock);
		list_add(&leak->entry, &lite_rpc_leaks);
		spin_unlock(&lite_rpc_leaks_lock);
		lite_count_add(LITE_CNT_RPC_QUARANTINED_BYTES, mem->bytes);
	} else {
		free_pages_exact(mem->vaddr, mem->bytes);
		lite_rpc_quota_uncharge(mem->bytes);
	}
	mem->vaddr = NULL;
}

/* Called with no QP left: nothing can reach the pages kept. */
void lite_rpc_mem_exit(void)
{
	struct lite_rpc_leak *leak, *tmp;

	list_for_each_entry_safe(leak, tmp, &lite_rpc_leaks, entry) {
		list_del(&leak->entry);
		lite_count_add(LITE_CNT_RPC_QUARANTINED_BYTES, -(s64)leak->bytes);
		lite_rpc_quota_uncharge(leak->bytes);
		free_pages_exact(leak->vaddr, leak->bytes);
		kfree(leak);
	}
}
