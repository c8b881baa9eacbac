// The agent's part of RPC (issue #11) against the scripted manager and the
// fake module: each RPC upcall becomes its ClusterManager call with the
// kernel-taken credentials and its answer goes back to lite.ko (errors with
// the manager's code; a bind's RESOURCE_EXHAUSTED as EUSERS);
// unregistrations are retried while the manager is unreachable; the
// manager's bind_service_ring requests reach lite.ko's RPC_BIND with its
// refusals mapped; heartbeats carry the service stats; services lite.ko
// still serves are registered again on join.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/fake_module.h"
#include "agent/testing/fake_manager.h"
#include "agent/testing/test_agent.h"

namespace lite::agent {
namespace {

using testing::FakeManager;
using testing::FakeManagerServer;

constexpr absl::Duration kWait = absl::Seconds(10);
constexpr uint64_t kNode1 = uint64_t{1} << 32;

bool Eventually(const std::function<bool()>& pred,
                absl::Duration timeout = kWait) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return pred();
}

std::unique_ptr<Agent> MakeAgent(const std::string& address,
                                 FakeModule* module) {
  AgentOptions o = testing::TestAgentOptions(address);
  o.upcalls.unregister.retry_initial = absl::Milliseconds(10);
  o.upcalls.unregister.retry_max = absl::Milliseconds(50);
  return testing::MakeTestAgent(o, module);
}

lite::v1::Credentials Creds() {
  lite::v1::Credentials c;
  c.set_uid(1000);
  c.set_gid(100);
  c.set_pid(42);
  c.add_groups(100);
  c.add_groups(2000);
  return c;
}

uint64_t CounterValue(const Agent& agent, const std::string& name) {
  for (const auto& c : agent.CounterSnapshot()) {
    if (c.name() == name) return c.value();
  }
  return 0;
}

RpcRegisterUpcall Echo(uint32_t port = 3) {
  return RpcRegisterUpcall{.name = "echo",
                           .mode = 0751,
                           .port = port,
                           .max_request_bytes = 100,
                           .max_reply_bytes = 200,
                           .depth = 16,
                           .max_clients = 2};
}

// A connected agent on the fake module and the scripted manager.
class AgentRpcTest : public ::testing::Test {
 protected:
  void SetUp() override { agent_ = MakeAgent(server_.address(), &module_); }
  void Connect() {
    agent_->Start();
    ASSERT_TRUE(mgr().WaitForSessions(1, kWait));
  }
  FakeManager& mgr() { return server_.manager(); }
  // Registers "echo" through an upcall; its service id.
  uint64_t Register(uint32_t port = 3) {
    const uint64_t id = module_.InjectUpcall(Creds(), Echo(port));
    absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok() || !reply->service_id.has_value()) return 0;
    return *reply->service_id;
  }
  lite::v1::NodeRequestResult Request(uint64_t request_id,
                                      const lite::v1::BindServiceRing& bind) {
    lite::v1::ManagerMessage msg;
    msg.mutable_request()->set_request_id(request_id);
    msg.mutable_request()->set_deadline_ms(5000);
    *msg.mutable_request()->mutable_bind_service_ring() = bind;
    mgr().Push(msg);
    lite::v1::NodeRequestResult out;
    EXPECT_TRUE(mgr().WaitFor(
        [&](const FakeManager& m) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          for (const auto& r : m.received_locked()) {
            if (r.has_result() && r.result().request_id() == request_id) {
              out = r.result();
              return true;
            }
          }
          return false;
        },
        kWait));
    return out;
  }

  FakeManagerServer server_;
  FakeModule module_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentRpcTest, RegisterCarriesTheOwnerAndTheShapeAndPublishesTheId) {
  Connect();
  const uint64_t id = Register();
  ASSERT_EQ(id >> 32, 1u);
  const auto regs = mgr().service_registers();
  ASSERT_EQ(regs.size(), 1u);
  const lite::v1::RegisterServiceRequest& r = regs[0];
  EXPECT_EQ(r.caller().node_id(), 1u);
  EXPECT_EQ(r.owner().uid(), 1000u);
  EXPECT_EQ(r.owner().gid(), 100u);
  EXPECT_EQ(r.owner().pid(), 42u);
  EXPECT_EQ(r.owner().groups_size(), 2);  // the group class needs them
  EXPECT_EQ(r.name(), "echo");
  EXPECT_EQ(r.mode(), 0751u);
  EXPECT_EQ(r.port(), 3u);
  EXPECT_EQ(r.max_request_bytes(), 100u);
  EXPECT_EQ(r.max_reply_bytes(), 200u);
  EXPECT_EQ(r.depth(), 16u);
  EXPECT_EQ(r.max_clients(), 2u);
  EXPECT_EQ(r.restore_service_id(), 0u);
  // lite.ko serves it under the manager's id.
  auto served = module_.ListServices();
  ASSERT_TRUE(served.ok());
  ASSERT_EQ(served->size(), 1u);
  EXPECT_EQ((*served)[0].service.service_id(), id);
}

