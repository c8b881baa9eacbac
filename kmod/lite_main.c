// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: Local Indirection TiEr for RDMA.
 *
 * lite.ko virtualizes RDMA for every process and kernel subsystem on a node:
 * one global memory key, shared queue pairs, named memory regions, RPC and
 * locks. This file only wires the pieces together in order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "lite_internal.h"

static int __init lite_init(void)
{
	int ret;

	ret = lite_device_init();
	if (ret) {
		pr_err("cannot register the RDMA client: %d\n", ret);
		return ret;
	}

	/* Last: once /dev/lite exists, applications can call in. */
	ret = lite_chardev_init();
	if (ret) {
		pr_err("cannot create /dev/lite: %d\n", ret);
		lite_device_exit();
		return ret;
	}

	pr_info("loaded, ABI version %d\n", LITE_ABI_VERSION);
	return 0;
}

static void __exit lite_exit(void)
{
	lite_chardev_exit();
	lite_device_exit();
	pr_info("unloaded\n");
}

module_init(lite_init);
module_exit(lite_exit);

MODULE_AUTHOR("LITE authors");
MODULE_DESCRIPTION("LITE: kernel RDMA support for datacenter applications");
MODULE_LICENSE("GPL");
