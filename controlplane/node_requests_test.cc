#include "controlplane/node_requests.h"

#include <gtest/gtest.h>

#include "absl/status/status.h"

namespace lite::controlplane {
namespace {

using Kind = NodeRequests::Kind;
using Outcome = NodeRequests::Outcome;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

TEST(NodeRequestsTest, IdsAreNeverZeroNorReused) {
  NodeRequests requests;
  const uint64_t a = requests.Start(Kind::kAllocateLmrMemory, 1, 7, kT0);
  ASSERT_TRUE(requests.End(a, Outcome::kOk, kT0));
  const uint64_t b = requests.Start(Kind::kProbePeer, 1, 7, kT0);
  EXPECT_NE(a, 0u);
  EXPECT_GT(b, a);
}

TEST(NodeRequestsTest, OnlyTheIncarnationAskedMayAnswer) {
  NodeRequests requests;
  const uint64_t id = requests.Start(Kind::kBindServiceRing, 3, 9, kT0);
  auto from_other_node = requests.Answered(id, 4, 9);
  ASSERT_FALSE(from_other_node.ok());
  EXPECT_EQ(from_other_node.status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(requests.Answered(id, 3, 10).ok());  // A later incarnation.
  auto answer = requests.Answered(id, 3, 9);
  ASSERT_TRUE(answer.ok());
  ASSERT_TRUE(answer->has_value());
  EXPECT_EQ((*answer)->kind, Kind::kBindServiceRing);
}

TEST(NodeRequestsTest, LateAnswersAreToldFromNeverSentOnes) {
  NodeRequests requests;
  const uint64_t id = requests.Start(Kind::kReleaseLmrMemory, 2, 1, kT0);
  ASSERT_TRUE(requests.End(id, Outcome::kAbandoned, kT0));
  auto late = requests.Answered(id, 2, 1);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late->has_value());
  auto never = requests.Answered(id + 1, 2, 1);
  ASSERT_FALSE(never.ok());
  EXPECT_NE(never.status().message().find("never sent"), std::string::npos);
  EXPECT_FALSE(requests.Answered(0, 2, 1).ok());
}

TEST(NodeRequestsTest, DeadlinesComeDueInOrderAndEndOnce) {
  NodeRequests requests;
  const uint64_t later = requests.Start(Kind::kAllocateLmrMemory, 1, 1, kT0,
                                        kT0 + absl::Seconds(2));
  const uint64_t sooner =
      requests.Start(Kind::kBindServiceRing, 1, 1, kT0, kT0 + absl::Seconds(1));
  requests.Start(Kind::kProbePeer, 1, 1, kT0);  // Its part keeps the time.
  EXPECT_EQ(requests.NextDeadline(), kT0 + absl::Seconds(1));
  EXPECT_FALSE(requests.NextDue(kT0).has_value());
  auto due = requests.NextDue(kT0 + absl::Seconds(5));
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->first, sooner);
  EXPECT_EQ(due->second, Kind::kBindServiceRing);
  ASSERT_TRUE(requests.End(sooner, Outcome::kTimeout, kT0));
  EXPECT_FALSE(requests.End(sooner, Outcome::kAbandoned, kT0));
  EXPECT_EQ(requests.NextDue(kT0 + absl::Seconds(5))->first, later);
  ASSERT_TRUE(requests.End(later, Outcome::kTimeout, kT0));
  EXPECT_FALSE(requests.NextDue(absl::InfiniteFuture()).has_value());
  EXPECT_EQ(requests.NextDeadline(), absl::InfiniteFuture());
}

TEST(NodeRequestsTest, SummaryCountsEachRequestOnceByKindAndOutcome) {
  NodeRequests requests;
  const size_t alloc = static_cast<size_t>(Kind::kAllocateLmrMemory);
  const uint64_t a = requests.Start(Kind::kAllocateLmrMemory, 1, 1, kT0);
  const uint64_t b = requests.Start(Kind::kAllocateLmrMemory, 1, 1, kT0);
  EXPECT_EQ(requests.summary().in_flight[alloc], 2u);
  requests.End(a, Outcome::kOk, kT0 + absl::Milliseconds(3));
  requests.End(a, Outcome::kAbandoned, kT0);  // Already ended: not counted.
  requests.End(b, Outcome::kTimeout, kT0);
  const NodeRequests::Summary& s = requests.summary();
  EXPECT_EQ(s.in_flight[alloc], 0u);
  EXPECT_EQ(s.ended[alloc][static_cast<size_t>(Outcome::kOk)], 1u);
  EXPECT_EQ(s.ended[alloc][static_cast<size_t>(Outcome::kTimeout)], 1u);
  EXPECT_EQ(s.ended[alloc][static_cast<size_t>(Outcome::kAbandoned)], 0u);
  EXPECT_EQ(s.latency[alloc].count(), 1u);  // Answered ones only.
}

}  // namespace
}  // namespace lite::controlplane
