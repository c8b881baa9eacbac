// ManagerState membership: ids, incarnations, leases, sessions, the event
// order, overflow, drain/evict, restart recovery and shutdown.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controlplane/manager_test_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusCode Code(const absl::Status& status) { return status.code(); }

lite::v1::Heartbeat Hb(uint32_t node_id, uint64_t incarnation) {
  lite::v1::Heartbeat heartbeat;
  heartbeat.set_node_id(node_id);
  heartbeat.set_incarnation(incarnation);
  heartbeat.set_heartbeat_seq(7);
  return heartbeat;
}

using MembershipTest = ManagerTest;

TEST_F(MembershipTest, FirstJoinGetsIdOneAndIncarnationOne) {
  const lite::v1::JoinResponse a = JoinOnly("alpha", 1);
  const lite::v1::JoinResponse b = JoinOnly("beta", 2);
  EXPECT_EQ(a.node_id(), 1u);
  EXPECT_EQ(a.incarnation(), 1u);
  EXPECT_EQ(b.node_id(), 2u);
  EXPECT_EQ(b.incarnation(), 1u);
  EXPECT_FALSE(a.restored());
  EXPECT_EQ(a.lease_duration_ms(), 1000u);
  EXPECT_EQ(a.heartbeat_interval_ms(), 250u);
  ASSERT_EQ(b.members_size(), 2);
  EXPECT_EQ(b.members(0).node_name(), "alpha");
  EXPECT_EQ(b.members(1).node_name(), "beta");
  EXPECT_EQ(b.members(1).rdma_address(), "10.0.0.2:7471");
  EXPECT_EQ(b.members(1).state(), lite::v1::NODE_STATE_ALIVE);
}

TEST_F(MembershipTest, IdsAreStablePerNameAndIncarnationBumpsOnEveryRejoin) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  // Leave and rejoin: same id, next incarnation.
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  TestNode a2 = JoinAndOpen("alpha", 1);
  EXPECT_EQ(a2.id, a.id);
  EXPECT_EQ(a2.incarnation, 2u);
  // Fail (lease) and rejoin: same id, next incarnation.
  clock_.Advance(absl::Milliseconds(1001));
  state_->Tick();
  TestNode a3 = JoinAndOpen("alpha", 1);
  EXPECT_EQ(a3.id, a.id);
  EXPECT_EQ(a3.incarnation, 3u);
  // A new name never reuses an old id.
  TestNode c = JoinAndOpen("gamma", 3);
  EXPECT_EQ(c.id, 3u);
  EXPECT_NE(c.id, b.id);
}

TEST_F(MembershipTest, RejoinWhileAliveFailsTheOldIncarnationAsSuperseded) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  DrainEvents(*b.outbox);
  TestNode a2 = JoinAndOpen("alpha", 1);
  EXPECT_EQ(a2.incarnation, 2u);
  const std::vector<Event> seen = DrainEvents(*b.outbox);
  ASSERT_EQ(seen.size(), 2u);
  ASSERT_TRUE(seen[0].has_member_failed());
  EXPECT_EQ(seen[0].member_failed().incarnation(), 1u);
  EXPECT_EQ(seen[0].member_failed().cause(),
            lite::v1::FAILURE_CAUSE_SUPERSEDED);
  ASSERT_TRUE(seen[1].has_member_joined());
  EXPECT_EQ(seen[1].member_joined().member().incarnation(), 2u);
  // The old session hears about its own end, then is closed.
  const std::vector<Event> own = DrainEvents(*a.outbox);
  ASSERT_FALSE(own.empty());
  EXPECT_TRUE(own.back().has_member_failed());
  std::optional<absl::Status> closed = CloseStatus(*a.outbox);
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(Code(*closed), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(closed->message(), HasSubstr("Join again"));
}