TEST_F(AgentRpcTest, RegisterRefusedKeepsTheManagersCodeAndFreesThePort) {
  mgr().OnRegisterService([](const auto&, auto*) {
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                        "a service named 'echo' exists");
  });
  Connect();
  const uint64_t id = module_.InjectUpcall(Creds(), Echo());
  absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(reply->status.message().find("exists"), std::string::npos);
  EXPECT_FALSE(reply->service_id.has_value());
  EXPECT_TRUE(module_.ListServices()->empty());
}

TEST_F(AgentRpcTest, RegisterWhoseCallerLeftIsUnregisteredAgain) {
  // The caller leaves while the manager registers the service, so that its
  // answer is sure to fail (failing it after InjectUpcall returned raced
  // with an agent that had answered already: a flake under load).
  absl::Notification injected;
  std::atomic<uint64_t> id{0};
  mgr().OnRegisterService([&](const auto&, auto* resp) {
    injected.WaitForNotificationWithTimeout(kWait);
    module_.FailCompletion(id.load(), absl::CancelledError("caller killed"));
    resp->mutable_service()->set_service_id(kNode1 | 42);
    return grpc::Status::OK;
  });
  Connect();
  id = module_.InjectUpcall(Creds(), Echo());
  injected.Notify();
  ASSERT_TRUE(Eventually([&] { return !mgr().service_unregisters().empty(); }));
  EXPECT_EQ(mgr().service_unregisters()[0].service_id(), kNode1 | 42);
  EXPECT_EQ(CounterValue(*agent_, "agent.services_unclaimed"), 1u);
}

TEST_F(AgentRpcTest, OpenAsksWithTheRequesterAndAnswersWhereToCall) {
  Connect();
  const uint64_t id =
      module_.InjectUpcall(Creds(), RpcOpenUpcall{.name = "echo"});
  absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_TRUE(reply->status.ok()) << reply->status;
  ASSERT_TRUE(reply->service.has_value());
  EXPECT_EQ(reply->service->service_id(), (uint64_t{2} << 32) | 7);
  EXPECT_EQ(reply->service->node_id(), 2u);
  EXPECT_EQ(reply->service->port(), 5u);
  EXPECT_EQ(reply->service->depth(), 8u);
  const auto opens = mgr().opens();
  ASSERT_EQ(opens.size(), 1u);
  EXPECT_EQ(opens[0].name(), "echo");
  EXPECT_EQ(opens[0].requester().uid(), 1000u);
  EXPECT_EQ(opens[0].requester().groups_size(), 2);
}

