// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: Local Indirection TiEr for RDMA.
 *
 * lite.ko virtualizes RDMA for every process and kernel subsystem on a node:
 * one global memory key, shared queue pairs, named memory regions, RPC and
 * locks. This file wires the layers together in order (docs/architecture.md,
 * "lite.ko's layers"): the one file that may call every layer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>

#include "ctl/lite_ctl.h"
#include "mem/lite_grant.h"
#include "ops/lite_ops.h"
#include "rpc/lite_rpc.h"
#include "sync/lite_sync.h"
#include "upcall/lite_upcall.h"

/* ---- what the transport tells the layers above, in this order ---- */

static int lite_device_keys_init(struct lite_device *ldev)
{
	return lite_mr_device_init(ldev);
}

static void lite_device_keys_exit(struct lite_device *ldev)
{
	lite_mr_device_exit(ldev);
}

static int lite_device_added(struct lite_device *ldev)
{
	/* Connections work without it; operations over them fail (EIO). */
	return lite_ops_device_add(ldev);
}

static void lite_device_removed(struct lite_device *ldev)
{
	/* No connection, so no operation, is left on the device. */
	lite_ops_device_remove(ldev);
	/* RPC rings and reply slots on it end like LMR memory below. */
	lite_rpc_device_removed(ldev);
	/*
	 * Hosted LMR memory stays (lost: its grants revoked, the agent told),
	 * but its DMA mappings and memory regions go with the device, before
	 * the private QP that invalidates them.
	 */
	lite_lmrs_device_removed(ldev);
}

static void lite_peer_init(struct lite_peer *peer)
{
	lite_peer_qos_init(&peer->qos);
}

static void lite_peer_down_locked(u32 node_id)
{
	/* Calls fail at once: bindings, then the services it called. */
	lite_rpc_peer_down_locked(node_id);
	/* Its lock waits are dropped; the locks it holds stay (docs/locks.md). */
	lite_sync_peer_down(node_id);
}

static void lite_peer_failed_locked(u32 node_id)
{
	/* Only the manager's verdict passes its locks on (docs/locks.md, "Failures"). */
	lite_sync_peer_failed(node_id);
}

static void lite_node_set_locked(u32 node_id)
{
	lite_sync_node_set(node_id);
}

/* ---- what LMRs and grants tell the layers above ---- */

static const struct lite_mem_ops lite_mem_ops_impl = {
	.lmr_gone = lite_sync_lmr_gone,
	.grant_given_back = lite_upcall_unmap,
};

/* ---- what the upcall channel hands to RPC ---- */

static const struct lite_upcall_ops lite_upcall_ops_impl = {
	.complete_rpc = lite_upcall_complete_rpc,
};

static const struct lite_transport_ops lite_transport_ops_impl = {
	.device_keys_init = lite_device_keys_init,
	.device_keys_exit = lite_device_keys_exit,
	.device_added = lite_device_added,
	.device_removed = lite_device_removed,
	.conn_qp_ready = lite_rpc_conn_post_recvs,
	.conn_dying = lite_ops_wake_waiters,
	.peer_init = lite_peer_init,
	.peer_down_locked = lite_peer_down_locked,
	.peer_failed_locked = lite_peer_failed_locked,
	.node_set_locked = lite_node_set_locked,
};

static int __init lite_init(void)
{
	int ret;

	/* First and last: every teardown path flushes it. */
	lite_wq = alloc_workqueue("lite", WQ_UNBOUND, 0);
	if (!lite_wq)
		return -ENOMEM;

	/* The layers' calls up, before anything that can make one. */
	lite_transport_set_ops(&lite_transport_ops_impl);
	lite_mem_set_ops(&lite_mem_ops_impl);
	lite_upcall_set_ops(&lite_upcall_ops_impl);
	lite_qos_debugfs_init(lite_debugfs_init());

	ret = lite_device_init();
	if (ret) {
		pr_err("cannot register the RDMA client: %d\n", ret);
		goto err_debugfs;
	}

	ret = lite_chardev_init();
	if (ret) {
		pr_err("cannot create /dev/lite: %d\n", ret);
		goto err_device;
	}

	ret = lite_sync_init();
	if (ret) {
		pr_err("cannot start the lock and barrier service: %d\n", ret);
		goto err_chardev;
	}

	/* Last: once the family exists, the agent can configure the node. */
	ret = lite_netlink_init();
	if (ret) {
		pr_err("cannot register the generic netlink family: %d\n", ret);
		goto err_sync;
	}

	pr_info("loaded, ABI version %d, rdma_cm port %u, %u QPs per peer, peer authentication %s, key mode %s\n",
		LITE_ABI_VERSION, lite_cm_port, lite_qps_per_peer,
		lite_peer_auth ? "on" : "off", lite_key_mode_name());
	return 0;

err_sync:
	lite_sync_exit();
err_chardev:
	lite_chardev_exit();
err_device:
	lite_device_exit();
err_debugfs:
	lite_debugfs_exit();
	destroy_workqueue(lite_wq);
	return ret;
}

static void __exit lite_exit(void)
{
	/* No new commands, then no new connections, then close the old ones. */
	lite_netlink_exit();
	lite_chardev_exit();
	/* No file: no lock request; the service goes before RPC does. */
	lite_sync_exit();
	/*
	 * No file is open and no command runs: no upcall or handle, and no
	 * grant but parked ones (lite_grants_exit() below).
	 */
	lite_upcall_exit();
	/*
	 * Every QP goes before the hosted memory: peers reach LMR pages with
	 * the global key over any live RC QP (theirs or the loopback ones),
	 * so freeing the pages first would let remote writes land in memory
	 * the page allocator has handed out again. No listener, then every
	 * connection destroyed (lite_peers_exit() flushes lite_wq), then the
	 * pages, then the device and its global key.
	 */
	lite_node_exit();
	lite_peers_exit();
	/* RPC rings and reply slots: no QP is left to write into them. */
	lite_rpc_exit();
	/*
	 * Parked grants (still holding hosted LMRs) are given back here, then
	 * the hosted and quarantined LMRs' pages: no QP is left to reach them.
	 */
	lite_grants_exit();
	lite_lmr_exit();
	lite_device_exit();
	lite_debugfs_exit();
	destroy_workqueue(lite_wq);
	pr_info("unloaded\n");
}

module_init(lite_init);
module_exit(lite_exit);

MODULE_AUTHOR("LITE authors");
MODULE_DESCRIPTION("LITE: kernel RDMA support for datacenter applications");
MODULE_LICENSE("GPL");
