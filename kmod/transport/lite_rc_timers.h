/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LITE: the RC transport's timers for a peer_timeout_ms budget (pure
 * logic shared with lite.ko, tested on the host).
 *
 * A requester that gets no ACK waits the local ACK timeout,
 * 4.096 us * 2^ack_timeout, and retransmits up to retry_count times; the
 * work request then completes with IB_WC_RETRY_EXC_ERR. So a peer that
 * stops answering fails the QP after about
 *
 *	4.096 us * 2^ack_timeout * (retry_count + 1).
 *
 * The pair chosen is the one with the largest such total not above the
 * budget, with retry_count 1..6 (at least one retransmission, so one lost
 * packet is no failure; not 7, which rxe takes as "retry forever") and,
 * between equal totals, the most retries. 1,000 ms: 2^15 * 4.096 us =
 * 134.2 ms, 7 tries, 939.5 ms.
 *
 * A receiver not ready (no receive posted, for a SEND or a WRITE with
 * immediate) answers RNR NAK with its min_rnr_timer; the requester waits
 * that long and retries up to rnr_retry_count times, 7 meaning forever.
 * Bounded here to 6 retries of the longest timer code that keeps
 * 7 * timer within the budget (1,000 ms: code 27, 122.88 ms, 860 ms).
 * Every node must run the same peer_timeout_ms: the ACK timeout is each
 * end's own, the retry counts travel in the rdma_cm REQ and REP.
 */
#ifndef LITE_RC_TIMERS_H
#define LITE_RC_TIMERS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
#endif

#define LITE_PEER_TIMEOUT_MIN_MS 100
#define LITE_PEER_TIMEOUT_MAX_MS 60000
#define LITE_PEER_TIMEOUT_DEFAULT_MS 1000
#define LITE_RC_RETRY_MAX 6

struct lite_rc_timers {
	u8 ack_timeout;		/* 4.096 us * 2^ack_timeout per try */
	u8 retry_count;		/* 1..6 */
	u8 min_rnr_timer;	/* IB encoding, see lite_rnr_timer_us() */
	u8 rnr_retry_count;	/* 6 */
};

/* The local ACK timeout for exponent @t (1..31), in ns. */
static inline u64 lite_ack_timeout_ns(unsigned int t)
{
	return 4096ULL << t;
}

/* The RNR NAK timer for IB code @code (0..31), in us (IBTA table 45). */
static inline u32 lite_rnr_timer_us(unsigned int code)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return us[code & 31];
}

/* The requester's give-up time for @t: its tries times the ACK timeout. */
static inline u64 lite_rc_timers_total_ns(const struct lite_rc_timers *t)
{
	return lite_ack_timeout_ns(t->ack_timeout) * (t->retry_count + 1ULL);
}

/* @budget_ms: LITE_PEER_TIMEOUT_MIN_MS..LITE_PEER_TIMEOUT_MAX_MS. */
static inline void lite_rc_timers_for(unsigned int budget_ms,
				      struct lite_rc_timers *out)
{
	u64 budget = budget_ms * 1000000ULL, best = 0, tries, total;
	unsigned int t, code;

	out->ack_timeout = 1;
	out->retry_count = 1;
	for (t = 1; t <= 31; t++) {
		tries = budget / lite_ack_timeout_ns(t);
		if (tries < 2)
			break;		/* longer timeouts leave no retry */
		if (tries > LITE_RC_RETRY_MAX + 1)
			tries = LITE_RC_RETRY_MAX + 1;
		total = tries * lite_ack_timeout_ns(t);
		if (total > best) {	/* equal: keep the one with more retries */
			best = total;
			out->ack_timeout = t;
			out->retry_count = tries - 1;
		}
	}
	/* Code 1 (10 us) is the shortest; 0 is the longest (655 ms). */
	out->min_rnr_timer = 1;
	for (code = 1; code <= 31; code++) {
		if ((LITE_RC_RETRY_MAX + 1ULL) * lite_rnr_timer_us(code) * 1000 <=
		    budget)
			out->min_rnr_timer = code;
	}
	out->rnr_retry_count = LITE_RC_RETRY_MAX;
}

#endif /* LITE_RC_TIMERS_H */
