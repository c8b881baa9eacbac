// The agent's side of the manager's SUSPECT probes (issue #36): a
// probe_peer request reaches the module's ProbePeer off the session thread
// and its answer comes back on the session with the request id; the fake
// module's unreachable peers answer UNAVAILABLE, unknown ones NOT_FOUND;
// malformed requests are refused INVALID_ARGUMENT without a probe; a probe
// that takes longer than the session's ack timeout neither blocks the
// session's requests and heartbeats nor ends the session; more than
// max_in_flight at once is RESOURCE_EXHAUSTED at once; an answer whose
// session ended is dropped, never written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/fake_module.h"
#include "agent/peer_prober.h"
#include "agent/testing/fake_manager.h"
#include "agent/testing/test_agent.h"

namespace lite::agent {
namespace {

using testing::FakeManager;
using testing::FakeManagerServer;

constexpr absl::Duration kWait = absl::Seconds(10);
constexpr int kUnavailable = static_cast<int>(absl::StatusCode::kUnavailable);
constexpr int kNotFound = static_cast<int>(absl::StatusCode::kNotFound);
constexpr int kInvalid = static_cast<int>(absl::StatusCode::kInvalidArgument);

Peer PeerNode(uint32_t id, uint64_t incarnation, std::string name = "") {
  return Peer{.node_id = id,
              .incarnation = incarnation,
              .rdma_address = "127.0.0." + std::to_string(id) + ":7471",
              .name = std::move(name),
              .secret = ""};
}

uint64_t CounterValue(const Agent& agent, const std::string& name) {
  for (const auto& c : agent.CounterSnapshot()) {
    if (c.name() == name) return c.value();
  }
  return 0;
}

bool Eventually(const std::function<bool()>& pred) {
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return pred();
}

class AgentProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The default limit: 4 probes at once.
    agent_ = testing::MakeTestAgent(
        testing::TestAgentOptions(server_.address()), &module_);
    agent_->Start();
    ASSERT_TRUE(mgr().WaitForSessions(1, kWait));
    ASSERT_TRUE(Eventually([&] { return module_.GetIdentity()->has_value(); }));
    ASSERT_TRUE(module_.AddPeer(PeerNode(2, 5, "n2")).ok());
    ASSERT_TRUE(module_.AddPeer(PeerNode(3, 7, "n3")).ok());
  }
  FakeManager& mgr() { return server_.manager(); }

  void PushProbe(uint64_t request_id, uint32_t node_id, uint64_t incarnation) {
    lite::v1::ManagerMessage msg;
    msg.mutable_request()->set_request_id(request_id);
    msg.mutable_request()->set_deadline_ms(10000);
    msg.mutable_request()->mutable_probe_peer()->set_node_id(node_id);
    msg.mutable_request()->mutable_probe_peer()->set_incarnation(incarnation);
    mgr().Push(msg);
  }
  // The result of request `request_id` once it came.
  std::optional<lite::v1::NodeRequestResult> Result(uint64_t request_id) {
    for (const auto& m : mgr().received()) {
      if (m.has_result() && m.result().request_id() == request_id) {
        return m.result();
      }
    }
    return std::nullopt;
  }
  lite::v1::NodeRequestResult WaitResult(uint64_t request_id) {
    std::optional<lite::v1::NodeRequestResult> r;
    EXPECT_TRUE(Eventually([&] {
      return (r = Result(request_id)).has_value();
    })) << "no answer to request "
        << request_id;
    return r.value_or(lite::v1::NodeRequestResult());
  }
  lite::v1::NodeRequestResult Probe(uint64_t request_id, uint32_t node_id,
                                    uint64_t incarnation) {
    PushProbe(request_id, node_id, incarnation);
    return WaitResult(request_id);
  }
  int ProbeCalls() {
    std::vector<std::string> calls = module_.Calls();
    return static_cast<int>(std::count_if(
        calls.begin(), calls.end(),
        [](const std::string& c) { return c.rfind("ProbePeer", 0) == 0; }));
  }

