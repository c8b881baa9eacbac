// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: per-RDMA-device resources, managed through an ib_client.
 *
 * Every device the RDMA core knows about gets a protection domain and, by
 * key_mode, either the global memory key (global: one DMA memory region
 * whose rkey covers all of the node's memory, which is what lets LITE serve
 * any LMR without registering it) or the private QP that registers a memory
 * region per LMR (lmr, lite_lmr_mr.c). Peers only ever learn a key through
 * lite.ko itself, never userspace. global_key_errno is 0 once the device's
 * keys are ready in its mode.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "lite_transport.h"

static LIST_HEAD(lite_devices);
static DEFINE_MUTEX(lite_devices_lock);

static struct ib_client lite_ib_client;

static void lite_device_release(struct kref *ref)
{
	kfree(container_of(ref, struct lite_device, ref));
}

/*
 * The global memory key. IB_PD_UNSAFE_GLOBAL_RKEY would give one, but its
 * memory region allows remote reads and writes only, and LITE's atomics need
 * IB_ACCESS_REMOTE_ATOMIC as well (providers check it: rxe fails an atomic
 * on that key with a remote access error). The RDMA core has had no kernel
 * API for a DMA MR with chosen access since ib_get_dma_mr() was removed, so
 * this sets one up exactly the way __ib_alloc_pd() sets up its internal MR,
 * and accounts it in the PD's use count so ib_dereg_mr() can release it.
 *
 * The exposure is the same as IB_PD_UNSAFE_GLOBAL_RKEY's: whoever holds
 * the rkey and a QP on this PD can read and write all of the node's memory
 * (on rxe and siw the addresses are kernel virtual addresses). So this logs
 * the warning __ib_alloc_pd() logs for that flag, which operators and
 * tools grep for. Who sees the key: the agent (LMR_ALLOC reply), the
 * manager and other nodes' agents, which install it in grants; netlink
 * dumps that carry it are CAP_NET_ADMIN only and applications never get
 * it; a QP on this PD needs an authenticated peer connection. Two things this
 * does differently from the core, both known: the MR is not in restrack
 * (`rdma res show mr` does not list it; its PD is), and upstream takes no
 * new user of an all-memory remote key. Per-LMR keys (fast registration)
 * are the way out of both and are separate work.
 */
static int lite_device_alloc_global_mr(struct lite_device *ldev)
{
	struct ib_device *ibdev = ldev->ibdev;
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	struct ib_mr *mr;

	if (!ibdev->ops.get_dma_mr)
		return -EOPNOTSUPP;
	if (ibdev->attrs.atomic_cap != IB_ATOMIC_NONE)
		access |= IB_ACCESS_REMOTE_ATOMIC;

	mr = ibdev->ops.get_dma_mr(ldev->pd, access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	/* __ib_alloc_pd()'s words, with the device and what is allowed. */
	pr_warn("enabling unsafe global rkey on %s (remote read, write%s of all memory)\n",
		dev_name(&ibdev->dev),
		access & IB_ACCESS_REMOTE_ATOMIC ? ", atomics" : "");
	mr->device = ibdev;
	mr->pd = ldev->pd;
	mr->type = IB_MR_TYPE_DMA;
	mr->uobject = NULL;
	mr->need_inval = false;
	atomic_inc(&ldev->pd->usecnt);

	ldev->global_mr = mr;
	ldev->global_rkey = mr->rkey;
	ldev->atomics = access & IB_ACCESS_REMOTE_ATOMIC;
	return 0;
}

static void lite_device_free_resources(struct lite_device *ldev)
{
	lite_transport_ops->device_keys_exit(ldev);
	if (ldev->global_mr) {
		ib_dereg_mr(ldev->global_mr);
		ldev->global_mr = NULL;
	}
	if (ldev->pd) {
		ib_dealloc_pd(ldev->pd);
		ldev->pd = NULL;
	}
}

static int lite_device_alloc_resources(struct lite_device *ldev)
{
	struct ib_device *ibdev = ldev->ibdev;
	int err;

	ldev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ldev->pd)) {
		err = PTR_ERR(ldev->pd);
		ldev->pd = NULL;
		return err;
	}

	if (lite_key_mode == LITE_KEY_MODE_LMR) {
		/* No global key: every LMR gets its own region. */
		ldev->atomics = ibdev->attrs.atomic_cap != IB_ATOMIC_NONE;
		err = lite_transport_ops->device_keys_init(ldev);
	} else {
		err = lite_device_alloc_global_mr(ldev);
	}
	if (err)
		lite_device_free_resources(ldev);
	return err;
}

