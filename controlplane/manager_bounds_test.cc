// ManagerState: the bounds review cp-2026-11-28 found missing, each driven
// as the attack (a node certificate's agent claiming whatever uid it likes,
// an unprivileged user allocating on every home, a name squatter during
// recovery, a node that fails and rejoins) and checked at its limit: the
// call past it is refused with the limit's flag named, and changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "controlplane/lmr_test_fixture.h"
#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using ::testing::HasSubstr;

class BoundsTest : public LmrTest {
 protected:
  void Start(ManagerOptions options) {
    Restart(options);
    LmrTest::SetUp();
  }
  // A RegisterLmr of `chunks` chunks of 4096 bytes on `home`.
  lite::v1::RegisterLmrRequest RegisterRequest(const TestNode& home,
                                               const std::string& name,
                                               uint32_t uid, int chunks = 1) {
    lite::v1::RegisterLmrRequest request;
    *request.mutable_caller() = home.caller();
    *request.mutable_owner() = Creds(uid, uid);
    request.set_name(name);
    request.set_size_bytes(uint64_t{4096} * chunks);
    request.set_mode(0600);
    for (int i = 0; i < chunks; ++i) {
      auto* chunk = request.add_chunks();
      chunk->set_address(0x100000 + i * 0x10000);
      chunk->set_length_bytes(4096);
    }
    request.set_memory_key(0xabc);
    return request;
  }
  // The call is refused with `code` naming `what`, and changed nothing.
  template <typename Call>
  void ExpectRefused(Call call, absl::StatusCode code,
                     const std::string& what) {
    const std::string before = Snapshot();
    const absl::Status status = call();
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(status.message(), HasSubstr(what));
    EXPECT_EQ(Snapshot(), before);
  }
  absl::Status Reg(const lite::v1::RegisterLmrRequest& request) {
    return state_->RegisterLmr(request).status();
  }
};

// H2's cap: one LMR's grants stay well below what a session may queue.
TEST_F(BoundsTest, GrantsIntoOneLmrStopAtMaxGrantsPerLmr) {
  ManagerOptions options = TestOptions();
  options.max_grants_per_lmr = 3;
  Start(options);
  Register(a_, "shared", 0666, Creds(1, 1));
  Map(a_, "shared", Creds(5, 5), true, false);
  Map(b_, "shared", Creds(5, 5), true, false);
  const lite::v1::Grant third = Map(c_, "shared", Creds(5, 5), true, false);
  lite::v1::MapLmrRequest map;
  *map.mutable_caller() = b_.caller();
  *map.mutable_requester() = Creds(5, 5);
  map.set_name("shared");
  *map.mutable_access() = Access(true, false);
  ExpectRefused([&] { return state_->MapLmr(map).status(); },
                absl::StatusCode::kResourceExhausted, "--max_grants_per_lmr");
  // Another LMR is not affected; an unmap makes room.
  Register(a_, "other", 0666, Creds(1, 1));
  Map(b_, "other", Creds(5, 5), true, false);
  lite::v1::UnmapLmrRequest unmap;
  *unmap.mutable_caller() = c_.caller();
  unmap.set_grant_id(third.grant_id());
  ASSERT_TRUE(state_->UnmapLmr(unmap).ok());
  EXPECT_TRUE(state_->MapLmr(map).ok());
}

// M2: a hostile agent rotates the uid it claims; the home's limit holds.
TEST_F(BoundsTest, LmrsPerHomeCountWhateverUidTheAgentClaims) {
  ManagerOptions options = TestOptions();
  options.max_lmrs_per_node = 3;
  Start(options);
  for (uint32_t uid = 1; uid <= 3; ++uid) {
    ASSERT_TRUE(Reg(RegisterRequest(a_, absl::StrCat("l", uid), uid)).ok());
  }
  ExpectRefused([&] { return Reg(RegisterRequest(a_, "l4", 4)); },
                absl::StatusCode::kResourceExhausted, "--max_lmrs_per_node");
  lite::v1::AllocLmrRequest alloc = AllocRequest(b_, a_.id, "remote");
  ExpectRefused([&] { return state_->AllocLmr(alloc, [](auto) {}); },
                absl::StatusCode::kResourceExhausted, "--max_lmrs_per_node");
  // Other homes are not affected.
  EXPECT_TRUE(Reg(RegisterRequest(b_, "l4", 4)).ok());
}

