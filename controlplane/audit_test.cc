// Audit lines stay bounded whatever the request holds, and refused callers
// are logged without request fields at a limited rate (review
// cp-2026-11-28 M1).
#include "controlplane/audit.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::controlplane {
namespace {

using ::testing::HasSubstr;

TEST(Quoted, EscapesAndKeepsShortTextWhole) {
  EXPECT_EQ(Quoted("kv"), "\"kv\"");
  EXPECT_EQ(Quoted("a\x1b[2J\n"), "\"a\\x1b[2J\\n\"");
  const std::string at_limit(kMaxQuotedBytes, 'n');
  EXPECT_EQ(Quoted(at_limit), absl::StrCat("\"", at_limit, "\""));
}

TEST(Quoted, LongTextIsCutAndItsLengthSaid) {
  const std::string huge(1 << 20, '\x01');
  const std::string q = Quoted(huge);
  // Every shown byte escapes to 4 characters: the line is bounded.
  EXPECT_LE(q.size(), 4 * kMaxQuotedBytes + 32);
  EXPECT_THAT(q, HasSubstr("...(1048576 bytes)"));
  EXPECT_EQ(Quoted(std::string(kMaxQuotedBytes + 1, 'x')),
            absl::StrCat("\"", std::string(kMaxQuotedBytes, 'x'),
                         "\"...(257 bytes)"));
}

TEST(PeerHost, DropsThePort) {
  EXPECT_EQ(PeerHost("ipv4:10.0.0.7:51234"), "ipv4:10.0.0.7");
  EXPECT_EQ(PeerHost("ipv6:[::1]:5"), "ipv6:[::1]");
  EXPECT_EQ(PeerHost("ipv6:[fe80::1]"), "ipv6:[fe80::1]");
  EXPECT_EQ(PeerHost("unix:/run/x"), "unix:/run/x");
  EXPECT_EQ(PeerHost(""), "");
}

TEST(RefusalLimiter, OneLinePerPeerPerIntervalWithTheCount) {
  RefusalLimiter limiter(absl::Seconds(10), 8);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  auto first = limiter.Note("a", t0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->skipped, 0u);
  for (int i = 0; i < 99; ++i) {
    EXPECT_FALSE(limiter.Note("a", t0 + absl::Milliseconds(i)).has_value());
  }
  // Another peer is not held back by the first.
  EXPECT_TRUE(limiter.Note("b", t0).has_value());
  EXPECT_FALSE(limiter.Note("a", t0 + absl::Seconds(9)).has_value());
  auto next = limiter.Note("a", t0 + absl::Seconds(10));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->key, "a");
  EXPECT_EQ(next->skipped, 100u);
}

TEST(RefusalLimiter, PeersBeyondTheLimitShareOneEntry) {
  constexpr size_t kMax = 4;
  RefusalLimiter limiter(absl::Seconds(10), kMax);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // kMax - 1 peers apart, then everyone else in "(other peers)".
  for (size_t i = 0; i + 1 < kMax; ++i) {
    auto v = limiter.Note(absl::StrCat("p", i), t0);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->key, absl::StrCat("p", i));
  }
  auto other = limiter.Note("p100", t0);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->key, RefusalLimiter::kOtherPeers);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_FALSE(limiter.Note(absl::StrCat("q", i), t0).has_value());
  }
  EXPECT_EQ(limiter.peers(), kMax);
  // After an interval, idle peers make room again; the shared entry's line
  // carries the count of the refusals it absorbed.
  const absl::Time t1 = t0 + absl::Seconds(10);
  auto shared = limiter.Note("q0", t1);
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->key, "q0");
  EXPECT_LE(limiter.peers(), kMax);
  auto again = limiter.Note("p200", t1);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(limiter.Note(RefusalLimiter::kOtherPeers, t1)->skipped, 10000u);
}

}  // namespace
}  // namespace lite::controlplane
