// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: what every layer of lite.ko reads: the shared workqueue and the
 * parameters no one layer owns (key mode, operation timeout).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

#include "lite_core.h"

/* Connection setup retries and teardown; flushed on device removal. */
struct workqueue_struct *lite_wq;

/* How long a one-sided operation (lite_ops.c) waits, all told. */
unsigned int lite_op_timeout_ms = 5000;

static int lite_param_set_timeout(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 600000);
}

static const struct kernel_param_ops lite_timeout_ops = {
	.set = lite_param_set_timeout,
	.get = param_get_uint,
};

module_param_cb(op_timeout_ms, &lite_timeout_ops, &lite_op_timeout_ms, 0644);
MODULE_PARM_DESC(op_timeout_ms, "longest a one-sided operation waits, in ms, 1..600000 (default 5000)");

/*
 * How peers reach LMR memory (enum lite_key_mode, docs/datapath.md "Key
 * modes"): global, one DMA memory region per device covering all memory;
 * lmr, one fast-registered region per LMR, invalidated before its pages go.
 * lmr is the default: its key reaches only its LMR's pages, so a forged
 * grant (a compromised manager's) cannot aim RDMA elsewhere on the home.
 * Read-only: every LMR and device is set up for one mode.
 */
#define LITE_KEY_MODE_DEFAULT LITE_KEY_MODE_LMR
unsigned int lite_key_mode = LITE_KEY_MODE_DEFAULT;

static const char * const lite_key_mode_names[] = {
	[LITE_KEY_MODE_GLOBAL] = "global",
	[LITE_KEY_MODE_LMR] = "lmr",
};

static int lite_param_set_key_mode(const char *val,
				   const struct kernel_param *kp)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lite_key_mode_names); i++) {
		if (lite_key_mode_names[i] &&
		    sysfs_streq(val, lite_key_mode_names[i])) {
			*(unsigned int *)kp->arg = i;
			return 0;
		}
	}
	pr_err("key_mode=%s: not a key mode (global or lmr)\n", val);
	return -EINVAL;
}

static int lite_param_get_key_mode(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  lite_key_mode_names[*(unsigned int *)kp->arg]);
}

static const struct kernel_param_ops lite_key_mode_ops = {
	.set = lite_param_set_key_mode,
	.get = lite_param_get_key_mode,
};

module_param_cb(key_mode, &lite_key_mode_ops, &lite_key_mode, 0444);
MODULE_PARM_DESC(key_mode, "how peers reach LMR memory: global (one DMA memory region per device) or lmr (one fast-registered region per LMR, invalidated before its pages are freed, and the NIC keeps every key to its LMR); default lmr");

const char *lite_key_mode_name(void)
{
	return lite_key_mode_names[lite_key_mode];
}
