// ManagerState LMRs and grants: registration and re-registration, AllocLmr
// through node-addressed requests, access checks, unmap, owner-only free,
// and revocation when a home node fails or leaves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "controlplane/lmr_test_fixture.h"
#include "controlplane/manager_test_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

TEST_F(LmrTest, RegisterRecordsTheLmrOnTheCallersNodeAndAnnouncesIt) {
  const lite::v1::Lmr lmr = Register(a_, "data/0", 0640, Creds(1000, 100));
  EXPECT_EQ(lmr.lmr_id() >> 32, a_.id);
  EXPECT_EQ(lmr.lmr_id() & 0xffffffff, 1u);
  EXPECT_EQ(lmr.home_node_id(), a_.id);
  EXPECT_EQ(lmr.owner_uid(), 1000u);
  EXPECT_EQ(lmr.owner_gid(), 100u);
  EXPECT_EQ(lmr.mode(), 0640u);
  EXPECT_EQ(lmr.epoch(), a_.incarnation);
  EXPECT_EQ(lmr.origin(), lite::v1::LMR_ORIGIN_REGISTERED);
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].lmr_added().lmr().name(), "data/0");
  // Names are unique in the cluster.
  const std::string before = Snapshot();
  lite::v1::RegisterLmrRequest again;
  *again.mutable_caller() = b_.caller();
  *again.mutable_owner() = Creds(1, 1);
  again.set_name("data/0");
  again.set_size_bytes(10);
  again.add_chunks()->set_length_bytes(10);
  EXPECT_EQ(state_->RegisterLmr(again).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(LmrTest, HomeReRegistersItsLmrsWithTheirIdentityAfterAManagerRestart) {
  const lite::v1::Lmr original = Register(a_, "keep", 0600, Creds(7, 8));
  Register(a_, "other", 0600, Creds(7, 8));
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(5);
  Restart(options);
  lite::v1::JoinRequest rejoin =
      RestoreRequestFor("alpha", 1, a_.id, a_.incarnation);
  ASSERT_TRUE(state_->Join(rejoin)->restored());
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = a_.caller();
  *request.mutable_owner() = Creds(7, 8);
  request.set_name("keep");
  request.set_size_bytes(original.size_bytes());
  request.set_mode(0600);
  // As Register sent them: the answer carries neither chunks nor key.
  auto* chunk = request.add_chunks();
  chunk->set_address(0x10000);
  chunk->set_length_bytes(original.size_bytes());
  request.set_memory_key(0xabc);
  request.set_lmr_id(original.lmr_id());
  absl::StatusOr<lite::v1::RegisterLmrResponse> back =
      state_->RegisterLmr(request);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->lmr().lmr_id(), original.lmr_id());
  EXPECT_EQ(back->lmr().owner_uid(), 7u);
  EXPECT_EQ(back->lmr().epoch(), a_.incarnation);
  // A retry of the same re-registration is a no-op.
  const std::string before = Snapshot();
  ASSERT_TRUE(state_->RegisterLmr(request).ok());
  EXPECT_EQ(Snapshot(), before);
  // Different attributes under the same id are refused.
  request.set_mode(0666);
  EXPECT_EQ(state_->RegisterLmr(request).status().code(),
            absl::StatusCode::kAlreadyExists);
  // New registrations wait for the recovery's end (review cp M8: a name
  // not re-registered yet must not be taken meanwhile); that they never
  // collide with a re-registered id is RecoveryRaisesTheIdsAfterIt's.
  lite::v1::RegisterLmrRequest fresh = request;
  fresh.set_lmr_id(0);
  fresh.set_name("fresh");
  const std::string unchanged = Snapshot();
  absl::StatusOr<lite::v1::RegisterLmrResponse> early =
      state_->RegisterLmr(fresh);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(early.status().message(), HasSubstr("manager recovering, retry"));
  EXPECT_EQ(Snapshot(), unchanged);
  // Only the LMR's home may re-register it.
  lite::v1::JoinRequest rb =
      RestoreRequestFor("beta", 2, b_.id, b_.incarnation);
  ASSERT_TRUE(state_->Join(rb).ok());
  request.set_mode(0600);
  request.set_name("stolen");
  *request.mutable_caller() = b_.caller();
  absl::StatusOr<lite::v1::RegisterLmrResponse> stolen =
      state_->RegisterLmr(request);
  EXPECT_EQ(stolen.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(stolen.status().message(),
              HasSubstr("only that node's agent may re-register it"));
}

TEST_F(LmrTest, AllocAsksTheHomeNodeAndRecordsItsAnswer) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "buf"));
  EXPECT_FALSE(outcome->has_value());
  const lite::v1::NodeRequest request = TakeRequest(b_);
  EXPECT_NE(request.request_id(), 0u);
  EXPECT_EQ(request.deadline_ms(), 5000u);
  const auto& alloc = request.allocate_lmr_memory();
  EXPECT_EQ(alloc.name(), "buf");
  EXPECT_EQ(alloc.size_bytes(), 8192u);
  EXPECT_EQ(alloc.owner_uid(), 1000u);
  EXPECT_EQ(alloc.owner_gid(), 100u);
  EXPECT_EQ(alloc.mode(), 0640u);
  EXPECT_EQ(alloc.lmr_id() >> 32, b_.id);
  // The name is reserved while the allocation is in flight.
  lite::v1::AllocLmrRequest clash = AllocRequest(a_, c_.id, "buf");
  EXPECT_EQ(state_->AllocLmr(clash, [](auto) { FAIL(); }).code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(
      state_->HandleResult(b_.binding(), Allocated(request.request_id(), 8192))
          .ok());
  ASSERT_TRUE(outcome->has_value());
  ASSERT_TRUE(outcome->value().ok()) << outcome->value().status();
  const lite::v1::Lmr& lmr = outcome->value()->lmr();
  EXPECT_EQ(lmr.lmr_id(), alloc.lmr_id());
  EXPECT_EQ(lmr.home_node_id(), b_.id);
  EXPECT_EQ(lmr.origin(), lite::v1::LMR_ORIGIN_ALLOCATED);
  // The requester gets no key or addresses; a grant does (MapLmr).
  EXPECT_EQ(lmr.chunks_size(), 0);
  EXPECT_EQ(lmr.memory_key(), 0u);
  EXPECT_EQ(lmr.epoch(), b_.incarnation);
  lite::v1::MapLmrRequest map;
  *map.mutable_caller() = a_.caller();
  *map.mutable_requester() = Creds(1000, 100);
  map.set_name("buf");
  *map.mutable_access() = Access(true, false);
  absl::StatusOr<lite::v1::MapLmrResponse> mapped = state_->MapLmr(map);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ(mapped->grant().chunks_size(), 2);
  EXPECT_EQ(mapped->grant().memory_key(), 77u);
  DrainAll();
  // A duplicate answer after completion is ignored, not an error.
  EXPECT_TRUE(
      state_->HandleResult(b_.binding(), Allocated(request.request_id(), 8192))
          .ok());
  // Allocating on the caller's own node: home_node_id 0.
  auto own = StartAlloc(AllocRequest(c_, 0, "own"));
  EXPECT_EQ(TakeRequest(c_).allocate_lmr_memory().lmr_id() >> 32, c_.id);
}

