// ManagerState BindService: the bind goes down the server node's session
// with the caller's node and incarnation and reply slots, the server's ring
// (or its refusal) comes back to the caller; bad fields, unknown services
// and a server without a session are refused at once; a server that does
// not answer, or ends, or a manager that shuts down, fail the bind with
// UNAVAILABLE; a result from the wrong node is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "controlplane/lmr_test_fixture.h"
#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using ::testing::HasSubstr;
using Outcome = std::shared_ptr<
    std::optional<absl::StatusOr<lite::v1::BindServiceResponse>>>;

class BindTest : public LmrTest {
 protected:
  // Registers "echo" on b_ (port 9) and returns its id.
  uint64_t Register() {
    lite::v1::RegisterServiceRequest r;
    *r.mutable_caller() = b_.caller();
    *r.mutable_owner() = Creds(1000, 100, 4242);
    r.set_name("echo");
    r.set_mode(0711);
    r.set_port(9);
    r.set_max_request_bytes(100);
    r.set_max_reply_bytes(200);
    r.set_depth(8);
    r.set_max_clients(4);
    absl::StatusOr<lite::v1::RegisterServiceResponse> s =
        state_->RegisterService(r);
    EXPECT_TRUE(s.ok()) << s.status();
    DrainAll();
    // a_ opens it: only a node that opened a service binds to it.
    EXPECT_TRUE(Open(a_).ok());
    return s.ok() ? s->service().service_id() : 0;
  }
  absl::Status Open(const TestNode& node, const std::string& name = "echo") {
    lite::v1::OpenServiceRequest open;
    *open.mutable_caller() = node.caller();
    *open.mutable_requester() = Creds(2000, 200);
    open.set_name(name);
    return state_->OpenService(open).status();
  }
  // The binds queued for `node` (other messages go).
  size_t BindsQueued(const TestNode& node) {
    size_t binds = 0;
    for (const auto& m : Drain(*node.outbox)) {
      if (m.has_request() && m.request().has_bind_service_ring()) ++binds;
    }
    return binds;
  }
  lite::v1::BindServiceRequest BindRequest(uint64_t service_id) {
    lite::v1::BindServiceRequest r;
    *r.mutable_caller() = a_.caller();
    r.set_service_id(service_id);
    r.set_reply_address(0x1000);
    r.set_reply_key(0x42);
    r.set_reply_slot_bytes(256);
    return r;
  }
  Outcome StartBind(const lite::v1::BindServiceRequest& r) {
    auto outcome = std::make_shared<
        std::optional<absl::StatusOr<lite::v1::BindServiceResponse>>>();
    absl::Status started = state_->BindService(
        r, [outcome](absl::StatusOr<lite::v1::BindServiceResponse> result) {
          *outcome = std::move(result);
        });
    EXPECT_TRUE(started.ok()) << started;
    return outcome;
  }
  static lite::v1::NodeRequestResult Bound(uint64_t request_id) {
    lite::v1::NodeRequestResult r;
    r.set_request_id(request_id);
    auto* ring = r.mutable_bound_service_ring();
    ring->set_ring_address(0x9000);
    ring->set_ring_key(0x77);
    ring->set_depth(8);
    ring->set_slot_bytes(256);
    return r;
  }
};

