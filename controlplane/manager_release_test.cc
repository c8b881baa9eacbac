// ManagerState, the fenced free: a freed or lost LMR stays RELEASING until
// every holder acknowledged its revocation or ended, then its home is told
// to release (or, after the fence timeout, quarantine) the memory; retries,
// a manager restart, and the checks on what agents send.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

class ReleaseTest : public ManagerTest {
 protected:
  void SetUp() override { Start(TestOptions()); }
  void Start(ManagerOptions options) {
    options.free_fence_timeout = absl::Seconds(10);
    options.request_timeout = absl::Seconds(2);
    Restart(options);
    a_ = JoinAndOpen("alpha", 1);
    b_ = JoinAndOpen("beta", 2);
    c_ = JoinAndOpen("gamma", 3);
    DrainAll();
  }
  void DrainAll() {
    for (TestNode* node : {&a_, &b_, &c_}) Drain(*node->outbox);
  }
  absl::Status Free(const std::string& name) {
    lite::v1::FreeLmrRequest request;
    *request.mutable_caller() = b_.caller();
    *request.mutable_requester() = Creds(1000, 100);
    request.set_name(name);
    return state_->FreeLmr(request).status();
  }
  absl::Status Ack(const TestNode& node, uint64_t grant_id) {
    lite::v1::GrantRevokeAck ack;
    ack.set_grant_id(grant_id);
    ack.set_holder_incarnation(node.incarnation);
    return state_->GrantRevokeAck(node.binding(), ack);
  }
  // The ReleaseLmrMemory requests queued for `node` (other messages go).
  std::vector<lite::v1::NodeRequest> Releases(const TestNode& node) {
    std::vector<lite::v1::NodeRequest> out;
    for (const auto& m : Drain(*node.outbox)) {
      if (m.has_request() && m.request().has_release_lmr_memory()) {
        out.push_back(m.request());
      }
    }
    return out;
  }
  absl::Status Answer(const TestNode& node, uint64_t request_id, int code) {
    lite::v1::NodeRequestResult result;
    result.set_request_id(request_id);
    result.set_status_code(code);
    if (code != 0) result.set_status_message("lite.ko said no");
    return state_->HandleResult(node.binding(), result);
  }
  std::optional<lite::v1::Lmr> Listed(uint64_t lmr_id) {
    lite::v1::ListLmrsRequest list;
    const absl::StatusOr<lite::v1::ListLmrsResponse> listed =
        state_->ListLmrs(list);
    EXPECT_TRUE(listed.ok()) << listed.status();
    if (!listed.ok()) return std::nullopt;
    for (const lite::v1::Lmr& lmr : listed->lmrs()) {
      if (lmr.lmr_id() == lmr_id) return lmr;
    }
    return std::nullopt;
  }
  void Advance(absl::Duration d) {
    clock_.Advance(d);
    state_->Tick();
  }
  // Lets `d` pass in 250 ms steps, every node heartbeating (1 s leases).
  void Pass(absl::Duration d) {
    for (; d > absl::ZeroDuration(); d -= absl::Milliseconds(250)) {
      clock_.Advance(absl::Milliseconds(250));
      for (const TestNode* n : {&a_, &b_, &c_}) Beat(*n);
      state_->Tick();
    }
  }

  TestNode a_, b_, c_;
};

TEST_F(ReleaseTest, AcknowledgedRevocationsReleaseTheMemory) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  const lite::v1::Grant g2 = Map(c_, "f", Creds(3000, 300), true, true);
  DrainAll();
  ASSERT_TRUE(Free("f").ok());
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  // One LmrRemoved revokes both (each holder acks its own: review cp H2).
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].lmr_removed().release_follows());
  EXPECT_TRUE(events[0].lmr_removed().revokes_grants());
  EXPECT_EQ(events[0].lmr_removed().grants_revoked(), 2u);
  // Out of the namespace at once, listed as releasing.
  std::optional<lite::v1::Lmr> listed = Listed(lmr.lmr_id());
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->state(), lite::v1::LMR_STATE_RELEASING);
  EXPECT_EQ(listed->revokes_pending(), 2u);
  EXPECT_EQ(state_->counters().lmrs, 0u);
  EXPECT_EQ(state_->counters().lmrs_releasing, 1u);
  const lite::v1::Lmr again = Register(a_, "f", 0600, Creds(1000, 100));
  EXPECT_NE(again.lmr_id(), lmr.lmr_id());
  EXPECT_EQ(Map(c_, "f", Creds(1000, 100), true, false).lmr_id(),
            again.lmr_id());
  // The home hears nothing until both holders answered.
  ASSERT_TRUE(Ack(b_, g1.grant_id()).ok());
  EXPECT_TRUE(Releases(a_).empty());
  EXPECT_EQ(Listed(lmr.lmr_id())->revokes_pending(), 1u);
  ASSERT_TRUE(Ack(c_, g2.grant_id()).ok());
  std::vector<lite::v1::NodeRequest> sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].release_lmr_memory().lmr_id(), lmr.lmr_id());
  EXPECT_FALSE(sent[0].release_lmr_memory().quarantine());
  // A second ack of the same grant is late, not an error.
  EXPECT_TRUE(Ack(c_, g2.grant_id()).ok());
  EXPECT_EQ(state_->counters().revoke_acks_late, 1u);
  ASSERT_TRUE(Answer(a_, sent[0].request_id(), 0).ok());
  EXPECT_FALSE(Listed(lmr.lmr_id()).has_value());
  EXPECT_EQ(state_->counters().lmrs_released, 1u);
  EXPECT_EQ(state_->counters().revoke_acks, 2u);
  EXPECT_EQ(state_->counters().lmrs_releasing, 0u);
}

