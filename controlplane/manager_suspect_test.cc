// SUSPECT (manager_suspect.cc): a lease that runs out while peers with open
// sessions can be asked makes the node SUSPECT, and its peers are asked
// whether its lite.ko still acknowledges. It is failed only when they find
// it gone, none answers within a round, or --suspect_max_ms passes; a
// heartbeat recovers it with nothing taken away. While SUSPECT its LMRs
// stay listed, grants into them stay, and new maps, allocations and binds
// that need its agent are UNAVAILABLE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

constexpr absl::Duration kLease = absl::Seconds(1);
// ProbeRound(): max(lease, request_timeout).
constexpr absl::Duration kRound = absl::Seconds(2);
constexpr absl::Duration kSuspectMax = absl::Seconds(7);

class SuspectTest : public ManagerTest {
 protected:
  void SetUp() override {
    ManagerOptions options = TestOptions();
    options.lease = kLease;
    options.request_timeout = kRound;
    options.suspect_max = kSuspectMax;
    Restart(options);
    a_ = JoinAndOpen("alpha", 1);
    b_ = JoinAndOpen("beta", 2);
    c_ = JoinAndOpen("gamma", 3);
    lmr_ = Register(b_, "beta.mem", 0644, Creds(1000, 100));
    held_ = Map(a_, "beta.mem", Creds(1000, 100), true, false);
    DrainAll();
  }
  void DrainAll() {
    for (TestNode* node : {&a_, &b_, &c_}) Drain(*node->outbox);
  }
  // Time passes; a and c heartbeat, b (the agent that stopped) does not.
  void Pass(absl::Duration d) {
    const absl::Duration step = absl::Milliseconds(250);
    for (absl::Duration t; t < d; t += step) {
      clock_.Advance(step);
      Beat(a_);
      Beat(c_);
      state_->Tick();
    }
  }
  // The ProbePeer requests queued for `node`; events into `events`.
  std::vector<lite::v1::NodeRequest> Probes(const TestNode& node,
                                            std::vector<Event>* events) {
    std::vector<lite::v1::NodeRequest> probes;
    for (const auto& message : Drain(*node.outbox)) {
      if (message.has_request() && message.request().has_probe_peer()) {
        probes.push_back(message.request());
      }
      if (events != nullptr && message.has_event()) {
        events->push_back(message.event());
      }
    }
    return probes;
  }
  static lite::v1::NodeRequestResult Alive(uint64_t request_id,
                                           uint64_t incarnation) {
    lite::v1::NodeRequestResult result;
    result.set_request_id(request_id);
    result.mutable_probed_peer()->set_incarnation(incarnation);
    result.mutable_probed_peer()->set_round_trip_ns(42000);
    return result;
  }
  static lite::v1::NodeRequestResult Refused(uint64_t request_id,
                                             absl::StatusCode code) {
    lite::v1::NodeRequestResult result;
    result.set_request_id(request_id);
    result.set_status_code(static_cast<int32_t>(code));
    result.set_status_message("node 2: Host is down (EHOSTDOWN)");
    return result;
  }
  absl::StatusOr<lite::v1::MapLmrResponse> MapFrom(const TestNode& holder) {
    lite::v1::MapLmrRequest request;
    *request.mutable_caller() = holder.caller();
    *request.mutable_requester() = Creds(1000, 100);
    request.set_name("beta.mem");
    *request.mutable_access() = Access(true, false);
    return state_->MapLmr(request);
  }
  bool BetaListedSuspect() {
    auto nodes = state_->ListNodes(lite::v1::ListNodesRequest());
    EXPECT_TRUE(nodes.ok());
    for (const auto& n : nodes->nodes()) {
      if (n.node_id() == b_.id) return n.suspect_since_unix_ms() != 0;
    }
    ADD_FAILURE() << "beta not listed";
    return false;
  }
  static const Event* Find(const std::vector<Event>& events,
                           Event::KindCase kind) {
    for (const Event& e : events) {
      if (e.kind_case() == kind) return &e;
    }
    return nullptr;
  }
  // Into SUSPECT: the lease runs out; returns the probes a and c got.
  std::vector<lite::v1::NodeRequest> Suspect(std::vector<Event>* events) {
    Pass(kLease + absl::Milliseconds(250));
    std::vector<lite::v1::NodeRequest> probes = Probes(a_, events);
    for (const auto& p : Probes(c_, nullptr)) probes.push_back(p);
    return probes;
  }

  TestNode a_, b_, c_;
  lite::v1::Lmr lmr_;
  lite::v1::Grant held_;
};

