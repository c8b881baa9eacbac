/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the one-sided operations' per-device resources (lite_ops_pool.c),
 * set up and torn down by lite_device.c.
 */
#ifndef LITE_OPS_H
#define LITE_OPS_H

struct lite_device;

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

#endif /* LITE_OPS_H */