TEST_F(BindTest, TheServerNodesRingComesBackToTheCaller) {
  const uint64_t id = Register();
  Outcome outcome = StartBind(BindRequest(id));
  EXPECT_FALSE(outcome->has_value());
  const lite::v1::NodeRequest request = TakeRequest(b_);
  const lite::v1::BindServiceRing& bind = request.bind_service_ring();
  EXPECT_EQ(bind.service_id(), id);
  EXPECT_EQ(bind.port(), 9u);
  EXPECT_EQ(bind.client_node_id(), a_.id);
  EXPECT_EQ(bind.client_incarnation(), a_.incarnation);
  EXPECT_EQ(bind.reply_address(), 0x1000u);
  EXPECT_EQ(bind.reply_key(), 0x42u);
  EXPECT_EQ(bind.reply_slot_bytes(), 256u);
  // Only the node it was sent to may answer it.
  EXPECT_EQ(
      state_->HandleResult(c_.binding(), Bound(request.request_id())).code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(outcome->has_value());
  ASSERT_TRUE(
      state_->HandleResult(b_.binding(), Bound(request.request_id())).ok());
  ASSERT_TRUE(outcome->has_value());
  ASSERT_TRUE(outcome->value().ok()) << outcome->value().status();
  EXPECT_EQ(outcome->value()->ring().ring_address(), 0x9000u);
  EXPECT_EQ(outcome->value()->ring().ring_key(), 0x77u);
  EXPECT_EQ(outcome->value()->ring().depth(), 8u);
  // A duplicate answer is ignored.
  EXPECT_TRUE(
      state_->HandleResult(b_.binding(), Bound(request.request_id())).ok());
}

TEST_F(BindTest, TheServersRefusalAndAnUnusableRingReachTheCaller) {
  const uint64_t id = Register();
  Outcome full = StartBind(BindRequest(id));
  lite::v1::NodeRequestResult refused;
  refused.set_request_id(TakeRequest(b_).request_id());
  refused.set_status_code(
      static_cast<int>(absl::StatusCode::kResourceExhausted));
  refused.set_status_message("max_clients client nodes already");
  ASSERT_TRUE(state_->HandleResult(b_.binding(), refused).ok());
  EXPECT_EQ(full->value().status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full->value().status().message(),
              HasSubstr("serving 'echo' gave no ring: max_clients"));
  Outcome bad = StartBind(BindRequest(id));
  lite::v1::NodeRequestResult zero = Bound(TakeRequest(b_).request_id());
  zero.mutable_bound_service_ring()->set_depth(0);
  ASSERT_TRUE(state_->HandleResult(b_.binding(), zero).ok());
  EXPECT_EQ(bad->value().status().code(), absl::StatusCode::kInternal);
}

TEST_F(BindTest, BadRequestsAreRefusedAtOnceAndSendNothing) {
  const uint64_t id = Register();
  struct Case {
    const char* what;
    lite::v1::BindServiceRequest request;
    absl::StatusCode code;
  };
  lite::v1::BindServiceRequest no_id = BindRequest(0);
  lite::v1::BindServiceRequest unknown = BindRequest(id + 1);
  lite::v1::BindServiceRequest small = BindRequest(id);
  small.set_reply_slot_bytes(32);
  lite::v1::BindServiceRequest odd = BindRequest(id);
  odd.set_reply_slot_bytes(100);
  lite::v1::BindServiceRequest big = BindRequest(id);
  big.set_reply_slot_bytes((1 << 20) + 64);
  lite::v1::BindServiceRequest stale = BindRequest(id);
  stale.mutable_caller()->set_incarnation(a_.incarnation + 1);
  const Case cases[] = {
      {"service 0", no_id, absl::StatusCode::kInvalidArgument},
      {"unknown service", unknown, absl::StatusCode::kNotFound},
      {"slot under 64", small, absl::StatusCode::kInvalidArgument},
      {"slot not aligned", odd, absl::StatusCode::kInvalidArgument},
      {"slot over 1 MiB", big, absl::StatusCode::kInvalidArgument},
      {"stale caller", stale, absl::StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(state_->BindService(c.request, [](auto) { FAIL(); }).code(),
              c.code)
        << c.what;
  }
  for (const auto& message : Drain(*b_.outbox)) {
    EXPECT_FALSE(message.has_request()) << "a refused bind sent a request";
  }
}

TEST_F(BindTest, ASilentServerTimesOutAndALateAnswerIsIgnored) {
  const uint64_t id = Register();
  Outcome outcome = StartBind(BindRequest(id));
  const uint64_t request_id = TakeRequest(b_).request_id();
  for (int i = 0; i < 5; ++i) {  // 4.5 s, everyone heartbeating.
    clock_.Advance(absl::Milliseconds(900));
    Beat(a_);
    Beat(b_);
    Beat(c_);
    state_->Tick();
  }
  EXPECT_FALSE(outcome->has_value());
  clock_.Advance(absl::Milliseconds(600));
  state_->Tick();
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(outcome->value().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome->value().status().message(), HasSubstr("5000 ms"));
  EXPECT_TRUE(state_->HandleResult(b_.binding(), Bound(request_id)).ok());
}

TEST_F(BindTest, AServerThatLeavesOrAManagerThatStopsFailsTheBind) {
  const uint64_t id = Register();
  Outcome left = StartBind(BindRequest(id));
  TakeRequest(b_);
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = b_.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  ASSERT_TRUE(left->has_value());
  EXPECT_EQ(left->value().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(left->value().status().message(), HasSubstr("left"));

  lite::v1::RegisterServiceRequest r;
  *r.mutable_caller() = c_.caller();
  *r.mutable_owner() = Creds(1000, 100, 1);
  r.set_name("other");
  r.set_mode(0711);
  r.set_port(3);
  r.set_max_request_bytes(64);
  r.set_max_reply_bytes(64);
  r.set_depth(4);
  r.set_max_clients(2);
  absl::StatusOr<lite::v1::RegisterServiceResponse> s =
      state_->RegisterService(r);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(Open(a_, "other").ok());
  Outcome stopped = StartBind(BindRequest(s->service().service_id()));
  state_->Shutdown();
  ASSERT_TRUE(stopped->has_value());
  EXPECT_EQ(stopped->value().status().code(), absl::StatusCode::kUnavailable);
}

// Review cp M3: a node that never opened the service, and a flood of binds
// at one server node, are refused before anything reaches the server's
// session; what was refused changed nothing.
TEST_F(BindTest, BindsNeedAnOpenAndStopAtMaxPendingBindsPerNode) {
  ManagerOptions options = TestOptions();
  options.max_pending_binds_per_node = 3;
  Restart(options);
  LmrTest::SetUp();
  const uint64_t id = Register();
  // c_ never opened "echo" (it only learnt the id from ServiceAdded).
  lite::v1::BindServiceRequest from_c = BindRequest(id);
  *from_c.mutable_caller() = c_.caller();
  std::string before = Snapshot();
  absl::Status refused =
      state_->BindService(from_c, [](auto) { ADD_FAILURE() << "called"; });
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("OpenService first"));
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(BindsQueued(b_), 0u);
  // a_ floods b_: three binds wait, the fourth is refused.
  for (int i = 0; i < 3; ++i) StartBind(BindRequest(id));
  EXPECT_EQ(BindsQueued(b_), 3u);
  before = Snapshot();
  refused = state_->BindService(BindRequest(id), [](auto) {});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("--max_pending_binds_per_node"));
  EXPECT_EQ(Snapshot(), before);
  // c_, once it opened, is held by the server's limit too.
  ASSERT_TRUE(Open(c_).ok());
  refused = state_->BindService(from_c, [](auto) {});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("(the server)"));
  EXPECT_EQ(BindsQueued(b_), 0u);
  // Timed out binds make room again.
  for (absl::Duration d; d <= options.request_timeout;
       d += absl::Milliseconds(250)) {
    clock_.Advance(absl::Milliseconds(250));
    for (const TestNode* node : {&a_, &b_, &c_}) Beat(*node);
    state_->Tick();
  }
  StartBind(from_c);
  EXPECT_EQ(BindsQueued(b_), 1u);
}

}  // namespace
}  // namespace lite::controlplane::testing
