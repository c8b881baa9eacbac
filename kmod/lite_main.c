// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: Local Indirection TiEr for RDMA.
 *
 * lite.ko virtualizes RDMA for every process and kernel subsystem on a node:
 * one global memory key, shared queue pairs, named memory regions, RPC and
 * locks. This file holds the module parameters and wires the pieces
 * together in order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include <linux/sysfs.h>

#include "lite_grant.h"
#include "lite_internal.h"
#include "lite_rpc.h"
#include "lite_sync.h"

/* See lite_internal.h for what it protects. */
DEFINE_MUTEX(lite_lock);
struct workqueue_struct *lite_wq;

/*
 * The rdma_cm port peers connect to. Not perftest's default 18515, so the
 * benchmarks can run next to LITE on the same address.
 */
unsigned short lite_cm_port = 18600;

static int lite_param_set_port(const char *val, const struct kernel_param *kp)
{
	u16 port;
	int ret;

	ret = kstrtou16(val, 0, &port);
	if (ret)
		return ret;
	if (!port)
		return -EINVAL;
	*(unsigned short *)kp->arg = port;
	return 0;
}

static const struct kernel_param_ops lite_port_ops = {
	.set = lite_param_set_port,
	.get = param_get_ushort,
};

module_param_cb(cm_port, &lite_port_ops, &lite_cm_port, 0444);
MODULE_PARM_DESC(cm_port, "rdma_cm port lite.ko listens on and connects to, 1..65535 (default 18600)");

/* RC queue pairs per peer, shared by every process on the node. */
unsigned int lite_qps_per_peer = 2;

static int lite_param_set_qps(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, LITE_QPS_PER_PEER_MAX);
}

static const struct kernel_param_ops lite_qps_ops = {
	.set = lite_param_set_qps,
	.get = param_get_uint,
};

module_param_cb(qps_per_peer, &lite_qps_ops, &lite_qps_per_peer, 0444);
MODULE_PARM_DESC(qps_per_peer, "RC queue pairs per peer, 1..16 (default 2); every node must use the same value");

/* How long a control call (ALLOC, MAP, FREE) waits for the agent. */
unsigned int lite_upcall_timeout_ms = 10000;

static int lite_param_set_upcall_timeout(const char *val,
					 const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, 600000);
}

static const struct kernel_param_ops lite_upcall_timeout_ops = {
	.set = lite_param_set_upcall_timeout,
	.get = param_get_uint,
};

module_param_cb(upcall_timeout_ms, &lite_upcall_timeout_ops,
		&lite_upcall_timeout_ms, 0444);
MODULE_PARM_DESC(upcall_timeout_ms, "how long LMR control calls wait for the node agent, 100..600000 ms (default 10000)");

/* All LMRs this node hosts together, in MiB. */
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

/* How long a one-sided operation (lite_ops.c) waits, all told. */
unsigned int lite_op_timeout_ms = 5000;

static int lite_param_set_timeout(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 600000);
}

static const struct kernel_param_ops lite_timeout_ops = {
	.set = lite_param_set_timeout,
	.get = param_get_uint,
};

module_param_cb(op_timeout_ms, &lite_timeout_ops, &lite_op_timeout_ms, 0644);
MODULE_PARM_DESC(op_timeout_ms, "longest a one-sided operation waits, in ms, 1..600000 (default 5000)");

/*
 * Authenticate every peer connection with the pair secrets the agent gives
 * (wire version 2). Off: version 1, where a request is taken on its word
 * (only for a cluster of kernels that predate authentication; never on a
 * network an untrusted host can reach). Every node must agree.
 */
#define LITE_PEER_AUTH_DEFAULT 1
bool lite_peer_auth = LITE_PEER_AUTH_DEFAULT;
module_param_named(peer_auth, lite_peer_auth, bool, 0444);
MODULE_PARM_DESC(peer_auth,
		 "authenticate peer connections with the pair secrets (wire version 2); the same on every node (default "
		 __stringify(LITE_PEER_AUTH_DEFAULT) ")");

/*
 * How peers reach LMR memory (enum lite_key_mode, docs/datapath.md "Key
 * modes"): global, one DMA memory region per device covering all memory;
 * lmr, one fast-registered region per LMR, invalidated before its pages go.
 * lmr is the default: its key reaches only its LMR's pages, so a forged
 * grant (a compromised manager's) cannot aim RDMA elsewhere on the home.
 * Read-only: every LMR and device is set up for one mode.
 */
#define LITE_KEY_MODE_DEFAULT LITE_KEY_MODE_LMR
unsigned int lite_key_mode = LITE_KEY_MODE_DEFAULT;

static const char * const lite_key_mode_names[] = {
	[LITE_KEY_MODE_GLOBAL] = "global",
	[LITE_KEY_MODE_LMR] = "lmr",
};

static int lite_param_set_key_mode(const char *val,
				   const struct kernel_param *kp)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lite_key_mode_names); i++) {
		if (lite_key_mode_names[i] &&
		    sysfs_streq(val, lite_key_mode_names[i])) {
			*(unsigned int *)kp->arg = i;
			return 0;
		}
	}
	pr_err("key_mode=%s: not a key mode (global or lmr)\n", val);
	return -EINVAL;
}

static int lite_param_get_key_mode(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  lite_key_mode_names[*(unsigned int *)kp->arg]);
}

static const struct kernel_param_ops lite_key_mode_ops = {
	.set = lite_param_set_key_mode,
	.get = lite_param_get_key_mode,
};

module_param_cb(key_mode, &lite_key_mode_ops, &lite_key_mode, 0444);
MODULE_PARM_DESC(key_mode, "how peers reach LMR memory: global (one DMA memory region per device) or lmr (one fast-registered region per LMR, invalidated before its pages are freed, and the NIC keeps every key to its LMR); default lmr");

const char *lite_key_mode_name(void)
{
	return lite_key_mode_names[lite_key_mode];
}

static int __init lite_init(void)
{
	int ret;

	/* First and last: every teardown path flushes it. */
	lite_wq = alloc_workqueue("lite", WQ_UNBOUND, 0);
	if (!lite_wq)
		return -ENOMEM;

	lite_debugfs_init();

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
