// Host integration: litemgr and three liteagents on loopback.
//  * Every agent applies the same events in the same order as the manager's
//    Watch stream (litectl watch) shows them.
//  * kill -9 of an agent: every other agent drops it (NodeFailed applied to
//    its module) within 2x the lease; the node rejoins with a new, greater
//    incarnation and the same id.
//  * An agent that stops answering (SIGSTOP) is failed by its lease, again
//    within 2x the lease, and rejoins as a new incarnation when resumed.
#include <signal.h>
#include <sys/wait.h>

#include <iostream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using google::protobuf::util::MessageDifferencer;

constexpr int64_t kLeaseMs = 1000;
const absl::Duration kLease = absl::Milliseconds(kLeaseMs);

class MembershipTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  // Starts the manager and agents n1..n3 and waits until each is connected
  // and sees the other two.
  void StartCluster() {
    ASSERT_TRUE(cluster_.StartManager({.lease_ms = kLeaseMs}).ok());
    for (int i = 1; i <= 3; ++i) {
      const std::string name = absl::StrCat("n", i);
      absl::Status s = cluster_.StartAgent(
          name, i, {.fake_lmrs = absl::StrCat("mem", i, "=1M")});
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_TRUE(cluster_.WaitConnected(name).ok());
    }
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE(Eventually(
          [&] {
            auto peers = cluster_.AgentPeers(absl::StrCat("n", i));
            return peers.ok() && peers->size() == 2;
          },
          kStartTimeout))
          << "n" << i << " does not see two peers";
    }
  }

  // Polls the survivors' peer lists until none of them lists node `id` with
  // incarnation `incarnation`; returns each survivor's delay from `t0`.
  std::map<std::string, absl::Duration> WaitDropped(
      const std::vector<std::string>& survivors, uint32_t id,
      uint64_t incarnation, absl::Time t0) {
    std::map<std::string, absl::Duration> delays;
    Eventually(
        [&] {
          for (const std::string& name : survivors) {
            if (delays.contains(name)) continue;
            auto peers = cluster_.AgentPeers(name);
            if (!peers.ok()) continue;
            bool listed = false;
            for (const auto& p : *peers) {
              listed |= p.node_id() == id && p.incarnation() == incarnation;
            }
            if (!listed) delays[name] = absl::Now() - t0;
          }
          return delays.size() == survivors.size();
        },
        absl::Seconds(15), absl::Milliseconds(5));
    return delays;
  }

  // Checks every survivor's delay against 2x the lease and reports them.
  void ExpectWithinTwoLeases(const std::string& what,
                             const std::map<std::string, absl::Duration>& d,
                             size_t survivors) {
    ASSERT_EQ(d.size(), survivors) << what << ": not every survivor dropped "
                                   << "the node within 15 s";
    for (const auto& [name, delay] : d) {
      const int64_t ms = absl::ToInt64Milliseconds(delay);
      std::cout << what << ": " << name << " applied NodeFailed after " << ms
                << " ms (bound " << 2 * kLeaseMs << " ms)" << std::endl;
      RecordProperty(absl::StrCat(what, "_", name, "_ms"),
                     static_cast<int>(ms));
      EXPECT_LE(delay, 2 * kLease) << what << ": " << name;
    }
  }

  // The MemberFailed events for (id, incarnation) in an agent's event log.
  std::vector<lite::v1::MemberFailed> FailedEvents(const std::string& agent,
                                                   uint32_t id,
                                                   uint64_t incarnation) {
    std::vector<lite::v1::MemberFailed> out;
    auto events = ParseEventLines(ReadFile(cluster_.event_log(agent)));
    if (!events.ok()) return out;
    for (const auto& e : *events) {
      if (e.has_member_failed() && e.member_failed().node_id() == id &&
          e.member_failed().incarnation() == incarnation) {
        out.push_back(e.member_failed());
      }
    }
    return out;
  }

  Cluster cluster_;
};

