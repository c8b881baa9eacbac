// The agent's half of the fenced free against a scripted manager and the
// fake module: revocations off the session thread, asked again after
// ETIMEDOUT and acknowledged once drained (or given back by an UNMAP),
// ReleaseLmrMemory with and without quarantine, LMR_LOST reported, and a
// releasing LMR kept releasing across an agent restart.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/fake_module.h"
#include "agent/testing/fake_manager.h"
#include "agent/testing/test_agent.h"

namespace lite::agent {
namespace {

using lite::v1::ManagerMessage;
using testing::FakeManager;
using testing::FakeManagerServer;

constexpr absl::Duration kWait = absl::Seconds(10);

bool Eventually(const std::function<bool()>& pred) {
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return pred();
}

std::unique_ptr<Agent> MakeAgent(const std::string& address,
                                 FakeModule* module) {
  AgentOptions o = testing::TestAgentOptions(address);
  o.revoker.retry_after_timeout = absl::Milliseconds(20);
  return testing::MakeTestAgent(o, module);
}

uint64_t CounterValue(const Agent& agent, const std::string& name) {
  for (const auto& c : agent.CounterSnapshot()) {
    if (c.name() == name) return c.value();
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

int CallCount(FakeModule& module, const std::string& call) {
  auto calls = module.Calls();
  return static_cast<int>(std::count(calls.begin(), calls.end(), call));
}

std::vector<lite::v1::GrantRevokeAck> Acks(const FakeManager& mgr) {
  std::vector<lite::v1::GrantRevokeAck> out;
  for (const auto& m : mgr.received()) {
    if (m.has_grant_revoke_ack()) out.push_back(m.grant_revoke_ack());
  }
  return out;
}

std::optional<lite::v1::NodeRequestResult> ResultFor(const FakeManager& mgr,
                                                     uint64_t request_id) {
  for (const auto& m : mgr.received()) {
    if (m.has_result() && m.result().request_id() == request_id) {
      return m.result();
    }
  }
  return std::nullopt;
}

ManagerMessage Revoked(uint64_t seq, const lite::v1::Grant& grant, bool ack) {
  ManagerMessage msg;
  msg.mutable_event()->set_sequence(seq);
  auto* g = msg.mutable_event()->mutable_grant_revoked();
  g->set_grant_id(grant.grant_id());
  g->set_lmr_id(grant.lmr_id());
  g->set_holder_node_id(grant.holder_node_id());
  g->set_holder_incarnation(grant.holder_incarnation());
  g->set_cause(lite::v1::REMOVAL_CAUSE_LMR_FREED);
  g->set_ack_requested(ack);
  return msg;
}

ManagerMessage Release(uint64_t request_id, uint64_t lmr_id, bool quarantine) {
  ManagerMessage msg;
  msg.mutable_request()->set_request_id(request_id);
  msg.mutable_request()->set_deadline_ms(5000);
  msg.mutable_request()->mutable_release_lmr_memory()->set_lmr_id(lmr_id);
  msg.mutable_request()->mutable_release_lmr_memory()->set_quarantine(
      quarantine);
  return msg;
}

class AgentReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    agent_ = MakeAgent(server_.address(), &module_);
    agent_->Start();
    ASSERT_TRUE(server_.manager().WaitForSessions(1, kWait));
    ASSERT_TRUE(Eventually([&] {
      return agent_->Status().manager_connection_state() ==
             lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
    }));
  }
  void TearDown() override { agent_->Shutdown(); }
  // A grant an application on this node mapped.
  lite::v1::Grant MapOne() {
    lite::v1::Credentials creds;
    creds.set_uid(1000);
    creds.set_gid(1000);
    creds.set_pid(42);
    const uint64_t map =
        module_.InjectUpcall(creds, MapUpcall{.name = "x", .read = true});
    auto reply = module_.WaitForReply(map, kWait);
    EXPECT_TRUE(reply.ok() && reply->status.ok());
    auto grants = module_.ListGrants();
    EXPECT_EQ(grants->size(), 1u);
    return grants->empty() ? lite::v1::Grant() : grants->front();
  }
  // Host an LMR through an AllocateLmrMemory request.
  void Host(uint64_t request_id, uint64_t lmr_id) {
    ManagerMessage msg;
    msg.mutable_request()->set_request_id(request_id);
    auto* a = msg.mutable_request()->mutable_allocate_lmr_memory();
    a->set_lmr_id(lmr_id);
    a->set_name("m");
    a->set_size_bytes(4096);
    a->set_mode(0600);
    mgr().Push(msg);
    ASSERT_TRUE(
        Eventually([&] { return ResultFor(mgr(), request_id).has_value(); }));
  }
  FakeManager& mgr() { return server_.manager(); }

  FakeManagerServer server_;
  FakeModule module_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentReleaseTest, AcksARevocationOnceDrainedWithoutBlockingEvents) {
  const lite::v1::Grant grant = MapOne();
  // lite.ko answers ETIMEDOUT three times: operations still in flight.
  module_.SetRevokeTimeouts(grant.grant_id(), 3);
  mgr().Push(Revoked(1, grant, /*ack=*/true));
  ManagerMessage drain;
  drain.mutable_event()->set_sequence(2);
  drain.mutable_event()->mutable_member_drain_changed()->set_node_id(1);
  mgr().Push(drain);
  ASSERT_TRUE(Eventually([&] { return !Acks(mgr()).empty(); }));
  EXPECT_EQ(agent_->Status().applied_event_sequence(), 2u);
  const auto acks = Acks(mgr());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].grant_id(), grant.grant_id());
  EXPECT_EQ(acks[0].holder_incarnation(), grant.holder_incarnation());
  const std::string id = absl::StrFormat("%#x", grant.grant_id());
  EXPECT_EQ(CallCount(module_, "RevokeGrant " + id + " ETIMEDOUT"), 3);
  EXPECT_EQ(CallCount(module_, "RevokeGrant " + id), 1);
  EXPECT_EQ(CounterValue(*agent_, "agent.grant_revokes_timed_out"), 3u);
  EXPECT_EQ(CounterValue(*agent_, "agent.grant_revoke_acks"), 1u);
  EXPECT_TRUE(module_.ListRevokedGrants()->empty());
}

