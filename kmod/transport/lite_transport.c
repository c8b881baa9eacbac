// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: the transport's lock and parameters (rdma_cm port, QPs per peer,
 * peer authentication).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/stringify.h>

#include "lite_transport.h"

const struct lite_transport_ops *lite_transport_ops;

void lite_transport_set_ops(const struct lite_transport_ops *ops)
{
	lite_transport_ops = ops;
}

/* See lite_transport.h for what it protects. */
DEFINE_MUTEX(lite_lock);

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
