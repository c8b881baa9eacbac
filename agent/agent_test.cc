// The agent's connection loop against a scripted manager (FakeManager) and
// the fake module: joins, heartbeats, events applied in order, requests
// answered, rejoin after its own failure, restore after a manager restart,
// and Leave on shutdown.
#include "agent/agent.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "agent/fake_module.h"
#include "agent/testing/fake_manager.h"
#include "agent/testing/test_agent.h"

namespace lite::agent {
namespace {

using lite::v1::ManagerMessage;
using testing::FakeManager;
using testing::FakeManagerServer;

constexpr absl::Duration kWait = absl::Seconds(10);

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
  return testing::MakeTestAgent(testing::TestAgentOptions(address), module);
}

lite::v1::Member MakeMember(uint32_t id, uint64_t incarnation,
                            std::string address) {
  lite::v1::Member m;
  m.set_node_id(id);
  m.set_node_name(absl::StrCat("n", id));
  m.set_incarnation(incarnation);
  m.set_rdma_address(std::move(address));
  m.set_state(lite::v1::NODE_STATE_ALIVE);
  return m;
}

ManagerMessage MemberJoinedEvent(uint64_t seq, const lite::v1::Member& m) {
  ManagerMessage msg;
  msg.mutable_event()->set_sequence(seq);
  *msg.mutable_event()->mutable_member_joined()->mutable_member() = m;
  return msg;
}

ManagerMessage MemberFailedEvent(uint64_t seq, uint32_t id, uint64_t inc) {
  ManagerMessage msg;
  msg.mutable_event()->set_sequence(seq);
  auto* f = msg.mutable_event()->mutable_member_failed();
  f->set_node_id(id);
  f->set_incarnation(inc);
  f->set_cause(lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
  f->set_reason("no heartbeat for 1001 ms");
  return msg;
}

ManagerMessage AllocRequest(uint64_t request_id, uint64_t lmr_id,
                            uint64_t size) {
  ManagerMessage msg;
  msg.mutable_request()->set_request_id(request_id);
  msg.mutable_request()->set_deadline_ms(5000);
  auto* a = msg.mutable_request()->mutable_allocate_lmr_memory();
  a->set_lmr_id(lmr_id);
  a->set_name(absl::StrCat("lmr", request_id));
  a->set_size_bytes(size);
  a->set_owner_uid(1000);
  a->set_owner_gid(1000);
  a->set_mode(0600);
  return msg;
}

// The result the agent sent for request_id, if any.
std::optional<lite::v1::NodeRequestResult> ResultFor(const FakeManager& mgr,
                                                     uint64_t request_id) {
  for (const auto& m : mgr.received()) {
    if (m.has_result() && m.result().request_id() == request_id) {
      return m.result();
    }
  }
  return std::nullopt;
}

bool HasCall(FakeModule& module, const std::string& call) {
  auto calls = module.Calls();
  return std::find(calls.begin(), calls.end(), call) != calls.end();
}

uint64_t CounterValue(const Agent& agent, const std::string& name) {
  for (const auto& c : agent.CounterSnapshot()) {
    if (c.name() == name) return c.value();
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

lite::v1::Credentials AppCreds() {
  lite::v1::Credentials c;
  c.set_uid(1000);
  c.set_gid(1000);
  c.set_pid(42);
  return c;
}

TEST(AgentTest, JoinsHeartbeatsAndLeavesOnShutdown) {
  FakeManagerServer server;
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  ASSERT_TRUE(server.manager().WaitFor(
      [](const FakeManager& m) { return m.heartbeats_locked() >= 3; }, kWait));

  auto joins = server.manager().joins();
  ASSERT_GE(joins.size(), 1u);
  EXPECT_EQ(joins[0].node_name(), "n1");
  EXPECT_EQ(joins[0].rdma_address(), "127.0.0.1:7471");
  EXPECT_FALSE(joins[0].has_restore());  // A fresh module has no identity.

  auto received = server.manager().received();
  ASSERT_TRUE(received[0].has_heartbeat());  // The session opens with one.
  EXPECT_TRUE(received[0].heartbeat().accept_event_batches());
  uint64_t seq = 0;
  for (const auto& m : received) {
    if (!m.has_heartbeat()) continue;
    EXPECT_EQ(m.heartbeat().node_id(), 1u);
    EXPECT_EQ(m.heartbeat().incarnation(), 1u);
    EXPECT_EQ(m.heartbeat().heartbeat_seq(), ++seq);
  }
  auto identity = module.GetIdentity();
  ASSERT_TRUE(identity.ok() && identity->has_value());
  EXPECT_EQ((*identity)->node_id(), 1u);
  EXPECT_EQ((*identity)->incarnation(), 1u);
  ASSERT_TRUE(Eventually([&] {
    return agent->Status().manager_connection_state() ==
           lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
  }));

  const absl::Time t0 = absl::Now();
  agent->Shutdown();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(4));
  auto leaves = server.manager().leaves();
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0].caller().node_id(), 1u);
  EXPECT_EQ(leaves[0].caller().incarnation(), 1u);
  EXPECT_EQ(agent->Status().manager_connection_state(),
            lite::v1::MANAGER_CONNECTION_STATE_LEFT);
}

TEST(AgentTest, AppliesEventsToTheModuleInOrder) {
  FakeManagerServer server;
  server.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(1);
        resp->set_incarnation(1);
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        resp->set_event_sequence(10);
        *resp->add_members() = MakeMember(1, 1, req.rdma_address());
        *resp->add_members() = MakeMember(2, 5, "10.0.0.2:7471");
        return grpc::Status::OK;
      });
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  EXPECT_TRUE(HasCall(module, "AddPeer 2 5 10.0.0.2:7471"));

  FakeManager& mgr = server.manager();
  mgr.Push(MemberJoinedEvent(11, MakeMember(3, 7, "10.0.0.3:7471")));
  ManagerMessage drain;
  drain.mutable_event()->set_sequence(12);
  drain.mutable_event()->mutable_member_drain_changed()->set_node_id(3);
  drain.mutable_event()->mutable_member_drain_changed()->set_draining(true);
  mgr.Push(drain);
  // The last two arrive batched (the agent asked for batches).
  ManagerMessage batch;
  *batch.mutable_event_batch()->add_events() =
      MemberFailedEvent(13, 2, 5).event();
  // An older incarnation of node 3 leaving changes nothing.
  lite::v1::Event* stale_left = batch.mutable_event_batch()->add_events();
  stale_left->set_sequence(14);
  stale_left->mutable_member_left()->set_node_id(3);
  stale_left->mutable_member_left()->set_incarnation(6);
  mgr.Push(batch);

  ASSERT_TRUE(Eventually(
      [&] { return agent->Status().applied_event_sequence() == 14; }));
  auto peers = agent->Peers();
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers[0].node_id(), 3u);
  EXPECT_EQ(peers[0].incarnation(), 7u);
  EXPECT_TRUE(peers[0].draining());
  auto module_peers = module.ListPeers();
  ASSERT_TRUE(module_peers.ok());
  ASSERT_EQ(module_peers->size(), 1u);
  EXPECT_EQ((*module_peers)[0].node_id, 3u);

  const std::vector<std::string> expected = {"AddPeer 2 5 10.0.0.2:7471",
                                             "AddPeer 3 7 10.0.0.3:7471",
                                             "RemovePeer 2 5"};
  auto calls = module.Calls();
  auto it = calls.begin();
  for (const std::string& want : expected) {
    it = std::find(it, calls.end(), want);
    ASSERT_NE(it, calls.end()) << "missing or out of order: " << want;
  }
  EXPECT_FALSE(HasCall(module, "RemovePeer 3 7"));
  // Heartbeats report how far the agent got.
  ASSERT_TRUE(mgr.WaitFor(
      [](const FakeManager& m) {
        for (const auto& r : m.received_locked()) {
          if (r.has_heartbeat() &&
              r.heartbeat().applied_event_sequence() == 14) {
            return true;
          }
        }
        return false;
      },
      kWait));
  agent->Shutdown();
}

