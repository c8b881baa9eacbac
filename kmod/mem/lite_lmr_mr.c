// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: per-LMR memory regions (key_mode=lmr).
 *
 * In lmr mode a device has no global key. Every hosted LMR is its own
 * memory region, made by fast registration the way net/rds/ib_frmr.c and
 * nvme-rdma do it: ib_alloc_mr(IB_MR_TYPE_MEM_REG), ib_map_mr_sg() over the
 * LMR's chunks, then an IB_WR_REG_MR work request. Before its pages go the
 * region is invalidated (IB_WR_LOCAL_INV, waited for) and deregistered, so
 * a stale grant's work request is refused by the NIC (a remote access
 * error on the poster's QP) instead of reaching memory the kernel reused.
 *
 * Those work requests need a send queue on the device's PD in RTS, and
 * none of the peer connections may carry them: they come and go with the
 * peers (the loopback ones too, and they go before the LMRs on device
 * removal) and their send queues are the data path's. So every device has
 * a private RC QP connected to itself, which never sends a packet: local
 * operations complete in the requester. One work request at a time
 * (ctx->mutex), each signaled and waited for, so the completion is always
 * the one being waited for.
 *
 * The second half (below) is the hosted LMR's side: its two regions (read-
 * write and read-only) made from its chunks, dropped before its pages go,
 * quarantine, and device removal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "lite_mem.h"
#include "lite_lmr.h"

/* Local work requests complete in microseconds; this only catches a hang. */
#define LITE_MR_WR_TIMEOUT_MS	5000

struct lite_mr_ctx {
	struct mutex mutex;		/* one work request at a time */
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	/* A work request failed: the QP is in error, reset it before the next. */
	bool broken;
	/*
	 * A work request did not complete in time: its completion may still
	 * come, so nothing is posted again on this device (new LMRs fail).
	 */
	bool dead;
};

static void lite_mr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lite_mr_ctx *ctx = container_of(wc->wr_cqe, struct lite_mr_ctx,
					       cqe);

	ctx->status = wc->status;
	complete(&ctx->done);
}