// Review cp-2026-11-28 L13: a read-only grant carries the LMR's read-only
// key (the home's NIC refuses writes with it), a grant with write access
// the read-write key; with no read key reported (key_mode=global, an older
// home) every grant carries the one key. Neither key leaves in answers or
// listings.
TEST_F(LmrTest, ReadOnlyGrantsCarryTheLmrsReadOnlyKey) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "rk"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  lite::v1::NodeRequestResult answer = Allocated(request.request_id(), 8192);
  answer.mutable_allocated_lmr_memory()->set_read_key(78);
  ASSERT_TRUE(state_->HandleResult(b_.binding(), answer).ok());
  ASSERT_TRUE(outcome->has_value() && outcome->value().ok());
  EXPECT_EQ(outcome->value()->lmr().read_key(), 0u);
  const auto map = [&](const std::string& name, bool read, bool write) {
    lite::v1::MapLmrRequest m;
    *m.mutable_caller() = a_.caller();
    *m.mutable_requester() = Creds(1000, 100);
    m.set_name(name);
    *m.mutable_access() = Access(read, write);
    absl::StatusOr<lite::v1::MapLmrResponse> mapped = state_->MapLmr(m);
    EXPECT_TRUE(mapped.ok()) << mapped.status();
    return mapped.ok() ? mapped->grant().memory_key() : 0u;
  };
  EXPECT_EQ(map("rk", true, false), 78u);
  EXPECT_EQ(map("rk", true, true), 77u);
  EXPECT_EQ(map("rk", false, true), 77u);
  const absl::StatusOr<lite::v1::ListLmrsResponse> lmrs =
      state_->ListLmrs(lite::v1::ListLmrsRequest());
  ASSERT_TRUE(lmrs.ok() && lmrs->lmrs_size() > 0);
  for (const lite::v1::Lmr& lmr : lmrs->lmrs()) {
    EXPECT_EQ(lmr.read_key(), 0u) << lmr.name();
    EXPECT_EQ(lmr.memory_key(), 0u) << lmr.name();
  }
  const absl::StatusOr<lite::v1::ListGrantsResponse> grants =
      state_->ListGrants(lite::v1::ListGrantsRequest());
  ASSERT_TRUE(grants.ok() && grants->grants_size() == 3);
  for (const lite::v1::Grant& g : grants->grants()) {
    EXPECT_EQ(g.memory_key(), 0u);
  }
  // A home that reported no read key: read grants get the one key.
  auto old = StartAlloc(AllocRequest(a_, b_.id, "onekey"));
  const lite::v1::NodeRequest old_request = TakeRequest(b_);
  ASSERT_TRUE(state_
                  ->HandleResult(b_.binding(),
                                 Allocated(old_request.request_id(), 8192))
                  .ok());
  ASSERT_TRUE(old->has_value() && old->value().ok());
  EXPECT_EQ(map("onekey", true, false), 77u);
  // Registered LMRs (and re-registrations) keep the read key too.
  lite::v1::RegisterLmrRequest reg;
  *reg.mutable_caller() = c_.caller();
  *reg.mutable_owner() = Creds(1000, 100);
  reg.set_name("reg");
  reg.set_size_bytes(4096);
  reg.set_mode(0644);
  auto* chunk = reg.add_chunks();
  chunk->set_address(0x10000);
  chunk->set_length_bytes(4096);
  reg.set_memory_key(0xabc);
  reg.set_read_key(0xabd);
  absl::StatusOr<lite::v1::RegisterLmrResponse> registered =
      state_->RegisterLmr(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  EXPECT_EQ(registered->lmr().read_key(), 0u);
  EXPECT_EQ(map("reg", true, false), 0xabdu);
  EXPECT_EQ(map("reg", true, true), 0xabcu);
}