TEST_F(ReleaseTest, AnLmrWithoutGrantsIsReleasedAtOnceAfterItsRemoval) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  DrainAll();
  ASSERT_TRUE(Free("f").ok());
  const std::vector<lite::v1::ManagerMessage> home = Drain(*a_.outbox);
  ASSERT_EQ(home.size(), 2u);
  EXPECT_TRUE(home[0].event().lmr_removed().release_follows());
  EXPECT_EQ(home[1].request().release_lmr_memory().lmr_id(), lmr.lmr_id());
}

TEST_F(ReleaseTest, MissingAckQuarantinesTheMemoryAfterTheFenceTimeout) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  Map(c_, "f", Creds(3000, 300), true, false);
  ASSERT_TRUE(Free("f").ok());
  ASSERT_TRUE(Ack(b_, g1.grant_id()).ok());
  DrainAll();
  // Leases are kept; only the fence runs out.
  for (int i = 0; i < 19; ++i) {
    clock_.Advance(absl::Milliseconds(500));
    for (const TestNode* n : {&a_, &b_, &c_}) Beat(*n);
    state_->Tick();
  }
  EXPECT_TRUE(Releases(a_).empty());
  Advance(absl::Milliseconds(500));
  std::vector<lite::v1::NodeRequest> sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].release_lmr_memory().quarantine());
  EXPECT_EQ(state_->counters().lmrs_quarantined, 1u);
  // A late ack changes nothing any more.
  ASSERT_TRUE(Answer(a_, sent[0].request_id(), 0).ok());
  EXPECT_FALSE(Listed(lmr.lmr_id()).has_value());
}

TEST_F(ReleaseTest, AHolderThatEndsCountsAsAcknowledgedAfterItsAnnouncement) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  Map(c_, "f", Creds(3000, 300), true, false);
  ASSERT_TRUE(Free("f").ok());
  ASSERT_TRUE(Ack(b_, g1.grant_id()).ok());
  DrainAll();
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(c_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  const std::vector<lite::v1::ManagerMessage> home = Drain(*a_.outbox);
  ASSERT_EQ(home.size(), 2u);
  // The home removes the peer (and lite.ko tears its QPs down) first.
  EXPECT_EQ(home[0].event().member_failed().node_id(), c_.id);
  EXPECT_EQ(home[1].request().release_lmr_memory().lmr_id(), lmr.lmr_id());
  EXPECT_FALSE(home[1].request().release_lmr_memory().quarantine());
  EXPECT_EQ(state_->counters().revoke_acks_implied, 1u);
}

TEST_F(ReleaseTest, AFailedOrUnansweredReleaseIsSentAgainWithBackoff) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  DrainAll();
  ASSERT_TRUE(Free("f").ok());
  std::vector<lite::v1::NodeRequest> sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(Answer(a_, sent[0].request_id(), 13).ok());  // INTERNAL
  EXPECT_TRUE(Releases(a_).empty());
  EXPECT_TRUE(Listed(lmr.lmr_id()).has_value());
  Pass(absl::Milliseconds(250));
  sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  // No answer within the request timeout (2 s): sent again, after backoff.
  Pass(absl::Milliseconds(1750));
  EXPECT_TRUE(Releases(a_).empty());
  Pass(absl::Milliseconds(250));
  EXPECT_TRUE(Releases(a_).empty());
  Pass(absl::Milliseconds(500));
  std::vector<lite::v1::NodeRequest> again = Releases(a_);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_NE(again[0].request_id(), sent[0].request_id());
  EXPECT_EQ(state_->counters().release_retries, 2u);
  // The late answer to the abandoned request is ignored; NOT_FOUND is done.
  EXPECT_TRUE(Answer(a_, sent[0].request_id(), 0).ok());
  EXPECT_TRUE(Listed(lmr.lmr_id()).has_value());
  ASSERT_TRUE(Answer(a_, again[0].request_id(), 5).ok());
  EXPECT_FALSE(Listed(lmr.lmr_id()).has_value());
}