TEST_F(AgentRpcTest, OpenDeniedAndOutOfRangeAnswers) {
  std::atomic<int> calls{0};
  mgr().OnOpenService([&](const auto&, lite::v1::OpenServiceResponse* resp) {
    if (calls++ == 0) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "mode 0700 denies uid 1000 x");
    }
    // A manager answering a port lite.ko cannot take.
    resp->mutable_service()->set_service_id(9);
    resp->mutable_service()->set_node_id(2);
    resp->mutable_service()->set_port(20000);
    resp->mutable_service()->set_depth(8);
    return grpc::Status::OK;
  });
  Connect();
  uint64_t id = module_.InjectUpcall(Creds(), RpcOpenUpcall{.name = "echo"});
  absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kPermissionDenied);
  id = module_.InjectUpcall(Creds(), RpcOpenUpcall{.name = "echo"});
  reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(reply->service.has_value());
}

TEST_F(AgentRpcTest, BindHandsTheReplySlotsOverAndInstallsTheRing) {
  Connect();
  const uint64_t svc = (uint64_t{2} << 32) | 7;
  const uint64_t id =
      module_.InjectUpcall(Creds(), RpcBindUpcall{.service_id = svc,
                                                  .reply_address = 0xab000,
                                                  .reply_key = 0x31,
                                                  .reply_slot_bytes = 128});
  absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok());
  ASSERT_TRUE(reply->status.ok()) << reply->status;
  const auto binds = mgr().binds();
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].service_id(), svc);
  EXPECT_EQ(binds[0].reply_address(), 0xab000u);
  EXPECT_EQ(binds[0].reply_key(), 0x31u);
  EXPECT_EQ(binds[0].reply_slot_bytes(), 128u);
  std::optional<lite::v1::BoundServiceRing> ring = module_.BoundRing(svc);
  ASSERT_TRUE(ring.has_value());
  EXPECT_EQ(ring->ring_address(), 0x5000u);
  EXPECT_EQ(ring->ring_key(), 0x66u);
}

TEST_F(AgentRpcTest, BindWithEveryRingTakenIsEusers) {
  mgr().OnBindService([](const auto&, auto*) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "all 2 rings are taken");
  });
  Connect();
  const uint64_t id = module_.InjectUpcall(
      Creds(), RpcBindUpcall{.service_id = 9, .reply_slot_bytes = 64});
  absl::StatusOr<UpcallReply> reply = module_.WaitForReply(id, kWait);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(reply->error_errno, EUSERS);
  EXPECT_FALSE(module_.BoundRing(9).has_value());
}

TEST_F(AgentRpcTest, UnregisterIsRetriedWhileTheManagerIsUnavailable) {
  std::atomic<int> calls{0};
  mgr().OnUnregisterService([&](const auto&, auto*) {
    if (calls++ < 2) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "recovering");
    }
    return grpc::Status::OK;
  });
  Connect();
  const uint64_t svc = Register();
  module_.InjectUpcall(Creds(), RpcUnregisterUpcall{.service_id = svc});
  ASSERT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.services_unregistered") == 1;
  }));
  const auto unregs = mgr().service_unregisters();
  ASSERT_EQ(unregs.size(), 3u);
  for (const auto& u : unregs) EXPECT_EQ(u.service_id(), svc);
  // lite.ko dropped it itself; nothing waits for an answer.
  EXPECT_TRUE(module_.ListServices()->empty());
}

TEST_F(AgentRpcTest, UnregisterNotFoundIsNotRetried) {
  mgr().OnUnregisterService([](const auto&, auto*) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such service");
  });
  Connect();
  module_.InjectUpcall(Creds(), RpcUnregisterUpcall{.service_id = kNode1 | 9});
  ASSERT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.services_unregister_refused") == 1;
  }));
  absl::SleepFor(absl::Milliseconds(100));  // several retry periods
  EXPECT_EQ(mgr().service_unregisters().size(), 1u);
}

