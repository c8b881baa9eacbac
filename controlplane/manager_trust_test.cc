// ManagerState and issue #10's rules for LMRs: the memory key and chunk
// addresses travel only in grants, an agent's error text must be inert, and
// draining refuses new registrations and re-registrations of LMRs the
// manager does not hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "controlplane/lmr_test_fixture.h"
#include "controlplane/manager_test_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

// The key and chunk addresses reach only a grant's holder (MapLmr,
// RestoreGrant): no listing, event (sessions and watchers alike) or
// Register/Alloc answer carries them.
TEST_F(LmrTest, TheKeyTravelsOnlyInGrants) {
  absl::StatusOr<std::shared_ptr<Outbox>> watch = state_->OpenWatch(0);
  ASSERT_TRUE(watch.ok());
  const lite::v1::Lmr lmr = Register(a_, "secret", 0644, Creds(1, 1), 8192);
  EXPECT_NE(lmr.lmr_id(), 0u);
  EXPECT_EQ(lmr.chunks_size(), 0);
  EXPECT_EQ(lmr.memory_key(), 0u);
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "alloc"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  ASSERT_TRUE(
      state_->HandleResult(b_.binding(), Allocated(request.request_id(), 8192))
          .ok());
  ASSERT_TRUE(outcome->has_value() && outcome->value().ok());
  EXPECT_EQ(outcome->value()->lmr().chunks_size(), 0);
  EXPECT_EQ(outcome->value()->lmr().memory_key(), 0u);
  const lite::v1::Grant grant = Map(c_, "secret", Creds(2, 2), true, false);
  EXPECT_EQ(grant.memory_key(), 0xabcu);
  ASSERT_EQ(grant.chunks_size(), 1);
  EXPECT_EQ(grant.chunks(0).address(), 0x10000u);
  const lite::v1::Grant grant2 =
      Map(c_, "alloc", Creds(1000, 100), true, false);
  EXPECT_EQ(grant2.memory_key(), 77u);

  int lmr_added = 0;
  for (Outbox* outbox :
       {a_.outbox.get(), b_.outbox.get(), c_.outbox.get(), watch->get()}) {
    for (const Event& event : DrainEvents(*outbox)) {
      if (!event.has_lmr_added()) continue;
      ++lmr_added;
      EXPECT_EQ(event.lmr_added().lmr().chunks_size(), 0)
          << event.ShortDebugString();
      EXPECT_EQ(event.lmr_added().lmr().memory_key(), 0u);
      EXPECT_GT(event.lmr_added().lmr().size_bytes(), 0u);
    }
  }
  // Two LMRs, to three sessions and a watcher, but b's first was drained
  // by TakeRequest.
  EXPECT_EQ(lmr_added, 7);
  const auto lmrs = state_->ListLmrs(lite::v1::ListLmrsRequest());
  ASSERT_TRUE(lmrs.ok());
  ASSERT_EQ(lmrs->lmrs_size(), 2);
  for (const lite::v1::Lmr& listed : lmrs->lmrs()) {
    EXPECT_EQ(listed.chunks_size(), 0);
    EXPECT_EQ(listed.memory_key(), 0u);
    EXPECT_EQ(listed.size_bytes(), 8192u);  // What an operator needs stays.
  }
  const auto grants = state_->ListGrants(lite::v1::ListGrantsRequest());
  ASSERT_TRUE(grants.ok());
  ASSERT_EQ(grants->grants_size(), 2);
  for (const lite::v1::Grant& listed : grants->grants()) {
    EXPECT_EQ(listed.chunks_size(), 0);
    EXPECT_EQ(listed.memory_key(), 0u);
  }
  // A retried registration's answer has none either.
  lite::v1::RegisterLmrRequest again;
  *again.mutable_caller() = a_.caller();
  *again.mutable_owner() = Creds(1, 1);
  again.set_name("secret");
  again.set_size_bytes(8192);
  again.set_mode(0644);
  auto* chunk = again.add_chunks();
  chunk->set_address(0x10000);
  chunk->set_length_bytes(8192);
  again.set_memory_key(0xabc);
  again.set_lmr_id(lmr.lmr_id());
  absl::StatusOr<lite::v1::RegisterLmrResponse> retried =
      state_->RegisterLmr(again);
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->lmr().lmr_id(), lmr.lmr_id());
  EXPECT_EQ(retried->lmr().memory_key(), 0u);
  EXPECT_EQ(retried->lmr().chunks_size(), 0);
}

// An agent's error message reaches the caller's error and the log: it must
// be inert. A hostile one is refused and the allocation still waits.
TEST_F(LmrTest, AgentErrorMessagesMustBeInert) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "inert"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  lite::v1::NodeRequestResult result;
  result.set_request_id(request.request_id());
  result.set_status_code(
      static_cast<int>(absl::StatusCode::kResourceExhausted));
  const std::string before = Snapshot();
  for (const std::string& bad :
       {std::string("\x1b]0;owned\x07"), std::string("no\rmemory"),
        std::string("\xed\xa0\x80"), std::string(1025, 'm')}) {
    result.set_status_message(bad);
    EXPECT_EQ(state_->HandleResult(b_.binding(), result).code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(outcome->has_value());
  }
  EXPECT_EQ(Snapshot(), before);
  result.set_status_message("out of pinned memory");
  ASSERT_TRUE(state_->HandleResult(b_.binding(), result).ok());
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outcome->value().status().message(),
              HasSubstr("out of pinned memory"));
}

// Draining stops new registrations; a home retrying the registration of an
// LMR the manager has is still heard. Outside recovery an id the manager
// never issued is refused (review cp M2: such an LMR escaped every limit
// and DrainNode; this test accepted it before).
TEST_F(LmrTest, DrainingHomeRetriesItsLmrsButMakesUpNone) {
  const lite::v1::Lmr kept = Register(b_, "kept", 0600, Creds(1, 1), 4096);
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(b_.id);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  lite::v1::RegisterLmrRequest reg;
  *reg.mutable_caller() = b_.caller();
  *reg.mutable_owner() = Creds(1, 1);
  reg.set_name("kept");
  reg.set_size_bytes(4096);
  reg.set_mode(0600);
  auto* chunk = reg.add_chunks();
  chunk->set_address(0x10000);
  chunk->set_length_bytes(4096);
  reg.set_memory_key(0xabc);
  reg.set_lmr_id(kept.lmr_id());
  EXPECT_TRUE(state_->RegisterLmr(reg).ok());
  // One the manager never issued: refused, and changes nothing.
  const std::string before = Snapshot();
  reg.set_name("made-up");
  reg.set_lmr_id(kept.lmr_id() + 5);
  absl::StatusOr<lite::v1::RegisterLmrResponse> back = state_->RegisterLmr(reg);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(back.status().message(), HasSubstr("never issued"));
  EXPECT_EQ(Snapshot(), before);
  // A new one (lmr_id 0) is refused, and changes nothing.
  reg.set_name("new");
  reg.set_lmr_id(0);
  absl::StatusOr<lite::v1::RegisterLmrResponse> fresh =
      state_->RegisterLmr(reg);
  EXPECT_EQ(fresh.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(fresh.status().message(), HasSubstr("draining"));
  EXPECT_EQ(Snapshot(), before);
}

}  // namespace
}  // namespace lite::controlplane::testing
