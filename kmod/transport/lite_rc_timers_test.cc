// The RC timers lite.ko derives from peer_timeout_ms (lite_rc_timers.h),
// computed on the host with the same code: within the budget, as close to
// it as the encoding allows, never an "infinite" retry count.
#include "kmod/transport/lite_rc_timers.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace {

uint64_t TotalMs(const lite_rc_timers& t) {
  return lite_rc_timers_total_ns(&t) / 1000000;
}

TEST(RcTimersTest, DefaultBudgetIsTimeout15SevenTries) {
  lite_rc_timers t;
  lite_rc_timers_for(LITE_PEER_TIMEOUT_DEFAULT_MS, &t);
  EXPECT_EQ(t.ack_timeout, 15);  // 134.2 ms
  EXPECT_EQ(t.retry_count, 6);
  EXPECT_EQ(TotalMs(t), 939);
  EXPECT_EQ(t.min_rnr_timer, 27);  // 122.88 ms, 7 x = 860 ms
  EXPECT_EQ(t.rnr_retry_count, 6);
}

TEST(RcTimersTest, EveryBudgetIsKeptAndNearlyUsed) {
  for (unsigned ms = LITE_PEER_TIMEOUT_MIN_MS; ms <= LITE_PEER_TIMEOUT_MAX_MS;
       ms += 7) {
    lite_rc_timers t;
    lite_rc_timers_for(ms, &t);
    SCOPED_TRACE(ms);
    const uint64_t total = lite_rc_timers_total_ns(&t);
    EXPECT_LE(total, ms * 1000000ULL);
    // Doubling the timeout or adding a try would exceed it, so the
    // choice uses at least about half of the budget.
    EXPECT_GT(total * 2, ms * 1000000ULL);
    EXPECT_GE(t.retry_count, 1);
    EXPECT_LE(t.retry_count, 6);  // rxe retries 7 forever
    EXPECT_GE(t.ack_timeout, 1);
    EXPECT_LE(t.ack_timeout, 31);
    EXPECT_LE(7ULL * lite_rnr_timer_us(t.min_rnr_timer) * 1000,
              ms * 1000000ULL);
    EXPECT_NE(t.min_rnr_timer, 0);  // code 0 is the longest, 655 ms
    EXPECT_EQ(t.rnr_retry_count, 6);  // 7 is forever
  }
}

TEST(RcTimersTest, SmallestBudget) {
  lite_rc_timers t;
  lite_rc_timers_for(LITE_PEER_TIMEOUT_MIN_MS, &t);
  // 2^12 x 4.096 us = 16.8 ms, 5 tries: 83.9 ms.
  EXPECT_EQ(t.ack_timeout, 12);
  EXPECT_EQ(t.retry_count, 4);
  EXPECT_EQ(TotalMs(t), 83);
}

TEST(RcTimersTest, RnrTable) {
  EXPECT_EQ(lite_rnr_timer_us(0), 655360u);
  EXPECT_EQ(lite_rnr_timer_us(1), 10u);
  EXPECT_EQ(lite_rnr_timer_us(14), 1280u);
  EXPECT_EQ(lite_rnr_timer_us(31), 491520u);
}

}  // namespace