TEST_F(MembershipTest, JoinSnapshotAndSessionEventsDoNotOverlap) {
  TestNode a = JoinAndOpen("alpha", 1);
  const lite::v1::JoinResponse b = JoinOnly("beta", 2);
  ASSERT_EQ(b.members_size(), 2);
  absl::StatusOr<OpenedSession> opened =
      state_->OpenSession(Hb(b.node_id(), b.incarnation()));
  ASSERT_TRUE(opened.ok());
  // Its own MemberJoined is in the snapshot, not in its session: the first
  // message is the ack of the opening heartbeat.
  TestNode c = JoinAndOpen("gamma", 3);
  const std::vector<lite::v1::ManagerMessage> messages = Drain(*opened->outbox);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].heartbeat_ack().heartbeat_seq(), 7u);
  EXPECT_EQ(messages[0].heartbeat_ack().lease_remaining_ms(), 1000u);
  ASSERT_TRUE(messages[1].has_event());
  EXPECT_EQ(messages[1].event().sequence(), b.event_sequence() + 1);
  EXPECT_EQ(messages[1].event().member_joined().member().node_id(), c.id);
}

TEST_F(MembershipTest, EverySessionSeesTheSameEventsInTheSameOrder) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  DrainEvents(*a.outbox);
  DrainEvents(*b.outbox);
  DrainEvents(*c.outbox);
  TestNode d = JoinAndOpen("delta", 4);
  Register(a, "lmr-a", 0644, Creds(1000, 100));
  lite::v1::DrainNodeRequest drain;
  drain.set_node_name("beta");
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  clock_.Advance(absl::Milliseconds(1001));
  Beat(a);
  Beat(b);
  Beat(c);
  state_->Tick();  // d never beat: fails.
  auto sequence_of = [](const std::vector<Event>& events) {
    std::vector<std::string> out;
    for (const Event& e : events) out.push_back(e.ShortDebugString());
    return out;
  };
  const std::vector<Event> events_a = DrainEvents(*a.outbox);
  ASSERT_EQ(events_a.size(), 4u);  // joined, LMR added, drain, failed.
  EXPECT_EQ(events_a[0].member_joined().member().node_id(), d.id);
  EXPECT_TRUE(events_a[1].has_lmr_added());
  EXPECT_TRUE(events_a[2].has_member_drain_changed());
  EXPECT_EQ(events_a[3].member_failed().node_id(), d.id);
  const auto seen_a = sequence_of(events_a);
  EXPECT_EQ(seen_a, sequence_of(DrainEvents(*b.outbox)));
  EXPECT_EQ(seen_a, sequence_of(DrainEvents(*c.outbox)));
}

TEST_F(MembershipTest, SequenceNumbersAreConsecutiveAndGlobal) {
  TestNode a = JoinAndOpen("alpha", 1);
  const uint64_t start = state_->last_event_sequence();
  JoinAndOpen("beta", 2);
  JoinAndOpen("gamma", 3);
  const std::vector<Event> events = DrainEvents(*a.outbox);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].sequence(), start + 1);
  EXPECT_EQ(events[1].sequence(), start + 2);
  EXPECT_EQ(events[0].time_unix_ms(), absl::ToUnixMillis(clock_.Now()));
}

TEST_F(MembershipTest, LeaseExpiresExactlyAfterTheLeaseWithoutHeartbeats) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  DrainEvents(*b.outbox);
  // The timer is told when to come back: the earliest lease expiry.
  EXPECT_EQ(state_->Tick(), clock_.Now() + absl::Seconds(1));
  clock_.Advance(absl::Milliseconds(600));
  Beat(b);
  clock_.Advance(absl::Milliseconds(399));
  state_->Tick();
  EXPECT_EQ(state_->counters().nodes_alive, 2u);
  clock_.Advance(absl::Milliseconds(1));
  const absl::Time next = state_->Tick();
  EXPECT_EQ(state_->counters().nodes_alive, 1u);
  // Only b is left; its lease was renewed at +600 ms.
  EXPECT_EQ(next, clock_.Now() + absl::Milliseconds(600));
  const std::vector<Event> events = DrainEvents(*b.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].member_failed().node_id(), a.id);
  EXPECT_EQ(events[0].member_failed().cause(),
            lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
  EXPECT_THAT(events[0].member_failed().reason(),
              HasSubstr("no heartbeat for 1000 ms"));
  // Heartbeats keep b alive indefinitely.
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Milliseconds(250));
    Beat(b);
    state_->Tick();
  }
  EXPECT_EQ(state_->counters().nodes_alive, 1u);
}