TEST_F(ReleaseTest, TheRecordGoesWithItsHome) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  Map(b_, "f", Creds(2000, 100), true, false);
  ASSERT_TRUE(Free("f").ok());
  DrainAll();
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a_.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  EXPECT_FALSE(Listed(lmr.lmr_id()).has_value());
  // Announced once, when the release began.
  for (const Event& e : DrainEvents(*b_.outbox)) {
    EXPECT_FALSE(e.has_lmr_removed()) << e.DebugString();
  }
  EXPECT_EQ(state_->counters().lmrs_releasing, 0u);
}

TEST_F(ReleaseTest, AHomesNewIncarnationReleasesWhatTheOldOneWasReleasing) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  Map(b_, "f", Creds(2000, 100), true, false);
  ASSERT_TRUE(Free("f").ok());
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(a_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  EXPECT_FALSE(Listed(lmr.lmr_id()).has_value());
  // The new incarnation's agent removed every peer from lite.ko before it
  // took the new identity, so nothing is pending: released at once.
  a_ = JoinAndOpen("alpha", 1);
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = a_.caller();
  *request.mutable_owner() = Creds(1000, 100);
  request.set_name("f");
  request.set_size_bytes(lmr.size_bytes());
  request.set_mode(0666);
  AddRegisteredMemory(&request, lmr.size_bytes());
  request.set_lmr_id(lmr.lmr_id());
  request.set_releasing(true);
  Drain(*a_.outbox);
  ASSERT_TRUE(state_->RegisterLmr(request).ok());
  std::vector<lite::v1::NodeRequest> sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].release_lmr_memory().lmr_id(), lmr.lmr_id());
  EXPECT_FALSE(sent[0].release_lmr_memory().quarantine());
  // Its name stayed free.
  EXPECT_NE(Register(a_, "f", 0600, Creds(1000, 100)).lmr_id(), 0u);
}

TEST_F(ReleaseTest, LostLmrIsRevokedRemovedAndReleased) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  DrainAll();
  lite::v1::LmrLost lost;
  lost.set_lmr_id(lmr.lmr_id());
  lost.set_reason_errno(19);  // ENODEV
  ASSERT_TRUE(state_->LmrLost(a_.binding(), lost).ok());
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].lmr_removed().cause(),
            lite::v1::REMOVAL_CAUSE_DEVICE_REMOVED);
  EXPECT_TRUE(events[0].lmr_removed().release_follows());
  EXPECT_TRUE(events[0].lmr_removed().revokes_grants());
  EXPECT_EQ(events[0].lmr_removed().grants_revoked(), 1u);
  EXPECT_EQ(state_->counters().lmrs_lost, 1u);
  // Reported again: already releasing, ignored.
  ASSERT_TRUE(state_->LmrLost(a_.binding(), lost).ok());
  EXPECT_EQ(state_->counters().lmrs_lost, 1u);
  Drain(*a_.outbox);
  ASSERT_TRUE(Ack(b_, g1.grant_id()).ok());
  EXPECT_EQ(Releases(a_).size(), 1u);
}