/* RESET -> INIT -> RTR -> RTS, connected to itself. */
static int lite_mr_qp_up(struct lite_device *ldev, struct lite_mr_ctx *ctx)
{
	struct ib_device *ibdev = ldev->ibdev;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	union ib_gid gid;
	int ret;

	ret = ib_modify_qp(ctx->qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_INIT;
	attr.port_num = ldev->port;
	ret = ib_modify_qp(ctx->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = ctx->qp->qp_num;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(ibdev, ldev->port);
	rdma_ah_set_port_num(&attr.ah_attr, ldev->port);
	if (rdma_protocol_roce(ibdev, ldev->port)) {
		/* GID 0 is the link-local default GID: no neighbour lookup. */
		ret = rdma_query_gid(ibdev, ldev->port, 0, &gid);
		if (ret)
			return ret;
		rdma_ah_set_grh(&attr.ah_attr, &gid, 0, 0, 1, 0);
	} else {
		struct ib_port_attr pattr;

		ret = ib_query_port(ibdev, ldev->port, &pattr);
		if (ret)
			return ret;
		rdma_ah_set_dlid(&attr.ah_attr, pattr.lid);
	}
	ret = ib_modify_qp(ctx->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(ctx->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

int lite_mr_device_init(struct lite_device *ldev)
{
	struct ib_device *ibdev = ldev->ibdev;
	struct ib_qp_init_attr init = {};
	struct lite_mr_ctx *ctx;
	int ret;

	/* iWARP QPs reach RTS only through a connection: no private QP. */
	if (!rdma_protocol_ib(ibdev, ldev->port) &&
	    !rdma_protocol_roce(ibdev, ldev->port))
		return -EOPNOTSUPP;
	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !ibdev->attrs.max_fast_reg_page_list_len)
		return -EOPNOTSUPP;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->mutex);
	init_completion(&ctx->done);
	ctx->cqe.done = lite_mr_done;

	ctx->cq = ib_alloc_cq(ibdev, NULL, 2, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(ctx->cq)) {
		ret = PTR_ERR(ctx->cq);
		goto err_ctx;
	}
	init.send_cq = ctx->cq;
	init.recv_cq = ctx->cq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	ctx->qp = ib_create_qp(ldev->pd, &init);
	if (IS_ERR(ctx->qp)) {
		ret = PTR_ERR(ctx->qp);
		goto err_cq;
	}
	ret = lite_mr_qp_up(ldev, ctx);
	if (ret)
		goto err_qp;
	ldev->mr_ctx = ctx;
	ldev->max_fr_pages = ibdev->attrs.max_fast_reg_page_list_len;
	return 0;

err_qp:
	ib_destroy_qp(ctx->qp);
err_cq:
	ib_free_cq(ctx->cq);
err_ctx:
	kfree(ctx);
	return ret;
}

/* Device removal, after every LMR's region is gone (lite_lmrs_device_removed()). */
void lite_mr_device_exit(struct lite_device *ldev)
{
	struct lite_mr_ctx *ctx = ldev->mr_ctx;

	if (!ctx)
		return;
	ldev->mr_ctx = NULL;
	ib_destroy_qp(ctx->qp);
	ib_free_cq(ctx->cq);
	kfree(ctx);
}

/* Posts @wr (signaled) and waits for its completion. Under ctx->mutex. */
static int lite_mr_post_wait(struct lite_device *ldev, struct lite_mr_ctx *ctx,
			     struct ib_send_wr *wr)
{
	int ret;

	lockdep_assert_held(&ctx->mutex);
	if (ctx->dead)
		return -EIO;
	if (ctx->broken) {
		ret = lite_mr_qp_up(ldev, ctx);
		if (ret)
			return ret;
		ctx->broken = false;
	}
	wr->wr_cqe = &ctx->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->num_sge = 0;
	reinit_completion(&ctx->done);
	ret = ib_post_send(ctx->qp, wr, NULL);
	if (ret) {
		ctx->broken = true;
		return ret;
	}
	if (!wait_for_completion_timeout(&ctx->done,
					 msecs_to_jiffies(LITE_MR_WR_TIMEOUT_MS))) {
		pr_err("%s: a memory registration work request did not complete in %u ms; no more LMRs on this device\n",
		       dev_name(&ldev->ibdev->dev), LITE_MR_WR_TIMEOUT_MS);
		ctx->dead = true;
		return -ETIMEDOUT;
	}
	if (ctx->status != IB_WC_SUCCESS) {
		pr_warn_ratelimited("%s: memory registration work request failed: %s\n",
				    dev_name(&ldev->ibdev->dev),
				    ib_wc_status_msg(ctx->status));
		ctx->broken = true;
		return -EIO;
	}
	return 0;
}

struct ib_mr *lite_mr_register(struct lite_device *ldev,
			       struct scatterlist *sgl, int nents,
			       unsigned int page_size, u32 npages, int access)
{
	struct lite_mr_ctx *ctx = ldev->mr_ctx;
	struct ib_reg_wr wr = {};
	struct ib_mr *mr;
	int n, ret;

	if (!ctx)
		return ERR_PTR(-ENODEV);
	mr = ib_alloc_mr(ldev->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(mr))
		return mr;
	n = ib_map_mr_sg(mr, sgl, nents, NULL, page_size);
	if (n != nents) {
		ret = n < 0 ? n : -EINVAL;
		goto err;
	}
	/*
	 * A new key byte for every registration: a driver whose allocator
	 * hands the same index back (mlx5's 8-bit variant) then gives the new
	 * region another rkey than the freed one it reuses.
	 */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	mutex_lock(&ctx->mutex);
	ret = lite_mr_post_wait(ldev, ctx, &wr.wr);
	mutex_unlock(&ctx->mutex);
	if (ret)
		goto err;
	lite_count(LITE_CNT_MR_REGISTRATIONS);
	return mr;
err:
	/* Never valid (or its registration failed): nothing can reach it. */
	ib_dereg_mr(mr);
	return ERR_PTR(ret);
}

int lite_mr_unregister(struct lite_device *ldev, struct ib_mr *mr)
{
	struct lite_mr_ctx *ctx = ldev->mr_ctx;
	struct ib_send_wr wr = {};
	u32 rkey = mr->rkey;
	int ret = -ENODEV;

	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = mr->rkey;
	if (ctx) {
		mutex_lock(&ctx->mutex);
		ret = lite_mr_post_wait(ldev, ctx, &wr);
		mutex_unlock(&ctx->mutex);
	}
	if (!ret)
		lite_count(LITE_CNT_MR_INVALIDATIONS);
	else
		pr_warn("%s: cannot invalidate rkey 0x%x (%d); deregistering it\n",
			dev_name(&ldev->ibdev->dev), rkey, ret);
	/* Deregistration ends the region whether or not the invalidation ran. */
	ret = ib_dereg_mr(mr);
	if (ret)
		pr_err("%s: cannot deregister rkey 0x%x (%d)\n",
		       dev_name(&ldev->ibdev->dev), rkey, ret);
	return ret;
}

/* The regions of hosted LMRs, quarantine and device removal. */

/*
 * Invalidates and deregisters the LMR's regions, the read-write one and the
 * read-only one, whichever it has. Under lite_lmr_unmap_mutex, which keeps
 * lmr->ldev. If either fails the pages stay reachable: they are never
 * freed.
 */
void lite_lmr_mr_drop(struct lite_lmr *lmr)
{
	struct ib_mr *mr = lmr->mr, *read_mr = lmr->read_mr;

	lockdep_assert_held(&lite_lmr_unmap_mutex);
	lmr->mr = NULL;
	lmr->read_mr = NULL;
	if (mr && lite_mr_unregister(lmr->ldev, mr))
		lmr->leak = true;
	if (read_mr && lite_mr_unregister(lmr->ldev, read_mr))
		lmr->leak = true;
}

/*
 * key_mode=lmr: one region's page size must divide every chunk but the
 * last, so it is the smallest chunk's block. The chunks are held to at
 * least the smallest order whose blocks make no more pages than one region
 * of @ldev takes (and that the device supports as a page size): the least
 * memory rounded up, at most one block of that order.
 */
int lite_lmr_floor(struct lite_device *ldev, u64 size, unsigned int *floor)
{
	unsigned int o;

	for (o = 0; o <= LITE_LMR_MAX_ORDER; o++) {
		if (!(ldev->ibdev->attrs.page_size_cap & (PAGE_SIZE << o)))
			continue;
		if (DIV_ROUND_UP_ULL(size, PAGE_SIZE << o) <= ldev->max_fr_pages) {
			*floor = o;
			return 0;
		}
	}
	return -ENOMEM;
}

/*
 * key_mode=lmr: the chunks become two regions over the same pages, valid on
 * return: one peers may read, write and (if the device can) use atomics on,
 * whose rkey is the LMR's memory key, and one they may only read, whose
 * rkey is its read key. The manager puts the read key in read-only grants,
 * so the NIC refuses a write with it whatever the holder's kernel does.
 */
int lite_lmr_register(struct lite_lmr *lmr, unsigned int floor)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	unsigned int page_size = PAGE_SIZE << floor;
	u32 npages = DIV_ROUND_UP_ULL(lmr->size, page_size);
	struct ib_mr *mr, *read_mr;
	struct scatterlist *sgl;
	u32 i;

	sgl = kvmalloc_array(lmr->nr_chunks, sizeof(*sgl), GFP_KERNEL);
	if (!sgl)
		return -ENOMEM;
	sg_init_table(sgl, lmr->nr_chunks);
	for (i = 0; i < lmr->nr_chunks; i++) {
		sg_set_page(&sgl[i], lmr->chunks[i].page, lmr->chunks[i].length, 0);
		sg_dma_address(&sgl[i]) = lmr->chunks[i].dma;
		sg_dma_len(&sgl[i]) = lmr->chunks[i].length;
	}
	if (lmr->ldev->atomics)
		access |= IB_ACCESS_REMOTE_ATOMIC;
	mr = lite_mr_register(lmr->ldev, sgl, lmr->nr_chunks, page_size,
			      npages, access);
	if (IS_ERR(mr)) {
		kvfree(sgl);
		return PTR_ERR(mr);
	}
	/* Device removal waits for lite_lmr_mutex: nobody else looks yet. */
	lmr->mr = mr;
	read_mr = lite_mr_register(lmr->ldev, sgl, lmr->nr_chunks, page_size,
				   npages, IB_ACCESS_REMOTE_READ);
	kvfree(sgl);
	/* On error the caller's put drops the first region (lite_lmr_release()). */
	if (IS_ERR(read_mr))
		return PTR_ERR(read_mr);
	lmr->read_mr = read_mr;
	lmr->memory_key = mr->rkey;
	lmr->read_key = read_mr->rkey;
	lmr->iova = mr->iova;
	/* One address range: the same chunk is valid with either key. */
	WARN_ON_ONCE(read_mr->iova != mr->iova);
	return 0;
}

/*
 * LMR_FREE with LITE_ATTR_QUARANTINE: out of the table and its grants
 * revoked like any free, its region invalidated (lmr mode), but the
 * table's reference moves to lite_lmrs_quarantined, so its pages stay
 * allocated, and counted, until lite_lmr_exit().
 */
void lite_lmr_quarantine(struct lite_lmr *lmr)
{
	mutex_lock(&lite_lmr_unmap_mutex);
	lite_lmr_mr_drop(lmr);
	mutex_unlock(&lite_lmr_unmap_mutex);
	mutex_lock(&lite_lmr_mutex);
	list_add_tail(&lmr->quarantine, &lite_lmrs_quarantined);
	mutex_unlock(&lite_lmr_mutex);
	lite_count(LITE_CNT_LMRS_QUARANTINED);
	lite_count_add(LITE_CNT_QUARANTINED_BYTES, lmr->size);
	pr_warn("LMR %llu (%s) quarantined: its %llu bytes stay allocated until lite.ko is unloaded\n",
		lmr->lmr_id, lmr->name, lmr->size);
}

/*
 * Takes down every region and DMA mapping on @ldev, one LMR at a time (the
 * region's invalidation sleeps). No QP on the device is left but the
 * private one, so the order of the two does not matter here. An LMR whose
 * last reference is gone waits in lite_lmr_release() for the mutex, so it
 * is still there.
 */
static void lite_lmrs_unmap_device(struct lite_device *ldev)
{
	struct lite_device *put;
	struct lite_lmr *lmr, *found;

	lockdep_assert_held(&lite_lmr_unmap_mutex);
	do {
		found = NULL;
		spin_lock(&lite_lmr_dma_lock);
		list_for_each_entry(lmr, &lite_lmrs_all, all) {
			if (lmr->ldev == ldev) {
				found = lmr;
				break;
			}
		}
		spin_unlock(&lite_lmr_dma_lock);
		if (!found)
			break;
		lite_lmr_mr_drop(found);
		spin_lock(&lite_lmr_dma_lock);
		put = lite_lmr_unmap_locked(found);
		spin_unlock(&lite_lmr_dma_lock);
		lite_device_put(put);
		cond_resched();
	} while (found);
}

void lite_lmrs_device_removed(struct lite_device *ldev)
{
	struct lite_lmr *lmr, *tmp;
	unsigned long idx;
	LIST_HEAD(lost);

	/* Waits for an allocation mapping chunks on the device right now. */
	mutex_lock(&lite_lmr_mutex);
	xa_for_each(&lite_lmrs, idx, lmr) {
		if (lmr->ldev != ldev)
			continue;
		kref_get(&lmr->ref);
		lmr->lost_id = lmr->lmr_id;
		list_add_tail(&lmr->lost, &lost);
	}
	mutex_lock(&lite_lmr_unmap_mutex);
	lite_lmrs_unmap_device(ldev);
	mutex_unlock(&lite_lmr_unmap_mutex);
	mutex_unlock(&lite_lmr_mutex);

	/*
	 * Every grant into them is stale now: revoke this node's, then tell
	 * the agent (no lock held: the event takes lite_lock and sleeps).
	 */
	list_for_each_entry_safe(lmr, tmp, &lost, lost) {
		list_del(&lmr->lost);
		lite_grants_revoke_lmr(lmr->lost_id, lmr);
		pr_warn("LMR %llu (%s) lost: its RDMA device %s was removed; memory kept until LMR_FREE\n",
			lmr->lost_id, lmr->name, dev_name(&ldev->ibdev->dev));
		lite_nl_lmr_lost_event(lmr->lost_id, ENODEV);
		lite_lmr_put(lmr);
	}
}

struct lite_nl_lmr_ev {
	u64 lmr_id;
	int reason;
};

static int lite_nl_fill_lmr_lost(struct sk_buff *msg, const void *arg)
{
	const struct lite_nl_lmr_ev *ev = arg;

	if (nla_put_u64_64bit(msg, LITE_ATTR_LMR_ID, ev->lmr_id, LITE_ATTR_PAD) ||
	    nla_put_u32(msg, LITE_ATTR_REASON, ev->reason))
		return -EMSGSIZE;
	return 0;
}

void lite_nl_lmr_lost_event(u64 lmr_id, int reason)
{
	struct lite_nl_lmr_ev ev = { .lmr_id = lmr_id, .reason = reason };

	lite_nl_event(LITE_CMD_EVENT_LMR_LOST, lite_nl_fill_lmr_lost, &ev);
}