TEST_F(MembershipTest, NodeThatNeverOpensItsSessionFailsAfterOneLease) {
  const lite::v1::JoinResponse a = JoinOnly("alpha", 1);
  clock_.Advance(absl::Seconds(1));
  state_->Tick();
  lite::v1::ListNodesRequest list;
  const auto nodes = state_->ListNodes(list);
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->nodes(0).state(), lite::v1::NODE_STATE_FAILED);
  absl::StatusOr<OpenedSession> late =
      state_->OpenSession(Hb(a.node_id(), a.incarnation()));
  EXPECT_EQ(Code(late.status()), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(late.status().message(), HasSubstr("Join again"));
}

TEST_F(MembershipTest, StaleIncarnationIsRejectedWithFailedPrecondition) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode a2 = JoinAndOpen("alpha", 1);  // Supersedes incarnation 1.
  lite::v1::Heartbeat stale = Hb(a.id, a.incarnation);
  absl::Status status = state_->Heartbeat(a.binding(), stale);
  EXPECT_EQ(Code(status), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("incarnation 1 is stale: the node is ALIVE as "
                        "incarnation 2; Join again"));
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a.caller();
  EXPECT_EQ(Code(state_->Leave(leave)), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Code(state_->OpenSession(Hb(a.id, 1)).status()),
            absl::StatusCode::kFailedPrecondition);
  // The current one is unaffected.
  Beat(a2);
}

TEST_F(MembershipTest, SessionRulesHaveExactCodes) {
  TestNode a = JoinAndOpen("alpha", 1);
  EXPECT_EQ(Code(state_->OpenSession(Hb(0, 1)).status()),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Code(state_->OpenSession(Hb(42, 1)).status()),
            absl::StatusCode::kNotFound);
  // A session cannot be opened twice for one incarnation.
  EXPECT_EQ(Code(state_->OpenSession(Hb(a.id, a.incarnation)).status()),
            absl::StatusCode::kFailedPrecondition);
  // A heartbeat must name the session's own node and incarnation.
  EXPECT_EQ(Code(state_->Heartbeat(a.binding(), Hb(a.id, 9))),
            absl::StatusCode::kInvalidArgument);
  lite::v1::NodeRequestResult result;
  EXPECT_EQ(Code(state_->HandleResult(a.binding(), result)),
            absl::StatusCode::kInvalidArgument);
  result.set_request_id(12345);
  EXPECT_EQ(Code(state_->HandleResult(a.binding(), result)),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(MembershipTest, SessionEndWithoutLeaveFailsTheNodeAtOnce) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  DrainEvents(*b.outbox);
  state_->SessionEnded(a.binding(), absl::CancelledError("peer went away"));
  const std::vector<Event> events = DrainEvents(*b.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].member_failed().cause(),
            lite::v1::FAILURE_CAUSE_SESSION_CLOSED);
  EXPECT_THAT(events[0].member_failed().reason(), HasSubstr("peer went away"));
}

TEST_F(MembershipTest, LeaveIsAnnouncedAndClosesTheSessionCleanly) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  DrainEvents(*b.outbox);
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  state_->SessionEnded(a.binding(), absl::OkStatus());  // No second event.
  const std::vector<Event> events = DrainEvents(*b.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].member_left().node_id(), a.id);
  std::optional<absl::Status> closed = CloseStatus(*a.outbox);
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok());
  EXPECT_EQ(state_->counters().failures, 0u);
}