TEST_F(ReleaseTest, BadAcksAndReportsAreRefusedAndChangeNothing) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Lmr theirs = Register(b_, "g", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  const lite::v1::Grant live = Map(c_, "g", Creds(2000, 100), true, false);
  ASSERT_TRUE(Free("f").ok());
  DrainAll();
  const std::string before = Snapshot();
  // Another node's grant, another incarnation, a live grant.
  absl::Status s = Ack(c_, g1.grant_id());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not a grant of node"));
  lite::v1::GrantRevokeAck ack;
  ack.set_grant_id(g1.grant_id());
  ack.set_holder_incarnation(b_.incarnation + 1);
  s = state_->GrantRevokeAck(b_.binding(), ack);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not this session's incarnation"));
  s = Ack(c_, live.grant_id());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is live"));
  EXPECT_EQ(Ack(b_, 0).code(), absl::StatusCode::kInvalidArgument);
  // Another node's LMR; malformed reports.
  lite::v1::LmrLost lost;
  lost.set_lmr_id(theirs.lmr_id());
  lost.set_reason_errno(19);
  s = state_->LmrLost(a_.binding(), lost);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("may only report its own LMRs"));
  lost.set_lmr_id(0);
  EXPECT_EQ(state_->LmrLost(a_.binding(), lost).code(),
            absl::StatusCode::kInvalidArgument);
  lost.set_lmr_id(lmr.lmr_id());
  lost.set_reason_errno(0);
  EXPECT_EQ(state_->LmrLost(a_.binding(), lost).code(),
            absl::StatusCode::kInvalidArgument);
  lost.set_reason_errno(19);
  lost.set_detail(std::string(257, 'x'));
  EXPECT_EQ(state_->LmrLost(a_.binding(), lost).code(),
            absl::StatusCode::kInvalidArgument);
  // A new registration cannot be releasing.
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = a_.caller();
  *request.mutable_owner() = Creds(1000, 100);
  request.set_name("h");
  request.set_size_bytes(4096);
  request.set_mode(0600);
  request.add_chunks()->set_length_bytes(4096);
  request.set_releasing(true);
  s = state_->RegisterLmr(request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("only accepted when re-registering"));
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ReleaseTest, AfterARestartReleasingLmrsWaitForTheirRevokingGrants) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  const lite::v1::Grant g2 = Map(c_, "f", Creds(3000, 300), true, false);
  ASSERT_TRUE(Free("f").ok());
  // The manager restarts before any holder answered.
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(3);
  options.free_fence_timeout = absl::Seconds(10);
  Restart(options);
  for (TestNode* n : {&a_, &b_, &c_}) {
    lite::v1::JoinRequest rejoin =
        RestoreRequestFor(n->name, n->id, n->id, n->incarnation);
    ASSERT_TRUE(state_->Join(rejoin)->restored());
  }
  // b still drains g1: restored as revoking before the LMR is back.
  lite::v1::RestoreGrantRequest restore;
  *restore.mutable_caller() = b_.caller();
  *restore.mutable_grant() = g1;
  restore.set_revoking(true);
  ASSERT_TRUE(state_->RestoreGrant(restore).ok());
  // The home re-registers it as releasing: no LmrAdded, name stays free.
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = a_.caller();
  *request.mutable_owner() = Creds(1000, 100);
  request.set_name("f");
  request.set_size_bytes(lmr.size_bytes());
  request.set_mode(0666);
  AddRegisteredMemory(&request, lmr.size_bytes());
  request.set_lmr_id(lmr.lmr_id());
  request.set_releasing(true);
  absl::StatusOr<lite::v1::RegisterLmrResponse> back =
      state_->RegisterLmr(request);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->lmr().state(), lite::v1::LMR_STATE_RELEASING);
  // Registered again without the flag, it stays releasing.
  request.set_releasing(false);
  EXPECT_EQ(state_->RegisterLmr(request)->lmr().state(),
            lite::v1::LMR_STATE_RELEASING);
  // c's grant was not revoked in its lite.ko yet: restored live, it is
  // taken as revoking and c is told to revoke it.
  *restore.mutable_caller() = c_.caller();
  *restore.mutable_grant() = g2;
  restore.set_revoking(false);
  absl::StatusOr<lite::v1::RestoreGrantResponse> r2 =
      state_->RestoreGrant(restore);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_TRUE(r2->revoked());
  EXPECT_EQ(Listed(lmr.lmr_id())->revokes_pending(), 2u);
  EXPECT_EQ(state_->counters().grants, 0u);
  // Sessions open; recovery ends; nothing is released while acks miss.
  std::vector<std::shared_ptr<Outbox>> outboxes;
  for (TestNode* n : {&a_, &b_, &c_}) {
    lite::v1::Heartbeat first;
    first.set_node_id(n->id);
    first.set_incarnation(n->incarnation);
    absl::StatusOr<OpenedSession> opened = state_->OpenSession(first);
    ASSERT_TRUE(opened.ok()) << opened.status();
    n->outbox = opened->outbox;
  }
  Advance(absl::Seconds(3));
  EXPECT_FALSE(state_->recovering());
  EXPECT_TRUE(Releases(a_).empty());
  ASSERT_TRUE(Ack(b_, g1.grant_id()).ok());
  ASSERT_TRUE(Ack(c_, g2.grant_id()).ok());
  std::vector<lite::v1::NodeRequest> sent = Releases(a_);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_FALSE(sent[0].release_lmr_memory().quarantine());
}

}  // namespace
}  // namespace lite::controlplane::testing