lite::v1::PeerSecret Secret(uint32_t id, uint64_t incarnation, char fill) {
  lite::v1::PeerSecret s;
  s.set_node_id(id);
  s.set_incarnation(incarnation);
  s.set_secret(std::string(kPairSecretBytes, fill));
  return s;
}

// Pair secrets (issue #16): from the Join answer for the members it lists,
// from the message of each later MemberJoined (single or batched), replaced
// in place when the manager hands out a new one for the same peer, and never
// taken from a message about another incarnation.
TEST(AgentTest, GivesEveryPeerItsPairSecret) {
  FakeManagerServer server;
  int joins = 0;
  server.manager().OnJoin(
      [&joins](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        ++joins;
        resp->set_node_id(1);
        resp->set_incarnation(1);
        resp->set_restored(joins > 1);  // The manager restarted and adopted it.
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        resp->set_event_sequence(joins == 1 ? 10 : 20);
        *resp->add_members() = MakeMember(1, 1, req.rdma_address());
        *resp->add_members() = MakeMember(2, 5, "10.0.0.2:7471");
        // A restarted manager with a new key: new secret, same peer.
        *resp->add_peer_secrets() = Secret(2, 5, joins == 1 ? 'a' : 'A');
        return grpc::Status::OK;
      });
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  EXPECT_EQ(module.PeerSecret(2), std::string(kPairSecretBytes, 'a'));

  FakeManager& mgr = server.manager();
  // Node 3 joins: its secret comes in the same message.
  ManagerMessage joined =
      MemberJoinedEvent(11, MakeMember(3, 7, "10.0.0.3:7471"));
  *joined.add_peer_secrets() = Secret(3, 7, 'b');
  mgr.Push(joined);
  // A batch: node 4 with its secret, node 5 with one for another incarnation
  // (not its own: added without).
  ManagerMessage batch;
  *batch.mutable_event_batch()->add_events() =
      MemberJoinedEvent(12, MakeMember(4, 1, "10.0.0.4:7471")).event();
  *batch.mutable_event_batch()->add_events() =
      MemberJoinedEvent(13, MakeMember(5, 2, "10.0.0.5:7471")).event();
  *batch.add_peer_secrets() = Secret(4, 1, 'c');
  *batch.add_peer_secrets() = Secret(5, 1, 'd');
  mgr.Push(batch);
  ASSERT_TRUE(Eventually(
      [&] { return agent->Status().applied_event_sequence() == 13; }));
  EXPECT_EQ(module.PeerSecret(3), std::string(kPairSecretBytes, 'b'));
  EXPECT_EQ(module.PeerSecret(4), std::string(kPairSecretBytes, 'c'));
  EXPECT_EQ(module.PeerSecret(5), std::string());
  EXPECT_EQ(CounterValue(*agent, "agent.peers_without_secret"), 1u);
  // lite.ko never gives a secret back, and neither does the agent.
  const auto listed = module.ListPeers();
  ASSERT_TRUE(listed.ok());
  for (const Peer& p : *listed) EXPECT_TRUE(p.secret.empty());
  for (const lite::v1::Member& m : agent->Peers()) {
    EXPECT_FALSE(absl::StrContains(m.SerializeAsString(),
                                   std::string(kPairSecretBytes, 'a')));
  }

  // The manager restarts with another key and adopts this node unchanged:
  // the same peer 2 comes with a new secret, which replaces the old one
  // without a RemovePeer (its connections stay).
  mgr.EndSession();
  ASSERT_TRUE(mgr.WaitForSessions(2, kWait));
  ASSERT_TRUE(Eventually([&] {
    return module.PeerSecret(2) == std::string(kPairSecretBytes, 'A');
  }));
  EXPECT_FALSE(HasCall(module, "RemovePeer 2 5"));
  auto counters = module.GetCounters();
  ASSERT_TRUE(counters.ok());
  for (const auto& c : *counters) {
    if (c.name() == "module.peer_secrets_replaced") {
      EXPECT_EQ(c.value(), 1u);
    }
  }
  agent->Shutdown();
}

