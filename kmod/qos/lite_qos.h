/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: priority-based QoS, the policy and its arithmetic (pure logic
 * shared with lite.ko, tested on the host with a fake clock).
 *
 * LITE's finding (SOSP'17, section 7) was that software scheduling in the
 * indirection layer protects high-priority latency better than the NIC's
 * own priorities, with three rules combined. Per peer, every window:
 *
 *  1. high-priority load is high (at least high_ops_ps operations per
 *     second): throttle low priority;
 *  2. no high-priority traffic for idle_windows windows: do not throttle
 *     low priority at all;
 *  3. high-priority round trips grew (the window's mean over rtt_pct % of
 *     the baseline): throttle low priority.
 *
 * Otherwise the throttle eases. The throttle is a token bucket whose rate
 * is set the way AIMD sets a window: a rule that throttles halves the
 * rate, a window that is fine raises it by an eighth (at least one floor).
 * A token bucket alone needs the right rate up front, which depends on the
 * NIC and the load; a window of operations in flight alone cannot bound
 * bytes per second of 64 KiB WRITEs against 8-byte READs. Together the
 * rate finds the largest low-priority load the high-priority round trips
 * tolerate, and backs off in one window when they do not. The increase is
 * proportional, not one fixed step, so that the same setting recovers in
 * tens of windows on a 10 MiB/s emulated link and on a 10 GiB/s NIC.
 *
 * Low priority never starves: the rate never goes below floor_bps, and a
 * waiter is admitted as soon as the bucket is out of debt, whatever the
 * rules say. An operation larger than the bucket is admitted whole and
 * leaves a debt the next ones wait out, so no size is refused.
 *
 * All times in ns, rates in bytes per second; no floating point and no
 * 64-bit division but div64_u64() (32-bit kernels).
 */
#ifndef LITE_QOS_H
#define LITE_QOS_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
#include <linux/types.h>
typedef __u8 u8;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;
static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}
#endif

static inline u64 lite_qos_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

static inline u64 lite_qos_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

#define LITE_QOS_NSEC_PER_SEC	1000000000ULL
/* Rates at most 16 GiB/s: rate * 1 s in ns fits in 64 bits. */
#define LITE_QOS_RATE_MAX	(16ULL << 30)
/* The bucket holds at least one 64 KiB operation's worth. */
#define LITE_QOS_BURST_MIN	(64ULL << 10)
/* A debt beyond this is forgiven (it would only lengthen one wait). */
#define LITE_QOS_DEBT_MAX	0x100000000LL
/* The baseline round trip rises by 1/256 of the gap each busy window. */
#define LITE_QOS_BASE_RISE_SHIFT 8

struct lite_qos_params {
	u32 window_us;		/* one evaluation period, 1000..1000000 */
	u64 floor_bps;		/* low priority's minimum rate, >= 1 */
	u64 high_ops_ps;	/* rule 1's threshold; 0: rule 1 off */
	u32 rtt_pct;		/* rule 3's threshold, >= 101; 0: rule 3 off */
	u32 idle_windows;	/* rule 2: windows without high traffic, >= 1 */
};

/* What one window saw, for lite_qos_window_end(). */
struct lite_qos_sample {
	u64 hi_ops;		/* high-priority operations started */
	u64 hi_rtt_sum_ns;	/* their round trips, summed */
	u64 hi_rtt_n;		/* ... and counted */
	u64 lo_bytes;		/* low-priority bytes admitted */
};

/* Which rule decided a window (counted, and plotted in docs/qos.md). */
enum lite_qos_rule {
	LITE_QOS_HOLD,		/* no high traffic yet, not idle long enough */
	LITE_QOS_IDLE,		/* rule 2: unthrottled */
	LITE_QOS_LOAD,		/* rule 1: rate halved */
	LITE_QOS_RTT,		/* rule 3: rate halved */
	LITE_QOS_EASE,		/* high traffic, fine round trips: rate + floor */
	LITE_QOS_NR_RULES,
};

