// ManagerState: SUSPECT, between a lease that ran out and a failure
// (docs/controlplane.md, "When a node is failed").
//
// A lease measures the agent, not the node: an agent that is stopped,
// swapped out or starved of CPU misses its heartbeats while the node's
// lite.ko keeps serving every mapping into its memory, which needs no agent.
// So when a lease runs out and peers with open sessions can be asked, the
// node becomes SUSPECT instead of FAILED, and up to kProbers of them are
// asked (NodeRequest.probe_peer) whether its lite.ko still acknowledges an
// RDMA WRITE on their RC connections to it (LITE_CMD_PEER_PROBE), as SWIM's
// indirect probes do. Then, per round of ProbeRound():
//  * a heartbeat: MemberRecovered, nothing was taken away;
//  * every asked peer answered and none reached it: failed at once;
//  * the round ended with no peer reaching it: failed;
//  * a peer reached it: another round, up to --suspect_max_ms since the
//    lease ran out, then failed (a node whose agent never comes back must
//    not hold its names and memory forever; the agent's session would end
//    by its HTTP/2 keepalive at about 30 s anyway, common/grpc/keepalive.h).
// While SUSPECT the node's LMRs stay listed and grants into them valid;
// what needs its agent (MapLmr into it, AllocLmr on it, BindService to its
// services) is refused UNAVAILABLE at once. A data-path report from a peer
// (manager_reports.cc) still fails it after two silent heartbeat intervals:
// that is a peer's kernel finding it gone, the same evidence a probe gives.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/log/log.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::ManagerMessage;

