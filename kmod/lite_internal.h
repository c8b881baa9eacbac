/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: state shared between the module's files.
 */
#ifndef LITE_INTERNAL_H
#define LITE_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "uapi/lite.h"

#define LITE_CQ_DEPTH 4096

/*
 * An RDMA device LITE serves: its protection domain with the global rkey and
 * its completion queue. Created by the ib_client's add callback and torn down
 * by its remove callback (device unplug, driver unload, or module unload).
 */
struct lite_device {
	struct kref ref;
	struct list_head entry;		/* in lite_devices, under lite_devices_lock */
	struct ib_device *ibdev;
	struct ib_pd *pd;		/* NULL when global_key_errno != 0 */
	struct ib_cq *cq;		/* NULL when global_key_errno != 0 */
	u32 port;
	int global_key_errno;
};

int lite_device_init(void);
void lite_device_exit(void);

typedef int (*lite_device_fn)(struct lite_device *ldev, void *arg);

/*
 * Calls @fn for each device LITE serves, in order, under the device list
 * lock (so a device cannot be removed meanwhile); @fn may sleep. Stops at the
 * first non-zero return and returns it.
 */
int lite_visit_devices(lite_device_fn fn, void *arg);

int lite_chardev_init(void);
void lite_chardev_exit(void);

#endif /* LITE_INTERNAL_H */
