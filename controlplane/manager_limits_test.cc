// Each limit of ManagerOptions at its boundary: the last one allowed
// succeeds, the next is RESOURCE_EXHAUSTED naming the flag and changes
// nothing (departed records are forgotten instead).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using ::testing::HasSubstr;

class LimitsTest : public ManagerTest {
 protected:
  void ExpectExhausted(const absl::Status& status, const std::string& flag) {
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
    EXPECT_THAT(status.message(), HasSubstr(flag));
  }
  void Evict(uint32_t node_id) {
    lite::v1::EvictNodeRequest evict;
    evict.set_node_id(node_id);
    ASSERT_TRUE(state_->EvictNode(evict).ok());
  }
  size_t NodesListed() {
    return state_->ListNodes(lite::v1::ListNodesRequest())->nodes_size();
  }
};

TEST_F(LimitsTest, MaxNodesForgetsDepartedBeforeRefusing) {
  ManagerOptions options = TestOptions();
  options.max_nodes = 2;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  JoinAndOpen("beta", 2);
  const std::string before = Snapshot();
  ExpectExhausted(state_->Join(JoinRequestFor("gamma", 3)).status(),
                  "--max_nodes");
  EXPECT_EQ(Snapshot(), before);
  // A known name still rejoins.
  EXPECT_TRUE(state_->Join(JoinRequestFor("beta", 2)).ok());
  // A departed record makes room: it is forgotten.
  Evict(a.id);
  ASSERT_TRUE(state_->Join(JoinRequestFor("gamma", 3)).ok());
  EXPECT_EQ(NodesListed(), 2u);
  EXPECT_FALSE(state_->NodeIdOf("alpha").has_value());
}

TEST_F(LimitsTest, MaxDepartedRecordsForgetsTheOldest) {
  ManagerOptions options = TestOptions();
  options.max_departed_records = 2;
  Restart(options);
  TestNode n[4] = {JoinAndOpen("n0", 1), JoinAndOpen("n1", 2),
                   JoinAndOpen("n2", 3), JoinAndOpen("n3", 4)};
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Milliseconds(1));
    Evict(n[i].id);
  }
  // n0 departed first: forgotten; n1, n2 kept; n3 alive.
  EXPECT_FALSE(state_->NodeIdOf("n0").has_value());
  EXPECT_TRUE(state_->NodeIdOf("n1").has_value());
  EXPECT_TRUE(state_->NodeIdOf("n2").has_value());
  EXPECT_EQ(NodesListed(), 3u);
  // A departed node that rejoins is no longer departed.
  ASSERT_TRUE(state_->Join(JoinRequestFor("n1", 2)).ok());
  clock_.Advance(absl::Milliseconds(1));
  Evict(n[3].id);
  EXPECT_TRUE(state_->NodeIdOf("n2").has_value());
  EXPECT_TRUE(state_->NodeIdOf("n3").has_value());
}

// With no departed record kept, an evicted node's record is forgotten in
// the eviction itself: EvictNode answers with it as it ended, and a late
// message from its ended session (heartbeat, report, result) is stale, not
// a read of a record that is gone (the manager crashed on both before).
TEST_F(LimitsTest, NoDepartedRecordKeptEvictionAndLateMessagesAreAnswered) {
  ManagerOptions options = TestOptions();
  options.max_departed_records = 0;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(b.id);
  absl::StatusOr<lite::v1::EvictNodeResponse> evicted =
      state_->EvictNode(evict);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(evicted->member().node_name(), "beta");
  EXPECT_EQ(evicted->member().state(), lite::v1::NODE_STATE_FAILED);
  EXPECT_FALSE(state_->NodeIdOf("beta").has_value());

  lite::v1::Heartbeat heartbeat;
  heartbeat.set_node_id(b.id);
  heartbeat.set_incarnation(b.incarnation);
  heartbeat.set_heartbeat_seq(3);
  absl::Status late = state_->Heartbeat(b.binding(), heartbeat);
  EXPECT_EQ(late.code(), absl::StatusCode::kFailedPrecondition) << late;
  EXPECT_THAT(late.message(), HasSubstr("record is forgotten"));
  lite::v1::PeerFailureReport report;
  report.set_node_id(a.id);
  report.set_incarnation(a.incarnation);
  report.set_reason_errno(112);  // EHOSTDOWN
  report.set_detail("Host is down (EHOSTDOWN) on QP 0");
  EXPECT_EQ(state_->PeerFailure(b.binding(), report).code(),
            absl::StatusCode::kFailedPrecondition);
  lite::v1::NodeRequestResult result;
  result.set_request_id(1);
  EXPECT_EQ(state_->HandleResult(b.binding(), result).code(),
            absl::StatusCode::kFailedPrecondition);
  // The other node is untouched.
  Beat(a);
}