TEST(AgentTest, AMalformedSecretIsDroppedAndCounted) {
  FakeManagerServer server;
  server.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(1);
        resp->set_incarnation(1);
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        *resp->add_members() = MakeMember(1, 1, req.rdma_address());
        *resp->add_members() = MakeMember(2, 5, "10.0.0.2:7471");
        lite::v1::PeerSecret* s = resp->add_peer_secrets();
        *s = Secret(2, 5, 'a');
        s->mutable_secret()->pop_back();  // 31 bytes
        return grpc::Status::OK;
      });
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  EXPECT_EQ(module.PeerSecret(2), std::string());
  EXPECT_EQ(CounterValue(*agent, "agent.peer_secrets_invalid"), 1u);
  EXPECT_EQ(CounterValue(*agent, "agent.peers_without_secret"), 1u);
  agent->Shutdown();
}

TEST(AgentTest, AnEventGapEndsTheSessionAndJoinsAgain) {
  FakeManagerServer server;
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  // Join said event_sequence 0, so 1 must come next.
  server.manager().Push(MemberJoinedEvent(2, MakeMember(3, 1, "10.0.0.3:1")));
  ASSERT_TRUE(server.manager().WaitForSessions(2, kWait));
  auto joins = server.manager().joins();
  ASSERT_GE(joins.size(), 2u);
  // The second Join offers the identity the module holds.
  EXPECT_EQ(joins[1].restore().node_id(), 1u);
  EXPECT_EQ(joins[1].restore().incarnation(), 1u);
  EXPECT_TRUE(agent->Peers().empty());
  auto status = agent->Status();
  EXPECT_TRUE(absl::StrContains(status.last_error(), "sequence 2 arrived"))
      << status.last_error();
  EXPECT_GE(status.reconnects(), 1u);
  agent->Shutdown();
}

