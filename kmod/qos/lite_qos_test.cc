// The QoS policy (lite_qos.h) on the host with a fake clock: each of the
// three rules, their boundaries, the token bucket's rate, and the floor
// that keeps low priority from starving.
#include "kmod/qos/lite_qos.h"

#include <algorithm>
#include <cstdint>

#include "gtest/gtest.h"

namespace {

constexpr uint64_t kMs = 1000000;  // ns
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint64_t kMiB = 1 << 20;

lite_qos_params Params() {
  lite_qos_params p{};
  p.window_us = 10000;  // 10 ms
  p.floor_bps = 4 * kMiB;
  p.high_ops_ps = 50000;
  p.rtt_pct = 150;
  p.idle_windows = 3;
  return p;
}

// A policy and its clock: windows are ended the way lite.ko ends them,
// with what the window saw.
struct Policy {
  lite_qos_params p = Params();
  lite_qos q{};
  uint64_t now = 1 * kSec;

  Policy() { lite_qos_init(&q, now); }

  // One window of @hi_ops high-priority operations with mean round trip
  // @rtt_ns, and @lo_bytes of low priority admitted.
  lite_qos_rule Window(uint64_t hi_ops, uint64_t rtt_ns, uint64_t lo_bytes) {
    now += lite_qos_window_ns(&p);
    lite_qos_sample s{};
    s.hi_ops = hi_ops;
    s.hi_rtt_n = rtt_ns ? hi_ops : 0;
    s.hi_rtt_sum_ns = rtt_ns * s.hi_rtt_n;
    s.lo_bytes = lo_bytes;
    EXPECT_TRUE(lite_qos_window_over(&q, &p, now));
    return lite_qos_window_end(&q, &p, &s, now);
  }

