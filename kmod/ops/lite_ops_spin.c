// SPDX-License-Identifier: GPL-2.0
/*
 * LITE: caller-side completion. A synchronous operation's caller polls for
 * its answer itself for up to spin_us microseconds before it sleeps, as
 * nvme-rdma's polled queues reap their own completions: no wakeup and no
 * context switch when the answer comes within the budget, and, when it
 * reaps, no hop through the CQ's softirq either.
 *
 * The CQs keep their softirq poller (IB_POLL_SOFTIRQ), so that a caller
 * that stops spinning can sleep on a CQ that is still armed: a spinner
 * only takes completions earlier. ib_poll_cq() hands each completion out
 * once, under the driver's CQ lock, so whoever reaps one (a spinner or the
 * softirq) handles it and nobody else sees it; the handlers run here with
 * bottom halves off, as in the softirq, and complete whichever operation
 * the completion belongs to, ours or another thread's: no completion is
 * lost or handled twice, and a thread that spins serves the others on its
 * queue instead of starving them. A caller spins only while its CPU has
 * nothing else to run: with other tasks runnable, spinning takes their time
 * (measured: 4 spinning threads per vCPU did half the fetch-and-adds of 4
 * sleeping ones). Only send CQs are reaped this way: their
 * handlers each end one work request of their own, in any order, whereas
 * the RPC receive handlers of one connection must run one at a time and in
 * order (a service's GONE must not overtake its last reply), which only
 * the softirq guarantees; an RPC caller spins on its reply's completion
 * alone. A spinner that runs out of budget, must yield the CPU or is
 * killed simply sleeps as before; what it did not reap the softirq does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>

#include "lite_ops_internal.h"

/* Completions reaped per poll: what one spin step holds on its stack. */
#define LITE_SPIN_WCS	4

static unsigned int lite_spin_us;

static int lite_param_set_spin(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 10000);
}

static const struct kernel_param_ops lite_spin_ops = {
	.set = lite_param_set_spin,
	.get = param_get_uint,
};

module_param_cb(spin_us, &lite_spin_ops, &lite_spin_us, 0644);
MODULE_PARM_DESC(spin_us, "how long a synchronous operation's caller polls for its completion before it sleeps, 0..10000 us (0: sleep at once)");

static bool lite_spin_reap_cq = true;
module_param_named(spin_reap, lite_spin_reap_cq, bool, 0644);
MODULE_PARM_DESC(spin_reap, "whether a spinning caller reaps its connection's send completions itself (else it only watches for its own, which the softirq completes)");

/* Reaps up to LITE_SPIN_WCS completions of @cq here; how many. */
static int lite_spin_reap(struct ib_cq *cq)
{
	struct ib_wc wcs[LITE_SPIN_WCS];
	int n, i;

	local_bh_disable();
	n = ib_poll_cq(cq, ARRAY_SIZE(wcs), wcs);
	for (i = 0; i < n; i++) {
		if (likely(wcs[i].wr_cqe))
			wcs[i].wr_cqe->done(cq, &wcs[i]);
	}
	local_bh_enable();
	return n;
}

bool lite_spin_wait(struct ib_cq *cq, struct completion *done)
{
	u64 budget = (u64)READ_ONCE(lite_spin_us) * NSEC_PER_USEC;
	u64 start;

	if (!budget)
		return false;
	if (!READ_ONCE(lite_spin_reap_cq))
		cq = NULL;
	start = ktime_get_ns();
	for (;;) {
		if (completion_done(done)) {
			lite_ops_stat_add(LITE_ST_SPIN_HITS, 1);
			return true;
		}
		/* Others' completions too: it ends when ours comes or time is up. */
		if (!cq || !lite_spin_reap(cq))
			cpu_relax();
		/*
		 * Only while nothing else wants this CPU (as KVM's halt
		 * polling): callers spinning against each other, or against
		 * the thread that would have served them, only delay both.
		 */
		if (need_resched() || !single_task_running() ||
		    fatal_signal_pending(current) ||
		    ktime_get_ns() - start >= budget)
			break;
	}
	lite_ops_stat_add(LITE_ST_SPIN_MISSES, 1);
	return false;
}