TEST(AgentTest, AnswersAllocateLmrMemoryAndFreesOnLmrRemoved) {
  FakeManagerServer server;
  FakeModule module(FakeModuleOptions{.memory_bytes = uint64_t{1} << 30});
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  FakeManager& mgr = server.manager();
  const uint64_t own_lmr = (uint64_t{1} << 32) | 9;
  mgr.Push(AllocRequest(101, own_lmr, 100 << 20));
  mgr.Push(AllocRequest(102, (uint64_t{2} << 32) | 1, 4096));  // Not ours.
  mgr.Push(AllocRequest(103, (uint64_t{1} << 32) | 10, uint64_t{2} << 30));
  ManagerMessage unknown;
  unknown.mutable_request()->set_request_id(104);
  mgr.Push(unknown);
  ASSERT_TRUE(Eventually([&] { return ResultFor(mgr, 104).has_value(); }));

  auto ok = ResultFor(mgr, 101);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->status_code(), 0);
  uint64_t total = 0;
  for (const auto& c : ok->allocated_lmr_memory().chunks()) {
    total += c.length_bytes();
  }
  EXPECT_EQ(total, uint64_t{100} << 20);
  EXPECT_GT(ok->allocated_lmr_memory().chunks_size(), 1);  // 64 MiB chunks.
  EXPECT_EQ(ResultFor(mgr, 102)->status_code(), grpc::INVALID_ARGUMENT);
  EXPECT_EQ(ResultFor(mgr, 103)->status_code(), grpc::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ResultFor(mgr, 104)->status_code(), grpc::UNIMPLEMENTED);

  // The home's failure keeps the memory (to register again); a free does not.
  ManagerMessage removed;
  removed.mutable_event()->set_sequence(1);
  auto* r = removed.mutable_event()->mutable_lmr_removed();
  r->set_lmr_id(own_lmr);
  r->set_home_node_id(1);
  r->set_cause(lite::v1::REMOVAL_CAUSE_HOME_FAILED);
  mgr.Push(removed);
  removed.mutable_event()->set_sequence(2);
  r->set_cause(lite::v1::REMOVAL_CAUSE_LMR_FREED);
  ASSERT_TRUE(Eventually(
      [&] { return agent->Status().applied_event_sequence() == 1; }));
  EXPECT_EQ(module.ListHostedLmrs()->size(), 1u);
  mgr.Push(removed);
  ASSERT_TRUE(Eventually(
      [&] { return agent->Status().applied_event_sequence() == 2; }));
  EXPECT_TRUE(module.ListHostedLmrs()->empty());
  EXPECT_TRUE(HasCall(module, "FreeLmrMemory 0x100000009"));
  agent->Shutdown();
}

