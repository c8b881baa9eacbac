// The attack of review cp-2026-11-28 H2: 16,385 grants into one LMR, held
// by four nodes, then one FreeLmr (or the home's failure). Every session is
// idle (nothing reads it while the manager holds its lock), with the
// production --session_queue_limit of 16,384. One event per grant per
// session would overflow every session and get every node declared failed;
// the revocations must come as one LmrRemoved per LMR instead, and each
// holder must still learn (and acknowledge) that its grants are revoked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;

constexpr int64_t kQueueLimit = 16384;  // litemgr's default.
constexpr int kGrants = 16385;          // One more than the queue holds.

class BurstTest : public ManagerTest {
 protected:
  void SetUp() override {
    ManagerOptions options = TestOptions();
    options.session_queue_limit = kQueueLimit;
    // Only the queue is under test here, not the per-LMR cap.
    options.max_grants_per_lmr = kGrants;
    Restart(options);
    home_ = JoinAndOpen("home", 1);
    for (int i = 0; i < 4; ++i) {
      holders_.push_back(JoinAndOpen(absl::StrCat("holder", i), 2 + i));
    }
    lmr_ = Register(home_, "popular", 0666, Creds(1000, 100));
    // 4,097 + 3 x 4,096: every holder maps the same LMR again and again
    // (the attacker's own uid on four nodes).
    for (int i = 0; i < kGrants; ++i) {
      const TestNode& holder = holders_[i % 4];
      grants_[holder.id].push_back(
          Map(holder, "popular", Creds(1000, 100), true, true).grant_id());
    }
    ASSERT_EQ(state_->counters().grants, static_cast<size_t>(kGrants));
    // Nothing has been read from any session since the joins: all idle.
  }

  std::vector<TestNode*> All() {
    std::vector<TestNode*> all = {&home_};
    for (TestNode& h : holders_) all.push_back(&h);
    return all;
  }

  // No session closed (but the failed home's), no grant left.
  void ExpectNobodyFailed(bool home_failed = false) {
    const ManagerCounters counters = state_->counters();
    EXPECT_EQ(counters.session_overflows, 0u);
    EXPECT_EQ(counters.grants, 0u);
    EXPECT_EQ(counters.grants_revoked, static_cast<uint64_t>(kGrants));
    for (TestNode* node : All()) {
      if (home_failed && node == &home_) continue;
      EXPECT_FALSE(node->outbox->closed()) << node->name;
    }
  }

  // The events `node`'s session got: exactly one LmrRemoved for the LMR,
  // saying that its grants (all kGrants of them) are revoked with it, and
  // no GrantRevoked.
  void ExpectOneRemoval(TestNode& node, bool release) {
    int removed = 0;
    int revoked = 0;
    for (const Event& e : DrainEvents(*node.outbox)) {
      if (e.has_grant_revoked()) ++revoked;
      if (!e.has_lmr_removed()) continue;
      ++removed;
      EXPECT_EQ(e.lmr_removed().lmr_id(), lmr_.lmr_id());
      EXPECT_TRUE(e.lmr_removed().revokes_grants());
      EXPECT_EQ(e.lmr_removed().grants_revoked(),
                static_cast<uint32_t>(kGrants));
      EXPECT_EQ(e.lmr_removed().release_follows(), release);
      EXPECT_EQ(e.lmr_removed().revoked_size(), kGrants);
    }
    EXPECT_EQ(removed, 1) << node.name;
    EXPECT_EQ(revoked, 0) << node.name;
  }

  TestNode home_;
  std::vector<TestNode> holders_;
  lite::v1::Lmr lmr_;
  std::map<uint32_t, std::vector<uint64_t>> grants_;
};

TEST_F(BurstTest, FreeOfAnLmrWithMoreGrantsThanAQueueHoldsFailsNobody) {
  lite::v1::FreeLmrRequest free;
  *free.mutable_caller() = holders_[0].caller();
  *free.mutable_requester() = Creds(1000, 100);
  free.set_name("popular");
  absl::StatusOr<lite::v1::FreeLmrResponse> freed = state_->FreeLmr(free);
  ASSERT_TRUE(freed.ok()) << freed.status();
  EXPECT_EQ(freed->grants_revoked(), static_cast<uint32_t>(kGrants));
  EXPECT_EQ(state_->counters().failures, 0u);
  EXPECT_EQ(state_->counters().nodes_alive, 5u);
  ExpectNobodyFailed();
  for (TestNode* node : All()) ExpectOneRemoval(*node, /*release=*/true);

  // The fence still waits for every holder's acknowledgement of every
  // grant, and then releases the memory.
  for (TestNode& holder : holders_) {
    for (uint64_t grant_id : grants_[holder.id]) {
      lite::v1::GrantRevokeAck ack;
      ack.set_grant_id(grant_id);
      ack.set_holder_incarnation(holder.incarnation);
      ASSERT_TRUE(state_->GrantRevokeAck(holder.binding(), ack).ok());
    }
    EXPECT_EQ(state_->counters().lmrs_released, 0u)
        << "released before every holder acknowledged";
  }
  int releases = 0;
  for (const auto& m : Drain(*home_.outbox)) {
    if (m.has_request() && m.request().has_release_lmr_memory()) ++releases;
  }
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(state_->counters().revoke_acks, static_cast<uint64_t>(kGrants));
}

TEST_F(BurstTest, HomeFailureWithMoreGrantsThanAQueueHoldsFailsOnlyTheHome) {
  // The home stops heartbeating; the holders go on.
  for (int step = 0; step < 6; ++step) {
    clock_.Advance(absl::Milliseconds(250));
    for (TestNode& holder : holders_) Beat(holder);
    state_->Tick();
  }
  EXPECT_EQ(state_->counters().failures, 1u);
  EXPECT_EQ(state_->counters().nodes_alive, 4u);
  ExpectNobodyFailed(/*home_failed=*/true);
  EXPECT_TRUE(home_.outbox->closed()) << "the home itself failed";
  for (TestNode& holder : holders_) {
    ExpectOneRemoval(holder, /*release=*/false);
  }
}

}  // namespace
}  // namespace lite::controlplane::testing
