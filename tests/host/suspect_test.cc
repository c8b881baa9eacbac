// Host integration: SUSPECT before failed (docs/controlplane.md, "When a node
// is failed: SUSPECT first"), litemgr and three liteagent_fake on loopback.
//  * An agent SIGSTOPped for 3 leases while its peers' fake kernels still
//    acknowledge it: the node is listed SUSPECT (MemberSuspected), a map
//    taken before stays, a new MapLmr into its LMR is UNAVAILABLE naming
//    SUSPECT, it is never failed; on SIGCONT it recovers (MemberRecovered,
//    same incarnation) and the map works again.
//  * The same pause with the node listed in the fakes' --fake_unreachable_file
//    (their probes answer UNAVAILABLE, as lite.ko's EHOSTDOWN): failed as
//    soon as every asked peer has answered, about a lease after the pause
//    began, not at the end of the probe round; cause LEASE_EXPIRED, the
//    reason says the peers found it unreachable.
// The fake's probes cannot tell a stopped agent from a live one (its "kernel"
// is that agent), which is what a SIGSTOPped liteagent on a real node looks
// like to its peers' lite.ko.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

constexpr int64_t kLeaseMs = 1000;
const absl::Duration kLease = absl::Milliseconds(kLeaseMs);
// Far above a 3-lease pause, so that case a cannot reach the bound.
constexpr int64_t kSuspectMaxMs = 20000;
// Generous for ASan on a loaded 2-core machine; every wait is on a
// condition, this is only how long before giving up.
constexpr absl::Duration kWait = absl::Seconds(30);

class SuspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unreachable_ = absl::StrCat(cluster_.dir(), "/unreachable");
    ASSERT_TRUE(cluster_
                    .StartManager({.lease_ms = kLeaseMs,
                                   .recovery_window_ms = 0,
                                   .suspect_max_ms = kSuspectMaxMs})
                    .ok());
    for (int i = 1; i <= 3; ++i) {
      const std::string name = absl::StrCat("n", i);
      absl::Status s =
          cluster_.StartAgent(name, i,
                              {.fake_lmrs = absl::StrCat("mem", i, "=1M"),
                               .fake_unreachable_file = unreachable_});
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_TRUE(cluster_.WaitConnected(name).ok()) << name;
    }
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(Eventually(
          [&] {
            auto peers = cluster_.AgentPeers(absl::StrCat("n", i));
            return peers.ok() && peers->size() == 2;
          },
          kWait))
          << "n" << i << " does not see two peers";
    }
    ASSERT_TRUE(Eventually(
        [&] {
          auto lmrs = cluster_.Lmrs();
          return lmrs.ok() && lmrs->size() == 3;
        },
        kWait));
    auto lmrs = cluster_.Lmrs();
    ASSERT_TRUE(lmrs.ok());
    owner_.set_uid(lmrs->at(0).owner_uid());
    owner_.set_gid(lmrs->at(0).owner_gid());
    owner_.set_pid(4242);
    auto n1 = cluster_.AgentStatus("n1");
    auto n2 = cluster_.AgentStatus("n2");
    ASSERT_TRUE(n1.ok() && n2.ok());
    n1_.set_node_id(n1->node_id());
    n1_.set_incarnation(n1->incarnation());
    n2_.set_node_id(n2->node_id());
    n2_.set_incarnation(n2->incarnation());
  }

  void TearDown() override {
    // A stopped agent would sit out SIGTERM until the harness's SIGKILL.
    if (stopped_) cluster_.agent("n2")->Signal(SIGCONT);
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  void Stop() {
    cluster_.agent("n2")->Signal(SIGSTOP);
    stopped_ = true;
  }
  void Resume() {
    cluster_.agent("n2")->Signal(SIGCONT);
    stopped_ = false;
  }

  // n2 as the manager lists it (nullopt: not listed, or the call failed).
  std::optional<lite::v1::Member> N2() {
    auto nodes = cluster_.Nodes();
    if (!nodes.ok()) return std::nullopt;
    for (const auto& n : *nodes) {
      if (n.node_id() == n2_.node_id()) return n;
    }
    return std::nullopt;
  }

  // n1 maps `name` for its application, through the manager.
  grpc::Status Map(const std::string& name,
                   lite::v1::MapLmrResponse* out = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::MapLmrRequest req;
    *req.mutable_caller() = n1_;
    *req.mutable_requester() = owner_;
    req.set_name(name);
    req.mutable_access()->set_read(true);
    lite::v1::MapLmrResponse resp;
    return cluster_.manager_stub_as("n1")->MapLmr(&ctx, req, out ? out : &resp);
  }

  // Whether the manager lists grant `grant_id` (nullopt: the call failed).
  std::optional<bool> GrantListed(uint64_t grant_id) {
    auto grants = cluster_.Grants();
    if (!grants.ok()) return std::nullopt;
    for (const auto& g : *grants) {
      if (g.grant_id() == grant_id) return true;
    }
    return false;
  }

  // The events about n2's incarnation `incarnation` in an agent's event log.
  std::vector<lite::v1::Event> EventsAboutN2(const std::string& agent) {
    std::vector<lite::v1::Event> out;
    auto events = ParseEventLines(ReadFile(cluster_.event_log(agent)));
    if (!events.ok()) return out;
    for (const auto& e : *events) {
      const bool about =
          (e.has_member_suspected() &&
           e.member_suspected().node_id() == n2_.node_id() &&
           e.member_suspected().incarnation() == n2_.incarnation()) ||
          (e.has_member_recovered() &&
           e.member_recovered().node_id() == n2_.node_id() &&
           e.member_recovered().incarnation() == n2_.incarnation()) ||
          (e.has_member_failed() &&
           e.member_failed().node_id() == n2_.node_id() &&
           e.member_failed().incarnation() == n2_.incarnation());
      if (about) out.push_back(e);
    }
    return out;
  }
  bool Logged(const std::string& agent, lite::v1::Event::KindCase kind) {
    for (const auto& e : EventsAboutN2(agent)) {
      if (e.kind_case() == kind) return true;
    }
    return false;
  }

  Cluster cluster_;
  std::string unreachable_;
  bool stopped_ = false;
  lite::v1::NodeCaller n1_;
  lite::v1::NodeCaller n2_;
  lite::v1::Credentials owner_;
};