namespace {

// Peers asked per round: one that is itself cut off, or slow to answer,
// does not decide alone.
constexpr int kProbers = 3;

int64_t Ms(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

}  // namespace

absl::Duration ManagerState::ProbeRound() const {
  return std::max(options_.lease, options_.request_timeout);
}

void ManagerState::LeaseExpiredLocked(uint32_t node_id, absl::Time now) {
  Live& live = live_.at(node_id);
  const std::string silence =
      live.session_opened
          ? absl::StrCat("no heartbeat for ", Ms(now - live.last_renewal),
                         " ms (lease ", Ms(options_.lease), " ms)")
          : absl::StrCat("no session opened within the ", Ms(options_.lease),
                         " ms lease after Join");
  const bool suspect = live.suspect_since != absl::InfiniteFuture();
  const bool may_suspect = options_.suspect_max > absl::ZeroDuration() &&
                           live.session_opened && !recovering_;
  if (!suspect) {
    expiries_.erase({live.lease_expiry, node_id});
    if (may_suspect && StartProbeRoundLocked(live, now)) {
      live.suspect_since = now;
      ++counters_.suspicions;
      const std::string reason =
          absl::StrCat(silence, "; asking ", live.round_probes.size(),
                       " peers whether its lite.ko still acknowledges");
      LITE_LOG_WARNING("%s is SUSPECT: %s", NodeLabel(live.member), reason);
      Event event;
      auto* m = event.mutable_member_suspected();
      m->set_node_id(node_id);
      m->set_node_name(live.member.node_name());
      m->set_incarnation(live.member.incarnation());
      m->set_reason(reason);
      events_.Emit(std::move(event));
      return;
    }
    EndIncarnationLocked(node_id, /*left=*/false,
                         lite::v1::FAILURE_CAUSE_LEASE_EXPIRED,
                         may_suspect ? absl::StrCat(silence,
                                                    "; no peer with an open "
                                                    "session to ask about it")
                                     : silence);
    return;
  }
  // A round ended (or the bound came).
  expiries_.erase({live.lease_expiry, node_id});
  const int64_t suspected_ms = Ms(now - live.suspect_since);
  std::string reason;
  if (live.round_alive == 0) {
    reason = NoPeerReachedItLocked(live, now);
  } else if (now - live.suspect_since >= options_.suspect_max) {
    reason = absl::StrCat(silence, "; SUSPECT for ", suspected_ms,
                          " ms, the bound (--suspect_max_ms ",
                          Ms(options_.suspect_max), "): its lite.ko answered ",
                          live.alive_by, " ", Ms(now - live.alive_at),
                          " ms ago, but its agent never came back");
  } else if (StartProbeRoundLocked(live, now)) {
    LITE_LOG_INFO(
        "%s still SUSPECT after %d ms: %s reached its lite.ko; asking again",
        NodeLabel(live.member), suspected_ms, live.alive_by);
    return;
  } else {
    reason = absl::StrCat(silence, "; SUSPECT for ", suspected_ms,
                          " ms, and no peer with an open session is left to "
                          "ask about it");
  }
  ++counters_.suspect_failures;
  EndIncarnationLocked(node_id, /*left=*/false,
                       lite::v1::FAILURE_CAUSE_LEASE_EXPIRED, reason);
}

std::string ManagerState::NoPeerReachedItLocked(const Live& live,
                                                absl::Time now) const {
  const int asked = static_cast<int>(live.round_probes.size());
  return absl::StrCat(
      "no heartbeat for ", Ms(now - live.last_renewal), " ms (lease ",
      Ms(options_.lease), " ms); SUSPECT for ", Ms(now - live.suspect_since),
      " ms: of ", asked, " peers asked, ", live.round_down,
      " found it unreachable, ", live.round_other, " could not tell, ",
      asked - live.round_alive - live.round_down - live.round_other,
      " did not answer");
}

bool ManagerState::StartProbeRoundLocked(Live& live, absl::Time now) {
  DropProbesLocked(live);
  const uint32_t target = live.member.node_id();
  // Peers after the target in id order, wrapping: rounds about different
  // nodes spread over the cluster instead of all asking the lowest ids.
  std::vector<Live*> probers;
  auto consider = [&](Live& peer) {
    if (static_cast<int>(probers.size()) >= kProbers) return;
    if (peer.member.node_id() == target || !peer.session_open ||
        peer.suspect_since != absl::InfiniteFuture()) {
      return;
    }
    probers.push_back(&peer);
  };
  for (auto it = live_.upper_bound(target); it != live_.end(); ++it) {
    consider(it->second);
  }
  for (auto it = live_.begin(); it != live_.end() && it->first < target; ++it) {
    consider(it->second);
  }
  if (probers.empty()) return false;

  for (Live* prober : probers) {
    // The round's end, not the request, is waited for (LeaseExpiredLocked).
    const uint64_t request_id = node_requests_.Start(
        NodeRequests::Kind::kProbePeer, prober->member.node_id(),
        prober->member.incarnation(), now);
    Probe probe;
    probe.target = target;
    probe.target_incarnation = live.member.incarnation();
    probes_.emplace(request_id, probe);
    live.round_probes.push_back(request_id);
    ManagerMessage message;
    auto* request = message.mutable_request();
    request->set_request_id(request_id);
    request->set_deadline_ms(Ms(ProbeRound()));
    auto* ask = request->mutable_probe_peer();
    ask->set_node_id(target);
    ask->set_incarnation(live.member.incarnation());
    ++counters_.probes_sent;
    events_.SendTo(prober->member.node_id(), std::move(message));
  }
  absl::Time end = now + ProbeRound();
  if (live.suspect_since != absl::InfiniteFuture()) {
    end = std::min(end, live.suspect_since + options_.suspect_max);
  } else {
    end = std::min(end, now + options_.suspect_max);
  }
  live.lease_expiry = end;
  expiries_.insert({end, target});
  AddDeadlineLocked(end);
  return true;
}

void ManagerState::DropProbesLocked(Live& live) {
  for (uint64_t request_id : live.round_probes) {
    if (probes_.erase(request_id) > 0) {
      node_requests_.End(request_id, NodeRequests::Outcome::kAbandoned,
                         clock_->Now());
    }
  }
  live.round_probes.clear();
  live.round_alive = live.round_down = live.round_other = 0;
}

void ManagerState::RecoverLocked(Live& live, absl::Time now) {
  const int64_t suspected_ms = Ms(now - live.suspect_since);
  DropProbesLocked(live);
  live.suspect_since = absl::InfiniteFuture();
  live.alive_by.clear();
  live.alive_at = absl::InfinitePast();
  ++counters_.suspicions_recovered;
  LITE_LOG_INFO("%s heartbeated again after %d ms SUSPECT: recovered",
                NodeLabel(live.member), suspected_ms);
  Event event;
  auto* m = event.mutable_member_recovered();
  m->set_node_id(live.member.node_id());
  m->set_node_name(live.member.node_name());
  m->set_incarnation(live.member.incarnation());
  m->set_suspected_ms(suspected_ms);
  events_.Emit(std::move(event));
}

absl::Status ManagerState::ProbeResultLocked(
    const SessionBinding& binding, const lite::v1::NodeRequestResult& result) {
  auto it = probes_.find(result.request_id());
  const Probe probe = it->second;
  const bool ok = result.status_code() == 0;
  if (ok && !result.has_probed_peer()) {
    return absl::InvalidArgumentError("no probed_peer in an OK result");
  }
  probes_.erase(it);
  node_requests_.End(
      result.request_id(),
      ok ? NodeRequests::Outcome::kOk : NodeRequests::Outcome::kError,
      clock_->Now());
  auto target = live_.find(probe.target);
  if (target == live_.end() ||
      target->second.member.incarnation() != probe.target_incarnation) {
    return absl::OkStatus();  // Failed or superseded meanwhile.
  }
  Live& live = target->second;
  const std::string by = NodeLabel(live_.at(binding.node_id).member);
  if (ok && result.probed_peer().incarnation() == probe.target_incarnation) {
    ++live.round_alive;
    live.alive_by = by;
    live.alive_at = clock_->Now();
    LITE_LOG_INFO("%s: its lite.ko acknowledged %s's probe in %d us",
                  NodeLabel(live.member), by,
                  result.probed_peer().round_trip_ns() / 1000);
    return absl::OkStatus();
  }
  if (!ok &&
      AgentCode(result.status_code()) == absl::StatusCode::kUnavailable) {
    ++live.round_down;
  } else {
    ++live.round_other;
  }
  LITE_LOG_INFO("%s: %s's probe: %s", NodeLabel(live.member), by,
                ok ? absl::StrCat("acknowledged by incarnation ",
                                  result.probed_peer().incarnation())
                   : result.status_message());
  const int answered = live.round_alive + live.round_down + live.round_other;
  if (live.round_alive == 0 &&
      answered == static_cast<int>(live.round_probes.size())) {
    // Every peer asked answered and none reached it: no reason to wait for
    // the round's end.
    ++counters_.suspect_failures;
    EndIncarnationLocked(probe.target, /*left=*/false,
                         lite::v1::FAILURE_CAUSE_LEASE_EXPIRED,
                         NoPeerReachedItLocked(live, clock_->Now()));
  }
  return absl::OkStatus();
}

absl::Status ManagerState::CheckNotSuspectLocked(
    const Live& node, const std::string& what) const {
  if (node.suspect_since == absl::InfiniteFuture()) return absl::OkStatus();
  const absl::Time now = clock_->Now();
  return absl::UnavailableError(absl::StrCat(
      NodeLabel(node.member), " is SUSPECT: no heartbeat from its agent for ",
      Ms(now - node.last_renewal), " ms, while its peers are asked whether ",
      "its lite.ko still answers; ", what,
      " needs its agent. Retry shortly: it recovers when a heartbeat comes, "
      "or is failed within ",
      Ms(node.suspect_since + options_.suspect_max - now),
      " ms (--suspect_max_ms)"));
}

}  // namespace lite::controlplane