// Review cp H2: one LmrRemoved (revokes_grants) stands for every grant into
// the LMR; the holder revokes each of its own and, with release_follows,
// acknowledges each once drained. Grants into other LMRs stay.
TEST_F(AgentReleaseTest, LmrRemovedRevokesAndAcksEveryOwnGrantIntoIt) {
  lite::v1::Credentials creds;
  creds.set_uid(1000);
  creds.set_gid(1000);
  creds.set_pid(42);
  for (int i = 0; i < 3; ++i) {
    const uint64_t map =
        module_.InjectUpcall(creds, MapUpcall{.name = "x", .read = true});
    auto reply = module_.WaitForReply(map, kWait);
    ASSERT_TRUE(reply.ok() && reply->status.ok());
  }
  const std::vector<lite::v1::Grant> grants = *module_.ListGrants();
  ASSERT_EQ(grants.size(), 3u);
  module_.SetRevokeTimeouts(grants[1].grant_id(), 2);  // Still draining.
  ManagerMessage other;
  other.mutable_event()->set_sequence(1);
  auto* o = other.mutable_event()->mutable_lmr_removed();
  o->set_lmr_id(grants[0].lmr_id() + 1);  // Another LMR: nothing to do here.
  o->set_home_node_id(2);
  o->set_cause(lite::v1::REMOVAL_CAUSE_LMR_FREED);
  o->set_revokes_grants(true);
  o->set_release_follows(true);
  mgr().Push(other);
  ManagerMessage removed = other;
  removed.mutable_event()->set_sequence(2);
  removed.mutable_event()->mutable_lmr_removed()->set_lmr_id(
      grants[0].lmr_id());
  removed.mutable_event()->mutable_lmr_removed()->set_grants_revoked(3);
  mgr().Push(removed);
  ASSERT_TRUE(Eventually([&] { return Acks(mgr()).size() == 3; }));
  std::vector<uint64_t> acked;
  for (const auto& ack : Acks(mgr())) {
    acked.push_back(ack.grant_id());
    EXPECT_EQ(ack.holder_incarnation(), grants[0].holder_incarnation());
  }
  std::sort(acked.begin(), acked.end());
  EXPECT_EQ(acked,
            (std::vector<uint64_t>{grants[0].grant_id(), grants[1].grant_id(),
                                   grants[2].grant_id()}));
  EXPECT_TRUE(module_.ListGrants()->empty());
  EXPECT_EQ(CounterValue(*agent_, "agent.grant_revokes_timed_out"), 2u);
}