// M2: chunks cost the manager memory whatever their number per LMR.
TEST_F(BoundsTest, ChunksPerHomeStopAtMaxLmrChunksPerNode) {
  ManagerOptions options = TestOptions();
  options.max_lmr_chunks_per_node = 5;
  Start(options);
  ASSERT_TRUE(Reg(RegisterRequest(a_, "three", 1, 3)).ok());
  ExpectRefused([&] { return Reg(RegisterRequest(a_, "three-more", 2, 3)); },
                absl::StatusCode::kResourceExhausted,
                "--max_lmr_chunks_per_node");
  EXPECT_TRUE(Reg(RegisterRequest(a_, "two", 2, 2)).ok());
  // The home's own allocation answer is held to it too.
  auto outcome = StartAlloc(AllocRequest(b_, a_.id, "alloc"));
  const lite::v1::NodeRequest request = TakeRequest(a_);
  ASSERT_TRUE(
      state_->HandleResult(a_.binding(), Allocated(request.request_id(), 8192))
          .ok());
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outcome->value().status().message(),
              HasSubstr("--max_lmr_chunks_per_node"));
}

// M2: re-registrations (lmr_id set) used to skip every limit and DrainNode
// and accept any id: outside recovery only an id the manager issued and no
// longer holds comes back, counted like a new LMR, never on a draining node.
TEST_F(BoundsTest, ReRegistrationsAreCountedAndNeedAnIssuedId) {
  ManagerOptions options = TestOptions();
  options.max_lmrs_per_owner = 2;
  Start(options);
  const lite::v1::Lmr kept = Register(a_, "kept", 0600, Creds(7, 7));
  // The attack: made-up ids with fresh names, as many as it likes.
  for (uint32_t seq : {2u, 100u, 0xffffffffu}) {
    lite::v1::RegisterLmrRequest forged =
        RegisterRequest(a_, absl::StrCat("forged", seq), 7);
    forged.set_lmr_id((uint64_t{a_.id} << 32) | seq);
    ExpectRefused([&] { return Reg(forged); },
                  absl::StatusCode::kFailedPrecondition, "never issued");
  }
  // The legitimate case: a issued it, left, and comes back with it.
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a_.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  a_ = JoinAndOpen("alpha", 1);
  lite::v1::RegisterLmrRequest again = RegisterRequest(a_, "kept", 7);
  again.set_size_bytes(4096);
  again.set_lmr_id(kept.lmr_id());
  // ...not while draining...
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(a_.id);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  ExpectRefused([&] { return Reg(again); },
                absl::StatusCode::kFailedPrecondition, "draining");
  drain.set_cancel(true);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  // ...and counted against the owner's limit like a new one.
  Register(b_, "b1", 0600, Creds(7, 7));
  Register(b_, "b2", 0600, Creds(7, 7));
  ExpectRefused([&] { return Reg(again); },
                absl::StatusCode::kResourceExhausted, "--max_lmrs_per_owner");
  lite::v1::FreeLmrRequest free;
  *free.mutable_caller() = b_.caller();
  *free.mutable_requester() = Creds(7, 7);
  free.set_name("b2");
  ASSERT_TRUE(state_->FreeLmr(free).ok());
  // b2 is RELEASING until its home releases it: still counted.
  for (const auto& m : Drain(*b_.outbox)) {
    if (!m.has_request()) continue;
    lite::v1::NodeRequestResult done;
    done.set_request_id(m.request().request_id());
    ASSERT_TRUE(state_->HandleResult(b_.binding(), done).ok());
  }
  EXPECT_TRUE(Reg(again).ok());
}