TEST(AgentTest, OwnFailureEndsTheIncarnationRevokesGrantsAndReRegisters) {
  FakeManagerServer server;
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  FakeManager& mgr = server.manager();
  // Host an LMR and hold a grant.
  const uint64_t own_lmr = (uint64_t{1} << 32) | 3;
  mgr.Push(AllocRequest(1, own_lmr, 8192));
  ASSERT_TRUE(Eventually([&] { return ResultFor(mgr, 1).has_value(); }));
  uint64_t map =
      module.InjectUpcall(AppCreds(), MapUpcall{.name = "x", .read = true});
  auto reply = module.WaitForReply(map, kWait);
  ASSERT_TRUE(reply.ok() && reply->status.ok()) << reply.status();
  ASSERT_EQ(module.ListGrants()->size(), 1u);

  mgr.Push(MemberFailedEvent(1, 1, 1));
  ASSERT_TRUE(mgr.WaitForSessions(2, kWait));
  auto identity = module.GetIdentity();
  EXPECT_EQ((*identity)->incarnation(), 2u);  // The default Join bumps it.
  EXPECT_TRUE(module.ListGrants()->empty());
  EXPECT_EQ(CounterValue(*agent, "agent.grants_revoked"), 1u);
  auto registers = mgr.registers();
  ASSERT_EQ(registers.size(), 1u);
  EXPECT_EQ(registers[0].lmr_id(), own_lmr);
  EXPECT_EQ(registers[0].origin(), lite::v1::LMR_ORIGIN_ALLOCATED);
  EXPECT_EQ(registers[0].caller().incarnation(), 2u);
  EXPECT_EQ(registers[0].size_bytes(), 8192u);
  EXPECT_TRUE(mgr.restores().empty());  // Not restored: nothing to restore.
  // The module's record carries the new epoch.
  auto hosted = module.ListHostedLmrs();
  ASSERT_EQ(hosted->size(), 1u);
  EXPECT_EQ((*hosted)[0].epoch(), 2u);
  agent->Shutdown();
}

TEST(AgentTest, ReRegistersAndRestoresGrantsAfterAManagerRestart) {
  auto first = std::make_unique<FakeManagerServer>();
  const int port = first->port();
  first->manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(1);
        resp->set_incarnation(4);
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        *resp->add_members() = MakeMember(1, 4, req.rdma_address());
        *resp->add_members() = MakeMember(2, 1, "10.0.0.2:7471");
        return grpc::Status::OK;
      });
  FakeModule module;
  auto agent = MakeAgent(first->address(), &module);
  agent->Start();
  ASSERT_TRUE(first->manager().WaitForSessions(1, kWait));
  const uint64_t own_lmr = (uint64_t{1} << 32) | 1;
  first->manager().Push(AllocRequest(1, own_lmr, 4096));
  ASSERT_TRUE(
      Eventually([&] { return ResultFor(first->manager(), 1).has_value(); }));
  uint64_t map =
      module.InjectUpcall(AppCreds(), MapUpcall{.name = "x", .write = true});
  ASSERT_TRUE(module.WaitForReply(map, kWait).ok());
  auto grants = module.ListGrants();
  ASSERT_EQ(grants->size(), 1u);
  const uint64_t grant_id = (*grants)[0].grant_id();

  // The manager dies and comes back empty on the same port.
  first->Stop();
  first.reset();
  FakeManagerServer second(port);
  ASSERT_EQ(second.port(), port);
  second.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(req.restore().node_id());
        resp->set_incarnation(req.restore().incarnation());
        resp->set_restored(true);
        resp->set_manager_recovering(true);
        resp->set_recovery_remaining_ms(5000);
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        *resp->add_members() = MakeMember(1, 4, req.rdma_address());
        return grpc::Status::OK;
      });
  ASSERT_TRUE(second.manager().WaitForSessions(1, kWait));
  auto joins = second.manager().joins();
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].restore().node_id(), 1u);
  EXPECT_EQ(joins[0].restore().incarnation(), 4u);
  // Re-registration and grant restore come before the session.
  EXPECT_EQ(second.manager().call_order(),
            (std::vector<std::string>{"Join", "RegisterLmr", "RestoreGrant",
                                      "Session"}));
  EXPECT_EQ(second.manager().registers()[0].lmr_id(), own_lmr);
  // Both keys, so read grants keep the read-only one (review cp L13).
  EXPECT_EQ(second.manager().registers()[0].memory_key(), 0x117eu);
  EXPECT_EQ(second.manager().registers()[0].read_key(), 0x117fu);
  EXPECT_EQ(second.manager().restores()[0].grant().grant_id(), grant_id);
  EXPECT_EQ(module.ListGrants()->size(), 1u);
  // Peer 2 has not come back yet, but the manager is recovering: kept...
  ASSERT_EQ(agent->Peers().size(), 1u);
  // ...until RecoveryComplete says who made it.
  ManagerMessage done;
  done.mutable_event()->set_sequence(1);
  *done.mutable_event()->mutable_recovery_complete()->add_members() =
      MakeMember(1, 4, "127.0.0.1:7471");
  second.manager().Push(done);
  ASSERT_TRUE(Eventually([&] { return agent->Peers().empty(); }));
  EXPECT_TRUE(HasCall(module, "RemovePeer 2 1"));
  EXPECT_GE(agent->Status().reconnects(), 1u);
  agent->Shutdown();
}