TEST_F(LmrTest, AllocPassesOnTheHomesErrorAndFreesTheName) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "big"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  lite::v1::NodeRequestResult result;
  result.set_request_id(request.request_id());
  result.set_status_code(
      static_cast<int>(absl::StatusCode::kResourceExhausted));
  result.set_status_message("out of LMR memory");
  ASSERT_TRUE(state_->HandleResult(b_.binding(), result).ok());
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outcome->value().status().message(),
              HasSubstr("node 2 ('beta') could not allocate 8192 bytes for "
                        "LMR 'big': out of LMR memory"));
  EXPECT_EQ(state_->counters().lmrs, 0u);
  // The name is free again; an agent's overlong message is refused (the
  // allocation still waits), one at the bound is passed on.
  auto again = StartAlloc(AllocRequest(a_, b_.id, "big"));
  result.set_request_id(TakeRequest(b_).request_id());
  result.set_status_code(13);
  result.set_status_message(std::string(100000, 'x'));
  EXPECT_EQ(state_->HandleResult(b_.binding(), result).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(again->has_value());
  result.set_status_message(std::string(kMaxAgentMessageLength, 'x'));
  ASSERT_TRUE(state_->HandleResult(b_.binding(), result).ok());
  EXPECT_EQ(again->value().status().code(), absl::StatusCode::kInternal);
  EXPECT_LT(again->value().status().message().size(), 1200u);
}

TEST_F(LmrTest, AllocRejectsAnUnusableAnswerAndTellsTheHomeToFreeIt) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "x"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  ASSERT_TRUE(
      state_->HandleResult(b_.binding(), Allocated(request.request_id(), 100))
          .ok());
  EXPECT_EQ(outcome->value().status().code(), absl::StatusCode::kInternal);
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].lmr_removed().cause(),
            lite::v1::REMOVAL_CAUSE_ALLOCATION_ABANDONED);
  EXPECT_EQ(events[0].lmr_removed().lmr_id(),
            request.allocate_lmr_memory().lmr_id());
}