TEST_F(AgentReleaseTest, NoAckWhenTheManagerDoesNotAskForOne) {
  const lite::v1::Grant grant = MapOne();
  mgr().Push(Revoked(1, grant, /*ack=*/false));
  ASSERT_TRUE(Eventually([&] { return module_.ListGrants()->empty(); }));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_TRUE(Acks(mgr()).empty());
  EXPECT_EQ(CounterValue(*agent_, "agent.grants_revoked"), 1u);
}

TEST_F(AgentReleaseTest, AnUnmapOfTheDrainedGrantCompletesTheRevocation) {
  const lite::v1::Grant grant = MapOne();
  module_.SetRevokeTimeouts(grant.grant_id(), 1000000);  // Never drains.
  mgr().Push(Revoked(1, grant, /*ack=*/true));
  ASSERT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.grant_revokes_timed_out") > 0;
  }));
  EXPECT_TRUE(Acks(mgr()).empty());
  // lite.ko gives the parked grant back once it drained.
  lite::v1::Credentials creds;
  creds.set_uid(1000);
  creds.set_gid(1000);
  creds.set_pid(42);
  module_.InjectUpcall(creds, UnmapUpcall{.grant_id = grant.grant_id()});
  ASSERT_TRUE(Eventually([&] { return !Acks(mgr()).empty(); }));
  EXPECT_EQ(Acks(mgr())[0].grant_id(), grant.grant_id());
  EXPECT_EQ(CounterValue(*agent_, "agent.grants_given_back"), 1u);
}