TEST(AgentTest, RefusedGrantRestoreIsRevokedLocally) {
  auto first = std::make_unique<FakeManagerServer>();
  const int port = first->port();
  FakeModule module;
  auto agent = MakeAgent(first->address(), &module);
  agent->Start();
  ASSERT_TRUE(first->manager().WaitForSessions(1, kWait));
  uint64_t map =
      module.InjectUpcall(AppCreds(), MapUpcall{.name = "x", .read = true});
  ASSERT_TRUE(module.WaitForReply(map, kWait).ok());
  ASSERT_EQ(module.ListGrants()->size(), 1u);
  first->Stop();
  first.reset();
  FakeManagerServer second(port);
  second.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(req.restore().node_id());
        resp->set_incarnation(req.restore().incarnation());
        resp->set_restored(true);
        resp->set_manager_recovering(true);
        resp->set_lease_duration_ms(1000);
        resp->set_heartbeat_interval_ms(20);
        return grpc::Status::OK;
      });
  second.manager().OnRestoreGrant([](const lite::v1::RestoreGrantRequest&,
                                     lite::v1::RestoreGrantResponse*) {
    return grpc::Status(grpc::PERMISSION_DENIED, "mode 0600 denies");
  });
  ASSERT_TRUE(second.manager().WaitForSessions(1, kWait));
  // The revocation runs on the revoker's thread (lite.ko drains the grant
  // first), so it may end after the session opened.
  EXPECT_TRUE(Eventually([&] { return module.ListGrants()->empty(); }));
  agent->Shutdown();
}

TEST(AgentTest, UpcallsWaitForTheSessionThenCallTheManager) {
  FakeManagerServer server;
  FakeModule module;
  // Queued before the agent even started.
  uint64_t reg = module.InjectUpcall(
      AppCreds(),
      RegisterUpcall{.name = "buf", .size_bytes = 1 << 20, .mode = 0640});
  uint64_t map = module.InjectUpcall(
      AppCreds(), MapUpcall{.name = "remote", .read = true, .write = true});
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  auto reg_reply = module.WaitForReply(reg, kWait);
  ASSERT_TRUE(reg_reply.ok()) << reg_reply.status();
  ASSERT_TRUE(reg_reply->status.ok()) << reg_reply->status;
  auto registers = server.manager().registers();
  ASSERT_EQ(registers.size(), 1u);
  EXPECT_EQ(registers[0].name(), "buf");
  EXPECT_EQ(registers[0].mode(), 0640u);
  EXPECT_EQ(registers[0].owner().pid(), 42u);
  EXPECT_EQ(registers[0].lmr_id(), 0u);  // A new registration.
  EXPECT_EQ(registers[0].caller().node_id(), 1u);
  auto hosted = module.ListHostedLmrs();
  ASSERT_EQ(hosted->size(), 1u);
  EXPECT_EQ((*hosted)[0].lmr_id(), reg_reply->lmr->lmr_id());

  auto map_reply = module.WaitForReply(map, kWait);
  ASSERT_TRUE(map_reply.ok() && map_reply->status.ok());
  ASSERT_EQ(module.ListGrants()->size(), 1u);
  auto maps = server.manager().maps();
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_TRUE(maps[0].access().read() && maps[0].access().write());
  agent->Shutdown();
}

