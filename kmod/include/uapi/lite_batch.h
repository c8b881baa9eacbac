/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * LITE batched one-sided operations: the /dev/lite ioctl (included by
 * uapi/lite.h; never include this header alone). docs/datapath.md,
 * "Batched operations", tells the story.
 *
 * LITE_IOC_BATCH runs up to LITE_BATCH_MAX small READs, WRITEs,
 * fetch-and-adds and compare-and-swaps in one system call: lite.ko posts
 * them all (up to LITE_BATCH_WINDOW in flight at once, on whichever of
 * lite.ko's QPs their handles lead to), then collects their completions,
 * and writes each entry's own result: `error` (0 or a negative errno, as
 * the single-operation ioctl would have returned it) and, for the atomics,
 * `result`. One entry's failure does not stop the others.
 *
 * Entries run concurrently and complete in no particular order: two
 * entries on overlapping bytes race as two threads would. An entry is
 * checked (handle, access, bounds, flags) when its turn comes, after the
 * entries before it were posted.
 *
 * The ioctl itself fails only for the batch as a whole: EFAULT (the
 * struct lite_batch or the array is not valid memory: nothing ran, or,
 * when the results cannot be written back, entries may have run), EINVAL
 * (count 0 or above LITE_BATCH_MAX, flags or reserved not 0), EINTR (a
 * fatal signal: the process is dying). Per entry: EINVAL (unknown opcode,
 * flags or reserved not 0, priority no enum lite_priority, a READ/WRITE
 * length of 0 or above LITE_BATCH_RW_MAX, an atomic's length not 8 or
 * offset not a multiple of 8, a FAA with a swap value, a READ/WRITE with
 * operand or swap), EPERM (LITE_PRIO_HIGH not allowed), EFAULT (its
 * buffer), and every error of LITE_IOC_READ, _WRITE, _FAA and _CAS
 * (EBADF, EACCES, ESTALE, EHOSTDOWN, ETIMEDOUT, EOPNOTSUPP, EIO, ...).
 */
#ifndef _UAPI_LITE_BATCH_H
#define _UAPI_LITE_BATCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Most entries in one LITE_IOC_BATCH. */
#define LITE_BATCH_MAX		256
/* Most entries of one call in flight at once. */
#define LITE_BATCH_WINDOW	16
/* Largest batched READ or WRITE, in bytes (the bounce buffer's size). */
#define LITE_BATCH_RW_MAX	16384

enum lite_batch_opcode {
	LITE_BATCH_READ = 1,		/* length bytes at offset into buf */
	LITE_BATCH_WRITE = 2,		/* length bytes from buf to offset */
	LITE_BATCH_FAA = 3,		/* fetch-and-add operand at offset */
	LITE_BATCH_CAS = 4,		/* compare operand, swap in swap */
};

/* One entry: 64 bytes. */
struct lite_batch_op {
	__u64 handle;
	__u64 offset;
	__u64 buf;			/* READ/WRITE: user pointer; else 0 */
	__u64 operand;			/* FAA: addend; CAS: expected; else 0 */
	__u64 swap;			/* CAS: new value; else 0 */
	__u64 result;			/* out: FAA/CAS: the old value */
	__u32 length;			/* READ/WRITE: 1..LITE_BATCH_RW_MAX; atomics: 8 */
	__u16 opcode;			/* enum lite_batch_opcode */
	__u16 flags;			/* must be 0 */
	__s32 error;			/* out: 0 or a negative errno */
	__u32 priority;			/* enum lite_priority */
};

struct lite_batch {
	__u64 ops;			/* user pointer to count struct lite_batch_op */
	__u32 count;			/* 1..LITE_BATCH_MAX */
	__u32 flags;			/* must be 0 */
	__u32 failed;			/* out: entries whose error is not 0 */
	__u32 reserved;			/* must be 0 */
};

#define LITE_IOC_BATCH	_IOWR(LITE_IOC_MAGIC, 0x16, struct lite_batch)

/*
 * The same operations, one per io_uring command (IORING_OP_URING_CMD on an
 * open /dev/lite, the way NVMe passthrough does it): the ring must be set
 * up with IORING_SETUP_SQE128 | IORING_SETUP_CQE32, the SQE's cmd_op is
 * LITE_URING_CMD_OP and its 80-byte command area starts with one struct
 * lite_batch_op, checked as a batch entry is, with result and error 0.
 * Each command completes on its own, in no particular order, with its
 * CQE's res the READ's or WRITE's length, 0 for an atomic, or a negative
 * errno (the batch entry's errors; EINVAL also for a ring without SQE128
 * and CQE32), and big_cqe[0] an atomic's old value. A READ's bytes are in
 * its buffer when its CQE is. docs/datapath.md, "Asynchronous operations
 * with io_uring".
 */
#define LITE_URING_CMD_OP _IOWR(LITE_IOC_MAGIC, 0x17, struct lite_batch_op)

#endif /* _UAPI_LITE_BATCH_H */