static int lite_ib_add(struct ib_device *ibdev)
{
	struct lite_device *ldev;

	ldev = kzalloc(sizeof(*ldev), GFP_KERNEL);
	if (!ldev)
		return -ENOMEM;
	kref_init(&ldev->ref);
	ldev->ibdev = ibdev;
	ldev->port = rdma_start_port(ibdev);

	/*
	 * A device without the global key is still listed, with the reason,
	 * so an operator can see why LITE does not use it.
	 */
	ldev->global_key_errno = lite_device_alloc_resources(ldev);
	if (ldev->global_key_errno)
		pr_warn("%s: no %s memory key (error %d); device not used\n",
			dev_name(&ibdev->dev),
			lite_key_mode == LITE_KEY_MODE_LMR ? "per-LMR" : "global",
			ldev->global_key_errno);
	else
		pr_info("%s: serving port %u with %s%s\n",
			dev_name(&ibdev->dev), ldev->port,
			lite_key_mode == LITE_KEY_MODE_LMR ?
			"a memory key per LMR" : "the global memory key",
			ldev->atomics ? "" : " (no remote atomics)");
	/* Connections work without it; operations over them fail (EIO). */
	if (!ldev->global_key_errno && lite_transport_ops->device_added(ldev))
		pr_warn("%s: no memory for operation contexts; operations will fail\n",
			dev_name(&ibdev->dev));

	mutex_lock(&lite_devices_lock);
	list_add_tail(&ldev->entry, &lite_devices);
	mutex_unlock(&lite_devices_lock);

	ib_set_client_data(ibdev, &lite_ib_client, ldev);

	/* The node's listener may have been waiting for this device. */
	if (!ldev->global_key_errno)
		lite_node_device_added();
	return 0;
}

static void lite_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct lite_device *ldev = client_data;

	/* No new lookups, then no new QPs, then tear the existing ones down. */
	mutex_lock(&lite_devices_lock);
	list_del(&ldev->entry);
	mutex_unlock(&lite_devices_lock);
	lite_peers_device_removed(ldev);
	/* No connection, so no operation, is left on the device. */
	lite_transport_ops->device_removed(ldev);

	/* The RDMA core requires everything on the device to be gone now. */
	lite_device_free_resources(ldev);
	pr_info("%s: released\n", dev_name(&ibdev->dev));
	kref_put(&ldev->ref, lite_device_release);
}

static struct ib_client lite_ib_client = {
	.name = "lite",
	.add = lite_ib_add,
	.remove = lite_ib_remove,
};

struct lite_device *lite_device_get(struct ib_device *ibdev)
{
	struct lite_device *ldev, *found = NULL;

	mutex_lock(&lite_devices_lock);
	list_for_each_entry(ldev, &lite_devices, entry) {
		if (ldev->ibdev == ibdev && !ldev->global_key_errno) {
			kref_get(&ldev->ref);
			found = ldev;
			break;
		}
	}
	mutex_unlock(&lite_devices_lock);
	return found;
}

void lite_device_put(struct lite_device *ldev)
{
	kref_put(&ldev->ref, lite_device_release);
}

int lite_visit_devices(lite_device_fn fn, void *arg)
{
	struct lite_device *ldev;
	int ret = 0;

	mutex_lock(&lite_devices_lock);
	list_for_each_entry(ldev, &lite_devices, entry) {
		ret = fn(ldev, arg);
		if (ret)
			break;
	}
	mutex_unlock(&lite_devices_lock);
	return ret;
}

int lite_device_init(void)
{
	return ib_register_client(&lite_ib_client);
}

void lite_device_exit(void)
{
	/* Calls lite_ib_remove() for every device still present. */
	ib_unregister_client(&lite_ib_client);
}
