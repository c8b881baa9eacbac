// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: counters an operator asks about, one read-only file each under
 * /sys/kernel/debug/lite/. Gauges (peers, qps_connected, lmrs, lmr_bytes,
 * grants, handles) go up and down; the rest only count up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>

#include "lite_internal.h"

atomic64_t lite_counters[LITE_CNT_NR];

static const char * const lite_counter_names[LITE_CNT_NR] = {
	[LITE_CNT_PEERS] = "peers",
	[LITE_CNT_QPS_CONNECTED] = "qps_connected",
	[LITE_CNT_CONNECT_ATTEMPTS] = "connect_attempts",
	[LITE_CNT_ACCEPTS] = "accepts",
	[LITE_CNT_REJECTS_SENT] = "rejects_sent",
	[LITE_CNT_REJECTS_RECEIVED] = "rejects_received",
	[LITE_CNT_CONNECT_ERRORS] = "connect_errors",
	[LITE_CNT_DISCONNECTS] = "disconnects",
	[LITE_CNT_LOOPBACK_QPS] = "loopback_qps",
	[LITE_CNT_LMRS] = "lmrs",
	[LITE_CNT_LMR_BYTES] = "lmr_bytes",
	[LITE_CNT_GRANTS] = "grants",
	[LITE_CNT_HANDLES] = "handles",
	[LITE_CNT_UPCALLS_SENT] = "upcalls_sent",
	[LITE_CNT_UPCALLS_COMPLETED] = "upcalls_completed",
	[LITE_CNT_UPCALLS_TIMED_OUT] = "upcalls_timed_out",
	[LITE_CNT_UPCALLS_NOTCONN] = "upcalls_notconn",
	[LITE_CNT_UPCALLS_INTERRUPTED] = "upcalls_interrupted",
};

static struct dentry *lite_debugfs_dir;

static int lite_counter_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(lite_counter_fops, lite_counter_get, NULL, "%llu\n");

/* Counters are diagnostics: the module works without them. */
void lite_debugfs_init(void)
{
	int i;

	lite_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < LITE_CNT_NR; i++)
		debugfs_create_file_unsafe(lite_counter_names[i], 0444,
					   lite_debugfs_dir, &lite_counters[i],
					   &lite_counter_fops);
}

void lite_debugfs_exit(void)
{
	/* Waits for readers still inside a counter file. */
	debugfs_remove_recursive(lite_debugfs_dir);
	lite_debugfs_dir = NULL;
}