TEST_F(SuspectTest, AStoppedAgentWhosePeersReachItIsSuspectNotFailed) {
  // A map taken before the pause.
  lite::v1::MapLmrResponse before;
  grpc::Status s = Map("mem2", &before);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const uint64_t grant = before.grant().grant_id();

  const absl::Time t0 = absl::Now();
  Stop();
  ASSERT_TRUE(Eventually(
      [&] {
        auto n2 = N2();
        return n2.has_value() && n2->suspect_since_unix_ms() != 0;
      },
      kWait))
      << "n2 was never listed SUSPECT";
  std::cout << "n2 SUSPECT after "
            << absl::ToInt64Milliseconds(absl::Now() - t0) << " ms"
            << std::endl;
  for (const char* name : {"n1", "n3"}) {
    ASSERT_TRUE(Eventually(
        [&] { return Logged(name, lite::v1::Event::kMemberSuspected); }, kWait))
        << name << " got no MemberSuspected for n2";
  }
  const auto suspected = EventsAboutN2("n1").front();
  ASSERT_TRUE(suspected.has_member_suspected()) << suspected.DebugString();
  EXPECT_TRUE(
      absl::StrContains(suspected.member_suspected().reason(), "no heartbeat"))
      << suspected.member_suspected().reason();

  // A new map into its LMR needs its agent: UNAVAILABLE, saying why.
  s = Map("mem2");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_TRUE(absl::StrContains(s.error_message(), "SUSPECT"))
      << s.error_message();
  // Other nodes' LMRs are not concerned.
  s = Map("mem3");
  EXPECT_TRUE(s.ok()) << s.error_message();

  // The rest of 3 leases: never failed, still listed, the old map kept.
  // (A listing that fails on a loaded machine is skipped, not a failure.)
  while (absl::Now() < t0 + 3 * kLease) {
    if (auto n2 = N2(); n2.has_value()) {
      ASSERT_EQ(n2->state(), lite::v1::NODE_STATE_ALIVE) << n2->DebugString();
      ASSERT_EQ(n2->incarnation(), n2_.incarnation());
    }
    ASSERT_NE(GrantListed(grant), std::optional<bool>(false))
        << "the map taken before was revoked";
    absl::SleepFor(absl::Milliseconds(100));
  }
  auto lmrs = cluster_.Lmrs();
  ASSERT_TRUE(lmrs.ok());
  EXPECT_EQ(lmrs->size(), 3u) << "n2's LMR is no longer listed";

  Resume();
  ASSERT_TRUE(Eventually(
      [&] {
        auto n2 = N2();
        return n2.has_value() && n2->suspect_since_unix_ms() == 0;
      },
      kWait))
      << "n2 is still SUSPECT after SIGCONT";
  for (const char* name : {"n1", "n3"}) {
    ASSERT_TRUE(Eventually(
        [&] { return Logged(name, lite::v1::Event::kMemberRecovered); }, kWait))
        << name << " got no MemberRecovered for n2";
  }
  for (const auto& e : EventsAboutN2("n1")) {
    if (e.has_member_recovered()) {
      std::cout << "n1 got " << e.ShortDebugString() << std::endl;
      EXPECT_GE(e.member_recovered().suspected_ms(), 1);
    }
  }
  auto n2 = N2();
  ASSERT_TRUE(n2.has_value());
  EXPECT_EQ(n2->state(), lite::v1::NODE_STATE_ALIVE);
  EXPECT_EQ(n2->incarnation(), n2_.incarnation()) << "n2 joined again";
  EXPECT_EQ(GrantListed(grant), std::optional<bool>(true));
  // The agents say so in their logs (agent_session.cc): n1 of its peer, n2
  // of itself once it runs again.
  EXPECT_TRUE(absl::StrContains(ReadFile(cluster_.agent("n1")->stderr_path()),
                                "SUSPECT: no heartbeat"));
  EXPECT_TRUE(Eventually(
      [&] {
        return absl::StrContains(ReadFile(cluster_.agent("n2")->stderr_path()),
                                 "the manager suspects this node");
      },
      kWait));

  s = Map("mem2");
  EXPECT_TRUE(s.ok()) << s.error_message();

  // Never failed, in any agent's view.
  for (const char* name : {"n1", "n3"}) {
    EXPECT_FALSE(Logged(name, lite::v1::Event::kMemberFailed)) << name;
  }
  auto st = cluster_.AgentStatus("n2");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->incarnation(), n2_.incarnation());
}