TEST_F(LmrTest, AllocTimesOutAndAnnouncesTheAbandonedLmr) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "slow"));
  const lite::v1::NodeRequest request = TakeRequest(b_);
  for (int i = 0; i < 5; ++i) {  // 4.5 s, everyone heartbeating.
    clock_.Advance(absl::Milliseconds(900));
    Beat(a_);
    Beat(b_);
    Beat(c_);
    state_->Tick();
  }
  EXPECT_FALSE(outcome->has_value());
  Drain(*c_.outbox);
  clock_.Advance(absl::Milliseconds(600));  // 5.1 s after the request.
  state_->Tick();
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome->value().status().message(), HasSubstr("5000 ms"));
  const std::vector<Event> events = DrainEvents(*c_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].lmr_removed().cause(),
            lite::v1::REMOVAL_CAUSE_ALLOCATION_ABANDONED);
  // The late answer is accepted and ignored.
  EXPECT_TRUE(
      state_->HandleResult(b_.binding(), Allocated(request.request_id(), 8192))
          .ok());
  EXPECT_EQ(state_->counters().lmrs, 0u);
}

TEST_F(LmrTest, AllocFailsWhenTheHomeFails) {
  auto outcome = StartAlloc(AllocRequest(a_, b_.id, "doomed"));
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(b_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome->value().status().message(), HasSubstr("failed"));
}

