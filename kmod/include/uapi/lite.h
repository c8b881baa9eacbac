/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE: the ABI between lite.ko and userspace.
 *
 * This header is the one contract between the kernel module and everything
 * in userspace (libLITE, liteagent, tools). It is included from both sides and
 * never copied. Every struct has a fixed layout (explicit widths, explicit
 * padding) so 32- and 64-bit callers see the same ABI; every reserved field
 * and unknown flag must be zero and is rejected with EINVAL otherwise, so the
 * fields can be given meaning later without breaking old binaries.
 */
#ifndef _UAPI_LITE_H
#define _UAPI_LITE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped whenever an ioctl or struct below changes incompatibly. */
#define LITE_ABI_VERSION 1

/* The character device applications open. */
#define LITE_DEVICE_PATH "/dev/lite"

#define LITE_IOC_MAGIC 0xB7

/* Same as the kernel's IB_DEVICE_NAME_MAX; names are NUL-terminated. */
#define LITE_DEVICE_NAME_MAX 64

/* lite_device_info.port_state: the RDMA port's state (IB spec values). */
enum lite_port_state {
	LITE_PORT_NOP = 0,
	LITE_PORT_DOWN = 1,
	LITE_PORT_INIT = 2,
	LITE_PORT_ARMED = 3,
	LITE_PORT_ACTIVE = 4,
	LITE_PORT_ACTIVE_DEFER = 5,
};

/* lite_device_info.link_layer */
enum lite_link_layer {
	LITE_LINK_LAYER_UNSPECIFIED = 0,
	LITE_LINK_LAYER_INFINIBAND = 1,
	LITE_LINK_LAYER_ETHERNET = 2,
};

/* lite_device_info.flags */
enum lite_device_flags {
	/*
	 * The device's protection domain has the global memory key: one rkey
	 * that covers all of the node's memory, so LMRs need no per-region
	 * registration. Without it LITE cannot serve remote memory on the
	 * device; global_key_errno says why.
	 */
	LITE_DEVICE_GLOBAL_KEY_READY = 1U << 0,
};

/*
 * One RDMA device LITE serves. LITE uses the device's first port.
 */
struct lite_device_info {
	char name[LITE_DEVICE_NAME_MAX];	/* e.g. "rxe0", "mlx5_0" */
	__u64 node_guid;			/* CPU byte order */
	__u32 port;				/* the port LITE uses */
	__u32 port_state;			/* enum lite_port_state */
	__u32 link_layer;			/* enum lite_link_layer */
	__u32 active_mtu_bytes;			/* 0 if the port is not up */
	__u32 flags;				/* enum lite_device_flags */
	__s32 global_key_errno;			/* 0, or why the key failed (negative errno) */
};

/*
 * LITE_IOC_QUERY: the ABI version and the RDMA devices LITE serves.
 *
 * In:  flags = 0; max_devices = how many entries `devices` holds (may be 0
 *      to ask only for the count); devices = user pointer to an array of
 *      struct lite_device_info (ignored when max_devices is 0).
 * Out: abi_version = LITE_ABI_VERSION; num_devices = how many devices LITE
 *      serves now; the first min(max_devices, num_devices) entries of
 *      `devices` are filled. A caller that got num_devices > max_devices
 *      retries with a bigger array.
 *
 * Errors: EFAULT  the argument or the devices array is not writable memory;
 *         EINVAL  flags or reserved is not zero, or max_devices > 0 with a
 *                 NULL devices pointer.
 */
struct lite_query {
	__u32 abi_version;	/* out */
	__u32 flags;		/* in: must be 0 */
	__u32 max_devices;	/* in */
	__u32 num_devices;	/* out */
	__u64 devices;		/* in: struct lite_device_info * */
	__u64 reserved;		/* in: must be 0 */
};

#define LITE_IOC_QUERY _IOWR(LITE_IOC_MAGIC, 0x00, struct lite_query)

#endif /* _UAPI_LITE_H */