struct lite_qos {
	u64 window_start;	/* ns */
	u64 rate_bps;		/* 0: unthrottled */
	s64 tokens;		/* bytes; below 0, a debt */
	u64 refilled;		/* ns of the last refill */
	u64 refill_frac;	/* bytes * 1e9 not yet a whole token, < 1e9 */
	u64 rtt_base_ns;	/* 0: no high round trip seen yet */
	u64 rtt_last_ns;	/* the last window's mean (0: none) */
	u32 idle;		/* windows in a row without high traffic */
	u8 rule;		/* enum lite_qos_rule of the last window */
};

/* The checks lite.ko applies to its module parameters. */
static inline bool lite_qos_params_valid(const struct lite_qos_params *p)
{
	return p->window_us >= 1000 && p->window_us <= 1000000 &&
	       p->floor_bps >= 1 && p->floor_bps <= LITE_QOS_RATE_MAX &&
	       (p->rtt_pct == 0 || (p->rtt_pct > 100 && p->rtt_pct <= 100000)) &&
	       p->idle_windows >= 1 && p->idle_windows <= 100000 &&
	       p->high_ops_ps <= LITE_QOS_NSEC_PER_SEC;
}

static inline void lite_qos_init(struct lite_qos *q, u64 now)
{
	*q = (struct lite_qos){ .window_start = now, .refilled = now };
}

static inline u64 lite_qos_window_ns(const struct lite_qos_params *p)
{
	return (u64)p->window_us * 1000;
}

/* A window is over: the caller takes a sample and calls window_end. */
static inline bool lite_qos_window_over(const struct lite_qos *q,
					const struct lite_qos_params *p,
					u64 now)
{
	return now - q->window_start >= lite_qos_window_ns(p);
}

/*
 * @count per @ns as a count per second, at most LITE_QOS_RATE_MAX: count is
 * capped at 2^34 first, so count * 1e9 fits in 64 bits.
 */
static inline u64 lite_qos_per_sec(u64 count, u64 ns)
{
	if (!ns)
		return LITE_QOS_RATE_MAX;
	count = lite_qos_min(count, LITE_QOS_RATE_MAX);
	return lite_qos_min(div64_u64(count * LITE_QOS_NSEC_PER_SEC, ns),
		   LITE_QOS_RATE_MAX);
}

/* The bucket's size at @rate: one window of it, at least one 64 KiB op. */
static inline u64 lite_qos_burst(const struct lite_qos_params *p, u64 rate)
{
	return lite_qos_max(div64_u64(rate * p->window_us, 1000000),
			    LITE_QOS_BURST_MIN);
}

static inline void lite_qos_set_rate(struct lite_qos *q,
				     const struct lite_qos_params *p, u64 rate)
{
	s64 burst;

	q->rate_bps = rate ? lite_qos_min(lite_qos_max(rate, p->floor_bps),
					  LITE_QOS_RATE_MAX) : 0;
	if (!q->rate_bps)
		return;
	burst = lite_qos_burst(p, q->rate_bps);
	if (q->tokens > burst)
		q->tokens = burst;
}

/*
 * Ends the window that began at q->window_start with what it saw, @s,
 * applies the rules and starts the next window at @now. Returns the rule
 * that decided.
 */