TEST_F(AgentReleaseTest, ReleaseFreesOrQuarantinesOnlyWhenAsked) {
  const uint64_t lmr1 = (uint64_t{1} << 32) | 7;
  const uint64_t lmr2 = (uint64_t{1} << 32) | 8;
  Host(1, lmr1);
  Host(2, lmr2);
  // LmrRemoved with release_follows keeps the memory.
  ManagerMessage removed;
  removed.mutable_event()->set_sequence(1);
  auto* r = removed.mutable_event()->mutable_lmr_removed();
  r->set_lmr_id(lmr1);
  r->set_home_node_id(1);
  r->set_cause(lite::v1::REMOVAL_CAUSE_LMR_FREED);
  r->set_release_follows(true);
  mgr().Push(removed);
  ASSERT_TRUE(Eventually(
      [&] { return agent_->Status().applied_event_sequence() == 1; }));
  EXPECT_EQ(module_.ListHostedLmrs()->size(), 2u);
  mgr().Push(Release(10, lmr1, /*quarantine=*/false));
  mgr().Push(Release(11, lmr2, /*quarantine=*/true));
  mgr().Push(Release(12, lmr2, /*quarantine=*/false));      // Gone now.
  mgr().Push(Release(13, (uint64_t{2} << 32) | 1, false));  // Not ours.
  ASSERT_TRUE(Eventually([&] { return ResultFor(mgr(), 13).has_value(); }));
  EXPECT_EQ(ResultFor(mgr(), 10)->status_code(), 0);
  EXPECT_EQ(ResultFor(mgr(), 11)->status_code(), 0);
  EXPECT_EQ(ResultFor(mgr(), 12)->status_code(), grpc::NOT_FOUND);
  EXPECT_EQ(ResultFor(mgr(), 13)->status_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(module_.ListHostedLmrs()->empty());
  EXPECT_EQ(CallCount(module_, absl::StrFormat("FreeLmrMemory %#x", lmr1)), 1);
  EXPECT_EQ(
      CallCount(module_, absl::StrFormat("FreeLmrMemory %#x quarantine", lmr2)),
      1);
  EXPECT_EQ(CounterValue(*agent_, "agent.lmrs_released"), 1u);
  EXPECT_EQ(CounterValue(*agent_, "agent.lmrs_quarantined"), 1u);
}

// The home's agent restarts between LmrRemoved(release_follows) and the
// release: lite.ko (here the fake module, which outlives the agent) still
// says the LMR is releasing, so the new agent registers it as releasing —
// the manager then neither takes its name nor announces it — and frees it
// when the manager asks. An LMR that was not freed comes back live.
TEST_F(AgentReleaseTest, ARestartedAgentRegistersAReleasingLmrAsReleasing) {
  const uint64_t freed = (uint64_t{1} << 32) | 7;
  const uint64_t kept = (uint64_t{1} << 32) | 8;
  Host(1, freed);
  Host(2, kept);
  ManagerMessage removed;
  removed.mutable_event()->set_sequence(1);
  auto* r = removed.mutable_event()->mutable_lmr_removed();
  r->set_lmr_id(freed);
  r->set_home_node_id(1);
  r->set_cause(lite::v1::REMOVAL_CAUSE_LMR_FREED);
  r->set_release_follows(true);
  mgr().Push(removed);
  const std::string mark = absl::StrFormat("MarkLmrReleasing %#x", freed);
  ASSERT_TRUE(Eventually([&] { return CallCount(module_, mark) == 1; }));
  EXPECT_EQ(module_.ListHostedLmrs()->size(), 2u);  // Memory kept.

  // The manager answers as litemgr does: a releasing registration is
  // recorded RELEASING, a live one LIVE.
  mgr().OnRegisterLmr([](const lite::v1::RegisterLmrRequest& req,
                         lite::v1::RegisterLmrResponse* resp) {
    lite::v1::Lmr* lmr = resp->mutable_lmr();
    lmr->set_lmr_id(req.lmr_id());
    lmr->set_name(req.name());
    lmr->set_home_node_id(1);
    lmr->set_size_bytes(req.size_bytes());
    lmr->set_epoch(2);
    lmr->set_state(req.releasing() ? lite::v1::LMR_STATE_RELEASING
                                   : lite::v1::LMR_STATE_LIVE);
    return grpc::Status::OK;
  });
  agent_->Shutdown();
  agent_ = MakeAgent(server_.address(), &module_);
  agent_->Start();
  ASSERT_TRUE(server_.manager().WaitForSessions(2, kWait));
  ASSERT_TRUE(Eventually([&] { return mgr().registers().size() == 2; }));
  for (const lite::v1::RegisterLmrRequest& req : mgr().registers()) {
    EXPECT_EQ(req.name(), "m");
    EXPECT_EQ(req.releasing(), req.lmr_id() == freed) << req.lmr_id();
  }
  EXPECT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.lmrs_reregistered_releasing") == 1;
  }));
  EXPECT_EQ(CounterValue(*agent_, "agent.lmrs_reregistered"), 2u);

  // The old incarnation's failure implied every ack: released at once.
  mgr().Push(Release(20, freed, /*quarantine=*/false));
  ASSERT_TRUE(Eventually([&] { return ResultFor(mgr(), 20).has_value(); }));
  EXPECT_EQ(ResultFor(mgr(), 20)->status_code(), 0);
  auto hosted = module_.ListHostedLmrs();
  ASSERT_EQ(hosted->size(), 1u);
  EXPECT_EQ((*hosted)[0].lmr_id(), kept);
  EXPECT_NE((*hosted)[0].state(), lite::v1::LMR_STATE_RELEASING);
  EXPECT_EQ(CallCount(module_, absl::StrFormat("FreeLmrMemory %#x", freed)), 1);
  EXPECT_EQ(CounterValue(*agent_, "agent.lmrs_released"), 1u);
}