  FakeManagerServer server_;
  FakeModule module_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentProbeTest, AcknowledgedProbeAnswersWithTheRequestIdAndIncarnation) {
  lite::v1::NodeRequestResult r = Probe(41, 2, 5);
  EXPECT_EQ(r.request_id(), 41u);
  ASSERT_EQ(r.status_code(), 0) << r.status_message();
  ASSERT_TRUE(r.has_probed_peer());
  EXPECT_EQ(r.probed_peer().incarnation(), 5u);
  std::vector<std::string> calls = module_.Calls();
  EXPECT_NE(std::find(calls.begin(), calls.end(), "ProbePeer 2 5"),
            calls.end());
  EXPECT_EQ(CounterValue(*agent_, "agent.requests.probe_peer"), 1u);
  EXPECT_EQ(CounterValue(*agent_, "agent.peer_probes.acknowledged"), 1u);
}

TEST_F(AgentProbeTest, UnreachableUnknownAndOtherIncarnation) {
  module_.SetPeerUnreachable(2, true);
  lite::v1::NodeRequestResult down = Probe(1, 2, 5);
  EXPECT_EQ(down.status_code(), kUnavailable);
  EXPECT_NE(down.status_message().find("node 2 did not acknowledge"),
            std::string::npos)
      << down.status_message();
  EXPECT_FALSE(down.has_probed_peer());

  lite::v1::NodeRequestResult unknown = Probe(2, 9, 1);
  EXPECT_EQ(unknown.status_code(), kNotFound) << unknown.status_message();

  lite::v1::NodeRequestResult other = Probe(3, 3, 6);
  EXPECT_EQ(other.status_code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_NE(other.status_message().find("incarnation 7"), std::string::npos);
  EXPECT_NE(other.status_message().find("incarnation 6"), std::string::npos);

  module_.SetPeerUnreachable(2, false);
  EXPECT_EQ(Probe(4, 2, 5).status_code(), 0);
  EXPECT_EQ(CounterValue(*agent_, "agent.peer_probes.unreachable"), 1u);
  EXPECT_EQ(CounterValue(*agent_, "agent.peer_probes.other"), 2u);
}

TEST_F(AgentProbeTest, MalformedRequestsAreRefusedWithoutAProbe) {
  EXPECT_EQ(Probe(1, 0, 5).status_code(), kInvalid);
  // Node 1 is this node (the fake manager's default).
  lite::v1::NodeRequestResult self = Probe(2, 1, 1);
  EXPECT_EQ(self.status_code(), kInvalid);
  EXPECT_NE(self.status_message().find("itself"), std::string::npos);
  EXPECT_EQ(Probe(3, 2, 0).status_code(), kInvalid);
  EXPECT_EQ(ProbeCalls(), 0);
}

// Issue #32 point 3: a module call longer than the ack timeout (2 leases,
// 2 s here) on the session thread made the agent end its own session.
TEST_F(AgentProbeTest, SlowProbeBlocksNeitherRequestsNorHeartbeats) {
  module_.HoldProbes();
  PushProbe(1, 2, 5);
  ASSERT_TRUE(module_.AwaitHeldProbes(1, kWait));
  int beats = 0;
  ASSERT_TRUE(mgr().WaitFor(
      [&](const FakeManager& m) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        beats = m.heartbeats_locked();
        return true;
      },
      kWait));
  // Another request on the same session is answered meanwhile.
  EXPECT_EQ(Probe(2, 0, 5).status_code(), kInvalid);
  absl::SleepFor(absl::Milliseconds(2500));  // past the ack timeout
  EXPECT_FALSE(Result(1).has_value());
  EXPECT_TRUE(mgr().WaitFor(
      [&](const FakeManager& m) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return m.heartbeats_locked() > beats + 10;
      },
      kWait));
  module_.ReleaseProbes();
  lite::v1::NodeRequestResult r = WaitResult(1);
  EXPECT_EQ(r.status_code(), 0) << r.status_message();
  EXPECT_EQ(r.probed_peer().incarnation(), 5u);
  EXPECT_GE(r.probed_peer().round_trip_ns(), 2'500'000'000u);
  EXPECT_EQ(mgr().sessions_opened(), 1);
}