TEST_F(SuspectTest, LeaseRunsOutIntoSuspectAndEveryOtherPeerIsAsked) {
  std::vector<Event> events;
  const std::vector<lite::v1::NodeRequest> probes = Suspect(&events);
  ASSERT_EQ(probes.size(), 2u);
  for (const auto& p : probes) {
    EXPECT_EQ(p.probe_peer().node_id(), b_.id);
    EXPECT_EQ(p.probe_peer().incarnation(), b_.incarnation);
  }
  const Event* suspected = Find(events, Event::kMemberSuspected);
  ASSERT_NE(suspected, nullptr);
  EXPECT_EQ(suspected->member_suspected().node_id(), b_.id);
  EXPECT_THAT(suspected->member_suspected().reason(),
              HasSubstr("no heartbeat for"));
  EXPECT_EQ(Find(events, Event::kMemberFailed), nullptr);
  EXPECT_TRUE(BetaListedSuspect());
  EXPECT_EQ(state_->counters().failures, 0u);
  EXPECT_EQ(state_->counters().suspicions, 1u);
  EXPECT_EQ(state_->counters().probes_sent, 2u);
}

TEST_F(SuspectTest, WhileSuspectItsLmrsStayAndNewMapsAreUnavailable) {
  std::vector<Event> events;
  Suspect(&events);
  EXPECT_EQ(Find(events, Event::kLmrRemoved), nullptr);
  EXPECT_EQ(Find(events, Event::kGrantRevoked), nullptr);
  auto lmrs = state_->ListLmrs(lite::v1::ListLmrsRequest());
  ASSERT_TRUE(lmrs.ok());
  ASSERT_EQ(lmrs->lmrs_size(), 1);
  EXPECT_EQ(lmrs->lmrs(0).name(), "beta.mem");
  const absl::StatusOr<lite::v1::MapLmrResponse> mapped = MapFrom(c_);
  EXPECT_EQ(mapped.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(mapped.status().message(), HasSubstr("SUSPECT"));
  EXPECT_THAT(mapped.status().message(), HasSubstr("beta.mem"));
  // An allocation on it needs its agent too.
  lite::v1::AllocLmrRequest alloc;
  *alloc.mutable_caller() = a_.caller();
  *alloc.mutable_owner() = Creds(1000, 100);
  alloc.set_name("on.beta");
  alloc.set_size_bytes(4096);
  alloc.set_mode(0600);
  alloc.set_home_node_id(b_.id);
  const absl::Status allocated =
      state_->AllocLmr(alloc, [](absl::StatusOr<lite::v1::AllocLmrResponse>) {
        ADD_FAILURE() << "an allocation on a SUSPECT node was started";
      });
  EXPECT_EQ(allocated.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(allocated.message(), HasSubstr("SUSPECT"));
}

TEST_F(SuspectTest, APeerReachingItKeepsItSuspectAndAHeartbeatRecoversIt) {
  std::vector<Event> events;
  std::vector<lite::v1::NodeRequest> probes = Suspect(&events);
  ASSERT_EQ(probes.size(), 2u);
  // a reaches it; c's probe is still out at the round's end.
  ASSERT_TRUE(state_
                  ->HandleResult(a_.binding(),
                                 Alive(probes[0].request_id(), b_.incarnation))
                  .ok());
  Pass(kRound);
  events.clear();
  probes = Probes(a_, &events);
  for (const auto& p : Probes(c_, nullptr)) probes.push_back(p);
  EXPECT_EQ(probes.size(), 2u) << "a second round is asked";
  EXPECT_EQ(Find(events, Event::kMemberFailed), nullptr);
  EXPECT_TRUE(BetaListedSuspect());

  Beat(b_);
  events = DrainEvents(*a_.outbox);
  const Event* recovered = Find(events, Event::kMemberRecovered);
  ASSERT_NE(recovered, nullptr);
  EXPECT_EQ(recovered->member_recovered().node_id(), b_.id);
  EXPECT_GE(recovered->member_recovered().suspected_ms(),
            absl::ToInt64Milliseconds(kRound));
  EXPECT_FALSE(BetaListedSuspect());
  EXPECT_TRUE(MapFrom(c_).ok());
  EXPECT_EQ(state_->counters().suspicions_recovered, 1u);
  EXPECT_EQ(state_->counters().failures, 0u);
  // The grant taken before the pause was never touched.
  auto grants = state_->ListGrants(lite::v1::ListGrantsRequest());
  ASSERT_TRUE(grants.ok());
  bool found = false;
  for (const auto& g : grants->grants())
    found |= g.grant_id() == held_.grant_id();
  EXPECT_TRUE(found);
  // A late answer of the abandoned round changes nothing.
  EXPECT_TRUE(state_
                  ->HandleResult(c_.binding(), Alive(probes.back().request_id(),
                                                     b_.incarnation))
                  .ok());
}

TEST_F(SuspectTest, EveryPeerFindingItUnreachableFailsItAtOnce) {
  std::vector<Event> events;
  const std::vector<lite::v1::NodeRequest> probes = Suspect(&events);
  ASSERT_EQ(probes.size(), 2u);
  const TestNode* asked[] = {&a_, &c_};
  // Which peer each probe went to: a's were drained first.
  ASSERT_TRUE(state_
                  ->HandleResult(asked[0]->binding(),
                                 Refused(probes[0].request_id(),
                                         absl::StatusCode::kUnavailable))
                  .ok());
  EXPECT_EQ(state_->counters().failures, 0u) << "one peer is not all";
  ASSERT_TRUE(state_
                  ->HandleResult(asked[1]->binding(),
                                 Refused(probes[1].request_id(),
                                         absl::StatusCode::kNotFound))
                  .ok());
  events = DrainEvents(*a_.outbox);
  const Event* failed = Find(events, Event::kMemberFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->member_failed().cause(),
            lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
  EXPECT_THAT(failed->member_failed().reason(),
              HasSubstr("1 found it unreachable, 1 could not tell"));
  EXPECT_NE(Find(events, Event::kLmrRemoved), nullptr);
  EXPECT_EQ(state_->counters().suspect_failures, 1u);
}

TEST_F(SuspectTest, NoAnswerWithinTheRoundFailsIt) {
  std::vector<Event> events;
  Suspect(&events);
  Pass(kRound);
  events = DrainEvents(*a_.outbox);
  const Event* failed = Find(events, Event::kMemberFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_THAT(failed->member_failed().reason(), HasSubstr("2 did not answer"));
}

TEST_F(SuspectTest, TheBoundFailsItThoughItsKernelStillAnswers) {
  std::vector<Event> events;
  std::vector<lite::v1::NodeRequest> probes = Suspect(&events);
  int rounds = 0;
  while (state_->counters().failures == 0 && rounds < 30) {
    // Every probe answered alive by whoever got it.
    std::vector<lite::v1::NodeRequest> from_a = Probes(a_, nullptr);
    std::vector<lite::v1::NodeRequest> from_c = Probes(c_, nullptr);
    if (rounds == 0) {
      from_a.assign(probes.begin(), probes.begin() + 1);
      from_c.assign(probes.begin() + 1, probes.end());
    }
    for (const auto& p : from_a) {
      ASSERT_TRUE(state_
                      ->HandleResult(a_.binding(),
                                     Alive(p.request_id(), b_.incarnation))
                      .ok());
    }
    for (const auto& p : from_c) {
      ASSERT_TRUE(state_
                      ->HandleResult(c_.binding(),
                                     Alive(p.request_id(), b_.incarnation))
                      .ok());
    }
    Pass(absl::Milliseconds(500));
    ++rounds;
  }
  events = DrainEvents(*a_.outbox);
  const Event* failed = Find(events, Event::kMemberFailed);
  ASSERT_NE(failed, nullptr);
  EXPECT_THAT(failed->member_failed().reason(), HasSubstr("--suspect_max_ms"));
  // Exactly at the bound, not at a round's end after it.
  EXPECT_THAT(failed->member_failed().reason(),
              HasSubstr("SUSPECT for 7000 ms"));
}

TEST_F(SuspectTest, AnAnswerFromAnotherNodeOrIncarnationIsNotTaken) {
  std::vector<Event> events;
  const std::vector<lite::v1::NodeRequest> probes = Suspect(&events);
  ASSERT_EQ(probes.size(), 2u);
  // probes[1] went to c: a may not answer it.
  EXPECT_EQ(state_
                ->HandleResult(a_.binding(),
                               Alive(probes[1].request_id(), b_.incarnation))
                .code(),
            absl::StatusCode::kInvalidArgument);
  // An OK without its result.
  lite::v1::NodeRequestResult empty;
  empty.set_request_id(probes[0].request_id());
  EXPECT_EQ(state_->HandleResult(a_.binding(), empty).code(),
            absl::StatusCode::kInvalidArgument);
  // Another incarnation acknowledged: could not tell, not alive.
  ASSERT_TRUE(state_
                  ->HandleResult(a_.binding(), Alive(probes[0].request_id(),
                                                     b_.incarnation + 1))
                  .ok());
  ASSERT_TRUE(
      state_
          ->HandleResult(c_.binding(), Refused(probes[1].request_id(),
                                               absl::StatusCode::kUnavailable))
          .ok());
  EXPECT_EQ(state_->counters().failures, 1u);
}

TEST_F(SuspectTest, WithNoPeerToAskTheLeaseFailsItAsBefore) {
  // a and c leave: nobody is left to ask about b.
  for (const TestNode* node : {&a_, &c_}) {
    lite::v1::LeaveRequest leave;
    *leave.mutable_caller() = node->caller();
    ASSERT_TRUE(state_->Leave(leave).ok());
  }
  clock_.Advance(kLease + absl::Milliseconds(1));
  state_->Tick();
  EXPECT_EQ(state_->counters().failures, 1u);
  EXPECT_EQ(state_->counters().suspicions, 0u);
}

TEST_F(SuspectTest, ZeroSuspectMaxFailsAtTheLease) {
  ManagerOptions options = TestOptions();
  options.suspect_max = absl::ZeroDuration();
  Restart(options);
  a_ = JoinAndOpen("alpha", 1);
  b_ = JoinAndOpen("beta", 2);
  clock_.Advance(kLease / 2);
  Beat(a_);
  clock_.Advance(kLease / 2 + absl::Milliseconds(1));
  Beat(a_);
  state_->Tick();
  EXPECT_EQ(state_->counters().failures, 1u);
  EXPECT_EQ(state_->counters().suspicions, 0u);
}

}  // namespace
}  // namespace lite::controlplane::testing
