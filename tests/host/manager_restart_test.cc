// Host integration: the manager is killed with SIGKILL and restarted empty
// on the same address. The agents reconnect (with backoff), find a manager
// that adopts their identities, re-register the LMRs their nodes host and
// restore the grants they hold; `litectl lmrs` then shows the same LMRs as
// before, and the grants survive the end of the recovery window.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <iostream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using google::protobuf::util::MessageDifferencer;

constexpr int64_t kRecoveryMs = 3000;

// An LMR without the fields a re-registration may legitimately change
// (creation time is when the new manager recorded it).
lite::v1::Lmr Comparable(lite::v1::Lmr lmr) {
  lmr.clear_created_at_unix_ms();
  return lmr;
}

lite::v1::Grant Comparable(lite::v1::Grant g) {
  g.clear_granted_at_unix_ms();
  return g;
}

template <typename T>
std::map<uint64_t, T> ById(const std::vector<T>& items,
                           uint64_t (T::*id)() const) {
  std::map<uint64_t, T> out;
  for (const T& item : items) out[(item.*id)()] = Comparable(item);
  return out;
}

template <typename T>
bool SameRecords(const std::map<uint64_t, T>& a, const std::map<uint64_t, T>& b,
                 std::string* diff) {
  if (a.size() != b.size()) {
    *diff = absl::StrCat(a.size(), " records vs ", b.size());
    return false;
  }
  for (const auto& [id, item] : a) {
    auto it = b.find(id);
    if (it == b.end()) {
      *diff = absl::StrCat("missing id ", id);
      return false;
    }
    if (!MessageDifferencer::Equals(item, it->second)) {
      *diff = absl::StrCat("before: ", item.ShortDebugString(),
                           "\nafter:  ", it->second.ShortDebugString());
      return false;
    }
  }
  return true;
}

class ManagerRestartTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }
  Cluster cluster_;
};

