// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: priorities and QoS (uapi/lite_qos.h, docs/qos.md).
 *
 * A file runs its operations at LOW unless it asks for HIGH, which needs
 * CAP_SYS_NICE or the group qos_high_gid names, judged once, from the
 * opener's credentials (as a file's access is).
 *
 * With `qos` on, each operation towards a peer counts itself in the peer's
 * window: a high-priority one its start and, at its last completion, its
 * round trip; a low-priority one asks the peer's token bucket first and
 * waits its turn before it takes anything (no grant count beyond its own,
 * no connection, no context is held while it waits). Whoever starts an
 * operation after a window ends runs the policy (lite_qos.h) for it. So
 * an idle peer costs nothing, and a busy one a lock per low-priority
 * operation, only while it is throttled.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "mem/lite_mem.h"
#include "transport/lite_conn.h"
#include "lite_qos_throttle.h"

bool lite_qos_on = true;
module_param_named(qos, lite_qos_on, bool, 0644);
MODULE_PARM_DESC(qos, "throttle low-priority operations to a peer while its high-priority ones are busy or slow (docs/qos.md)");

static unsigned int lite_qos_window_us = 10000;
static unsigned int lite_qos_floor_kibps = 1024;
static unsigned int lite_qos_high_ops = 200000;
static unsigned int lite_qos_rtt_pct = 150;
static unsigned int lite_qos_idle_windows = 10;
static int lite_qos_high_gid = -1;
static unsigned int lite_qos_chunk_kib = 16;

static int lite_param_set_window(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1000, 1000000);
}

static const struct kernel_param_ops lite_qos_window_ops = {
	.set = lite_param_set_window,
	.get = param_get_uint,
};

module_param_cb(qos_window_us, &lite_qos_window_ops, &lite_qos_window_us, 0644);
MODULE_PARM_DESC(qos_window_us, "how often each peer's throttle is decided, 1000..1000000 us");

static int lite_param_set_floor(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 16U << 20);
}

static const struct kernel_param_ops lite_qos_floor_ops = {
	.set = lite_param_set_floor,
	.get = param_get_uint,
};

module_param_cb(qos_floor_kibps, &lite_qos_floor_ops, &lite_qos_floor_kibps, 0644);
MODULE_PARM_DESC(qos_floor_kibps, "low priority's minimum rate to a peer, throttled, 1..16777216 KiB/s (default 1024)");

static int lite_param_set_high_ops(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 100000000);
}

static const struct kernel_param_ops lite_qos_high_ops_ops = {
	.set = lite_param_set_high_ops,
	.get = param_get_uint,
};

module_param_cb(qos_high_ops, &lite_qos_high_ops_ops, &lite_qos_high_ops, 0644);
MODULE_PARM_DESC(qos_high_ops, "rule 1: high-priority operations per second to a peer that throttle its low priority (0: rule off)");

/* 0 (the feature off) or @min..@max. */
static int lite_param_set_off_or(const char *val, const struct kernel_param *kp,
				 unsigned int min, unsigned int max)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v && (v < min || v > max))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static int lite_param_set_rtt_pct(const char *val, const struct kernel_param *kp)
{
	return lite_param_set_off_or(val, kp, 101, 100000);
}

static const struct kernel_param_ops lite_qos_rtt_ops = {
	.set = lite_param_set_rtt_pct,
	.get = param_get_uint,
};

module_param_cb(qos_rtt_pct, &lite_qos_rtt_ops, &lite_qos_rtt_pct, 0644);
MODULE_PARM_DESC(qos_rtt_pct, "rule 3: high-priority round trips over this % of their baseline throttle low priority, 101..100000 (0: rule off)");

static int lite_param_set_idle(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 100000);
}

static const struct kernel_param_ops lite_qos_idle_ops = {
	.set = lite_param_set_idle,
	.get = param_get_uint,
};

module_param_cb(qos_idle_windows, &lite_qos_idle_ops, &lite_qos_idle_windows, 0644);
MODULE_PARM_DESC(qos_idle_windows, "rule 2: windows without high-priority traffic before low priority is not throttled, 1..100000");

static int lite_param_set_chunk(const char *val, const struct kernel_param *kp)
{
	return lite_param_set_off_or(val, kp, 4, 1024);
}

static const struct kernel_param_ops lite_qos_chunk_ops = {
	.set = lite_param_set_chunk,
	.get = param_get_uint,
};

module_param_cb(qos_low_chunk_kib, &lite_qos_chunk_ops, &lite_qos_chunk_kib, 0644);
MODULE_PARM_DESC(qos_low_chunk_kib, "while a peer's throttle is engaged, a LOW READ or WRITE to it goes on the wire this many KiB at a time, 4..1024 (0: whole)");