TEST_F(SuspectTest, AStoppedAgentWhosePeersCannotReachItIsFailedAtOnce) {
  {
    std::ofstream out(unreachable_);
    out << "n2\n";
    ASSERT_TRUE(out.good());
  }
  const absl::Time t0 = absl::Now();
  Stop();
  ASSERT_TRUE(Eventually(
      [&] {
        auto n2 = N2();
        return n2.has_value() && n2->state() == lite::v1::NODE_STATE_FAILED;
      },
      kWait, absl::Milliseconds(5)))
      << "n2 was never failed";
  const absl::Duration delay = absl::Now() - t0;
  std::cout << "n2 FAILED after " << absl::ToInt64Milliseconds(delay)
            << " ms (lease " << kLeaseMs << " ms)" << std::endl;
  RecordProperty("failed_after_ms",
                 static_cast<int>(absl::ToInt64Milliseconds(delay)));
  // The probe round is max(lease, --request_timeout_ms 5000): failed well
  // before its end, by the answers. Less the heartbeat interval before the
  // pause, plus scheduling on a loaded machine.
  EXPECT_LE(delay, kLease + absl::Seconds(3));

  ASSERT_TRUE(Eventually(
      [&] { return Logged("n1", lite::v1::Event::kMemberFailed); }, kWait));
  const std::vector<lite::v1::Event> events = EventsAboutN2("n1");
  ASSERT_GE(events.size(), 2u);
  EXPECT_TRUE(events.front().has_member_suspected())
      << "failed without being SUSPECT first: "
      << events.front().ShortDebugString();
  const lite::v1::MemberFailed& failed = events.back().member_failed();
  std::cout << "n1 got " << events.back().ShortDebugString() << std::endl;
  EXPECT_EQ(failed.cause(), lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
  EXPECT_TRUE(absl::StrContains(failed.reason(), "found it unreachable"))
      << failed.reason();
  // Both asked peers (n1 and n3) answered, neither reached it.
  EXPECT_TRUE(absl::StrContains(failed.reason(), "2 found it unreachable"))
      << failed.reason();

  // The resume path as before: a new incarnation, its LMR under its name.
  std::remove(unreachable_.c_str());
  Resume();
  ASSERT_TRUE(Eventually(
      [&] {
        auto st = cluster_.AgentStatus("n2");
        return st.ok() && st->incarnation() > n2_.incarnation() &&
               st->manager_connection_state() ==
                   lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
      },
      kWait))
      << "n2 did not join again";
  ASSERT_TRUE(Eventually([&] { return Map("mem2").ok(); }, kWait))
      << "mem2 was not registered again";
}

}  // namespace
}  // namespace lite::hosttest
