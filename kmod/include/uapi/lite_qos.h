/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * LITE priorities for QoS: the /dev/lite ioctl (included by uapi/lite.h;
 * never include this header alone). docs/qos.md tells the story.
 *
 * Every one-sided operation, batch entry, io_uring command and RPC call
 * carries a `priority`: LITE_PRIO_HIGH, LITE_PRIO_LOW, or 0 for the
 * file's default. A file starts with LITE_PRIO_LOW; LITE_IOC_PRIORITY
 * changes its default. HIGH is for the administrator to hand out: only a
 * process with CAP_SYS_NICE, or in the group lite.ko's qos_high_gid names,
 * may use it, decided from the credentials of the process that opened the
 * file. Anything else gets EPERM for HIGH (in the ioctl and in each
 * operation) and EINVAL for a value that is no priority.
 *
 * With lite.ko's `qos` on, low-priority operations to a peer are
 * throttled while high-priority ones to it are busy or slow (docs/qos.md);
 * high priority is never throttled.
 */
#ifndef _UAPI_LITE_QOS_H
#define _UAPI_LITE_QOS_H

enum lite_priority {
	LITE_PRIO_DEFAULT = 0,		/* the file's default */
	LITE_PRIO_HIGH = 1,
	LITE_PRIO_LOW = 2,
};

/*
 * LITE_IOC_PRIORITY: sets the file's default priority to `priority`, or,
 * with 0, only reads it. Out: `priority` is the default now, `high_allowed`
 * 1 if this file may use LITE_PRIO_HIGH.
 */
struct lite_priority_args {
	__u32 priority;			/* in: LITE_PRIO_HIGH, _LOW or 0; out: the default */
	__u32 high_allowed;		/* out */
	__u32 flags;			/* must be 0 */
	__u32 reserved;			/* must be 0 */
};

#define LITE_IOC_PRIORITY _IOWR(LITE_IOC_MAGIC, 0x07, struct lite_priority_args)

#endif /* _UAPI_LITE_QOS_H */