TEST_F(LmrTest, AllocPreconditionsHaveExactCodesAndChangeNothing) {
  const std::string before = Snapshot();
  auto expect = [&](lite::v1::AllocLmrRequest request, absl::StatusCode code) {
    absl::Status status = state_->AllocLmr(request, [](auto) { FAIL(); });
    EXPECT_EQ(status.code(), code) << request.ShortDebugString() << status;
    EXPECT_EQ(Snapshot(), before);
  };
  expect(AllocRequest(a_, 99, "x"), absl::StatusCode::kNotFound);
  lite::v1::AllocLmrRequest bad = AllocRequest(a_, b_.id, "x");
  bad.set_size_bytes(0);
  expect(bad, absl::StatusCode::kInvalidArgument);
  bad = AllocRequest(a_, b_.id, "x");
  bad.set_mode(0755);
  expect(bad, absl::StatusCode::kInvalidArgument);
  bad = AllocRequest(a_, b_.id, "x");
  bad.mutable_owner()->set_pid(0);
  expect(bad, absl::StatusCode::kInvalidArgument);
  // A node that joined but has no session cannot be asked.
  const lite::v1::JoinResponse d = JoinOnly("delta", 4);
  DrainAll();
  const std::string with_d = Snapshot();
  absl::Status no_session = state_->AllocLmr(AllocRequest(a_, d.node_id(), "x"),
                                             [](auto) { FAIL(); });
  EXPECT_EQ(no_session.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Snapshot(), with_d);
  // A draining node takes no new LMRs.
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(b_.id);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  const std::string drained = Snapshot();
  EXPECT_EQ(state_->AllocLmr(AllocRequest(a_, b_.id, "x"), [](auto) { FAIL(); })
                .code(),
            absl::StatusCode::kFailedPrecondition);
  lite::v1::RegisterLmrRequest reg;
  *reg.mutable_caller() = b_.caller();
  *reg.mutable_owner() = Creds(1, 1);
  reg.set_name("x");
  reg.set_size_bytes(1);
  reg.add_chunks()->set_length_bytes(1);
  EXPECT_EQ(state_->RegisterLmr(reg).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Snapshot(), drained);
  // A failed node is not a home.
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(c_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  const std::string evicted = Snapshot();
  EXPECT_EQ(state_->AllocLmr(AllocRequest(a_, c_.id, "x"), [](auto) { FAIL(); })
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Snapshot(), evicted);
}

// Owner / group / other x read / write, Unix style, no root override.
struct AccessCase {
  uint32_t mode;
  uint32_t uid;
  uint32_t gid;
  bool read;
  bool write;
  bool allowed;
};

class AccessTest : public LmrTest,
                   public ::testing::WithParamInterface<AccessCase> {};

TEST_P(AccessTest, MapChecksOwnerGroupOtherForReadAndWrite) {
  const AccessCase& c = GetParam();
  Register(a_, "shared", c.mode, Creds(1000, 100));
  const std::string before = Snapshot();
  lite::v1::MapLmrRequest request;
  *request.mutable_caller() = b_.caller();
  *request.mutable_requester() = Creds(c.uid, c.gid, 4242);
  request.set_name("shared");
  *request.mutable_access() = Access(c.read, c.write);
  absl::StatusOr<lite::v1::MapLmrResponse> mapped = state_->MapLmr(request);
  if (!c.allowed) {
    EXPECT_EQ(mapped.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(mapped.status().message(), HasSubstr("may not"));
    EXPECT_EQ(Snapshot(), before);
    return;
  }
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  const lite::v1::Grant& grant = mapped->grant();
  EXPECT_EQ(grant.holder_node_id(), b_.id);
  EXPECT_EQ(grant.holder_incarnation(), b_.incarnation);
  EXPECT_EQ(grant.requester().uid(), c.uid);
  EXPECT_EQ(grant.requester().gid(), c.gid);
  EXPECT_EQ(grant.requester().pid(), 4242u);
  EXPECT_EQ(grant.access().read(), c.read);
  EXPECT_EQ(grant.access().write(), c.write);
  EXPECT_EQ(grant.epoch(), a_.incarnation);
  EXPECT_EQ(grant.home_node_id(), a_.id);
  EXPECT_EQ(grant.grant_id() >> 32, b_.id);
  EXPECT_EQ(grant.size_bytes(), 4096u);
  lite::v1::ListGrantsRequest list;
  ASSERT_EQ(state_->ListGrants(list)->grants_size(), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, AccessTest,
    ::testing::Values(
        // Owner class (uid 1000), whatever the gid.
        AccessCase{0600, 1000, 999, true, true, true},
        AccessCase{0400, 1000, 100, true, false, true},
        AccessCase{0400, 1000, 100, false, true, false},
        AccessCase{0200, 1000, 100, false, true, true},
        AccessCase{0200, 1000, 100, true, false, false},
        // The owner class applies even when group/other would allow more.
        AccessCase{0066, 1000, 100, true, false, false},
        // Group class (gid 100, other uid).
        AccessCase{0640, 2000, 100, true, false, true},
        AccessCase{0640, 2000, 100, false, true, false},
        AccessCase{0660, 2000, 100, true, true, true},
        AccessCase{0606, 2000, 100, true, false, false},
        // Other class.
        AccessCase{0644, 3000, 300, true, false, true},
        AccessCase{0644, 3000, 300, true, true, false},
        AccessCase{0602, 3000, 300, false, true, true},
        AccessCase{0660, 3000, 300, true, false, false},
        // No root override.
        AccessCase{0600, 0, 0, true, false, false}));

TEST_F(LmrTest, MapFieldErrorsHaveExactCodesAndChangeNothing) {
  Register(a_, "m", 0644, Creds(1000, 100));
  const std::string before = Snapshot();
  auto base = [&] {
    lite::v1::MapLmrRequest request;
    *request.mutable_caller() = b_.caller();
    *request.mutable_requester() = Creds(2000, 200);  // Class other: r--.
    request.set_name("m");
    *request.mutable_access() = Access(true, false);
    return request;
  };
  std::vector<std::pair<lite::v1::MapLmrRequest, absl::StatusCode>> cases;
  auto add = [&](auto mutate, absl::StatusCode code) {
    lite::v1::MapLmrRequest request = base();
    mutate(request);
    cases.emplace_back(request, code);
  };
  using R = lite::v1::MapLmrRequest;
  add([](R& r) { r.mutable_caller()->set_node_id(0); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.mutable_caller()->set_incarnation(0); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.mutable_requester()->set_uid(0xFFFFFFFF); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.mutable_requester()->set_gid(0xFFFFFFFF); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.mutable_requester()->set_pid(0); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.set_name(""); }, absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.set_name("bad name"); }, absl::StatusCode::kInvalidArgument);
  add([](R& r) { *r.mutable_access() = Access(false, false); },
      absl::StatusCode::kInvalidArgument);
  add([](R& r) { r.mutable_caller()->set_node_id(77); },
      absl::StatusCode::kNotFound);
  add([](R& r) { r.mutable_caller()->set_incarnation(5); },
      absl::StatusCode::kFailedPrecondition);
  add([](R& r) { r.set_name("missing"); }, absl::StatusCode::kNotFound);
  add([](R& r) { *r.mutable_access() = Access(true, true); },
      absl::StatusCode::kPermissionDenied);
  for (const auto& [request, code] : cases) {
    absl::StatusOr<lite::v1::MapLmrResponse> mapped = state_->MapLmr(request);
    EXPECT_EQ(mapped.status().code(), code)
        << request.ShortDebugString() << " -> " << mapped.status();
    EXPECT_FALSE(mapped.status().message().empty());
    EXPECT_EQ(Snapshot(), before);
  }
}

TEST_F(LmrTest, RegisterFieldErrorsHaveExactCodesAndChangeNothing) {
  Register(a_, "taken", 0644, Creds(1000, 100));
  const std::string before = Snapshot();
  auto base = [&] {
    lite::v1::RegisterLmrRequest request;
    *request.mutable_caller() = a_.caller();
    *request.mutable_owner() = Creds(1000, 100);
    request.set_name("new");
    request.set_size_bytes(4096);
    request.set_mode(0644);
    request.add_chunks()->set_length_bytes(4096);
    return request;
  };
  using R = lite::v1::RegisterLmrRequest;
  std::vector<std::pair<std::function<void(R&)>, absl::StatusCode>> cases = {
      {[](R& r) { r.set_size_bytes(0); }, absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_size_bytes(uint64_t{1} << 41); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_mode(01644); }, absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_mode(0700); }, absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.clear_chunks(); }, absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.mutable_chunks(0)->set_length_bytes(4095); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.add_chunks()->set_length_bytes(0); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) {
         r.mutable_chunks(0)->set_length_bytes(~uint64_t{0});
         r.add_chunks()->set_length_bytes(4097);
       },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_name(std::string(129, 'n')); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_name("/abs"); }, absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_origin(lite::v1::LMR_ORIGIN_ALLOCATED); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.set_lmr_id(uint64_t{1} << 32); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.mutable_owner()->set_uid(0xFFFFFFFF); },
       absl::StatusCode::kInvalidArgument},
      {[](R& r) { r.mutable_caller()->set_node_id(50); },
       absl::StatusCode::kNotFound},
      {[](R& r) { r.mutable_caller()->set_incarnation(2); },
       absl::StatusCode::kFailedPrecondition},
      {[](R& r) { r.set_name("taken"); }, absl::StatusCode::kAlreadyExists},
      {[&](R& r) { r.set_lmr_id((uint64_t{b_.id} << 32) | 5); },
       absl::StatusCode::kPermissionDenied},
  };
  for (const auto& [mutate, code] : cases) {
    R request = base();
    mutate(request);
    absl::StatusOr<lite::v1::RegisterLmrResponse> registered =
        state_->RegisterLmr(request);
    EXPECT_EQ(registered.status().code(), code)
        << request.ShortDebugString() << " -> " << registered.status();
    EXPECT_EQ(Snapshot(), before) << request.ShortDebugString();
  }
}

