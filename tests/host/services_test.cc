// Host integration of RPC services' control path (issue #11): the real
// litemgr and liteagent_fake agents whose fake applications register and
// open services (--fake_services, --fake_opens). A registration reaches the
// manager with the kernel-taken owner and lite.ko's port; an open is
// checked by the x bit and answers where to call; a manager killed and
// restarted gets the services back under the same ids from the agents'
// restore; a node that leaves takes its services with it.
#include <signal.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

constexpr int64_t kRecoveryMs = 3000;

class ServicesTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }
  // The manager's services by name; empty on error.
  std::map<std::string, lite::v1::Service> Services() {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
    lite::v1::ListServicesRequest req;
    lite::v1::ListServicesResponse resp;
    std::map<std::string, lite::v1::Service> out;
    if (!cluster_.operator_stub()->ListServices(&ctx, req, &resp).ok()) {
      return out;
    }
    for (const lite::v1::Service& s : resp.services()) out[s.name()] = s;
    return out;
  }
  Cluster cluster_;
};

TEST_F(ServicesTest, RegisterOpenRestoreAndEndWithTheNode) {
  // The same cluster key across the restart below: n1 keeps its node id,
  // and with it the service ids lite.ko holds.
  const Cluster::ManagerConfig config{.lease_ms = 1000,
                                      .recovery_window_ms = kRecoveryMs,
                                      .pair_key_file = WritePairKeyFile()};
  ASSERT_TRUE(cluster_.StartManager(config).ok());
  ASSERT_TRUE(
      cluster_.StartAgent("n1", 1, {.fake_services = "echo=0711,nox=0600"})
          .ok());
  auto n1 = cluster_.WaitConnected("n1");
  ASSERT_TRUE(n1.ok()) << n1.status();
  std::map<std::string, lite::v1::Service> before;
  ASSERT_TRUE(Eventually(
      [&] {
        before = Services();
        return before.size() == 2;
      },
      kStartTimeout));
  const lite::v1::Service& echo = before["echo"];
  EXPECT_EQ(echo.node_id(), n1->node_id());
  EXPECT_EQ(echo.service_id() >> 32, n1->node_id());
  EXPECT_EQ(echo.port(), 1u);  // the fake module's lowest free port
  EXPECT_EQ(echo.mode(), 0711u);
  EXPECT_EQ(echo.owner_uid(), static_cast<uint32_t>(getuid()));
  EXPECT_EQ(echo.owner_gid(), static_cast<uint32_t>(getgid()));
  EXPECT_EQ(echo.max_request_bytes(), 4096u);
  EXPECT_EQ(echo.depth(), 16u);
  EXPECT_EQ(echo.max_clients(), 4u);
  EXPECT_EQ(before["nox"].port(), 2u);

  // n2's applications open them, as the same uid: echo's owner class has
  // x, nox's has none (no root override), and "missing" does not exist.
  ASSERT_TRUE(
      cluster_.StartAgent("n2", 2, {.fake_opens = "echo,nox,missing"}).ok());
  const std::string opened =
      absl::StrFormat("open service 'echo': service %#x on node %u port 1",
                      echo.service_id(), n1->node_id());
  std::string log;
  ASSERT_TRUE(Eventually(
      [&] {
        log = ReadFile(cluster_.agent("n2")->stderr_path());
        return absl::StrContains(log, opened) &&
               absl::StrContains(
                   log, "open service 'nox' failed: PERMISSION_DENIED") &&
               absl::StrContains(log,
                                 "open service 'missing' failed: NOT_FOUND");
      },
      kStartTimeout))
      << log;

  // kill -9 the manager and restart it on the same address: n1's agent
  // registers both again under the ids lite.ko keeps.
  const int port = cluster_.manager_port();
  cluster_.manager()->Signal(SIGKILL);
  ASSERT_TRUE(cluster_.manager()->Wait(absl::Seconds(10)).has_value());
  cluster_.DropManager();
  ASSERT_TRUE(cluster_.StartManager(config, port).ok());
  std::map<std::string, lite::v1::Service> after;
  ASSERT_TRUE(Eventually(
      [&] {
        after = Services();
        return after.size() == 2;
      },
      absl::Seconds(30), absl::Milliseconds(100)));
  for (const auto& [name, s] : before) {
    EXPECT_EQ(after[name].service_id(), s.service_id()) << name;
    EXPECT_EQ(after[name].port(), s.port()) << name;
    EXPECT_EQ(after[name].mode(), s.mode()) << name;
    EXPECT_EQ(after[name].owner_uid(), s.owner_uid()) << name;
  }
  // Still there once the recovery window closed (restored, not leftovers).
  absl::SleepFor(absl::Milliseconds(kRecoveryMs + 500));
  EXPECT_EQ(Services().size(), 2u);

  // n1 leaves (SIGTERM): its services end with it.
  ASSERT_EQ(cluster_.agent("n1")->Stop(), 0);
  cluster_.DropAgent("n1");
  ASSERT_TRUE(Eventually([&] { return Services().empty(); }, kStartTimeout));
}

}  // namespace
}  // namespace lite::hosttest
