// The agent's metrics against a scripted manager and the fake module:
// upcalls counted by kind and code and timed, the connection state, the
// module's counters, and a stuck module that makes lite_kernel_counters_up 0
// within the bound instead of hanging the scrape.
#include "agent/agent_metrics.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/fake_module.h"
#include "agent/testing/fake_manager.h"
#include "agent/testing/test_agent.h"
#include "common/metrics/sample_value.h"

namespace lite::agent {
namespace {

using prometheus::MetricFamily;
using testing::FakeManagerServer;

constexpr absl::Duration kWait = absl::Seconds(10);

using metrics::Labels;
using metrics::SampleValue;

bool HasPrefix(const std::vector<MetricFamily>& all, const std::string& p) {
  for (const MetricFamily& f : all) {
    if (f.name.rfind(p, 0) == 0) return true;
  }
  return false;
}

std::unique_ptr<Agent> MakeAgent(const std::string& address,
                                 FakeModule* module) {
  return testing::MakeTestAgent(testing::TestAgentOptions(address), module);
}

lite::v1::Credentials AppCreds() {
  lite::v1::Credentials c;
  c.set_uid(1000);
  c.set_gid(1000);
  c.set_pid(42);
  return c;
}

TEST(AgentMetrics, UpcallsTheConnectionAndTheModule) {
  FakeManagerServer server;
  server.manager().OnRegisterLmr([](const lite::v1::RegisterLmrRequest& req,
                                    lite::v1::RegisterLmrResponse*) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not yours");
  });
  FakeModule module;
  std::unique_ptr<Agent> agent = MakeAgent(server.address(), &module);
  AgentMetrics metrics(agent.get(), [&] { return module.GetCounters(); });
  std::vector<MetricFamily> m = metrics.Collect();
  EXPECT_EQ(SampleValue(m, "lite_agent_manager_connection_state",
                        {{"state", "joining"}}),
            1);
  EXPECT_EQ(SampleValue(m, "lite_agent_upcalls_answered_total",
                        {{"kind", "map"}, {"code", "OK"}}),
            0);

  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  for (const char* name : {"a", "b"}) {
    const uint64_t map =
        module.InjectUpcall(AppCreds(), MapUpcall{.name = name, .read = true});
    ASSERT_TRUE(module.WaitForReply(map, kWait).ok());
  }
  const uint64_t reg = module.InjectUpcall(
      AppCreds(),
      RegisterUpcall{.name = "buf", .size_bytes = 4096, .mode = 0600});
  absl::StatusOr<UpcallReply> denied = module.WaitForReply(reg, kWait);
  ASSERT_TRUE(denied.ok());
  ASSERT_EQ(denied->status.code(), absl::StatusCode::kPermissionDenied);

  // A map's answer is recorded once lite.ko took its grant, just after the
  // application saw it.
  const absl::Time deadline = absl::Now() + kWait;
  do {
    m = metrics.Collect();
  } while (SampleValue(m, "lite_agent_upcall_duration_seconds",
                       {{"kind", "map"}}) < 2 &&
           absl::Now() < deadline);
  EXPECT_EQ(SampleValue(m, "lite_agent_manager_connection_state",
                        {{"state", "connected"}}),
            1);
  EXPECT_EQ(SampleValue(m, "lite_agent_manager_connection_state",
                        {{"state", "joining"}}),
            0);
  EXPECT_EQ(SampleValue(m, "lite_agent_joins_total", {{"result", "ok"}}), 1);
  EXPECT_EQ(
      SampleValue(m, "lite_agent_upcalls_received_total", {{"kind", "map"}}),
      2);
  EXPECT_EQ(SampleValue(m, "lite_agent_upcalls_answered_total",
                        {{"kind", "map"}, {"code", "OK"}}),
            2);
  EXPECT_EQ(SampleValue(m, "lite_agent_upcalls_answered_total",
                        {{"kind", "register"}, {"code", "PERMISSION_DENIED"}}),
            1);
  EXPECT_EQ(
      SampleValue(m, "lite_agent_upcall_duration_seconds", {{"kind", "map"}}),
      2);
  EXPECT_EQ(SampleValue(m, "lite_agent_upcall_duration_seconds",
                        {{"kind", "register"}}),
            1);
  EXPECT_EQ(
      SampleValue(m, "lite_agent_upcall_duration_seconds", {{"kind", "free"}}),
      0);
  // The module's counters, read for this scrape: the two grants it holds.
  EXPECT_EQ(SampleValue(m, "lite_kernel_counters_up"), 1);
  EXPECT_EQ(SampleValue(m, "lite_kernel_grants"), 2);
  EXPECT_EQ(SampleValue(m, "lite_kernel_peers"), 0);
  agent->Shutdown();
}

TEST(AgentMetrics, AStuckModuleIsReportedNotWaitedFor) {
  FakeManagerServer server;
  FakeModule module;
  std::unique_ptr<Agent> agent = MakeAgent(server.address(), &module);
  absl::Notification release;
  std::atomic<bool> stuck{true};
  AgentMetrics metrics(
      agent.get(),
      [&]() -> absl::StatusOr<std::vector<lite::v1::Counter>> {
        if (stuck) release.WaitForNotification();
        return module.GetCounters();
      },
      absl::Milliseconds(300));
  const absl::Time start = absl::Now();
  std::vector<MetricFamily> m = metrics.Collect();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(SampleValue(m, "lite_kernel_counters_up"), 0);
  EXPECT_FALSE(HasPrefix(m, "lite_kernel_peers"));
  // Everything else is still there.
  EXPECT_EQ(SampleValue(m, "lite_agent_manager_connection_state",
                        {{"state", "joining"}}),
            1);
  stuck = false;
  release.Notify();
  m = metrics.Collect();
  EXPECT_EQ(SampleValue(m, "lite_kernel_counters_up"), 1);
  EXPECT_EQ(SampleValue(m, "lite_kernel_peers"), 0);
}

TEST(AgentMetrics, AFailingModuleIsReported) {
  FakeManagerServer server;
  FakeModule module;
  std::unique_ptr<Agent> agent = MakeAgent(server.address(), &module);
  AgentMetrics metrics(agent.get(),
                       []() -> absl::StatusOr<std::vector<lite::v1::Counter>> {
                         return absl::UnavailableError("lite.ko is not loaded");
                       });
  const std::vector<MetricFamily> m = metrics.Collect();
  EXPECT_EQ(SampleValue(m, "lite_kernel_counters_up"), 0);
  EXPECT_FALSE(HasPrefix(m, "lite_kernel_peers"));
}

}  // namespace
}  // namespace lite::agent