TEST_F(LmrTest, UnmapOnlyByTheHolder) {
  Register(a_, "u", 0644, Creds(1000, 100));
  const lite::v1::Grant grant = Map(b_, "u", Creds(1000, 100), true, true);
  const std::string before = Snapshot();
  lite::v1::UnmapLmrRequest request;
  *request.mutable_caller() = c_.caller();
  request.set_grant_id(grant.grant_id());
  EXPECT_EQ(state_->UnmapLmr(request).status().code(),
            absl::StatusCode::kPermissionDenied);
  request.set_grant_id(0);
  EXPECT_EQ(state_->UnmapLmr(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.set_grant_id(grant.grant_id() + 1);
  EXPECT_EQ(state_->UnmapLmr(request).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Snapshot(), before);
  *request.mutable_caller() = b_.caller();
  request.set_grant_id(grant.grant_id());
  ASSERT_TRUE(state_->UnmapLmr(request).ok());
  EXPECT_EQ(state_->counters().grants, 0u);
  // Unmapping is not announced.
  EXPECT_TRUE(DrainEvents(*c_.outbox).size() == 1u);  // Only LmrAdded.
}

TEST_F(LmrTest, OnlyTheOwnerFreesAndEveryGrantIsRevokedFirst) {
  const lite::v1::Lmr lmr = Register(a_, "f", 0666, Creds(1000, 100));
  const lite::v1::Grant g1 = Map(b_, "f", Creds(2000, 100), true, false);
  const lite::v1::Grant g2 = Map(c_, "f", Creds(3000, 300), true, true);
  DrainAll();
  const std::string before = Snapshot();
  lite::v1::FreeLmrRequest request;
  *request.mutable_caller() = b_.caller();
  request.set_name("f");
  for (const lite::v1::Credentials& who :
       {Creds(2000, 100), Creds(0, 0), Creds(3000, 300)}) {
    *request.mutable_requester() = who;
    absl::StatusOr<lite::v1::FreeLmrResponse> freed = state_->FreeLmr(request);
    EXPECT_EQ(freed.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(freed.status().message(),
                HasSubstr("only the owner (uid 1000)"));
    EXPECT_EQ(Snapshot(), before);
  }
  request.set_name("nope");
  *request.mutable_requester() = Creds(1000, 100);
  EXPECT_EQ(state_->FreeLmr(request).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Snapshot(), before);
  // The owner may free it from any node.
  request.set_name("f");
  absl::StatusOr<lite::v1::FreeLmrResponse> freed = state_->FreeLmr(request);
  ASSERT_TRUE(freed.ok()) << freed.status();
  EXPECT_EQ(freed->grants_revoked(), 2u);
  // One event revokes both grants (no GrantRevoked each: review cp H2).
  const std::vector<Event> events = DrainEvents(*a_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].lmr_removed().lmr_id(), lmr.lmr_id());
  EXPECT_EQ(events[0].lmr_removed().cause(), lite::v1::REMOVAL_CAUSE_LMR_FREED);
  EXPECT_TRUE(events[0].lmr_removed().revokes_grants());
  EXPECT_EQ(events[0].lmr_removed().grants_revoked(), 2u);
  (void)g1;
  (void)g2;
  EXPECT_EQ(state_->counters().lmrs, 0u);
  EXPECT_EQ(state_->counters().grants, 0u);
}

TEST_F(LmrTest, FailedNodeLosesItsLmrsAndGrantsIntoThemAndItsOwnGrants) {
  // a homes "on-a"; b and c hold grants into it. a also holds a grant into
  // b's "on-b", and c holds one into "on-b" too.
  const lite::v1::Lmr on_a = Register(a_, "on-a", 0666, Creds(1, 1));
  const lite::v1::Lmr on_b = Register(b_, "on-b", 0666, Creds(1, 1));
  const lite::v1::Grant b_into_a = Map(b_, "on-a", Creds(5, 5), true, true);
  const lite::v1::Grant c_into_a = Map(c_, "on-a", Creds(5, 5), true, false);
  const lite::v1::Grant a_into_b = Map(a_, "on-b", Creds(5, 5), true, false);
  const lite::v1::Grant c_into_b = Map(c_, "on-b", Creds(5, 5), true, false);
  DrainAll();
  clock_.Advance(absl::Milliseconds(500));
  Beat(b_);
  Beat(c_);
  clock_.Advance(absl::Milliseconds(500));
  state_->Tick();  // a's lease is over.
  const std::vector<Event> events = DrainEvents(*c_.outbox);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].member_failed().node_id(), a_.id);
  // b's and c's grants into on-a are revoked by its LmrRemoved.
  EXPECT_EQ(events[1].lmr_removed().lmr_id(), on_a.lmr_id());
  EXPECT_EQ(events[1].lmr_removed().cause(),
            lite::v1::REMOVAL_CAUSE_HOME_FAILED);
  EXPECT_TRUE(events[1].lmr_removed().revokes_grants());
  EXPECT_EQ(events[1].lmr_removed().grants_revoked(), 2u);
  (void)b_into_a;
  (void)c_into_a;
  // a's own grant into b is dropped (not announced); c's stays.
  lite::v1::ListGrantsRequest list;
  absl::StatusOr<lite::v1::ListGrantsResponse> grants =
      state_->ListGrants(list);
  ASSERT_EQ(grants->grants_size(), 1);
  EXPECT_EQ(grants->grants(0).grant_id(), c_into_b.grant_id());
  lite::v1::ListLmrsRequest lmrs;
  ASSERT_EQ(state_->ListLmrs(lmrs)->lmrs_size(), 1);
  EXPECT_EQ(state_->ListLmrs(lmrs)->lmrs(0).lmr_id(), on_b.lmr_id());
  (void)a_into_b;
}

