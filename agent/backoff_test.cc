#include "agent/backoff.h"

#include <gtest/gtest.h>

namespace lite::agent {
namespace {

TEST(BackoffTest, DoublesWithJitterUpToTheCap) {
  Backoff b(absl::Milliseconds(100), absl::Seconds(5));
  absl::Duration nominal = absl::Milliseconds(100);
  for (int i = 0; i < 20; ++i) {
    const absl::Duration d = b.Next();
    EXPECT_GE(d, nominal / 2) << "attempt " << i;
    EXPECT_LE(d, nominal) << "attempt " << i;
    nominal = std::min(nominal * 2, absl::Seconds(5));
  }
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b(absl::Milliseconds(100), absl::Seconds(5));
  for (int i = 0; i < 10; ++i) b.Next();
  EXPECT_GT(b.Next(), absl::Milliseconds(100));
  b.Reset();
  EXPECT_LE(b.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterSpreadsTheWaits) {
  Backoff a(absl::Seconds(1), absl::Seconds(1));
  bool differ = false;
  const absl::Duration first = a.Next();
  for (int i = 0; i < 20 && !differ; ++i) differ = a.Next() != first;
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace lite::agent