TEST_F(AgentReleaseTest, ALostLmrIsReportedToTheManager) {
  const uint64_t lmr = (uint64_t{1} << 32) | 7;
  Host(1, lmr);
  module_.InjectLmrLost(LmrLost{lmr, ENODEV});
  auto lost = [&]() -> std::optional<lite::v1::LmrLost> {
    for (const auto& m : mgr().received()) {
      if (m.has_lmr_lost()) return m.lmr_lost();
    }
    return std::nullopt;
  };
  ASSERT_TRUE(Eventually([&] { return lost().has_value(); }));
  EXPECT_EQ(lost()->lmr_id(), lmr);
  EXPECT_EQ(lost()->reason_errno(), ENODEV);
  EXPECT_EQ(CounterValue(*agent_, "agent.module_events.lmr_lost"), 1u);
  EXPECT_TRUE(Eventually(
      [&] { return CounterValue(*agent_, "agent.lmrs_lost_reported") == 1; }));
}

// Service events are for operators and watchers: the agent sees them, does
// nothing, and counts them by kind, not as events it does not know.
TEST_F(AgentReleaseTest, ServiceEventsAreCountedByKindNotAsUnknown) {
  ManagerMessage added;
  added.mutable_event()->set_sequence(1);
  added.mutable_event()->mutable_service_added()->mutable_service()->set_name(
      "s");
  ManagerMessage removed;
  removed.mutable_event()->set_sequence(2);
  removed.mutable_event()->mutable_service_removed()->set_service_id(7);
  mgr().Push(added);
  mgr().Push(removed);
  ASSERT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.events.service_removed") == 1;
  }));
  EXPECT_EQ(CounterValue(*agent_, "agent.events.service_added"), 1u);
  EXPECT_EQ(CounterValue(*agent_, "agent.events.unknown"), 0u);
  EXPECT_EQ(agent_->Status().manager_connection_state(),
            lite::v1::MANAGER_CONNECTION_STATE_CONNECTED);
}

// SUSPECT is for operators and watchers too: the agent counts both events
// by kind, keeps the suspected peer in lite.ko (its RC connections may be
// serving reads), and a suspicion of itself does not end its session.
TEST_F(AgentReleaseTest, SuspectEventsAreCountedAndThePeerIsKept) {
  ManagerMessage joined;
  joined.mutable_event()->set_sequence(1);
  lite::v1::Member* m =
      joined.mutable_event()->mutable_member_joined()->mutable_member();
  m->set_node_id(2);
  m->set_node_name("n2");
  m->set_incarnation(1);
  m->set_rdma_address("10.0.0.2:7471");
  mgr().Push(joined);
  ManagerMessage peer;
  peer.mutable_event()->set_sequence(2);
  auto* s = peer.mutable_event()->mutable_member_suspected();
  s->set_node_id(2);
  s->set_node_name("n2");
  s->set_incarnation(1);
  s->set_reason("no heartbeat for 1012 ms (lease 1000 ms); asking 1 peer");
  mgr().Push(peer);
  ManagerMessage self;
  self.mutable_event()->set_sequence(3);
  self.mutable_event()->mutable_member_suspected()->set_node_id(1);
  self.mutable_event()->mutable_member_suspected()->set_incarnation(1);
  mgr().Push(self);
  ManagerMessage recovered;
  recovered.mutable_event()->set_sequence(4);
  auto* r = recovered.mutable_event()->mutable_member_recovered();
  r->set_node_id(2);
  r->set_node_name("n2");
  r->set_incarnation(1);
  r->set_suspected_ms(1500);
  mgr().Push(recovered);
  ASSERT_TRUE(Eventually([&] {
    return CounterValue(*agent_, "agent.events.member_recovered") == 1;
  }));
  EXPECT_EQ(CounterValue(*agent_, "agent.events.member_suspected"), 2u);
  EXPECT_EQ(CounterValue(*agent_, "agent.events.unknown"), 0u);
  EXPECT_EQ(CallCount(module_, "RemovePeer 2 1"), 0);
  auto peers = module_.ListPeers();
  ASSERT_TRUE(peers.ok());
  ASSERT_EQ(peers->size(), 1u);
  EXPECT_EQ(peers->front().node_id, 2u);
  EXPECT_EQ(agent_->Status().manager_connection_state(),
            lite::v1::MANAGER_CONNECTION_STATE_CONNECTED);
}

}  // namespace
}  // namespace lite::agent
