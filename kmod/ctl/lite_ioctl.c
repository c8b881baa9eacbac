// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: every ioctl of /dev/lite in one table, DRM's way (drm_ioctls[]):
 * indexed by the command's number and checked against the whole command,
 * so a command with the right number but the wrong size or direction is
 * not one (ENOTTY). Each handler lives with its layer and has this one
 * signature; adding an ioctl is a uapi number, a handler and a line here.
 */
#include <linux/fs.h>
#include <linux/nospec.h>

#include "lite_ctl.h"
#include "ops/lite_ops.h"
#include "qos/lite_qos_throttle.h"
#include "rpc/lite_rpc.h"
#include "sync/lite_sync.h"
#include "uapi/lite_batch.h"
#include "uapi/lite_qos.h"
#include "uapi/lite_rpc.h"
#include "uapi/lite_sync.h"

typedef long (*lite_ioctl_fn)(struct lite_file *lf, void __user *uarg);

struct lite_ioctl_desc {
	unsigned int cmd;
	lite_ioctl_fn fn;
};

static const struct lite_ioctl_desc lite_ioctls[] = {
	[_IOC_NR(LITE_IOC_QUERY)] = { LITE_IOC_QUERY, lite_ioc_query },
	/* The node and LMRs (ctl, upcall). */
	[_IOC_NR(LITE_IOC_NODE)] = { LITE_IOC_NODE, lite_ioc_node },
	[_IOC_NR(LITE_IOC_ALLOC)] = { LITE_IOC_ALLOC, lite_ioc_alloc },
	[_IOC_NR(LITE_IOC_MAP)] = { LITE_IOC_MAP, lite_ioc_map },
	[_IOC_NR(LITE_IOC_UNMAP)] = { LITE_IOC_UNMAP, lite_ioc_unmap },
	[_IOC_NR(LITE_IOC_FREE)] = { LITE_IOC_FREE, lite_ioc_free },
	[_IOC_NR(LITE_IOC_NODE_LOOKUP)] = { LITE_IOC_NODE_LOOKUP, lite_ioc_node_lookup },
	/* QoS and locks. */
	[_IOC_NR(LITE_IOC_PRIORITY)] = { LITE_IOC_PRIORITY, lite_ioc_priority },
	[_IOC_NR(LITE_IOC_SYNC)] = { LITE_IOC_SYNC, lite_ioc_sync },
	/* One-sided operations (ops). */
	[_IOC_NR(LITE_IOC_READ)] = { LITE_IOC_READ, lite_ioc_read },
	[_IOC_NR(LITE_IOC_WRITE)] = { LITE_IOC_WRITE, lite_ioc_write },
	[_IOC_NR(LITE_IOC_MEMSET)] = { LITE_IOC_MEMSET, lite_ioc_memset },
	[_IOC_NR(LITE_IOC_MEMCPY)] = { LITE_IOC_MEMCPY, lite_ioc_memcpy },
	[_IOC_NR(LITE_IOC_FAA)] = { LITE_IOC_FAA, lite_ioc_faa },
	[_IOC_NR(LITE_IOC_CAS)] = { LITE_IOC_CAS, lite_ioc_cas },
	[_IOC_NR(LITE_IOC_BATCH)] = { LITE_IOC_BATCH, lite_ioc_batch },
	/* RPC (rpc). */
	[_IOC_NR(LITE_IOC_RPC_REGISTER)] = { LITE_IOC_RPC_REGISTER, lite_ioc_rpc_register },
	[_IOC_NR(LITE_IOC_RPC_OPEN)] = { LITE_IOC_RPC_OPEN, lite_ioc_rpc_open },
	[_IOC_NR(LITE_IOC_RPC_CLOSE)] = { LITE_IOC_RPC_CLOSE, lite_ioc_rpc_close },
	[_IOC_NR(LITE_IOC_RPC_CALL)] = { LITE_IOC_RPC_CALL, lite_ioc_rpc_call },
	[_IOC_NR(LITE_IOC_RPC_SEND)] = { LITE_IOC_RPC_SEND, lite_ioc_rpc_send },
	[_IOC_NR(LITE_IOC_RPC_RECV)] = { LITE_IOC_RPC_RECV, lite_ioc_rpc_recv },
	[_IOC_NR(LITE_IOC_RPC_REPLY)] = { LITE_IOC_RPC_REPLY, lite_ioc_rpc_reply },
	[_IOC_NR(LITE_IOC_RPC_WAIT)] = { LITE_IOC_RPC_WAIT, lite_ioc_rpc_wait },
};

long lite_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	const struct lite_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != LITE_IOC_MAGIC || nr >= ARRAY_SIZE(lite_ioctls))
		return -ENOTTY;
	desc = &lite_ioctls[array_index_nospec(nr, ARRAY_SIZE(lite_ioctls))];
	if (!desc->fn || desc->cmd != cmd)
		return -ENOTTY;
	return desc->fn(file->private_data, (void __user *)arg);
}
