/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * LITE's RDMA devices: LITE_IOC_QUERY and the device table (included by
 * uapi/lite.h; never include this header alone).
 */
#ifndef _UAPI_LITE_DEVICE_H
#define _UAPI_LITE_DEVICE_H

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
	 * The device's memory keys are ready in the module's key_mode:
	 * key_mode=global, the protection domain has the global memory key,
	 * one rkey that covers all of the node's memory, so LMRs need no
	 * per-region registration; key_mode=lmr, the device can register a
	 * memory region per LMR (fast registration on a private queue pair;
	 * EOPNOTSUPP on a device without it, iWARP included). Without it LITE
	 * cannot serve remote memory on the device; global_key_errno says why.
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

#endif /* _UAPI_LITE_DEVICE_H */