TEST_F(LimitsTest, MaxGrantsPerNode) {
  ManagerOptions options = TestOptions();
  options.max_grants_per_node = 2;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  Register(a, "r", 0644, Creds(1, 1));
  Map(b, "r", Creds(2, 2), true, false);
  const lite::v1::Grant second = Map(b, "r", Creds(2, 2), true, false);
  lite::v1::MapLmrRequest map;
  *map.mutable_caller() = b.caller();
  *map.mutable_requester() = Creds(2, 2);
  map.set_name("r");
  *map.mutable_access() = Access(true, false);
  const std::string before = Snapshot();
  ExpectExhausted(state_->MapLmr(map).status(), "--max_grants_per_node");
  EXPECT_EQ(Snapshot(), before);
  // Another holder has its own budget; an unmap frees one.
  EXPECT_TRUE(state_
                  ->MapLmr([&] {
                    auto m = map;
                    *m.mutable_caller() = a.caller();
                    return m;
                  }())
                  .ok());
  lite::v1::UnmapLmrRequest unmap;
  *unmap.mutable_caller() = b.caller();
  unmap.set_grant_id(second.grant_id());
  ASSERT_TRUE(state_->UnmapLmr(unmap).ok());
  EXPECT_TRUE(state_->MapLmr(map).ok());
}

TEST_F(LimitsTest, MaxLmrsPerOwner) {
  ManagerOptions options = TestOptions();
  options.max_lmrs_per_owner = 2;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  Register(a, "one", 0600, Creds(7, 7));
  Register(a, "two", 0600, Creds(7, 7));
  lite::v1::RegisterLmrRequest reg;
  *reg.mutable_caller() = a.caller();
  *reg.mutable_owner() = Creds(7, 7);
  reg.set_name("three");
  reg.set_size_bytes(4096);
  AddRegisteredMemory(&reg, 4096);
  const std::string before = Snapshot();
  ExpectExhausted(state_->RegisterLmr(reg).status(), "--max_lmrs_per_owner");
  lite::v1::AllocLmrRequest alloc;
  *alloc.mutable_caller() = a.caller();
  *alloc.mutable_owner() = Creds(7, 7);
  alloc.set_name("three");
  alloc.set_size_bytes(4096);
  ExpectExhausted(state_->AllocLmr(alloc, [](auto) { FAIL(); }),
                  "--max_lmrs_per_owner");
  EXPECT_EQ(Snapshot(), before);
  // Another uid is not affected; a free makes room.
  *reg.mutable_owner() = Creds(8, 8);
  EXPECT_TRUE(state_->RegisterLmr(reg).ok());
  lite::v1::FreeLmrRequest free;
  *free.mutable_caller() = a.caller();
  *free.mutable_requester() = Creds(7, 7);
  free.set_name("one");
  ASSERT_TRUE(state_->FreeLmr(free).ok()) << state_->FreeLmr(free).status();
}

TEST_F(LimitsTest, MaxPendingAllocs) {
  ManagerOptions options = TestOptions();
  options.max_pending_allocs = 2;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  lite::v1::AllocLmrRequest alloc;
  *alloc.mutable_caller() = a.caller();
  *alloc.mutable_owner() = Creds(7, 7);
  alloc.set_size_bytes(4096);
  for (const char* name : {"p1", "p2"}) {
    alloc.set_name(name);
    ASSERT_TRUE(state_->AllocLmr(alloc, [](auto) {}).ok());
  }
  alloc.set_name("p3");
  const std::string before = Snapshot();
  ExpectExhausted(state_->AllocLmr(alloc, [](auto) { FAIL(); }),
                  "--max_pending_allocs");
  EXPECT_EQ(Snapshot(), before);
  // When they time out, there is room again.
  clock_.Advance(options.request_timeout + absl::Seconds(1));
  Beat(a);
  state_->Tick();
  EXPECT_TRUE(state_->AllocLmr(alloc, [](auto) {}).ok());
}

TEST_F(LimitsTest, MaxJoinsPerMinutePerName) {
  ManagerOptions options = TestOptions();
  options.max_joins_per_minute = 3;
  options.lease = absl::Hours(1);
  Restart(options);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(state_->Join(JoinRequestFor("alpha", 1)).ok());
    clock_.Advance(absl::Seconds(10));
  }
  const std::string before = Snapshot();
  ExpectExhausted(state_->Join(JoinRequestFor("alpha", 1)).status(),
                  "--max_joins_per_minute");
  EXPECT_EQ(Snapshot(), before);
  // Another name is not affected; a minute after the first join, one more.
  EXPECT_TRUE(state_->Join(JoinRequestFor("beta", 2)).ok());
  clock_.Advance(absl::Seconds(31));
  EXPECT_TRUE(state_->Join(JoinRequestFor("alpha", 1)).ok());
}

}  // namespace
}  // namespace lite::controlplane::testing
