// Host integration: the Prometheus endpoints of a running litemgr and two
// liteagents (fake module), scraped over HTTP as Prometheus would, after
// real work: joins, an LMR registered, a grant, failing calls, the fenced
// free of the LMR, and a node whose lease runs out.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <iostream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/metrics/scrape.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using metrics::Sample;
using metrics::Scrape;

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        cluster_.StartManager({.lease_ms = 1000, .recovery_window_ms = 0})
            .ok());
    ASSERT_TRUE(cluster_.StartAgent("n1", 1, {.fake_lmrs = "buf1=1M"}).ok());
    ASSERT_TRUE(cluster_.StartAgent("n2", 2, {}).ok());
    auto n1 = cluster_.WaitConnected("n1");
    auto n2 = cluster_.WaitConnected("n2");
    ASSERT_TRUE(n1.ok() && n2.ok());
    n1_.set_node_id(n1->node_id());
    n1_.set_incarnation(n1->incarnation());
    n2_.set_node_id(n2->node_id());
    n2_.set_incarnation(n2->incarnation());
    ASSERT_TRUE(Eventually(
        [&] {
          auto lmrs = cluster_.Lmrs();
          return lmrs.ok() && lmrs->size() == 1;
        },
        kStartTimeout));
    owner_.set_uid(cluster_.Lmrs()->at(0).owner_uid());
    owner_.set_gid(cluster_.Lmrs()->at(0).owner_gid());
    owner_.set_pid(4242);
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  std::string ScrapeManager() {
    absl::StatusOr<std::string> text = Scrape(cluster_.manager_metrics_port());
    EXPECT_TRUE(text.ok()) << text.status();
    return text.value_or("");
  }
  std::string ScrapeAgent(const std::string& name) {
    absl::StatusOr<std::string> text =
        Scrape(cluster_.agent_metrics_port(name));
    EXPECT_TRUE(text.ok()) << text.status();
    return text.value_or("");
  }
  // Until `series` has `value` in a scrape of `port`'s endpoint (a server
  // counts a call once it has sent its status, after the client has it;
  // gauges follow events the agents deliver).
  bool Reaches(int port, const std::string& series, double value) {
    std::optional<double> last;
    const bool ok = Eventually(
        [&] {
          absl::StatusOr<std::string> text = Scrape(port);
          last = text.ok() ? Sample(*text, series) : std::nullopt;
          return last == value;
        },
        absl::Seconds(20), absl::Milliseconds(100));
    if (!ok) {
      ADD_FAILURE() << series << " is "
                    << (last.has_value() ? absl::StrCat(*last) : "absent")
                    << ", not " << value;
    }
    return ok;
  }

  grpc::Status FreeLmr(const std::string& name) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::FreeLmrRequest req;
    *req.mutable_caller() = n1_;
    *req.mutable_requester() = owner_;
    req.set_name(name);
    lite::v1::FreeLmrResponse resp;
    return cluster_.manager_stub_as("n1")->FreeLmr(&ctx, req, &resp);
  }

  Cluster cluster_;
  lite::v1::NodeCaller n1_;
  lite::v1::NodeCaller n2_;
  lite::v1::Credentials owner_;
};

constexpr char kJoinOk[] =
    R"(lite_manager_rpc_calls_total{service="lite.v1.ClusterManager",method="Join",code="OK"})";