TEST(AgentTest, FreesAnLmrWhoseAllocatingCallerWasGoneWhenTheAnswerCame) {
  FakeManagerServer server;
  FakeModule module;
  // The caller of the first ALLOC left after lite.ko took the answer
  // (ECANCELED), the second's before (ENOENT); the third is answered.
  const uint64_t cancelled =
      module.InjectUpcall(AppCreds(), AllocUpcall{.name = "gone1",
                                                  .size_bytes = 4096,
                                                  .mode = 0600,
                                                  .home_node_id = 0});
  module.FailCompletion(cancelled, absl::CancelledError("ECANCELED"));
  const uint64_t dropped =
      module.InjectUpcall(AppCreds(), AllocUpcall{.name = "gone2",
                                                  .size_bytes = 4096,
                                                  .mode = 0600,
                                                  .home_node_id = 0});
  module.FailCompletion(dropped, absl::NotFoundError("ENOENT"));
  const uint64_t kept = module.InjectUpcall(
      AppCreds(),
      AllocUpcall{
          .name = "kept", .size_bytes = 4096, .mode = 0600, .home_node_id = 0});
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  auto reply = module.WaitForReply(kept, kWait);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_TRUE(reply->status.ok()) << reply->status;
  ASSERT_TRUE(Eventually([&] { return server.manager().frees().size() >= 2; }));
  absl::SleepFor(absl::Milliseconds(100));  // Nothing else is freed.
  const auto frees = server.manager().frees();
  ASSERT_EQ(frees.size(), 2u);
  std::vector<std::string> names;
  for (const auto& f : frees) {
    names.push_back(f.name());
    // As the owner who asked: only the owner may free.
    EXPECT_EQ(f.requester().uid(), AppCreds().uid());
    EXPECT_EQ(f.requester().pid(), AppCreds().pid());
    EXPECT_EQ(f.caller().node_id(), 1u);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"gone1", "gone2"}));
  EXPECT_EQ(server.manager().allocs().size(), 3u);
  int freed = -1;
  for (const auto& c : agent->CounterSnapshot()) {
    if (c.name() == "agent.lmrs_unclaimed_freed") freed = c.value();
  }
  EXPECT_EQ(freed, 2);
  agent->Shutdown();
}

TEST(AgentTest, ReportsTheDataPathVerdictOnAPeerToTheManager) {
  FakeManagerServer server;
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  ASSERT_TRUE(Eventually([&] {
    return agent->Status().manager_connection_state() ==
           lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
  }));
  // Connection trouble (not reported), this node itself (not reported), and
  // the data path's verdict on node 3 (reported).
  PeerConnectionFailed reset;
  reset.node_id = 3;
  reset.incarnation = 5;
  reset.reason_errno = ECONNRESET;
  module.InjectPeerConnectionFailed(reset);
  PeerConnectionFailed self = reset;
  self.node_id = 1;
  self.reason_errno = EHOSTDOWN;
  module.InjectPeerConnectionFailed(self);
  PeerConnectionFailed down = reset;
  down.reason_errno = EHOSTDOWN;
  down.reason = "Host is down (EHOSTDOWN) on QP 0";
  module.InjectPeerConnectionFailed(down);
  auto reports = [&] {
    std::vector<lite::v1::PeerFailureReport> out;
    for (const auto& m : server.manager().received()) {
      if (m.has_peer_failure()) out.push_back(m.peer_failure());
    }
    return out;
  };
  ASSERT_TRUE(Eventually([&] { return !reports().empty(); }));
  absl::SleepFor(absl::Milliseconds(100));  // Nothing else comes.
  const auto got = reports();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].node_id(), 3u);
  EXPECT_EQ(got[0].incarnation(), 5u);
  EXPECT_EQ(got[0].reason_errno(), EHOSTDOWN);
  EXPECT_EQ(got[0].detail(), "Host is down (EHOSTDOWN) on QP 0");
  bool counted = false;
  for (const auto& c : agent->CounterSnapshot()) {
    if (c.name() == "agent.peer_failures_reported") {
      counted = c.value() == 1;
    }
  }
  EXPECT_TRUE(counted);
  agent->Shutdown();
}

