// PeerFailureReport: a node's lite.ko found another unreachable. The
// manager fails that node only on its own evidence too (no heartbeat for
// more than two heartbeat intervals), at once or when the silence is
// reached; a node that keeps heartbeating is never failed by reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

// TestOptions: lease 1 s, 4 heartbeats per lease: believed after 500 ms.
constexpr absl::Duration kSilence = absl::Milliseconds(500);

lite::v1::PeerFailureReport Report(const TestNode& about) {
  lite::v1::PeerFailureReport r;
  r.set_node_id(about.id);
  r.set_incarnation(about.incarnation);
  r.set_reason_errno(112);  // EHOSTDOWN
  r.set_detail("Host is down (EHOSTDOWN) on QP 0");
  return r;
}

// The cause `node` was failed with, as `watcher` heard it.
std::optional<lite::v1::FailureCause> FailedCause(
    const std::vector<Event>& events, const TestNode& node) {
  for (const Event& e : events) {
    if (e.has_member_failed() && e.member_failed().node_id() == node.id) {
      return e.member_failed().cause();
    }
  }
  return std::nullopt;
}

class ReportsTest : public ManagerTest {
 protected:
  void SetUp() override {
    a_ = JoinAndOpen("alpha", 1);
    b_ = JoinAndOpen("beta", 2);
    c_ = JoinAndOpen("gamma", 3);
    DrainEvents(*a_.outbox);
  }
  TestNode a_, b_, c_;
};

TEST_F(ReportsTest, MalformedReportsAreRefusedAndChangeNothing) {
  std::vector<lite::v1::PeerFailureReport> bad(6, Report(b_));
  bad[0].set_node_id(0);
  bad[1].set_incarnation(0);
  bad[2].set_node_id(a_.id);  // itself
  bad[3].set_reason_errno(0);
  bad[4].set_reason_errno(4096);
  bad[5].set_detail(std::string(257, 'x'));
  clock_.Advance(absl::Seconds(2) / 3);  // b is silent long enough
  const std::string before = Snapshot();
  for (const auto& r : bad) {
    SCOPED_TRACE(r.DebugString());
    const absl::Status s = state_->PeerFailure(a_.binding(), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("peer_failure"));
  }
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(state_->counters().peer_reports, 0u);
}

TEST_F(ReportsTest, HeartbeatingNodeIsNeverFailedByReports) {
  // Every node keeps heartbeating; a keeps reporting b.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(state_->PeerFailure(a_.binding(), Report(b_)).ok());
    clock_.Advance(absl::Milliseconds(200));
    state_->Tick();
    Beat(a_);
    Beat(b_);
    Beat(c_);
  }
  EXPECT_EQ(FailedCause(DrainEvents(*a_.outbox), b_), std::nullopt);
  EXPECT_EQ(state_->counters().failures, 0u);
  EXPECT_EQ(state_->counters().peer_reports, 20u);
  EXPECT_EQ(state_->counters().peer_report_failures, 0u);
}

TEST_F(ReportsTest, SilentNodeIsFailedAtOnce) {
  clock_.Advance(kSilence + absl::Milliseconds(1));
  Beat(a_);
  ASSERT_TRUE(state_->PeerFailure(a_.binding(), Report(b_)).ok());
  const std::vector<Event> events = DrainEvents(*a_.outbox);
  EXPECT_EQ(FailedCause(events, b_), lite::v1::FAILURE_CAUSE_PEER_REPORTED);
  for (const Event& e : events) {
    if (e.has_member_failed()) {
      EXPECT_THAT(e.member_failed().reason(), HasSubstr("alpha"));
      EXPECT_THAT(e.member_failed().reason(), HasSubstr("no heartbeat for"));
    }
  }
  EXPECT_EQ(state_->counters().peer_report_failures, 1u);
  EXPECT_EQ(state_->counters().failures, 1u);
  // The session of the failed node learns it too.
  EXPECT_TRUE(CloseStatus(*b_.outbox).has_value());
}

TEST_F(ReportsTest, SilenceOfExactlyTwoIntervalsIsNotEnough) {
  clock_.Advance(kSilence);
  Beat(a_);
  ASSERT_TRUE(state_->PeerFailure(a_.binding(), Report(b_)).ok());
  EXPECT_EQ(FailedCause(DrainEvents(*a_.outbox), b_), std::nullopt);
  EXPECT_EQ(state_->counters().failures, 0u);
}

TEST_F(ReportsTest, RecordedReportFailsTheNodeWhenTheSilenceIsReached) {
  clock_.Advance(absl::Milliseconds(100));
  ASSERT_TRUE(state_->PeerFailure(a_.binding(), Report(b_)).ok());
  EXPECT_EQ(state_->counters().failures, 0u);
  // Due just after b's silence exceeds 500 ms, well before its lease.
  const absl::Time next = state_->Tick();
  EXPECT_LE(next - clock_.Now(), absl::Milliseconds(402));
  clock_.Advance(absl::Milliseconds(350));
  Beat(a_);
  Beat(c_);
  state_->Tick();
  EXPECT_EQ(state_->counters().failures, 0u);
  clock_.Advance(absl::Milliseconds(51));
  state_->Tick();
  EXPECT_EQ(FailedCause(DrainEvents(*a_.outbox), b_),
            lite::v1::FAILURE_CAUSE_PEER_REPORTED);
  EXPECT_EQ(state_->counters().peer_report_failures, 1u);
  // c, which heartbeated, is still there; so is a.
  EXPECT_EQ(state_->counters().nodes_alive, 2u);
}

TEST_F(ReportsTest, HeartbeatAfterTheReportDropsIt) {
  clock_.Advance(absl::Milliseconds(100));
  ASSERT_TRUE(state_->PeerFailure(a_.binding(), Report(b_)).ok());
  clock_.Advance(absl::Milliseconds(100));
  Beat(b_);  // b was only slow
  clock_.Advance(absl::Milliseconds(450));
  Beat(a_);
  Beat(c_);
  state_->Tick();
  EXPECT_EQ(FailedCause(DrainEvents(*a_.outbox), b_), std::nullopt);
  // b falls silent later without a new report: only its lease ends it.
  clock_.Advance(absl::Milliseconds(450));
  Beat(a_);
  Beat(c_);
  state_->Tick();
  EXPECT_EQ(state_->counters().failures, 0u);
  clock_.Advance(absl::Milliseconds(100));
  state_->Tick();
  EXPECT_EQ(FailedCause(DrainEvents(*a_.outbox), b_),
            lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
}

TEST_F(ReportsTest, ReportsOnAnotherIncarnationAreIgnored) {
  lite::v1::PeerFailureReport old = Report(b_);
  old.set_incarnation(b_.incarnation + 1);
  lite::v1::PeerFailureReport unknown = Report(b_);
  unknown.set_node_id(999);
  clock_.Advance(kSilence + absl::Milliseconds(1));
  Beat(a_);
  EXPECT_TRUE(state_->PeerFailure(a_.binding(), old).ok());
  EXPECT_TRUE(state_->PeerFailure(a_.binding(), unknown).ok());
  EXPECT_EQ(state_->counters().peer_reports_ignored, 2u);
  EXPECT_EQ(state_->counters().failures, 0u);
}

TEST_F(ReportsTest, AStaleReporterIsRefused) {
  SessionBinding stale = a_.binding();
  stale.incarnation += 1;
  const absl::Status s = state_->PeerFailure(stale, Report(b_));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(state_->counters().peer_reports, 0u);
}

}  // namespace
}  // namespace lite::controlplane::testing
