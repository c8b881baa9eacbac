/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the one-sided operations' per-device resources (lite_ops_pool.c),
 * set up and torn down by lite_device.c; and the operations for kernel
 * callers (lite_kapi_mem.c).
 */
#ifndef LITE_OPS_H
#define LITE_OPS_H

#include <linux/types.h>

struct completion;
struct ib_cq;
struct lite_device;
struct lite_file;

/*
 * Pre-allocated operation contexts with their DMA-mapped bounce buffers on
 * @ldev (ldev->ops_pool). Without them, operations over the device fail
 * with EIO.
 */
int lite_ops_device_add(struct lite_device *ldev);
/*
 * After every connection on @ldev is gone (so no operation holds a
 * context): unmaps and frees them.
 */
void lite_ops_device_remove(struct lite_device *ldev);
/*
 * A connection on @ldev is being torn down (its ops_dying is set): callers
 * waiting for one of the device's contexts look again, so that one holding
 * that connection's inflight count gives it back (any context).
 */
void lite_ops_wake_waiters(struct lite_device *ldev);

/* The one-sided operations' ioctls (ctl/lite_ioctl.c's table). */
long lite_ioc_read(struct lite_file *lf, void __user *uarg);
long lite_ioc_write(struct lite_file *lf, void __user *uarg);
long lite_ioc_memset(struct lite_file *lf, void __user *uarg);
long lite_ioc_memcpy(struct lite_file *lf, void __user *uarg);
long lite_ioc_faa(struct lite_file *lf, void __user *uarg);
long lite_ioc_cas(struct lite_file *lf, void __user *uarg);
long lite_ioc_batch(struct lite_file *lf, void __user *uarg);

/*
 * Caller-side completion (lite_ops_spin.c): polls for @done for up to the
 * spin_us module parameter, reaping @cq's completions itself when @cq is
 * given (a connection's send CQ; a receive CQ's handlers must keep their
 * order, so its waiters pass NULL and only watch @done). True if @done
 * completed; false: sleep on it as before. Process context.
 */
bool lite_spin_wait(struct ib_cq *cq, struct completion *done);

/*
 * READ, WRITE, MEMSET, FAA and CAS on a handle of @lf with kernel buffers,
 * checked as the ioctls check theirs, with their errors. A kernel buffer
 * goes through the bounce buffer, LITE_BOUNCE_SIZE bytes per batch (any
 * kernel address: vmalloc'd and stack memory too). Process context.
 */
int lite_op_rw_kernel(struct lite_file *lf, u64 handle, u64 offset, void *buf,
		      u64 length, bool write);
int lite_op_memset_run(struct lite_file *lf, u64 handle, u64 offset,
		       u64 length, u8 value, u32 priority);
int lite_op_atomic_run(struct lite_file *lf, u64 handle, u64 offset,
		       u64 operand, u64 swap, bool cas, u32 priority,
		       u64 *result);

#endif /* LITE_OPS_H */