TEST_F(AgentRpcTest, BindServiceRingRequestsReachLiteKoWithItsRefusals) {
  Connect();
  const uint64_t svc = Register(3);
  lite::v1::BindServiceRing b;
  b.set_service_id(svc);
  b.set_port(3);
  b.set_client_node_id(1);  // this node itself (loopback)
  lite::v1::NodeIdentity self = module_.GetIdentity()->value();
  b.set_client_incarnation(self.incarnation());
  b.set_reply_address(0xcc000);
  b.set_reply_key(0x12);
  b.set_reply_slot_bytes(256);
  lite::v1::NodeRequestResult r = Request(1, b);
  ASSERT_EQ(r.status_code(), 0) << r.status_message();
  ASSERT_TRUE(r.has_bound_service_ring());
  EXPECT_EQ(r.bound_service_ring().depth(), 16u);
  EXPECT_EQ(r.bound_service_ring().slot_bytes(), 128u);  // 100 rounded up
  EXPECT_EQ(module_.RingClients(svc), std::vector<uint32_t>{1});

  // Each refusal with its code.
  lite::v1::BindServiceRing bad = b;
  bad.set_port(4);  // nothing there: ENOENT
  EXPECT_EQ(Request(2, bad).status_code(),
            static_cast<int>(absl::StatusCode::kNotFound));
  bad = b;
  bad.set_service_id(kNode1 | 999);  // not the port's: ESTALE
  EXPECT_EQ(Request(3, bad).status_code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  bad = b;
  bad.set_client_node_id(5);  // not a peer: EHOSTDOWN
  bad.set_client_incarnation(1);
  EXPECT_EQ(Request(4, bad).status_code(),
            static_cast<int>(absl::StatusCode::kUnavailable));
  bad = b;
  bad.set_service_id((uint64_t{7} << 32) | 1);  // another node's service
  lite::v1::NodeRequestResult foreign = Request(5, bad);
  EXPECT_EQ(foreign.status_code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  bad = b;
  bad.set_reply_slot_bytes(100);  // not a multiple of 64
  EXPECT_EQ(Request(6, bad).status_code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(module_.RingClients(svc), std::vector<uint32_t>{1});
}

TEST_F(AgentRpcTest, BindServiceRingFullIsResourceExhausted) {
  Connect();
  const uint64_t svc = Register(3);  // max_clients 2
  lite::v1::NodeIdentity self = module_.GetIdentity()->value();
  ASSERT_TRUE(module_
                  .AddPeer(Peer{.node_id = 2,
                                .incarnation = 1,
                                .rdma_address = "127.0.0.2:7471",
                                .name = "",
                                .secret = ""})
                  .ok());
  ASSERT_TRUE(module_
                  .AddPeer(Peer{.node_id = 3,
                                .incarnation = 1,
                                .rdma_address = "127.0.0.3:7471",
                                .name = "",
                                .secret = ""})
                  .ok());
  lite::v1::BindServiceRing b;
  b.set_service_id(svc);
  b.set_port(3);
  b.set_reply_slot_bytes(64);
  b.set_client_node_id(1);
  b.set_client_incarnation(self.incarnation());
  EXPECT_EQ(Request(1, b).status_code(), 0);
  b.set_client_node_id(2);
  b.set_client_incarnation(1);
  EXPECT_EQ(Request(2, b).status_code(), 0);
  b.set_client_node_id(3);
  EXPECT_EQ(Request(3, b).status_code(),
            static_cast<int>(absl::StatusCode::kResourceExhausted));
  // A client with a ring gets a fresh one, not a refusal.
  b.set_client_node_id(2);
  EXPECT_EQ(Request(4, b).status_code(), 0);
}

bool HeartbeatWithStats(const FakeManager& m, uint64_t svc,
                        uint64_t served) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (const auto& msg : m.received_locked()) {
    if (!msg.has_heartbeat()) continue;
    for (const auto& st : msg.heartbeat().service_stats()) {
      if (st.service_id() == svc && st.served() == served) return true;
    }
  }
  return false;
}

TEST_F(AgentRpcTest, HeartbeatsCarryServiceStatsOnlyWhenSomethingIsServed) {
  Connect();
  // 20 ms heartbeats: 30 of them and not one with stats (nothing served).
  ASSERT_TRUE(mgr().WaitFor(
      [](const FakeManager& m) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return m.heartbeats_locked() >= 30;
      },
      kWait));
  for (const auto& msg : mgr().received()) {
    if (msg.has_heartbeat()) {
      EXPECT_EQ(msg.heartbeat().service_stats_size(), 0);
    }
  }
  const uint64_t svc = Register();
  ASSERT_TRUE(module_.SetServiceStats(svc, 1, 3, 12345));
  ASSERT_TRUE(mgr().WaitFor(
      [&](const FakeManager& m) { return HeartbeatWithStats(m, svc, 12345); },
      kWait));
  // Not on every heartbeat: at most one in five carries them.
  int with = 0;
  int all = 0;
  for (const auto& msg : mgr().received()) {
    if (!msg.has_heartbeat()) continue;
    ++all;
    if (msg.heartbeat().service_stats_size() > 0) ++with;
  }
  EXPECT_LE(with * 5, all + 5);
}

TEST_F(AgentRpcTest, ServicesLiteKoStillServesAreRegisteredAgainOnJoin) {
  ServedService kept;
  kept.service.set_service_id(kNode1 | 3);
  kept.service.set_name("kept");
  kept.service.set_port(3);
  kept.service.set_owner_uid(1000);
  kept.service.set_owner_gid(100);
  kept.service.set_owner_pid(77);
  kept.service.set_mode(0711);
  kept.service.set_max_request_bytes(64);
  kept.service.set_max_reply_bytes(64);
  kept.service.set_depth(4);
  kept.service.set_max_clients(1);
  module_.AddServedService(kept);
  ServedService closing = kept;  // being unregistered: its upcall tells
  closing.service.set_service_id(kNode1 | 4);
  closing.service.set_port(4);
  closing.closing = true;
  module_.AddServedService(closing);
  ServedService foreign = kept;  // an old node id: no manager takes it
  foreign.service.set_service_id((uint64_t{9} << 32) | 1);
  foreign.service.set_port(5);
  module_.AddServedService(foreign);
  ServedService refused = kept;
  refused.service.set_service_id(kNode1 | 6);
  refused.service.set_name("taken");
  refused.service.set_port(6);
  module_.AddServedService(refused);
  mgr().OnRegisterService([](const lite::v1::RegisterServiceRequest& req,
                             lite::v1::RegisterServiceResponse* resp) {
    if (req.name() == "taken") {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "taken");
    }
    resp->mutable_service()->set_service_id(req.restore_service_id());
    return grpc::Status::OK;
  });
  Connect();
  const auto regs = mgr().service_registers();
  ASSERT_EQ(regs.size(), 2u);
  const lite::v1::RegisterServiceRequest& r = regs[0];
  EXPECT_EQ(r.restore_service_id(), kNode1 | 3);
  EXPECT_EQ(r.name(), "kept");
  EXPECT_EQ(r.port(), 3u);
  EXPECT_EQ(r.owner().uid(), 1000u);
  EXPECT_EQ(r.owner().pid(), 77u);
  EXPECT_EQ(r.mode(), 0711u);
  EXPECT_EQ(r.depth(), 4u);
  EXPECT_EQ(r.max_clients(), 1u);
  EXPECT_EQ(regs[1].restore_service_id(), kNode1 | 6);
  EXPECT_EQ(CounterValue(*agent_, "agent.services_reregistered"), 1u);
  EXPECT_EQ(CounterValue(*agent_, "agent.services_not_restored"), 2u);
  // Refused ones stay served by lite.ko.
  EXPECT_EQ(module_.ListServices()->size(), 4u);
}

}  // namespace
}  // namespace lite::agent