TEST_F(MetricsTest, TheEndpointsReportWhatTheClusterDid) {
  const int mgr = cluster_.manager_metrics_port();
  std::string m = ScrapeManager();
  EXPECT_EQ(Sample(m, R"(lite_manager_members{state="alive"})"), 2);
  EXPECT_EQ(Sample(m, R"(lite_manager_members{state="failed"})"), 0);
  EXPECT_EQ(Sample(m, "lite_manager_sessions_open"), 2);
  EXPECT_EQ(Sample(m, R"(lite_manager_lmrs{state="live"})"), 1);
  EXPECT_EQ(Sample(m, R"(lite_manager_lmr_bytes{state="live"})"), 1 << 20);
  EXPECT_EQ(Sample(m, "lite_manager_joins_total"), 2);
  EXPECT_EQ(Sample(m, kJoinOk), 2);
  EXPECT_EQ(
      Sample(
          m,
          R"(lite_manager_rpc_calls_total{service="lite.v1.ClusterManager",method="RegisterLmr",code="OK"})"),
      1);
  EXPECT_EQ(Sample(m, "lite_manager_grants"), 0);

  // A failing call: counted with its code, next to the OK series.
  ASSERT_EQ(FreeLmr("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  Reaches(
      mgr,
      R"(lite_manager_rpc_calls_total{service="lite.v1.ClusterManager",method="FreeLmr",code="NOT_FOUND"})",
      1);
  m = ScrapeManager();
  EXPECT_EQ(
      Sample(
          m,
          R"(lite_manager_rpc_calls_total{service="lite.v1.ClusterManager",method="FreeLmr",code="OK"})"),
      0);
  // litectl's call on the operator service.
  CtlResult nodes = cluster_.Litectl({"nodes"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  Reaches(
      mgr,
      R"(lite_manager_rpc_calls_total{service="lite.v1.ClusterOperator",method="ListNodes",code="OK"})",
      1);

  // n2 maps buf1: a grant.
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::MapLmrRequest req;
    *req.mutable_caller() = n2_;
    *req.mutable_requester() = owner_;
    req.set_name("buf1");
    req.mutable_access()->set_read(true);
    lite::v1::MapLmrResponse resp;
    ASSERT_TRUE(cluster_.manager_stub_as("n2")->MapLmr(&ctx, req, &resp).ok());
  }
  m = ScrapeManager();
  EXPECT_EQ(Sample(m, "lite_manager_grants"), 1);
  EXPECT_EQ(Sample(m, "lite_manager_grants_issued_total"), 1);

  // The agents: n1 registered buf1 for its application (an upcall), hosts
  // it in its (fake) module and knows n2 as a peer.
  const int n1 = cluster_.agent_metrics_port("n1");
  std::string a = ScrapeAgent("n1");
  EXPECT_EQ(
      Sample(a, R"(lite_agent_manager_connection_state{state="connected"})"),
      1);
  EXPECT_EQ(Sample(a, R"(lite_agent_joins_total{result="ok"})"), 1);
  EXPECT_EQ(
      Sample(a,
             R"(lite_agent_upcalls_answered_total{kind="register",code="OK"})"),
      1);
  EXPECT_EQ(
      Sample(a, R"(lite_agent_upcall_duration_seconds_count{kind="register"})"),
      1);
  EXPECT_EQ(Sample(a, "lite_kernel_counters_up"), 1);
  EXPECT_EQ(Sample(a, "lite_kernel_lmrs"), 1);
  EXPECT_EQ(Sample(a, "lite_kernel_lmr_bytes"), 1 << 20);
  EXPECT_EQ(Sample(a, "lite_kernel_peers"), 1);
  // The harness's GetStatus calls were counted; a node certificate may not
  // call an agent (operators only): PERMISSION_DENIED, counted as such.
  EXPECT_GE(
      Sample(
          a,
          R"(lite_agent_rpc_calls_total{service="lite.v1.NodeAgent",method="GetStatus",code="OK"})")
          .value_or(0),
      1);
  {
    absl::StatusOr<TlsFiles> n2_files = cluster_.Certificate("node", "n2");
    ASSERT_TRUE(n2_files.ok());
    auto stub = lite::v1::NodeAgent::NewStub(DialChannel(
        cluster_.agent_port("n1"), ClientCredentials(*n2_files), "n1"));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::GetStatusResponse resp;
    ASSERT_EQ(stub->GetStatus(&ctx, {}, &resp).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  Reaches(
      n1,
      R"(lite_agent_rpc_calls_total{service="lite.v1.NodeAgent",method="GetStatus",code="PERMISSION_DENIED"})",
      1);

  // The fenced free: n2 acknowledges the revoked grant, then n1 gives the
  // memory back; the LMR goes 1 -> 0 on both sides.
  ASSERT_TRUE(FreeLmr("buf1").ok());
  Reaches(mgr, R"(lite_manager_lmrs{state="live"})", 0);
  Reaches(mgr, R"(lite_manager_lmrs{state="releasing"})", 0);
  Reaches(mgr, "lite_manager_lmr_releases_total", 1);
  m = ScrapeManager();
  EXPECT_EQ(Sample(m, R"(lite_manager_lmr_bytes{state="live"})"), 0);
  EXPECT_EQ(Sample(m, "lite_manager_grants"), 0);
  EXPECT_EQ(Sample(m, R"(lite_manager_revoke_acks_total{how="received"})"), 1);
  EXPECT_EQ(
      Sample(
          m,
          R"(lite_manager_node_requests_total{kind="release_lmr_memory",outcome="ok"})"),
      1);
  EXPECT_EQ(
      Sample(
          m,
          R"(lite_manager_node_request_duration_seconds_count{kind="release_lmr_memory"})"),
      1);
  EXPECT_EQ(
      Sample(
          m,
          R"(lite_manager_node_requests_in_flight{kind="release_lmr_memory"})"),
      0);
  Reaches(n1, "lite_kernel_lmrs", 0);

  // n2 stops (SIGSTOP: no heartbeat, no close): its lease runs out.
  cluster_.agent("n2")->Signal(SIGSTOP);
  Reaches(mgr, R"(lite_manager_member_failures_total{cause="lease_expired"})",
          1);
  m = ScrapeManager();
  EXPECT_EQ(Sample(m, R"(lite_manager_members{state="alive"})"), 1);
  EXPECT_EQ(Sample(m, R"(lite_manager_members{state="failed"})"), 1);
  EXPECT_EQ(Sample(m, "lite_manager_sessions_open"), 1);
  EXPECT_EQ(
      Sample(m,
             R"(lite_manager_member_failures_total{cause="session_closed"})"),
      0);
  // n1 applied the failure and removed its peer.
  Reaches(n1, "lite_kernel_peers", 0);
  Reaches(n1, R"(lite_agent_events_applied_total{kind="member_failed"})", 1);
  // Back: n2 finds its incarnation over and joins again.
  cluster_.agent("n2")->Signal(SIGCONT);
  Reaches(mgr, R"(lite_manager_members{state="alive"})", 2);
  Reaches(mgr, kJoinOk, 3);
  Reaches(cluster_.agent_metrics_port("n2"),
          R"(lite_agent_joins_total{result="ok"})", 2);
}

// What a scrape shows besides LITE's own: prometheus-cpp's exposer metrics,
// and every family typed and described.
TEST_F(MetricsTest, EveryFamilyHasHelpAndType) {
  for (const std::string& text : {ScrapeManager(), ScrapeAgent("n1")}) {
    int families = 0;
    size_t at = 0;
    while ((at = text.find("# TYPE lite_", at)) != std::string::npos) {
      const size_t end = text.find(' ', at + 7);
      const std::string name = text.substr(at + 7, end - at - 7);
      EXPECT_NE(text.find(absl::StrCat("# HELP ", name, " ")),
                std::string::npos)
          << name;
      ++families;
      ++at;
    }
    EXPECT_GT(families, 20);
  }
}

}  // namespace
}  // namespace lite::hosttest