TEST_F(ManagerRestartTest, AgentsRebuildTheManagersLmrsAndGrants) {
  const Cluster::ManagerConfig config{.lease_ms = 1000,
                                      .recovery_window_ms = kRecoveryMs,
                                      .pair_key_file = WritePairKeyFile()};
  ASSERT_TRUE(cluster_.StartManager(config).ok());
  ASSERT_TRUE(
      cluster_
          .StartAgent("n1", 1, {.fake_lmrs = "buf1=64M,shared/log=128M@0644"})
          .ok());
  ASSERT_TRUE(cluster_.StartAgent("n2", 2, {.fake_lmrs = "buf2=4K@0660"}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto lmrs = cluster_.Lmrs();
        return lmrs.ok() && lmrs->size() == 3;
      },
      kStartTimeout));
  // n3 maps two of them: grants held on n3.
  ASSERT_TRUE(
      cluster_.StartAgent("n3", 3, {.fake_maps = "buf1=rw,shared/log=r"}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto grants = cluster_.Grants();
        return grants.ok() && grants->size() == 2;
      },
      kStartTimeout));
  std::map<std::string, lite::v1::GetStatusResponse> before_status;
  for (const char* name : {"n1", "n2", "n3"}) {
    auto st = cluster_.WaitConnected(name);
    ASSERT_TRUE(st.ok()) << st.status();
    before_status[name] = *st;
  }
  const auto before_lmrs = ById(*cluster_.Lmrs(), &lite::v1::Lmr::lmr_id);
  const auto before_grants =
      ById(*cluster_.Grants(), &lite::v1::Grant::grant_id);
  CtlResult table_before = cluster_.Litectl({"lmrs"});
  ASSERT_EQ(table_before.exit_code, 0) << table_before.err;

  // kill -9 the manager; the agents keep running.
  const int port = cluster_.manager_port();
  cluster_.manager()->Signal(SIGKILL);
  ASSERT_TRUE(cluster_.manager()->Wait(absl::Seconds(10)).has_value());
  cluster_.DropManager();
  // While it is down, the agents notice and back off.
  ASSERT_TRUE(Eventually(
      [&] {
        auto st = cluster_.AgentStatus("n1");
        return st.ok() && st->manager_connection_state() !=
                              lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
      },
      absl::Seconds(10)));
  CtlResult down = cluster_.Litectl({"lmrs", "--timeout", "1s"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_TRUE(absl::StartsWith(down.err, "litectl: UNAVAILABLE: ")) << down.err;

  const absl::Time restarted = absl::Now();
  ASSERT_TRUE(cluster_.StartManager(config, port).ok());
  ASSERT_EQ(cluster_.manager_port(), port);

  // `litectl lmrs` shows the same LMRs once the agents have re-registered.
  std::string diff;
  ASSERT_TRUE(Eventually(
      [&] {
        CtlResult r = cluster_.Litectl({"lmrs", "-o", "json"});
        if (r.exit_code != 0) return false;
        lite::v1::ListLmrsResponse resp;
        if (!google::protobuf::util::JsonStringToMessage(r.out, &resp).ok()) {
          diff = "unparsable: " + r.out;
          return false;
        }
        std::vector<lite::v1::Lmr> lmrs(resp.lmrs().begin(), resp.lmrs().end());
        return SameRecords(before_lmrs, ById(lmrs, &lite::v1::Lmr::lmr_id),
                           &diff);
      },
      absl::Seconds(30), absl::Milliseconds(100)))
      << diff;
  std::cout << "LMRs back "
            << absl::ToInt64Milliseconds(absl::Now() - restarted)
            << " ms after the manager restarted" << std::endl;
  CtlResult table_after = cluster_.Litectl({"lmrs"});
  ASSERT_EQ(table_after.exit_code, 0) << table_after.err;
  for (const auto& [id, lmr] : before_lmrs) {
    EXPECT_TRUE(absl::StrContains(table_after.out, lmr.name()))
        << table_after.out;
  }

  // The nodes kept their ids and incarnations (nothing restarted but the
  // manager), and the grants were restored...
  for (const char* name : {"n1", "n2", "n3"}) {
    auto st = cluster_.WaitConnected(name);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(st->node_id(), before_status[name].node_id()) << name;
    EXPECT_EQ(st->incarnation(), before_status[name].incarnation()) << name;
    EXPECT_GE(st->reconnects(), 1u) << name;
  }
  // ...and are still there after the recovery window closed.
  absl::SleepFor(absl::Milliseconds(kRecoveryMs) - (absl::Now() - restarted) +
                 absl::Milliseconds(500));
  ASSERT_TRUE(Eventually(
      [&] {
        auto grants = cluster_.Grants();
        return grants.ok() &&
               SameRecords(before_grants,
                           ById(*grants, &lite::v1::Grant::grant_id), &diff);
      },
      absl::Seconds(10)))
      << diff;
  // Peers survived the outage too.
  for (const char* name : {"n1", "n2", "n3"}) {
    auto peers = cluster_.AgentPeers(name);
    ASSERT_TRUE(peers.ok());
    EXPECT_EQ(peers->size(), 2u) << name;
  }
}

// Review cp H1, as the attacker: after a manager restart, the node
// certificate "evil" asks for n1's id and incarnation (which its session
// had shown it), and a newly issued certificate asks for node 0xFFFFFFFF.
// Neither is adopted: evil gets a fresh id and only its own pairs'
// secrets, n1 gets its identity back with its token, and new names still
// join.
TEST_F(ManagerRestartTest, ANodeCertificateCannotTakeAnotherNodesIdentity) {
  const Cluster::ManagerConfig config{.lease_ms = 1000,
                                      .recovery_window_ms = kRecoveryMs,
                                      .pair_key_file = WritePairKeyFile()};
  // In the authz file before the manager reads it.
  ASSERT_TRUE(cluster_.Certificate("node", "evil").ok());
  ASSERT_TRUE(cluster_.Certificate("node", "newcomer").ok());
  ASSERT_TRUE(cluster_.Certificate("node", "later").ok());
  ASSERT_TRUE(cluster_.StartManager(config).ok());
  ASSERT_TRUE(cluster_.StartAgent("n1", 1, {.fake_lmrs = "buf1=1M"}).ok());
  ASSERT_TRUE(cluster_.StartAgent("n2", 2, {}).ok());
  auto n1 = cluster_.WaitConnected("n1");
  auto n2 = cluster_.WaitConnected("n2");
  ASSERT_TRUE(n1.ok() && n2.ok());

  const int port = cluster_.manager_port();
  cluster_.manager()->Signal(SIGKILL);
  ASSERT_TRUE(cluster_.manager()->Wait(absl::Seconds(10)).has_value());
  cluster_.DropManager();
  ASSERT_TRUE(cluster_.StartManager(config, port).ok());

  auto join = [&](const std::string& name, const std::string& address,
                  uint32_t id, uint64_t incarnation,
                  lite::v1::JoinResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    lite::v1::JoinRequest request;
    request.set_node_name(name);
    request.set_rdma_address(address);
    if (id != 0) {
      request.mutable_restore()->set_node_id(id);
      request.mutable_restore()->set_incarnation(incarnation);
    }
    return cluster_.manager_stub_as(name)->Join(&context, request, response);
  };
  // evil tries at once and keeps trying, as fast as it can.
  lite::v1::JoinResponse evil;
  grpc::Status last;
  int refused = 0;
  ASSERT_TRUE(Eventually(
      [&] {
        last = join("evil", "127.0.0.1:17950", n1->node_id(), n1->incarnation(),
                    &evil);
        if (last.error_code() == grpc::StatusCode::UNAVAILABLE) ++refused;
        return last.ok();
      },
      absl::Seconds(20), absl::Milliseconds(50)))
      << last.error_message();
  EXPECT_GT(refused, 0);  // Held off while n1 could still come back.
  EXPECT_FALSE(evil.restored());
  EXPECT_NE(evil.node_id(), n1->node_id());
  EXPECT_EQ(evil.incarnation(), 1u);
  for (const lite::v1::PeerSecret& s : evil.peer_secrets()) {
    EXPECT_NE(s.node_id(), evil.node_id());
  }
  // n1 is itself again, id and incarnation; n2 still knows it at its own
  // address, not evil's.
  auto back = cluster_.WaitConnected("n1");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node_id(), n1->node_id());
  EXPECT_EQ(back->incarnation(), n1->incarnation());
  ASSERT_TRUE(Eventually(
      [&] {
        auto peers = cluster_.AgentPeers("n2");
        if (!peers.ok()) return false;
        for (const lite::v1::Member& m : *peers) {
          if (m.node_id() == n1->node_id()) {
            return m.node_name() == "n1" &&
                   m.incarnation() == n1->incarnation() &&
                   m.rdma_address() == "127.0.0.1:17001";
          }
        }
        return false;
      },
      absl::Seconds(10)));

  // Node 0xFFFFFFFF: not adopted, and the next new name still gets an id
  // (each call retried while a loaded host delays its first handshake).
  auto join_new = [&](const std::string& name, const std::string& address,
                      uint32_t id, lite::v1::JoinResponse* response) {
    grpc::Status status;
    EXPECT_TRUE(Eventually(
        [&] {
          status = join(name, address, id, id == 0 ? 0 : 1, response);
          return status.error_code() != grpc::StatusCode::UNAVAILABLE;
        },
        absl::Seconds(20), absl::Milliseconds(100)));
    return status;
  };
  lite::v1::JoinResponse newcomer;
  grpc::Status s =
      join_new("newcomer", "127.0.0.1:17951", 0xFFFFFFFF, &newcomer);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(newcomer.restored());
  EXPECT_NE(newcomer.node_id(), 0xFFFFFFFFu);
  lite::v1::JoinResponse later;
  s = join_new("later", "127.0.0.1:17952", 0, &later);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_NE(later.node_id(), 0u);
}

}  // namespace
}  // namespace lite::hosttest