TEST_F(AgentProbeTest, MoreThanTheLimitAtOnceIsResourceExhaustedAtOnce) {
  module_.HoldProbes();
  PushProbe(1, 2, 5);
  PushProbe(2, 3, 7);
  PushProbe(5, 2, 5);
  PushProbe(6, 3, 7);
  ASSERT_TRUE(module_.AwaitHeldProbes(4, kWait));
  lite::v1::NodeRequestResult refused = Probe(3, 2, 5);
  EXPECT_EQ(refused.status_code(),
            static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_NE(refused.status_message().find("node 2 not probed"),
            std::string::npos)
      << refused.status_message();
  EXPECT_EQ(ProbeCalls(), 4);
  module_.ReleaseProbes();
  for (uint64_t id : {1, 2, 5, 6}) EXPECT_EQ(WaitResult(id).status_code(), 0);
  // Room again.
  EXPECT_EQ(Probe(4, 3, 7).status_code(), 0);
  EXPECT_EQ(CounterValue(*agent_, "agent.peer_probes.refused"), 1u);
}

TEST_F(AgentProbeTest, AnswerOfAnEndedSessionIsDropped) {
  module_.HoldProbes();
  PushProbe(1, 2, 5);
  ASSERT_TRUE(module_.AwaitHeldProbes(1, kWait));
  mgr().EndSession();
  ASSERT_TRUE(mgr().WaitForSessions(2, kWait));
  module_.ReleaseProbes();
  ASSERT_TRUE(Eventually(
      [&] { return CounterValue(*agent_, "agent.peer_probes.dropped") == 1; }));
  // The new session still works, and never saw the old answer.
  EXPECT_EQ(Probe(2, 0, 1).status_code(), kInvalid);
  EXPECT_FALSE(Result(1).has_value());
}

TEST_F(AgentProbeTest, ShutdownDuringAProbe) {
  module_.HoldProbes();
  PushProbe(1, 2, 5);
  ASSERT_TRUE(module_.AwaitHeldProbes(1, kWait));
  agent_.reset();  // Close() wakes the held probe; its answer is dropped.
  EXPECT_FALSE(Result(1).has_value());
}

TEST(FakeModuleProbeTest, UnreachableFileByIdOrNameReadAtEveryProbe) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/unreachable";
  std::remove(path.c_str());
  FakeModule module(FakeModuleOptions{
      .node_name = "n1", .peers_file = "", .unreachable_file = path});
  lite::v1::NodeIdentity self;
  self.set_node_id(1);
  self.set_incarnation(1);
  ASSERT_TRUE(module.SetIdentity(self).ok());
  ASSERT_TRUE(module.AddPeer(PeerNode(2, 5, "n2")).ok());
  ASSERT_TRUE(module.AddPeer(PeerNode(3, 7, "n3")).ok());
  ASSERT_TRUE(module.AddPeer(PeerNode(4, 1)).ok());
  // No file: everyone acknowledges.
  EXPECT_TRUE(module.ProbePeer(2, 5).ok());
  {
    std::ofstream out(path);
    out << "# gone\nn3, 4  # by name and by id\n";
  }
  EXPECT_TRUE(module.ProbePeer(2, 5).ok());
  EXPECT_TRUE(absl::IsUnavailable(module.ProbePeer(3, 7).status()));
  EXPECT_TRUE(absl::IsUnavailable(module.ProbePeer(4, 1).status()));
  EXPECT_TRUE(absl::IsNotFound(module.ProbePeer(5, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(module.ProbePeer(2, 0).status()));
  std::remove(path.c_str());
  EXPECT_TRUE(module.ProbePeer(3, 7).ok());
}

TEST(PeerProberTest, RefusesBeforeStartAndAfterStop) {
  FakeModule module;
  PeerProber prober(PeerProberOptions{.max_in_flight = 1}, &module);
  auto ignore = [](const absl::StatusOr<lite::v1::ProbedPeer>&) {};
  EXPECT_TRUE(absl::IsUnavailable(prober.Submit(2, 1, ignore)));
  prober.Start();
  absl::Notification answered;
  absl::Status got;
  ASSERT_TRUE(prober
                  .Submit(2, 1,
                          [&](const absl::StatusOr<lite::v1::ProbedPeer>& a) {
                            got = a.status();
                            answered.Notify();
                          })
                  .ok());
  ASSERT_TRUE(answered.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(absl::IsNotFound(got)) << got;
  prober.Stop();
  EXPECT_TRUE(absl::IsUnavailable(prober.Submit(2, 1, ignore)));
  EXPECT_EQ(prober.InFlight(), 0);
}

}  // namespace
}  // namespace lite::agent
