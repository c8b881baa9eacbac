/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE: the ABI between lite.ko and userspace.
 *
 * This header and the ones it includes, one per area, are the one contract
 * between the kernel module and everything in userspace (libLITE,
 * liteagent, tools): the /dev/lite ioctls and the generic netlink family
 * (lite_genl.h). Userspace includes this one; it is included from both
 * sides and never copied. Every struct has a fixed layout (explicit widths, explicit
 * padding) so 32- and 64-bit callers see the same ABI; every reserved field
 * and unknown flag must be zero and is rejected with EINVAL otherwise, so the
 * fields can be given meaning later without breaking old binaries.
 */
#ifndef _UAPI_LITE_H
#define _UAPI_LITE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped whenever an ioctl or struct below changes incompatibly. */
#define LITE_ABI_VERSION 2

/* The character device applications open. */
#define LITE_DEVICE_PATH "/dev/lite"

#define LITE_IOC_MAGIC 0xB7

/* The RDMA devices: LITE_IOC_QUERY (0x00). */
#include "lite_device.h"

/* The node, LMRs and one-sided operations: LITE_IOC_NODE .. LITE_IOC_CAS. */
#include "lite_lmr.h"

/* Priorities for QoS: LITE_IOC_PRIORITY (0x07). */
#include "lite_qos.h"

/* Distributed locks and barriers: LITE_IOC_SYNC (0x08). */
#include "lite_sync.h"

/* Batched one-sided operations: LITE_IOC_BATCH (0x16), LITE_URING_CMD_OP (0x17). */
#include "lite_batch.h"

/* RPC and messages: LITE_IOC_RPC_* (0x20..0x2f). */
#include "lite_rpc.h"

/* The generic netlink family (the agent's channel to lite.ko). */
#include "lite_genl.h"

#endif /* _UAPI_LITE_H */