static inline enum lite_qos_rule
lite_qos_window_end(struct lite_qos *q, const struct lite_qos_params *p,
		    const struct lite_qos_sample *s, u64 now)
{
	u64 elapsed = now - q->window_start;
	u64 windows = div64_u64(elapsed, lite_qos_window_ns(p));
	u64 mean = 0, rate;
	enum lite_qos_rule rule;

	q->window_start = now;
	q->rtt_last_ns = 0;
	if (!s->hi_ops && !s->hi_rtt_n) {
		/* Quiet: count the windows that passed, a late call counts all. */
		q->idle += (u32)lite_qos_min(lite_qos_max(windows, 1),
					     p->idle_windows);
		if (q->idle >= p->idle_windows) {
			q->idle = p->idle_windows;
			q->rate_bps = 0;
			q->rule = LITE_QOS_IDLE;
		} else {
			q->rule = LITE_QOS_HOLD;
		}
		return (enum lite_qos_rule)q->rule;
	}
	q->idle = 0;
	if (s->hi_rtt_n) {
		mean = div64_u64(s->hi_rtt_sum_ns, s->hi_rtt_n);
		q->rtt_last_ns = mean;
	}

	if (p->high_ops_ps && lite_qos_per_sec(s->hi_ops, elapsed) >= p->high_ops_ps)
		rule = LITE_QOS_LOAD;
	else if (p->rtt_pct && mean && q->rtt_base_ns &&
		 mean * 100 > q->rtt_base_ns * p->rtt_pct)
		rule = LITE_QOS_RTT;
	else
		rule = LITE_QOS_EASE;

	/*
	 * The baseline: the least mean seen, rising slowly when round trips
	 * stay above it, so that a path that got slower for good (a busier
	 * peer, another route) is not throttled against forever.
	 */
	if (mean) {
		if (!q->rtt_base_ns || mean < q->rtt_base_ns)
			q->rtt_base_ns = mean;
		else
			q->rtt_base_ns += (mean - q->rtt_base_ns) >>
					  LITE_QOS_BASE_RISE_SHIFT;
	}

	if (rule == LITE_QOS_EASE) {
		if (q->rate_bps)
			lite_qos_set_rate(q, p, q->rate_bps +
					  lite_qos_max(q->rate_bps / 8,
						       p->floor_bps));
	} else {
		/* Half of what it had, or of what it used when unthrottled. */
		rate = q->rate_bps ? q->rate_bps :
			lite_qos_per_sec(s->lo_bytes, elapsed);
		if (!q->rate_bps)
			q->tokens = 0;
		lite_qos_set_rate(q, p, lite_qos_max(rate / 2, p->floor_bps));
	}
	q->rule = rule;
	return rule;
}

/*
 * Adds what the rate earned since the last refill, up to the burst. The
 * remainder of each division is kept, so that refills every microsecond
 * earn what one per second would.
 */
static inline void lite_qos_refill(struct lite_qos *q,
				   const struct lite_qos_params *p, u64 now)
{
	u64 dt = now - q->refilled, burst, room, secs, earned;

	q->refilled = now;
	burst = lite_qos_burst(p, q->rate_bps);
	room = q->tokens < (s64)burst ? (u64)((s64)burst - q->tokens) : 0;
	secs = div64_u64(dt, LITE_QOS_NSEC_PER_SEC);
	if (secs > div64_u64(room, q->rate_bps)) {
		q->tokens = (s64)burst;
		q->refill_frac = 0;
		return;
	}
	/* secs * rate <= room; rate * (< 1 s) + frac < 2^64 (rate <= 2^34). */
	earned = q->rate_bps * (dt - secs * LITE_QOS_NSEC_PER_SEC) +
		 q->refill_frac;
	q->refill_frac = earned % LITE_QOS_NSEC_PER_SEC;
	earned = secs * q->rate_bps + div64_u64(earned, LITE_QOS_NSEC_PER_SEC);
	if (earned >= room) {
		q->tokens = (s64)burst;
		q->refill_frac = 0;
	} else {
		q->tokens += (s64)earned;
	}
}

/*
 * A low-priority operation of @cost bytes asks to start at @now: 0 if it
 * may (its cost is taken), else how many ns to wait before asking again.
 * High priority never asks.
 */
static inline u64 lite_qos_admit(struct lite_qos *q,
				 const struct lite_qos_params *p, u64 cost,
				 u64 now)
{
	if (!q->rate_bps)
		return 0;
	lite_qos_refill(q, p, now);
	if (q->tokens < 0)
		return div64_u64((u64)-q->tokens * LITE_QOS_NSEC_PER_SEC +
				 q->rate_bps - 1, q->rate_bps);
	q->tokens -= (s64)lite_qos_min(cost, LITE_QOS_DEBT_MAX);
	if (q->tokens < -LITE_QOS_DEBT_MAX)
		q->tokens = -LITE_QOS_DEBT_MAX;
	return 0;
}

#endif /* LITE_QOS_H */
