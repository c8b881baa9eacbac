#include "agent/counter_reader.h"

#include <gtest/gtest.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/counters.h"

namespace lite::agent {
namespace {

TEST(CounterReader, ReturnsWhatTheReadReturns) {
  int reads = 0;
  CounterReader reader(
      [&]() -> absl::StatusOr<CounterReader::Counters> {
        if (++reads == 2) return absl::UnavailableError("module gone");
        return CounterReader::Counters{MakeCounter("module.peers", reads, "")};
      },
      absl::Seconds(10));
  absl::StatusOr<CounterReader::Counters> first = reader.Read();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[0].value(), 1u);
  EXPECT_EQ(reader.Read().status().code(), absl::StatusCode::kUnavailable);
  absl::StatusOr<CounterReader::Counters> third = reader.Read();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)[0].value(), 3u);
}

// A read stuck in the module: each Read gives up after the bound, and
// waits for that same read instead of piling more on the module.
TEST(CounterReader, AStuckReadCostsTheBoundAndOneThreadOnly) {
  absl::Notification release;
  std::atomic<int> reads{0};
  CounterReader reader(
      [&]() -> absl::StatusOr<CounterReader::Counters> {
        ++reads;
        release.WaitForNotification();
        return CounterReader::Counters{MakeCounter("module.peers", 7, "")};
      },
      absl::Milliseconds(200));
  for (int i = 0; i < 3; ++i) {
    const absl::Time start = absl::Now();
    absl::StatusOr<CounterReader::Counters> r = reader.Read();
    const absl::Duration took = absl::Now() - start;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_GE(took, absl::Milliseconds(190));
    EXPECT_LT(took, absl::Seconds(5));
  }
  EXPECT_EQ(reads.load(), 1);
  release.Notify();
  // The stuck read's answer serves the next scrape.
  absl::StatusOr<CounterReader::Counters> r = reader.Read();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].value(), 7u);
  EXPECT_EQ(reads.load(), 1);
  // Then each scrape reads afresh.
  ASSERT_TRUE(reader.Read().ok());
  EXPECT_EQ(reads.load(), 2);
}

}  // namespace
}  // namespace lite::agent
