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
  // The next scrape gets the counters: the stuck read's answer if the
  // scrape finds it still running, or a read of its own if the reader's
  // thread finished it first (it did, once in a while, with 4 ASan tests
  // on 2 cores, #36): either way at most one read more.
  absl::StatusOr<CounterReader::Counters> r = reader.Read();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].value(), 7u);
  const int after_release = reads.load();
  EXPECT_GE(after_release, 1);
  EXPECT_LE(after_release, 2);
  // Then each scrape reads afresh: exactly one read more.
  ASSERT_TRUE(reader.Read().ok());
  EXPECT_EQ(reads.load(), after_release + 1);
}

}  // namespace
}  // namespace lite::agent