  // A greedy low-priority sender of @op bytes for @ns: every op as soon as
  // it is admitted, windows ended with @hi_ops at @rtt. Returns the bytes
  // admitted.
  uint64_t Greedy(uint64_t op, uint64_t ns, uint64_t hi_ops, uint64_t rtt) {
    uint64_t end = now + ns, bytes = 0, window_lo = 0;
    uint64_t window_at = q.window_start + lite_qos_window_ns(&p);
    while (now < end) {
      if (now >= window_at) {
        lite_qos_sample s{};
        s.hi_ops = hi_ops;
        s.hi_rtt_n = rtt ? hi_ops : 0;
        s.hi_rtt_sum_ns = rtt * s.hi_rtt_n;
        s.lo_bytes = window_lo;
        lite_qos_window_end(&q, &p, &s, now);
        window_lo = 0;
        window_at = now + lite_qos_window_ns(&p);
      }
      uint64_t wait = lite_qos_admit(&q, &p, op, now);
      if (wait == 0) {
        bytes += op;
        window_lo += op;
        now += 1000;  // the op's own issue cost: 1 us
      } else {
        now += std::min(wait, window_at > now ? window_at - now : wait);
      }
    }
    return bytes;
  }
};

TEST(QosParams, Boundaries) {
  lite_qos_params p = Params();
  EXPECT_TRUE(lite_qos_params_valid(&p));
  p.window_us = 999;
  EXPECT_FALSE(lite_qos_params_valid(&p));
  p.window_us = 1000000;
  EXPECT_TRUE(lite_qos_params_valid(&p));
  p.window_us = 1000001;
  EXPECT_FALSE(lite_qos_params_valid(&p));
  p = Params();
  p.floor_bps = 0;
  EXPECT_FALSE(lite_qos_params_valid(&p)) << "a floor of 0 would starve";
  p = Params();
  p.rtt_pct = 100;
  EXPECT_FALSE(lite_qos_params_valid(&p)) << "100 % throttles on noise";
  p.rtt_pct = 101;
  EXPECT_TRUE(lite_qos_params_valid(&p));
  p.rtt_pct = 0;
  EXPECT_TRUE(lite_qos_params_valid(&p)) << "0 turns rule 3 off";
  p = Params();
  p.idle_windows = 0;
  EXPECT_FALSE(lite_qos_params_valid(&p));
}

TEST(QosRules, StartsUnthrottled) {
  Policy pol;
  EXPECT_EQ(pol.q.rate_bps, 0u);
  for (int i = 0; i < 100; i++)
    EXPECT_EQ(lite_qos_admit(&pol.q, &pol.p, 1 << 20, pol.now), 0u);
}

TEST(QosRules, Rule1HighLoadThrottlesFromWhatLowUsed) {
  Policy pol;
  // 500 ops in 10 ms = 50,000/s: the threshold, inclusive.
  EXPECT_EQ(pol.Window(500, 0, 10 * kMiB), LITE_QOS_LOAD);
  // Low used 10 MiB in 10 ms = 1000 MiB/s; half of it.
  EXPECT_EQ(pol.q.rate_bps, 500 * kMiB);
  EXPECT_EQ(pol.Window(500, 0, 0), LITE_QOS_LOAD);
  EXPECT_EQ(pol.q.rate_bps, 250 * kMiB);
}

TEST(QosRules, Rule1JustBelowThresholdDoesNotThrottle) {
  Policy pol;
  EXPECT_EQ(pol.Window(499, 0, 10 * kMiB), LITE_QOS_EASE);
  EXPECT_EQ(pol.q.rate_bps, 0u);
}

TEST(QosRules, Rule1OffWhenThresholdIsZero) {
  Policy pol;
  pol.p.high_ops_ps = 0;
  EXPECT_EQ(pol.Window(1000000, 0, kMiB), LITE_QOS_EASE);
}

TEST(QosRules, Rule2NoHighTrafficLiftsTheThrottleAfterIdleWindows) {
  Policy pol;
  pol.Window(500, 0, 10 * kMiB);
  ASSERT_NE(pol.q.rate_bps, 0u);
  uint64_t rate = pol.q.rate_bps;
  EXPECT_EQ(pol.Window(0, 0, kMiB), LITE_QOS_HOLD);
  EXPECT_EQ(pol.Window(0, 0, kMiB), LITE_QOS_HOLD);
  EXPECT_EQ(pol.q.rate_bps, rate) << "held until idle_windows have passed";
  EXPECT_EQ(pol.Window(0, 0, kMiB), LITE_QOS_IDLE);
  EXPECT_EQ(pol.q.rate_bps, 0u);
  EXPECT_EQ(lite_qos_admit(&pol.q, &pol.p, 1 << 30, pol.now), 0u);
}

TEST(QosRules, Rule2ALateWindowEndCountsEveryWindowThatPassed) {
  Policy pol;
  pol.Window(500, 0, 10 * kMiB);
  ASSERT_NE(pol.q.rate_bps, 0u);
  // Nobody ended a window for a second: 100 quiet windows.
  pol.now += kSec;
  lite_qos_sample s{};
  EXPECT_EQ(lite_qos_window_end(&pol.q, &pol.p, &s, pol.now), LITE_QOS_IDLE);
  EXPECT_EQ(pol.q.rate_bps, 0u);
}

TEST(QosRules, Rule2HighTrafficResetsTheIdleCount) {
  Policy pol;
  pol.Window(500, 0, 10 * kMiB);
  pol.Window(0, 0, 0);
  pol.Window(0, 0, 0);
  pol.Window(10, 0, 0);  // some high traffic: ease, count restarts
  pol.Window(0, 0, 0);
  EXPECT_EQ(pol.Window(0, 0, 0), LITE_QOS_HOLD);
  EXPECT_EQ(pol.Window(0, 0, 0), LITE_QOS_IDLE);
}

TEST(QosRules, Rule3RoundTripsOverTheThresholdThrottle) {
  Policy pol;
  EXPECT_EQ(pol.Window(10, 100000, 10 * kMiB), LITE_QOS_EASE);
  EXPECT_EQ(pol.q.rtt_base_ns, 100000u);
  // 150 % of the baseline exactly is not over it.
  EXPECT_EQ(pol.Window(10, 150000, 10 * kMiB), LITE_QOS_EASE);
  EXPECT_EQ(pol.q.rate_bps, 0u);
  EXPECT_EQ(pol.Window(10, 151000, 10 * kMiB), LITE_QOS_RTT);
  EXPECT_EQ(pol.q.rate_bps, 500 * kMiB);
  EXPECT_EQ(pol.q.rtt_last_ns, 151000u);
}

TEST(QosRules, Rule3OffWhenPercentIsZero) {
  Policy pol;
  pol.p.rtt_pct = 0;
  pol.Window(10, 100000, kMiB);
  EXPECT_EQ(pol.Window(10, 10000000, kMiB), LITE_QOS_EASE);
}

TEST(QosRules, Rule3BaselineIsTheLeastMeanAndRisesSlowly) {
  Policy pol;
  pol.Window(10, 200000, 0);
  pol.Window(10, 100000, 0);
  EXPECT_EQ(pol.q.rtt_base_ns, 100000u) << "the least mean";
  pol.Window(10, 356000, 0);  // 256 us above: rises by 1/256 of that
  EXPECT_EQ(pol.q.rtt_base_ns, 101000u);
  // A path that stays 2x slower is accepted in time, not throttled forever.
  int windows = 0;
  while (pol.Window(10, 200000, 0) == LITE_QOS_RTT) windows++;
  EXPECT_GT(windows, 50);
  EXPECT_LT(windows, 200);
}

TEST(QosRules, EaseAddsAnEighthOrAtLeastOneFloor) {
  Policy pol;
  pol.Window(500, 0, 10 * kMiB);  // 500 MiB/s
  pol.Window(10, 0, 0);
  EXPECT_EQ(pol.q.rate_bps, 562 * kMiB + kMiB / 2);
  Policy low;
  low.Window(500, 0, 0);  // the floor, 4 MiB/s: an eighth is less
  low.Window(10, 0, 0);
  EXPECT_EQ(low.q.rate_bps, 8 * kMiB);
}

TEST(QosRules, NeverBelowTheFloor) {
  Policy pol;
  for (int i = 0; i < 64; i++) pol.Window(500, 0, 10 * kMiB);
  EXPECT_EQ(pol.q.rate_bps, pol.p.floor_bps);
  // Unthrottled with no low traffic at all: the floor, not 0.
  Policy idle_low;
  idle_low.Window(500, 0, 0);
  EXPECT_EQ(idle_low.q.rate_bps, idle_low.p.floor_bps);
}

TEST(QosBucket, AdmitsTheRateAndOneBurst) {
  Policy pol;
  pol.p.high_ops_ps = 0;
  pol.p.rtt_pct = 0;
  lite_qos_set_rate(&pol.q, &pol.p, 100 * kMiB);
  // Windows that ease add a floor each; keep them from running: the
  // bucket alone over 0.5 s (no window ends inside one call).
  pol.q.window_start = pol.now;
  pol.p.window_us = 1000000;
  uint64_t bytes = pol.Greedy(64 << 10, kSec / 2, 0, 0);
  uint64_t want = 50 * kMiB;
  EXPECT_GE(bytes, want - (64 << 10));
  EXPECT_LE(bytes, want + lite_qos_burst(&pol.p, 100 * kMiB) + (64 << 10));
}

TEST(QosBucket, RefillsEveryMicrosecondEarnWhatOnePerSecondWould) {
  Policy pol;
  lite_qos_set_rate(&pol.q, &pol.p, 5 * kMiB + 7);  // not a round rate
  pol.q.tokens = 0;
  uint64_t bytes = 0;
  for (uint64_t t = 0; t < kSec; t += 1000) {
    if (lite_qos_admit(&pol.q, &pol.p, 64, pol.now + t) == 0) bytes += 64;
  }
  // 5 MiB + 7 bytes in one second: each 5.2-byte refill's remainder kept.
  EXPECT_GE(bytes, 5 * kMiB + 7 - 64);
  EXPECT_LE(bytes, 5 * kMiB + 7 + 64);
}

TEST(QosBucket, ALargeOperationIsAdmittedAndItsDebtWaitedOut) {
  Policy pol;
  lite_qos_set_rate(&pol.q, &pol.p, pol.p.floor_bps);  // 4 MiB/s
  EXPECT_EQ(lite_qos_admit(&pol.q, &pol.p, 16 * kMiB, pol.now), 0u);
  uint64_t wait = lite_qos_admit(&pol.q, &pol.p, 1, pol.now);
  EXPECT_NEAR(static_cast<double>(wait), 4.0 * kSec, 1.0 * kMs);
  EXPECT_EQ(lite_qos_admit(&pol.q, &pol.p, 1, pol.now + wait), 0u);
}

TEST(QosBucket, NoStarvationUnderConstantThrottling) {
  Policy pol;
  // High load every window: the rate halves from what the greedy sender
  // took unthrottled (16 GiB/s, capped) down to the floor within 1 s.
  pol.Greedy(64 << 10, kSec, 1000, 0);
  EXPECT_EQ(pol.q.rate_bps, pol.p.floor_bps);
  // From there on it gets the floor's bytes: no more, and no less.
  uint64_t bytes = pol.Greedy(64 << 10, 4 * kSec, 1000, 0);
  EXPECT_GE(bytes, 4 * pol.p.floor_bps - (64 << 10));
  EXPECT_LE(bytes, 4 * pol.p.floor_bps + 2 * (64 << 10));
}

TEST(QosBucket, IdleHighPriorityGivesLowEverything) {
  Policy pol;
  uint64_t bytes = pol.Greedy(64 << 10, kSec / 10, 0, 0);
  // 1 us per op, never throttled: 100,000 ops.
  EXPECT_EQ(bytes, 100000ull * (64 << 10));
}

TEST(QosArithmetic, PerSecondSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(lite_qos_per_sec(~0ull, 1), LITE_QOS_RATE_MAX);
  EXPECT_EQ(lite_qos_per_sec(5, 0), LITE_QOS_RATE_MAX);
  EXPECT_EQ(lite_qos_per_sec(1000, kSec), 1000u);
  EXPECT_EQ(lite_qos_per_sec(1, 10 * kSec), 0u);
  EXPECT_EQ(lite_qos_per_sec(LITE_QOS_RATE_MAX, kSec), LITE_QOS_RATE_MAX);
}

TEST(QosArithmetic, TheDebtIsBounded) {
  Policy pol;
  lite_qos_set_rate(&pol.q, &pol.p, pol.p.floor_bps);
  EXPECT_EQ(lite_qos_admit(&pol.q, &pol.p, ~0ull, pol.now), 0u);
  EXPECT_GE(pol.q.tokens, -LITE_QOS_DEBT_MAX);
  uint64_t wait = lite_qos_admit(&pol.q, &pol.p, 1, pol.now);
  EXPECT_GT(wait, 0u);
  EXPECT_LT(wait, 2000 * kSec);  // 4 GiB at 4 MiB/s: 1024 s, no wrap
}

}  // namespace
