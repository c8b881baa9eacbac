/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * LITE distributed locks and barriers: the /dev/lite ioctl (included by
 * uapi/lite.h; never include this header alone). docs/locks.md tells the
 * story.
 *
 * A lock or a barrier is an LMR: its name, home node and mode bits are the
 * LMR's, and the caller names it by a handle it mapped with write access
 * (LITE_ACCESS_WRITE; a read-only handle gets EACCES). Its state lives in
 * the home node's lite.ko, which every node reaches over LITE RPC: no
 * manager round trip per operation. The LMR's bytes are the application's
 * (the data the lock protects, for instance); LITE does not touch them.
 *
 * LITE_SYNC_LOCK waits (FIFO, across all nodes) until the lock is the
 * caller's, at most timeout_ms (0: lite.ko's rpc_timeout_ms).
 * LITE_SYNC_TRYLOCK does not wait: EBUSY if another holds it. Both set
 * LITE_SYNC_OWNER_DIED in `result` when the previous holder's file closed
 * (its process died) or its node failed while it held the lock: the lock
 * is the caller's, the data it guards may be half-updated. A lock belongs
 * to the file that took it, not to a thread; it is not recursive (a second
 * LOCK through the same file waits like any other).
 *
 * LITE_SYNC_UNLOCK releases a lock this file holds (EPERM otherwise, also
 * when the home no longer counts the file as its holder: its node was
 * failed meanwhile). It returns once the home has it, so the file's next
 * request finds the lock released. If the home cannot be reached now,
 * lite.ko sends it again until it can and returns 0 (the lock is no longer
 * this file's either way).
 *
 * LITE_SYNC_BARRIER waits until `count` callers (any nodes, files and
 * threads) have arrived at the LMR's barrier, then all return 0 together.
 * A file that arrived once is a participant from then on: if it closes
 * (its process dies) or its node fails, the barrier breaks: everyone
 * waiting fails with ECONNABORTED (EHOSTDOWN for a node), and so does each
 * other participant's next arrival, once. Every caller of one round must
 * give the same count (EINVAL otherwise).
 *
 * Errors: EBADF (handle), EACCES (read-only map), EINVAL (op, flags,
 * reserved fields, count 0 or over LITE_SYNC_COUNT_MAX, timeout over
 * LITE_RPC_TIMEOUT_MAX_MS), ETIMEDOUT (waited timeout_ms; nothing held,
 * not counted as arrived), EINTR (a fatal signal; the same), ESTALE (the
 * LMR was freed), EHOSTDOWN (its home node is down), ENOTCONN (its home
 * serves no locks yet: its agent has not registered them), EDQUOT (the
 * caller's uid has lite.ko's sync_waits_per_uid LOCKs and BARRIERs waiting
 * at that home already), EUSERS (a barrier's LITE_SYNC_COUNT_MAX
 * participants are known already).
 */
#ifndef _UAPI_LITE_SYNC_H
#define _UAPI_LITE_SYNC_H

enum lite_sync_op {
	LITE_SYNC_LOCK = 1,
	LITE_SYNC_TRYLOCK = 2,
	LITE_SYNC_UNLOCK = 3,
	LITE_SYNC_BARRIER = 4,
};

/* `result` bits. */
#define LITE_SYNC_OWNER_DIED	0x1U

/* Participants of one barrier, at most. */
#define LITE_SYNC_COUNT_MAX	4096U

struct lite_sync {
	__u64 handle;			/* in: a handle mapped with write access */
	__u32 op;			/* in: enum lite_sync_op */
	__u32 flags;			/* must be 0 */
	__u32 timeout_ms;		/* in: LOCK and BARRIER; 0: rpc_timeout_ms */
	__u32 count;			/* in: BARRIER's participants; else 0 */
	__u32 result;			/* out: LITE_SYNC_OWNER_DIED */
	__u32 reserved;			/* must be 0 */
};

#define LITE_IOC_SYNC	_IOWR(LITE_IOC_MAGIC, 0x08, struct lite_sync)

#endif /* _UAPI_LITE_SYNC_H */