TEST_F(MembershipTest, RdmaAddressIsUniqueAmongLiveNodes) {
  TestNode a = JoinAndOpen("alpha", 1);
  const std::string before = Snapshot();
  absl::StatusOr<lite::v1::JoinResponse> clash =
      state_->Join(JoinRequestFor("beta", 1));
  EXPECT_EQ(Code(clash.status()), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(clash.status().message(), HasSubstr("node 1 ('alpha')"));
  EXPECT_EQ(Snapshot(), before);
  // Review cp L8: alpha's address stays alpha's after it is gone (no node
  // can take a down node's address and keep it from rejoining)...
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  const std::string gone = Snapshot();
  clash = state_->Join(JoinRequestFor("beta", 1));
  EXPECT_EQ(Code(clash.status()), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(clash.status().message(), HasSubstr("node 1 ('alpha')"));
  EXPECT_THAT(clash.status().message(), HasSubstr("LEFT"));
  EXPECT_EQ(Snapshot(), gone);
  // ...and alpha rejoins at it. Once alpha moves elsewhere it is free.
  a = JoinAndOpen("alpha", 1);
  EXPECT_EQ(a.id, 1u);
  JoinAndOpen("alpha", 5);
  EXPECT_TRUE(state_->Join(JoinRequestFor("beta", 1)).ok());
}

// Review cp L4: a node certificate's name is checked under the state lock,
// with the change itself (ManagerState::ActingAs, set by service.cc), not
// only by the gRPC layer's check under a lock of its own before it.
TEST_F(MembershipTest, ACallActingForAnotherCertificateIsRefusedUnderTheLock) {
  TestNode a = JoinAndOpen("alpha", 1);
  const lite::v1::JoinResponse b = JoinOnly("beta", 2);
  const std::string before = Snapshot();
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a.caller();
  {
    const std::string beta = "beta";
    ManagerState::ActingAs acting(beta);
    EXPECT_EQ(Code(state_->Leave(leave)), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(Code(state_->OpenSession(Hb(a.id, a.incarnation)).status()),
              absl::StatusCode::kPermissionDenied);
    // beta's own session may open.
    absl::StatusOr<OpenedSession> opened =
        state_->OpenSession(Hb(b.node_id(), b.incarnation()));
    EXPECT_TRUE(opened.ok()) << opened.status();
    lite::v1::LeaveRequest leave_b;
    leave_b.mutable_caller()->set_node_id(b.node_id());
    leave_b.mutable_caller()->set_incarnation(b.incarnation());
    EXPECT_TRUE(state_->Leave(leave_b).ok());
  }
  {
    const std::string alpha = "alpha";
    ManagerState::ActingAs acting(alpha);
    EXPECT_TRUE(state_->Leave(leave).ok());
  }
  EXPECT_NE(Snapshot(), before);
}

TEST_F(MembershipTest, AForgottenRecordFreesItsAddress) {
  ManagerOptions options = TestOptions();
  options.max_departed_records = 1;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  for (const TestNode* n : {&a, &b}) {
    lite::v1::LeaveRequest leave;
    *leave.mutable_caller() = n->caller();
    ASSERT_TRUE(state_->Leave(leave).ok());
  }
  // alpha's record, the oldest departed one, is forgotten: its address is
  // free; beta's is kept, and so is its address.
  EXPECT_TRUE(state_->Join(JoinRequestFor("gamma", 1)).ok());
  EXPECT_EQ(Code(state_->Join(JoinRequestFor("delta", 2)).status()),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(MembershipTest, LaggingSessionIsClosedWithoutBlockingOthers) {
  ManagerOptions options = TestOptions();
  options.session_queue_limit = 4;
  Restart(options);
  TestNode slow = JoinAndOpen("slow", 1);  // Never drained: 1 ack queued.
  TestNode fast = JoinAndOpen("fast", 2);
  std::vector<Event> fast_events = DrainEvents(*fast.outbox);
  std::vector<TestNode> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back(JoinAndOpen(absl::StrCat("n", i), 10 + i));
    for (const TestNode& other : others) DrainEvents(*other.outbox);
    const std::vector<Event> more = DrainEvents(*fast.outbox);
    fast_events.insert(fast_events.end(), more.begin(), more.end());
  }
  std::optional<absl::Status> closed = CloseStatus(*slow.outbox);
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(Code(*closed), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(closed->message(), HasSubstr("--session_queue_limit"));
  EXPECT_EQ(state_->counters().session_overflows, 1u);
  bool saw_overflow = false;
  for (const Event& e : fast_events) {
    if (e.has_member_failed() && e.member_failed().node_id() == slow.id) {
      EXPECT_EQ(e.member_failed().cause(),
                lite::v1::FAILURE_CAUSE_SESSION_OVERFLOW);
      saw_overflow = true;
    }
  }
  EXPECT_TRUE(saw_overflow);
  EXPECT_FALSE(fast.outbox->closed());
}

TEST_F(MembershipTest, WatchersSeeEveryEventUntilClosed) {
  std::shared_ptr<Outbox> watch = state_->OpenWatch();
  TestNode a = JoinAndOpen("alpha", 1);
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(a.id);
  evict.set_reason("disk on fire");
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  std::vector<Event> events = DrainEvents(*watch);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].has_member_joined());
  EXPECT_EQ(events[1].member_failed().cause(), lite::v1::FAILURE_CAUSE_EVICTED);
  EXPECT_THAT(events[1].member_failed().reason(), HasSubstr("disk on fire"));
  state_->CloseWatch(watch);
  JoinAndOpen("beta", 2);
  EXPECT_TRUE(DrainEvents(*watch).empty());
}

TEST_F(MembershipTest, DrainPersistsAcrossRejoinsUntilCancelled) {
  TestNode a = JoinAndOpen("alpha", 1);
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(a.id);
  absl::StatusOr<lite::v1::DrainNodeResponse> drained =
      state_->DrainNode(drain);
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->member().draining());
  const uint64_t events = state_->last_event_sequence();
  ASSERT_TRUE(state_->DrainNode(drain).ok());  // Idempotent: no new event.
  EXPECT_EQ(state_->last_event_sequence(), events);
  TestNode a2 = JoinAndOpen("alpha", 1);
  lite::v1::ListNodesRequest list;
  EXPECT_TRUE(state_->ListNodes(list)->nodes(0).draining());
  drain.set_cancel(true);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  EXPECT_FALSE(state_->ListNodes(list)->nodes(0).draining());
  (void)a2;
}

TEST_F(MembershipTest, EvictRules) {
  TestNode a = JoinAndOpen("alpha", 1);
  lite::v1::EvictNodeRequest both;
  both.set_node_id(a.id);
  both.set_node_name("alpha");
  EXPECT_EQ(Code(state_->EvictNode(both).status()),
            absl::StatusCode::kInvalidArgument);
  lite::v1::EvictNodeRequest neither;
  EXPECT_EQ(Code(state_->EvictNode(neither).status()),
            absl::StatusCode::kInvalidArgument);
  lite::v1::EvictNodeRequest unknown;
  unknown.set_node_name("nobody");
  EXPECT_EQ(Code(state_->EvictNode(unknown).status()),
            absl::StatusCode::kNotFound);
  lite::v1::EvictNodeRequest ok;
  ok.set_node_name("alpha");
  absl::StatusOr<lite::v1::EvictNodeResponse> evicted = state_->EvictNode(ok);
  ASSERT_TRUE(evicted.ok());
  EXPECT_EQ(evicted->member().state(), lite::v1::NODE_STATE_FAILED);
  EXPECT_EQ(Code(state_->EvictNode(ok).status()),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(MembershipTest, ListNodesPagesByIdAndShowsLeases) {
  for (int i = 1; i <= 5; ++i) JoinAndOpen(absl::StrCat("n", i), i);
  clock_.Advance(absl::Milliseconds(300));
  lite::v1::ListNodesRequest list;
  list.set_page_size(2);
  std::vector<uint32_t> ids;
  while (true) {
    absl::StatusOr<lite::v1::ListNodesResponse> page = state_->ListNodes(list);
    ASSERT_TRUE(page.ok());
    for (const auto& node : page->nodes()) {
      ids.push_back(node.node_id());
      EXPECT_EQ(node.lease_remaining_ms(), 700);
      EXPECT_TRUE(node.session_open());
    }
    if (page->next_page_token().empty()) break;
    list.set_page_token(page->next_page_token());
  }
  EXPECT_THAT(ids, ElementsAre(1, 2, 3, 4, 5));
  list.set_page_token("garbage");
  EXPECT_EQ(Code(state_->ListNodes(list).status()),
            absl::StatusCode::kInvalidArgument);
  list.set_page_token("");
  list.set_page_size(-1);
  EXPECT_EQ(Code(state_->ListNodes(list).status()),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(MembershipTest, RestartedManagerAdoptsRestoredIdentities) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  JoinAndOpen("alpha", 1);  // alpha is now incarnation 2.
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(5);
  Restart(options);
  EXPECT_TRUE(state_->recovering());
  // beta restores first with its old identity: adopted as-is.
  lite::v1::JoinRequest rb = RestoreRequestFor("beta", 2, b.id, b.incarnation);
  absl::StatusOr<lite::v1::JoinResponse> jb = state_->Join(rb);
  ASSERT_TRUE(jb.ok());
  EXPECT_TRUE(jb->restored());
  EXPECT_EQ(jb->node_id(), b.id);
  EXPECT_EQ(jb->incarnation(), b.incarnation);
  EXPECT_TRUE(jb->manager_recovering());
  EXPECT_EQ(jb->recovery_remaining_ms(), 5000u);
  // While recovery lasts a new name waits: ids count from 1 again, and it
  // could be given the id of a node yet to restore (alpha's here).
  absl::StatusOr<lite::v1::JoinResponse> early =
      state_->Join(JoinRequestFor("gamma", 3));
  EXPECT_EQ(Code(early.status()), absl::StatusCode::kUnavailable);
  EXPECT_THAT(early.status().message(), HasSubstr("--recovery_window"));
  // So does a restore claiming an id held by another name (even with a
  // token for it: ids were handed out again by an earlier manager).
  lite::v1::JoinRequest rd = RestoreRequestFor("delta", 4, b.id, 3);
  EXPECT_EQ(Code(state_->Join(rd).status()), absl::StatusCode::kUnavailable);
  clock_.Advance(absl::Seconds(5));
  state_->Tick();
  // Then both join as new, and never with an id a restored node holds.
  const lite::v1::JoinResponse c = JoinOnly("gamma", 3);
  EXPECT_NE(c.node_id(), b.id);
  absl::StatusOr<lite::v1::JoinResponse> jd = state_->Join(rd);
  ASSERT_TRUE(jd.ok());
  EXPECT_FALSE(jd->restored());
  EXPECT_NE(jd->node_id(), b.id);
  EXPECT_EQ(jd->incarnation(), 1u);
  // A name the manager knows keeps its id; restore only raises the
  // incarnation floor.
  lite::v1::JoinRequest rb2 = RestoreRequestFor("beta", 2, b.id, 10);
  absl::StatusOr<lite::v1::JoinResponse> jb2 = state_->Join(rb2);
  ASSERT_TRUE(jb2.ok());
  EXPECT_FALSE(jb2->restored());
  EXPECT_EQ(jb2->node_id(), b.id);
  EXPECT_EQ(jb2->incarnation(), 11u);
  (void)a;
}

TEST_F(MembershipTest, RecoveryEndsWithRecoveryCompleteAndRevokesOrphans) {
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(2);
  options.lease = absl::Seconds(10);
  Restart(options);
  // A node restores its identity and a grant into an LMR nobody restores.
  lite::v1::JoinRequest ra = RestoreRequestFor("alpha", 1, 4, 2);
  ASSERT_TRUE(state_->Join(ra).ok());
  TestNode a{4, 2, "alpha", nullptr};
  lite::v1::RestoreGrantRequest restore;
  *restore.mutable_caller() = a.caller();
  lite::v1::Grant* grant = restore.mutable_grant();
  grant->set_grant_id((uint64_t{4} << 32) | 7);
  grant->set_lmr_id((uint64_t{9} << 32) | 1);
  grant->set_lmr_name("gone");
  grant->set_home_node_id(9);
  grant->set_holder_node_id(4);
  grant->set_holder_incarnation(2);
  *grant->mutable_requester() = Creds(1000, 100);
  *grant->mutable_access() = Access(true, false);
  grant->set_epoch(1);
  grant->set_size_bytes(4096);
  grant->add_chunks()->set_length_bytes(4096);
  ASSERT_TRUE(state_->RestoreGrant(restore).ok());
  // Restoring the same grant again is a no-op.
  ASSERT_TRUE(state_->RestoreGrant(restore).ok());
  absl::StatusOr<OpenedSession> opened = state_->OpenSession(Hb(4, 2));
  ASSERT_TRUE(opened.ok());
  // A second node asks for the compact RecoveryComplete.
  lite::v1::JoinRequest rb = RestoreRequestFor("beta", 2, 5, 1);
  ASSERT_TRUE(state_->Join(rb).ok());
  lite::v1::Heartbeat compact_hb = Hb(5, 1);
  compact_hb.set_accept_compact_recovery_complete(true);
  absl::StatusOr<OpenedSession> compact = state_->OpenSession(compact_hb);
  ASSERT_TRUE(compact.ok());
  DrainEvents(*opened->outbox);
  EXPECT_EQ(state_->Tick(), clock_.Now() + absl::Seconds(2));
  clock_.Advance(absl::Seconds(2));
  state_->Tick();
  EXPECT_FALSE(state_->recovering());
  const std::vector<Event> events = DrainEvents(*opened->outbox);
  ASSERT_EQ(events.size(), 2u);
  // One LmrRemoved per missing LMR revokes its grants (review cp H2).
  EXPECT_EQ(events[0].lmr_removed().lmr_id(), grant->lmr_id());
  EXPECT_EQ(events[0].lmr_removed().name(), "gone");
  EXPECT_EQ(events[0].lmr_removed().cause(),
            lite::v1::REMOVAL_CAUSE_NOT_RESTORED);
  EXPECT_TRUE(events[0].lmr_removed().revokes_grants());
  EXPECT_EQ(events[0].lmr_removed().grants_revoked(), 1u);
  ASSERT_TRUE(events[1].has_recovery_complete());
  EXPECT_FALSE(events[1].recovery_complete().members_omitted());
  ASSERT_EQ(events[1].recovery_complete().members_size(), 2);
  // Same event, same place in the order, without the list.
  const std::vector<Event> compact_events = DrainEvents(*compact->outbox);
  ASSERT_EQ(compact_events.size(), 2u);
  EXPECT_EQ(compact_events[1].sequence(), events[1].sequence());
  EXPECT_EQ(compact_events[1].time_unix_ms(), events[1].time_unix_ms());
  EXPECT_TRUE(compact_events[1].recovery_complete().members_omitted());
  EXPECT_EQ(compact_events[1].recovery_complete().members_size(), 0);
  // New grants never reuse a restored id's sequence.
  EXPECT_EQ(Code(state_->RestoreGrant(restore).status()),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(MembershipTest, ShutdownClosesSessionsAndRejectsCalls) {
  TestNode a = JoinAndOpen("alpha", 1);
  std::shared_ptr<Outbox> watch = state_->OpenWatch();
  state_->Shutdown();
  std::optional<absl::Status> closed = CloseStatus(*a.outbox);
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(Code(*closed), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Code(*CloseStatus(*watch)), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Code(state_->Join(JoinRequestFor("beta", 2)).status()),
            absl::StatusCode::kUnavailable);
  // Nothing is announced: the nodes did not fail.
  EXPECT_EQ(state_->counters().failures, 0u);
  EXPECT_EQ(state_->Tick(), absl::InfiniteFuture());
}

TEST_F(MembershipTest, DeadlineListenerFiresOnlyForEarlierDeadlines) {
  int wakeups = 0;
  state_->SetDeadlineListener([&] { ++wakeups; });
  EXPECT_EQ(state_->Tick(), absl::InfiniteFuture());
  TestNode a = JoinAndOpen("alpha", 1);  // First deadline: wake the timer.
  EXPECT_EQ(wakeups, 1);
  state_->Tick();
  clock_.Advance(absl::Milliseconds(100));
  Beat(a);  // A later deadline: the timer's wakeup still covers it.
  EXPECT_EQ(wakeups, 1);
}

TEST_F(MembershipTest, FailedJoinFieldsAreRejectedAndChangeNothing) {
  JoinAndOpen("alpha", 1);
  const std::string before = Snapshot();
  struct Case {
    std::string name;
    std::string address;
    bool restore;
    uint32_t restore_id;
    uint64_t restore_inc;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"", "10.0.0.9:1", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"-bad", "10.0.0.9:1", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"has space", "10.0.0.9:1", false, 0, 0,
       absl::StatusCode::kInvalidArgument},
      {std::string(65, 'x'), "10.0.0.9:1", false, 0, 0,
       absl::StatusCode::kInvalidArgument},
      {"ok", "", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9:0", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9:65536", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "host.example:7471", false, 0, 0,
       absl::StatusCode::kInvalidArgument},
      {"ok", "fd00::1:7471", false, 0, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9:1", true, 0, 1, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9:1", true, 1, 0, absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.9:1", true, 1, ~uint64_t{0},
       absl::StatusCode::kInvalidArgument},
      {"ok", "10.0.0.1:7471", false, 0, 0, absl::StatusCode::kAlreadyExists},
  };
  for (const Case& c : cases) {
    lite::v1::JoinRequest request;
    request.set_node_name(c.name);
    request.set_rdma_address(c.address);
    if (c.restore) {
      request.mutable_restore()->set_node_id(c.restore_id);
      request.mutable_restore()->set_incarnation(c.restore_inc);
    }
    absl::StatusOr<lite::v1::JoinResponse> joined = state_->Join(request);
    EXPECT_EQ(Code(joined.status()), c.code)
        << request.ShortDebugString() << " -> " << joined.status();
    EXPECT_EQ(Snapshot(), before) << request.ShortDebugString();
  }
}

}  // namespace
}  // namespace lite::controlplane::testing

namespace lite::controlplane::testing {
namespace {

TEST_F(ManagerTest, NoLeaseRunsOutDuringRecovery) {
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(5);
  Restart(options);
  // A reconnect storm: joined, but the manager never got a heartbeat.
  absl::StatusOr<lite::v1::JoinResponse> a =
      state_->Join(RestoreRequestFor("alpha", 1, 1, 1));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(state_->Join(RestoreRequestFor("beta", 2, 2, 1)).ok());
  absl::StatusOr<OpenedSession> opened = state_->OpenSession(Hb(2, 1));
  ASSERT_TRUE(opened.ok()) << opened.status();
  TestNode b{2, 1, "beta", opened->outbox};
  clock_.Advance(absl::Seconds(5));
  state_->Tick();  // Recovery ends; leases still have one lease to go.
  EXPECT_FALSE(state_->recovering());
  EXPECT_EQ(state_->counters().nodes_alive, 2u);
  clock_.Advance(absl::Milliseconds(500));
  Beat(b);  // After recovery, a heartbeat gives the normal lease.
  const std::vector<lite::v1::ManagerMessage> messages = Drain(*b.outbox);
  EXPECT_EQ(messages.back().heartbeat_ack().lease_remaining_ms(), 1000u);
  clock_.Advance(absl::Milliseconds(500));
  state_->Tick();
  EXPECT_EQ(state_->counters().nodes_alive, 1u);  // alpha, silent, is gone.
  (void)a;
}

}  // namespace
}  // namespace lite::controlplane::testing

namespace lite::controlplane::testing {
namespace {

TEST_F(ManagerTest, RecoveryWithNoMembersBackStillAnnouncesRecoveryComplete) {
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(2);
  Restart(options);
  std::shared_ptr<Outbox> watch = state_->OpenWatch();
  clock_.Advance(absl::Seconds(2));
  state_->Tick();
  EXPECT_FALSE(state_->recovering());
  const std::vector<lite::v1::ManagerMessage> messages = Drain(*watch);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(messages[0].event().has_recovery_complete())
      << messages[0].ShortDebugString();
  EXPECT_EQ(messages[0].event().recovery_complete().members_size(), 0);
  state_->CloseWatch(watch);
}

TEST_F(MembershipTest, EvictReasonMustBeInertText) {
  TestNode a = JoinAndOpen("alpha", 1);
  const std::string before = Snapshot();
  for (const std::string& bad :
       {std::string("\x1b[2J\x1b[Hnode beta evicted"), std::string("a\nb"),
        std::string("\xff"), std::string("\xc2\x9b"),
        std::string(kMaxReasonLength + 1, 'r')}) {
    lite::v1::EvictNodeRequest evict;
    evict.set_node_id(a.id);
    evict.set_reason(bad);
    absl::StatusOr<lite::v1::EvictNodeResponse> r = state_->EvictNode(evict);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("reason"));
  }
  EXPECT_EQ(Snapshot(), before);
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(a.id);
  evict.set_reason(std::string(kMaxReasonLength, 'r'));
  EXPECT_TRUE(state_->EvictNode(evict).ok());
}

}  // namespace
}  // namespace lite::controlplane::testing