TEST_F(LmrTest, LeavingNodeLosesItsLmrsWithCauseHomeLeft) {
  Register(a_, "gone", 0666, Creds(1, 1));
  const lite::v1::Grant grant = Map(b_, "gone", Creds(5, 5), true, false);
  DrainAll();
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = a_.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].has_member_left());
  EXPECT_EQ(events[1].lmr_removed().cause(), lite::v1::REMOVAL_CAUSE_HOME_LEFT);
  EXPECT_TRUE(events[1].lmr_removed().revokes_grants());
  EXPECT_EQ(events[1].lmr_removed().grants_revoked(), 1u);
  (void)grant;
}

TEST_F(LmrTest, RestoredGrantsAreCheckedWhenTheirLmrComesBack) {
  const lite::v1::Lmr lmr = Register(a_, "r", 0640, Creds(1000, 100));
  const lite::v1::Grant good = Map(b_, "r", Creds(2000, 100), true, false);
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(3);
  Restart(options);
  for (const TestNode& n : {a_, b_}) {
    lite::v1::JoinRequest rejoin =
        RestoreRequestFor(n.name, n.id, n.id, n.incarnation);
    ASSERT_TRUE(state_->Join(rejoin)->restored());
  }
  // b restores its real grant, and one its creds never allowed (write).
  lite::v1::RestoreGrantRequest restore;
  *restore.mutable_caller() = b_.caller();
  *restore.mutable_grant() = good;
  ASSERT_TRUE(state_->RestoreGrant(restore).ok());
  lite::v1::Grant forged = good;
  forged.set_grant_id(good.grant_id() + 1);
  forged.mutable_access()->set_write(true);
  *restore.mutable_grant() = forged;
  ASSERT_TRUE(state_->RestoreGrant(restore).ok());  // LMR unknown yet.
  // A grant for another holder is refused outright.
  lite::v1::Grant other = good;
  other.set_grant_id((uint64_t{c_.id} << 32) | 1);
  *restore.mutable_grant() = other;
  EXPECT_EQ(state_->RestoreGrant(restore).status().code(),
            absl::StatusCode::kInvalidArgument);
  // a re-registers the LMR: the forged grant is revoked, the good one kept.
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = a_.caller();
  *request.mutable_owner() = Creds(1000, 100);
  request.set_name("r");
  request.set_size_bytes(lmr.size_bytes());
  request.set_mode(0640);
  AddRegisteredMemory(&request, lmr.size_bytes());
  request.set_lmr_id(lmr.lmr_id());
  ASSERT_TRUE(state_->RegisterLmr(request).ok());
  lite::v1::ListGrantsRequest list;
  absl::StatusOr<lite::v1::ListGrantsResponse> grants =
      state_->ListGrants(list);
  ASSERT_EQ(grants->grants_size(), 1);
  EXPECT_EQ(grants->grants(0).grant_id(), good.grant_id());
  // With the LMR known, a restore asking for more than the mode allows is
  // refused at once.
  forged.set_grant_id(good.grant_id() + 2);
  *restore.mutable_grant() = forged;
  EXPECT_EQ(state_->RestoreGrant(restore).status().code(),
            absl::StatusCode::kPermissionDenied);
  // New grants never reuse a restored id.
  TestNode b_now = b_;
  const lite::v1::Grant fresh = Map(b_now, "r", Creds(2000, 100), true, false);
  EXPECT_GT(fresh.grant_id(), good.grant_id() + 1);
}

