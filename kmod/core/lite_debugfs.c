// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: counters an operator asks about, one read-only file each under
 * /sys/kernel/debug/lite/. Gauges (peers, qps_connected, lmrs, lmr_bytes,
 * grants, handles, ops_abandoned, lmr_allocs_running) go up and down; the
 * rest only count up. The one-sided operations count per CPU, under ops/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>

#include "lite_core.h"

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
	[LITE_CNT_REFUSED_AUTH] = "refused_auth",
	[LITE_CNT_REFUSED_PORT] = "refused_port",
	[LITE_CNT_REFUSED_NO_KEY] = "refused_no_key",
	[LITE_CNT_CHALLENGES_ISSUED] = "challenges_issued",
	[LITE_CNT_REP_AUTH_FAILED] = "rep_auth_failed",
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
	[LITE_CNT_LMR_ALLOCS_RUNNING] = "lmr_allocs_running",
	[LITE_CNT_OPS_ABANDONED] = "ops_abandoned",
	[LITE_CNT_GRANT_DRAIN_WAITS] = "grant_drain_waits",
	[LITE_CNT_GRANT_DRAIN_TIMEOUTS] = "grant_drain_timeouts",
	[LITE_CNT_GRANTS_PARKED] = "grants_parked",
	[LITE_CNT_MR_REGISTRATIONS] = "mr_registrations",
	[LITE_CNT_MR_INVALIDATIONS] = "mr_invalidations",
	[LITE_CNT_LMRS_QUARANTINED] = "lmrs_quarantined",
	[LITE_CNT_QUARANTINED_BYTES] = "quarantined_bytes",
	[LITE_CNT_USER_GRANTS_REFUSED] = "user_grants_refused",
	[LITE_CNT_USER_UPCALLS_REFUSED] = "user_upcalls_refused",
	[LITE_CNT_RPC_SERVICES] = "rpc_services",
	[LITE_CNT_RPC_BINDINGS] = "rpc_bindings",
	[LITE_CNT_RPC_QUARANTINED_BYTES] = "rpc_quarantined_bytes",
	[LITE_CNT_GRANTS_KEY_REFUSED] = "grants_key_refused",
	[LITE_CNT_QP_ERRORS] = "qp_errors",
};

DEFINE_PER_CPU(struct lite_ops_stats, lite_ops_stats);

static const char * const lite_ops_stat_names[LITE_ST_NR] = {
	[LITE_ST_READ] = "read",
	[LITE_ST_WRITE] = "write",
	[LITE_ST_MEMSET] = "memset",
	[LITE_ST_MEMCPY] = "memcpy",
	[LITE_ST_FAA] = "faa",
	[LITE_ST_CAS] = "cas",
	[LITE_ST_BYTES_READ] = "bytes_read",
	[LITE_ST_BYTES_WRITTEN] = "bytes_written",
	[LITE_ST_BOUNCE] = "bounce",
	[LITE_ST_PINNED] = "pinned",
	[LITE_ST_ERR_EBADF] = "err_ebadf",
	[LITE_ST_ERR_EACCES] = "err_eacces",
	[LITE_ST_ERR_EINVAL] = "err_einval",
	[LITE_ST_ERR_EFAULT] = "err_efault",
	[LITE_ST_ERR_ESTALE] = "err_estale",
	[LITE_ST_ERR_EHOSTDOWN] = "err_ehostdown",
	[LITE_ST_ERR_ETIMEDOUT] = "err_etimedout",
	[LITE_ST_ERR_EIO] = "err_eio",
	[LITE_ST_ERR_EINTR] = "err_eintr",
	[LITE_ST_ERR_OTHER] = "err_other",
	[LITE_ST_SPIN_HITS] = "spin_hits",
	[LITE_ST_SPIN_MISSES] = "spin_misses",
	[LITE_ST_BATCHES] = "batches",
	[LITE_ST_URING_CMDS] = "uring_cmds",
	[LITE_ST_OPS_HIGH] = "ops_high",
	[LITE_ST_OPS_LOW] = "ops_low",
	[LITE_ST_QOS_THROTTLED] = "qos_throttled",
	[LITE_ST_QOS_WAIT_US] = "qos_wait_us",
};

static struct dentry *lite_debugfs_dir;

atomic64_t lite_rpc_stats[LITE_RPC_ST_NR];

static const char * const lite_rpc_stat_names[LITE_RPC_ST_NR] = {
	[LITE_RPC_ST_CALLS] = "calls",
	[LITE_RPC_ST_MSGS] = "messages",
	[LITE_RPC_ST_REQUESTS_IN] = "requests_in",
	[LITE_RPC_ST_REPLIES_SENT] = "replies_sent",
	[LITE_RPC_ST_REPLIES_IN] = "replies_in",
	[LITE_RPC_ST_LATE_REPLIES] = "late_replies",
	[LITE_RPC_ST_REFUSED] = "refused",
	[LITE_RPC_ST_DROPPED] = "dropped",
	[LITE_RPC_ST_TIMEOUTS] = "timeouts",
	[LITE_RPC_ST_HOSTDOWN] = "hostdown",
	[LITE_RPC_ST_NO_CREDIT] = "credit_waits",
	[LITE_RPC_ST_SEND_ERRORS] = "send_errors",
};

static int lite_counter_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(lite_counter_fops, lite_counter_get, NULL, "%llu\n");

void lite_debugfs_counter(const char *name, struct dentry *dir, atomic64_t *c)
{
	debugfs_create_file_unsafe(name, 0444, dir, c, &lite_counter_fops);
}

/* @data is the counter's entry in lite_ops_stat_names. */
static int lite_ops_stat_get(void *data, u64 *val)
{
	unsigned int s = (const char * const *)data - lite_ops_stat_names;
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(&lite_ops_stats, cpu)->v[s];
	*val = sum;
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(lite_ops_stat_fops, lite_ops_stat_get, NULL, "%llu\n");

static void lite_debugfs_ops_init(struct dentry *root)
{
	struct dentry *dir = debugfs_create_dir("ops", root);
	int i;

	for (i = 0; i < LITE_ST_NR; i++)
		debugfs_create_file_unsafe(lite_ops_stat_names[i], 0444, dir,
					   (void *)&lite_ops_stat_names[i],
					   &lite_ops_stat_fops);
}

/* key_mode: "global" or "lmr" (the module parameter, for one look at debugfs). */
static int lite_key_mode_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", lite_key_mode_name());
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(lite_key_mode);

/*
 * Counters are diagnostics: the module works without them. Returns the
 * folder other layers add theirs to (qos/).
 */
struct dentry *lite_debugfs_init(void)
{
	struct dentry *dir;
	int i;

	lite_debugfs_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < LITE_CNT_NR; i++)
		debugfs_create_file_unsafe(lite_counter_names[i], 0444,
					   lite_debugfs_dir, &lite_counters[i],
					   &lite_counter_fops);
	lite_debugfs_ops_init(lite_debugfs_dir);
	dir = debugfs_create_dir("rpc", lite_debugfs_dir);
	for (i = 0; i < LITE_RPC_ST_NR; i++)
		debugfs_create_file_unsafe(lite_rpc_stat_names[i], 0444, dir,
					   &lite_rpc_stats[i], &lite_counter_fops);
	debugfs_create_file("key_mode", 0444, lite_debugfs_dir, NULL,
			    &lite_key_mode_fops);
	return lite_debugfs_dir;
}

void lite_debugfs_exit(void)
{
	/* Waits for readers still inside a counter file. */
	debugfs_remove_recursive(lite_debugfs_dir);
	lite_debugfs_dir = NULL;
}