TEST_F(MembershipTest, EveryAgentAppliesTheSameEventsInTheManagersOrder) {
  ASSERT_TRUE(cluster_.StartManager({.lease_ms = kLeaseMs}).ok());
  ASSERT_TRUE(cluster_.StartAgent("n1", 1, {.fake_lmrs = "mem1=1M"}).ok());
  ASSERT_TRUE(cluster_.WaitConnected("n1").ok());
  // Start the watcher and make sure it is live: toggle a drain flag until a
  // MemberDrainChanged shows up in its output.
  ASSERT_TRUE(cluster_.StartWatch().ok());
  bool undo = false;
  ASSERT_TRUE(Eventually(
      [&] {
        cluster_.Litectl(undo
                             ? std::vector<std::string>{"drain", "n1", "--undo"}
                             : std::vector<std::string>{"drain", "n1"});
        undo = !undo;
        auto events = cluster_.WatchedEvents();
        return events.ok() && !events->empty();
      },
      kStartTimeout, absl::Milliseconds(200)));
  if (undo) cluster_.Litectl({"drain", "n1", "--undo"});

  for (int i = 2; i <= 3; ++i) {
    const std::string name = absl::StrCat("n", i);
    ASSERT_TRUE(
        cluster_
            .StartAgent(name, i, {.fake_lmrs = absl::StrCat("mem", i, "=1M")})
            .ok());
    ASSERT_TRUE(cluster_.WaitConnected(name).ok());
  }
  // More events with everyone listening: operator actions through litectl.
  CtlResult drain = cluster_.Litectl({"drain", "n2"});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  EXPECT_EQ(drain.out,
            absl::StrCat("node n2 (id ", cluster_.AgentStatus("n2")->node_id(),
                         ") is draining: no new LMRs are placed on "
                         "it\n"));
  ASSERT_EQ(cluster_.Litectl({"drain", "n2", "--undo"}).exit_code, 0);

  // Wait until all three LMRs are registered and everyone has applied
  // everything the manager announced.
  uint64_t last = 0;
  ASSERT_TRUE(Eventually(
      [&] {
        auto lmrs = cluster_.Lmrs();
        if (!lmrs.ok() || lmrs->size() != 3) return false;
        grpc::ClientContext ctx;
        ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
        lite::v1::ListNodesResponse nodes;
        if (!cluster_.operator_stub()->ListNodes(&ctx, {}, &nodes).ok()) {
          return false;
        }
        last = nodes.event_sequence();
        for (const char* name : {"n1", "n2", "n3"}) {
          auto st = cluster_.AgentStatus(name);
          if (!st.ok() || st->applied_event_sequence() != last) return false;
        }
        auto watched = cluster_.WatchedEvents();
        return watched.ok() && !watched->empty() &&
               watched->back().sequence() == last;
      },
      kStartTimeout))
      << "agents did not all apply up to the manager's last event";

  auto watched = cluster_.WatchedEvents();
  ASSERT_TRUE(watched.ok()) << watched.status();
  std::map<uint64_t, lite::v1::Event> by_seq;
  uint64_t prev = 0;
  for (const auto& e : *watched) {
    if (prev != 0) {
      EXPECT_EQ(e.sequence(), prev + 1) << "watch skipped";
    }
    prev = e.sequence();
    by_seq[e.sequence()] = e;
  }
  std::map<std::string, std::vector<lite::v1::Event>> logs;
  for (const char* name : {"n1", "n2", "n3"}) {
    auto events = ParseEventLines(ReadFile(cluster_.event_log(name)));
    ASSERT_TRUE(events.ok()) << events.status();
    ASSERT_FALSE(events->empty()) << name;
    logs[name] = *events;
    // Contiguous, ending at the manager's last event...
    for (size_t i = 1; i < events->size(); ++i) {
      ASSERT_EQ((*events)[i].sequence(), (*events)[i - 1].sequence() + 1)
          << name << " skipped or reordered an event";
    }
    EXPECT_EQ(events->back().sequence(), last) << name;
    // ...and each one exactly what the watcher saw under that number.
    for (const auto& e : *events) {
      auto it = by_seq.find(e.sequence());
      if (it == by_seq.end()) continue;  // Before the watcher was live.
      EXPECT_TRUE(MessageDifferencer::Equals(e, it->second))
          << name << " event " << e.sequence() << ":\n"
          << e.DebugString() << "watch:\n"
          << it->second.DebugString();
    }
  }
  // Everything since n3 joined was seen by all three, identically (checked
  // above against the watcher, which saw all of it): n3's LMR and the two
  // drain changes at least.
  const uint64_t from = logs["n3"].front().sequence();
  int lmrs_added = 0, drains = 0;
  for (uint64_t seq = from; seq <= last; ++seq) {
    ASSERT_TRUE(by_seq.contains(seq)) << "the watcher missed " << seq;
    for (const char* name : {"n1", "n2", "n3"}) {
      const auto& log = logs[name];
      ASSERT_LE(log.front().sequence(), seq) << name;
    }
    lmrs_added += by_seq[seq].has_lmr_added() ? 1 : 0;
    drains += by_seq[seq].has_member_drain_changed() ? 1 : 0;
  }
  EXPECT_GE(lmrs_added, 1);
  EXPECT_EQ(drains, 2);

  // The watcher ends cleanly on Ctrl-C.
  cluster_.watch()->Signal(SIGINT);
  std::optional<int> status = cluster_.watch()->Wait(absl::Seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "litectl watch status " << *status;

  // Nodes have distinct ids, incarnation 1, and are all alive.
  auto nodes = cluster_.Nodes();
  ASSERT_TRUE(nodes.ok());
  std::set<uint32_t> ids;
  for (const auto& n : *nodes) {
    ids.insert(n.node_id());
    EXPECT_EQ(n.incarnation(), 1u) << n.node_name();
    EXPECT_EQ(n.state(), lite::v1::NODE_STATE_ALIVE) << n.node_name();
  }
  EXPECT_EQ(ids.size(), 3u);
}

TEST_F(MembershipTest, KillNineIsSeenByEveryAgentWithinTwoLeasesThenRejoins) {
  StartCluster();
  auto victim = cluster_.AgentStatus("n3");
  ASSERT_TRUE(victim.ok());
  const uint32_t id = victim->node_id();
  const uint64_t incarnation = victim->incarnation();

  const absl::Time t0 = absl::Now();
  cluster_.agent("n3")->Signal(SIGKILL);
  auto delays = WaitDropped({"n1", "n2"}, id, incarnation, t0);
  ExpectWithinTwoLeases("kill9", delays, 2);
  // The survivors got it as a MemberFailed event for that incarnation.
  for (const char* name : {"n1", "n2"}) {
    ASSERT_TRUE(
        Eventually([&] { return !FailedEvents(name, id, incarnation).empty(); },
                   absl::Seconds(5)))
        << name << " logged no MemberFailed for node " << id;
    std::cout << "kill9: " << name << " got "
              << FailedEvents(name, id, incarnation)[0].ShortDebugString()
              << std::endl;
  }
  std::optional<int> st = cluster_.agent("n3")->Wait(absl::Seconds(10));
  ASSERT_TRUE(st.has_value() && WIFSIGNALED(*st) && WTERMSIG(*st) == SIGKILL);
  auto nodes = cluster_.Nodes();
  ASSERT_TRUE(nodes.ok());
  for (const auto& n : *nodes) {
    if (n.node_id() == id) {
      EXPECT_EQ(n.state(), lite::v1::NODE_STATE_FAILED);
    }
  }

  // The node comes back: same id, a greater incarnation.
  ASSERT_TRUE(cluster_.StartAgent("n3", 3, {.fake_lmrs = "mem3=1M"}).ok());
  auto back = cluster_.WaitConnected("n3");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node_id(), id);
  EXPECT_GT(back->incarnation(), incarnation);
  for (const char* name : {"n1", "n2"}) {
    EXPECT_TRUE(Eventually(
        [&] {
          auto peers = cluster_.AgentPeers(name);
          if (!peers.ok()) return false;
          for (const auto& p : *peers) {
            if (p.node_id() == id && p.incarnation() == back->incarnation()) {
              return true;
            }
          }
          return false;
        },
        absl::Seconds(10)))
        << name << " does not list n3's new incarnation";
  }
}