TEST_F(LmrTest, ListingsFilterAndPage) {
  for (int i = 0; i < 5; ++i) {
    Register(i % 2 ? b_ : a_, absl::StrCat("l", i), 0644, Creds(1, 1));
  }
  lite::v1::ListLmrsRequest by_home;
  by_home.set_home_node_id(a_.id);
  EXPECT_EQ(state_->ListLmrs(by_home)->lmrs_size(), 3);
  lite::v1::ListLmrsRequest paged;
  paged.set_page_size(2);
  int seen = 0;
  while (true) {
    auto page = state_->ListLmrs(paged);
    ASSERT_TRUE(page.ok());
    seen += page->lmrs_size();
    if (page->next_page_token().empty()) break;
    paged.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(seen, 5);
  const lite::v1::Grant g = Map(c_, "l0", Creds(1, 1), true, false);
  Map(c_, "l1", Creds(1, 1), true, false);
  Map(b_, "l0", Creds(1, 1), true, false);
  lite::v1::ListGrantsRequest grants;
  grants.set_lmr_id(g.lmr_id());
  EXPECT_EQ(state_->ListGrants(grants)->grants_size(), 2);
  grants.set_holder_node_id(c_.id);
  EXPECT_EQ(state_->ListGrants(grants)->grants_size(), 1);
  grants.clear_lmr_id();
  EXPECT_EQ(state_->ListGrants(grants)->grants_size(), 2);
}

}  // namespace
}  // namespace lite::controlplane::testing