// M6: an unprivileged user allocates on every home; bytes per owner are
// bounded per home and cluster-wide, allocations in flight included.
TEST_F(BoundsTest, LmrBytesPerOwnerAreBoundedPerHomeAndClusterWide) {
  ManagerOptions options = TestOptions();
  options.max_lmr_bytes_per_owner_per_home = 2 * 4096;
  options.max_lmr_bytes_per_owner = 3 * 4096;
  Start(options);
  ASSERT_TRUE(Reg(RegisterRequest(a_, "a1", 1000)).ok());
  ASSERT_TRUE(Reg(RegisterRequest(a_, "a2", 1000)).ok());
  ExpectRefused([&] { return Reg(RegisterRequest(a_, "a3", 1000)); },
                absl::StatusCode::kResourceExhausted,
                "--max_lmr_bytes_per_owner_per_home");
  // 4,096 bytes on b: in flight, it counts at once.
  lite::v1::AllocLmrRequest on_b = AllocRequest(c_, b_.id, "b-alloc");
  on_b.set_size_bytes(4096);
  auto outcome = StartAlloc(on_b);
  ASSERT_FALSE(outcome->has_value());
  lite::v1::AllocLmrRequest more = AllocRequest(c_, c_.id, "c-alloc");
  more.set_size_bytes(4096);
  ExpectRefused([&] { return state_->AllocLmr(more, [](auto) {}); },
                absl::StatusCode::kResourceExhausted,
                "--max_lmr_bytes_per_owner)");
  // Exactly at the limit is allowed: another uid is not affected, and
  // neither is this one once the allocation failed.
  ASSERT_TRUE(Reg(RegisterRequest(c_, "other-user", 2000, 2)).ok());
  const lite::v1::NodeRequest request = TakeRequest(b_);
  lite::v1::NodeRequestResult no;
  no.set_request_id(request.request_id());
  no.set_status_code(8);
  no.set_status_message("out of memory");
  ASSERT_TRUE(state_->HandleResult(b_.binding(), no).ok());
  EXPECT_TRUE(Reg(RegisterRequest(c_, "c1", 1000)).ok());
}

// M8: after a manager restart, a new LMR under the name of one whose home
// has not re-registered it yet would take that name for good.
TEST_F(BoundsTest, NamesCannotBeTakenWhileTheManagerRecovers) {
  const lite::v1::Lmr victim = Register(a_, "kvstore", 0600, Creds(1, 1));
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(3);
  options.lease = absl::Seconds(10);
  Restart(options);
  // The nodes restore their identities (the victim's home is node 1).
  for (const TestNode* n : {&a_, &b_}) {
    absl::StatusOr<lite::v1::JoinResponse> joined =
        state_->Join(RestoreRequestFor(n->name, n->id, n->id, n->incarnation));
    ASSERT_TRUE(joined.ok()) << joined.status();
    ASSERT_EQ(joined->node_id(), n->id);
  }
  ASSERT_TRUE(state_->recovering());
  // The squatter (uid 666 on b) gets there first, both ways.
  ExpectRefused([&] { return Reg(RegisterRequest(b_, "kvstore", 666)); },
                absl::StatusCode::kUnavailable, "manager recovering, retry");
  lite::v1::AllocLmrRequest alloc = AllocRequest(b_, b_.id, "kvstore");
  ExpectRefused([&] { return state_->AllocLmr(alloc, [](auto) {}); },
                absl::StatusCode::kUnavailable, "manager recovering, retry");
  // The home's re-registration gets its name back.
  lite::v1::RegisterLmrRequest back = RegisterRequest(a_, "kvstore", 1);
  back.set_lmr_id(victim.lmr_id());
  absl::StatusOr<lite::v1::RegisterLmrResponse> restored =
      state_->RegisterLmr(back);
  ASSERT_TRUE(restored.ok()) << restored.status();
  // After the window, new LMRs are served again (the name stays taken).
  clock_.Advance(absl::Seconds(3));
  state_->Tick();
  ASSERT_FALSE(state_->recovering());
  EXPECT_EQ(Reg(RegisterRequest(b_, "kvstore", 666)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(Reg(RegisterRequest(b_, "fresh", 666)).ok());
}

// L9: each departure added an index entry that a rejoin never removed.
TEST_F(BoundsTest, FailAndRejoinDoesNotGrowTheDepartedIndex) {
  for (int i = 0; i < 100; ++i) {
    lite::v1::LeaveRequest leave;
    *leave.mutable_caller() = c_.caller();
    ASSERT_TRUE(state_->Leave(leave).ok());
    EXPECT_EQ(state_->counters().departed_index, 1u);
    for (int step = 0; step < 4; ++step) {  // Under --max_joins_per_minute.
      clock_.Advance(absl::Milliseconds(500));
      Beat(a_);
      Beat(b_);
    }
    c_ = JoinAndOpen("gamma", 3);
    EXPECT_EQ(state_->counters().departed_index, 0u);
  }
}

}  // namespace
}  // namespace lite::controlplane::testing