TEST(AgentTest, NoHeartbeatAckEndsTheSession) {
  FakeManagerServer server;
  server.manager().SetAutoAck(false);
  server.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(1);
        resp->set_incarnation(1);
        resp->set_lease_duration_ms(200);
        resp->set_heartbeat_interval_ms(20);
        return grpc::Status::OK;
      });
  FakeModule module;
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  ASSERT_TRUE(server.manager().WaitForSessions(2, kWait));
  EXPECT_TRUE(
      absl::StrContains(agent->Status().last_error(), "no heartbeat ack"))
      << agent->Status().last_error();
  agent->Shutdown();
}

// A request lite.ko takes long over (a big LMR) runs beside the stream's
// reader: heartbeat acks are still read, so the session stays open (it
// used to end for want of acks: #32).
TEST(AgentTest, ASlowModuleCallDoesNotEndTheSession) {
  FakeManagerServer server;
  server.manager().OnJoin(
      [](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp) {
        resp->set_node_id(1);
        resp->set_incarnation(1);
        resp->set_lease_duration_ms(200);
        resp->set_heartbeat_interval_ms(20);
        return grpc::Status::OK;
      });
  // Four times the 400 ms the agent waits for an ack.
  FakeModule module(
      FakeModuleOptions{.allocate_delay = absl::Milliseconds(1600)});
  auto agent = MakeAgent(server.address(), &module);
  agent->Start();
  FakeManager& mgr = server.manager();
  ASSERT_TRUE(mgr.WaitForSessions(1, kWait));
  const uint64_t acks_before = CounterValue(*agent, "agent.heartbeat_acks");
  mgr.Push(AllocRequest(201, (uint64_t{1} << 32) | 3, 4096));
  ASSERT_TRUE(Eventually([&] { return ResultFor(mgr, 201).has_value(); }));
  EXPECT_EQ(ResultFor(mgr, 201)->status_code(), 0);
  // Acks kept coming while lite.ko worked (one per 20 ms heartbeat).
  EXPECT_GT(CounterValue(*agent, "agent.heartbeat_acks"), acks_before + 20);
  EXPECT_EQ(CounterValue(*agent, "agent.sessions_ended"), 0u)
      << agent->Status().last_error();
  EXPECT_FALSE(mgr.WaitForSessions(2, absl::Milliseconds(100)));
  agent->Shutdown();
}

TEST(AgentTest, BacksOffWhileTheManagerIsUnreachable) {
  // Nothing listens on this port once the server is gone.
  int port;
  {
    FakeManagerServer probe;
    port = probe.port();
  }
  FakeModule module;
  auto agent = MakeAgent(absl::StrCat("127.0.0.1:", port), &module);
  agent->Start();
  ASSERT_TRUE(Eventually([&] { return agent->Status().reconnects() >= 3; }));
  auto status = agent->Status();
  EXPECT_TRUE(absl::StrContains(status.last_error(), "UNAVAILABLE"))
      << status.last_error();
  EXPECT_EQ(status.node_id(), 0u);
  // And it joins once the manager is there.
  FakeManagerServer server(port);
  ASSERT_TRUE(server.manager().WaitForSessions(1, kWait));
  const absl::Time t0 = absl::Now();
  agent->Shutdown();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(4));
}

}  // namespace
}  // namespace lite::agent