static int lite_param_set_gid(const char *val, const struct kernel_param *kp)
{
	int v;
	int ret = kstrtoint(val, 0, &v);

	if (ret)
		return ret;
	if (v < -1)
		return -EINVAL;
	*(int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops lite_qos_gid_ops = {
	.set = lite_param_set_gid,
	.get = param_get_int,
};

module_param_cb(qos_high_gid, &lite_qos_gid_ops, &lite_qos_high_gid, 0644);
MODULE_PARM_DESC(qos_high_gid, "members of this group may use high priority, besides CAP_SYS_NICE (-1: none)");

/* Windows decided by each rule, in debugfs qos/. */
static atomic64_t lite_qos_windows[LITE_QOS_NR_RULES];

static const char * const lite_qos_rule_names[LITE_QOS_NR_RULES] = {
	[LITE_QOS_HOLD] = "hold",
	[LITE_QOS_IDLE] = "idle",
	[LITE_QOS_LOAD] = "load",
	[LITE_QOS_RTT] = "rtt",
	[LITE_QOS_EASE] = "ease",
};

static void lite_qos_params_get(struct lite_qos_params *p)
{
	p->window_us = READ_ONCE(lite_qos_window_us);
	p->floor_bps = (u64)READ_ONCE(lite_qos_floor_kibps) << 10;
	p->high_ops_ps = READ_ONCE(lite_qos_high_ops);
	p->rtt_pct = READ_ONCE(lite_qos_rtt_pct);
	p->idle_windows = READ_ONCE(lite_qos_idle_windows);
}

void lite_peer_qos_init(struct lite_peer_qos *pq)
{
	spin_lock_init(&pq->lock);
	lite_qos_init(&pq->q, ktime_get_ns());
}

void lite_prio_file_init(struct lite_file *lf, bool kernel)
{
	int gid = READ_ONCE(lite_qos_high_gid);

	lf->prio = LITE_PRIO_LOW;
	lf->prio_high_ok = kernel || capable(CAP_SYS_NICE) ||
		(gid >= 0 && in_group_p(make_kgid(&init_user_ns, gid)));
}

int lite_prio_resolve(const struct lite_file *lf, u32 requested, u8 *out)
{
	switch (requested) {
	case LITE_PRIO_DEFAULT:
		*out = READ_ONCE(lf->prio);
		return 0;
	case LITE_PRIO_HIGH:
		if (!lf->prio_high_ok)
			return -EPERM;
		fallthrough;
	case LITE_PRIO_LOW:
		*out = requested;
		return 0;
	default:
		return -EINVAL;
	}
}

long lite_ioc_priority(struct lite_file *lf, void __user *uarg)
{
	struct lite_priority_args a;
	u8 prio;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.reserved)
		return -EINVAL;
	if (a.priority != LITE_PRIO_DEFAULT) {
		ret = lite_prio_resolve(lf, a.priority, &prio);
		if (ret)
			return ret;
		WRITE_ONCE(lf->prio, prio);
	}
	a.priority = READ_ONCE(lf->prio);
	a.high_allowed = lf->prio_high_ok;
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;
}

/* The window is over: its sample taken, the rules applied. Under pq->lock. */
static void lite_qos_window_locked(struct lite_peer_qos *pq,
				   const struct lite_qos_params *p, u64 now)
{
	struct lite_qos_sample s = {
		.hi_ops = atomic64_xchg(&pq->hi_ops, 0),
		.hi_rtt_sum_ns = atomic64_xchg(&pq->hi_rtt_sum_ns, 0),
		.hi_rtt_n = atomic64_xchg(&pq->hi_rtt_n, 0),
		.lo_bytes = atomic64_xchg(&pq->lo_bytes, 0),
	};
	enum lite_qos_rule rule = lite_qos_window_end(&pq->q, p, &s, now);

	atomic64_inc(&lite_qos_windows[rule]);
}

u64 lite_qos_start(struct lite_peer_qos *pq, u8 prio, u64 cost)
{
	struct lite_qos_params p;
	u64 now = ktime_get_ns(), wait = 0;

	lite_qos_params_get(&p);
	if (prio == LITE_PRIO_HIGH) {
		atomic64_inc(&pq->hi_ops);
		lite_ops_stat_add(LITE_ST_OPS_HIGH, 1);
		if (!lite_qos_window_over(&pq->q, &p, now))
			return 0;	/* a racy look; rechecked under the lock */
		spin_lock(&pq->lock);
		if (lite_qos_window_over(&pq->q, &p, now))
			lite_qos_window_locked(pq, &p, now);
		spin_unlock(&pq->lock);
		return 0;
	}
	/* Unthrottled and mid-window: no lock (racy looks, as above). */
	if (!READ_ONCE(pq->q.rate_bps) && !lite_qos_window_over(&pq->q, &p, now))
		goto admitted;
	spin_lock(&pq->lock);
	if (lite_qos_window_over(&pq->q, &p, now))
		lite_qos_window_locked(pq, &p, now);
	wait = lite_qos_admit(&pq->q, &p, cost, now);
	spin_unlock(&pq->lock);
	if (wait) {
		lite_ops_stat_add(LITE_ST_QOS_THROTTLED, 1);
		return wait;
	}
admitted:
	atomic64_add(cost, &pq->lo_bytes);
	lite_ops_stat_add(LITE_ST_OPS_LOW, 1);
	return 0;
}

int lite_qos_wait(u64 ns, bool no_wait)
{
	u64 window = (u64)READ_ONCE(lite_qos_window_us) * NSEC_PER_USEC;
	ktime_t t;

	if (no_wait)
		return -EAGAIN;
	t = ns_to_ktime(min(ns, window));
	lite_ops_stat_add(LITE_ST_QOS_WAIT_US, div_u64(ktime_to_ns(t), NSEC_PER_USEC));
	set_current_state(TASK_KILLABLE);
	schedule_hrtimeout_range(&t, 20 * NSEC_PER_USEC, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
	return fatal_signal_pending(current) ? -EINTR : 0;
}

u64 lite_qos_chunk(const struct lite_peer_qos *pq, u8 prio)
{
	unsigned int kib = READ_ONCE(lite_qos_chunk_kib);

	if (prio != LITE_PRIO_LOW || !kib || !READ_ONCE(lite_qos_on) ||
	    !READ_ONCE(pq->q.rate_bps))
		return U64_MAX;
	return (u64)kib << 10;
}

unsigned int lite_prio_first_qp(u8 prio)
{
	unsigned int qps = READ_ONCE(lite_qps_per_peer);
	unsigned int cpu = raw_smp_processor_id();

	if (!READ_ONCE(lite_qos_on) || qps < 2)
		return cpu;
	return prio == LITE_PRIO_HIGH ? 0 : 1 + cpu % (qps - 1);
}

int lite_qos_node_admit(u32 node, u8 prio, u64 cost, bool no_wait)
{
	struct lite_conn *conn;
	u64 wait_ns;
	int ret;

	while (READ_ONCE(lite_qos_on)) {
		/* No connection: the caller's own path reports it. */
		if (lite_conn_ops_get_from(node, 0, 0, &conn))
			return 0;
		wait_ns = lite_qos_start(&conn->peer->qos, prio, cost);
		lite_conn_ops_put(conn);
		if (!wait_ns)
			return 0;
		ret = lite_qos_wait(wait_ns, no_wait);
		if (ret)
			return ret;
	}
	return 0;
}

void lite_qos_node_rtt(u32 node, u64 ns)
{
	struct lite_conn *conn;

	if (!READ_ONCE(lite_qos_on) || lite_conn_ops_get_from(node, 0, 0, &conn))
		return;
	lite_qos_rtt(&conn->peer->qos, ns);
	lite_conn_ops_put(conn);
}

/* ---- debugfs qos/ ---- */

static int lite_qos_peer_show(const struct lite_peer_info *info, void *arg)
{
	struct seq_file *m = arg;

	seq_printf(m, "%u %s rate_bps=%llu rtt_base_ns=%llu rtt_last_ns=%llu rule=%s\n",
		   info->node_id, info->name[0] ? info->name : "-",
		   info->qos_rate_bps, info->qos_rtt_base_ns,
		   info->qos_rtt_last_ns, lite_qos_rule_names[info->qos_rule]);
	return 0;
}

/* One line per peer: its throttle now (rate_bps 0: not throttled). */
static int lite_qos_peers_show(struct seq_file *m, void *v)
{
	unsigned long next = 0;

	return lite_peers_visit(&next, lite_qos_peer_show, m);
}

DEFINE_SHOW_ATTRIBUTE(lite_qos_peers);

void lite_qos_debugfs_init(struct dentry *root)
{
	struct dentry *dir = debugfs_create_dir("qos", root);
	char name[24];
	int i;

	for (i = 0; i < LITE_QOS_NR_RULES; i++) {
		snprintf(name, sizeof(name), "windows_%s", lite_qos_rule_names[i]);
		lite_debugfs_counter(name, dir, &lite_qos_windows[i]);
	}
	debugfs_create_file("peers", 0444, dir, NULL, &lite_qos_peers_fops);
}