TEST_F(MembershipTest, AStoppedAgentIsFailedByItsLeaseAndRejoinsWhenResumed) {
  StartCluster();
  // A fresh litemgr cannot tell a first start from a restart, so it holds
  // every lease open until its recovery window (3 s by default) has passed
  // plus one lease. The 2x-lease bound is for a manager in steady state,
  // which StartCluster has reached: during the window a node without an
  // identity token to restore waits to join (review cp H1), so a fresh
  // cluster's nodes all joined after it.
  auto victim = cluster_.AgentStatus("n2");
  ASSERT_TRUE(victim.ok());
  const uint32_t id = victim->node_id();
  const uint64_t incarnation = victim->incarnation();

  // The process is frozen: its connection stays open, its heartbeats stop.
  const absl::Time t0 = absl::Now();
  cluster_.agent("n2")->Signal(SIGSTOP);
  auto delays = WaitDropped({"n1", "n3"}, id, incarnation, t0);
  ExpectWithinTwoLeases("sigstop", delays, 2);
  for (const auto& [name, delay] : delays) {
    // Not before the lease could have run out, less the time since the last
    // heartbeat when the process froze (one interval, 250 ms, plus
    // scheduling delay on a loaded machine).
    EXPECT_GE(delay, kLease / 2) << name;
  }
  auto failed = FailedEvents("n1", id, incarnation);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed[0].cause(), lite::v1::FAILURE_CAUSE_LEASE_EXPIRED)
      << failed[0].ShortDebugString();

  cluster_.agent("n2")->Signal(SIGCONT);
  ASSERT_TRUE(Eventually(
      [&] {
        auto st = cluster_.AgentStatus("n2");
        return st.ok() && st->incarnation() > incarnation &&
               st->manager_connection_state() ==
                   lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
      },
      kStartTimeout))
      << "n2 did not rejoin with a new incarnation";
  auto back = cluster_.AgentStatus("n2");
  EXPECT_EQ(back->node_id(), id);
  EXPECT_GE(back->reconnects(), 1u);
}

}  // namespace
}  // namespace lite::hosttest
