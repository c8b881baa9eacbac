#include "controlplane/manager_metrics.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "common/metrics/families.h"

namespace lite::controlplane {
namespace {

using metrics::Add;
using metrics::AddHistogram;
using metrics::Family;
using metrics::Single;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr MetricType kGauge = MetricType::Gauge;
constexpr MetricType kCounter = MetricType::Counter;

// FAILURE_CAUSE_LEASE_EXPIRED -> "lease_expired".
std::string CauseLabel(lite::v1::FailureCause cause) {
  absl::string_view name = lite::v1::FailureCause_Name(cause);
  absl::ConsumePrefix(&name, "FAILURE_CAUSE_");
  return absl::AsciiStrToLower(name);
}

MetricFamily Failures(const ManagerCounters& c) {
  MetricFamily f =
      Family("lite_manager_member_failures_total",
             "Node incarnations declared failed, by cause (lease_expired: no "
             "heartbeat within the lease; session_closed; session_overflow; "
             "evicted; superseded: joined again while alive; peer_reported)",
             kCounter);
  for (int i = lite::v1::FailureCause_MIN; i <= lite::v1::FailureCause_MAX;
       ++i) {
    const auto cause = static_cast<lite::v1::FailureCause>(i);
    if (!lite::v1::FailureCause_IsValid(i) ||
        cause == lite::v1::FAILURE_CAUSE_UNSPECIFIED) {
      continue;
    }
    auto it = c.failures_by_cause.find(cause);
    Add(f, {{"cause", CauseLabel(cause)}},
        it == c.failures_by_cause.end() ? 0 : it->second);
  }
  return f;
}

void AddNodeRequests(const NodeRequests::Summary& s,
                     std::vector<MetricFamily>& out) {
  using Kind = NodeRequests::Kind;
  using Outcome = NodeRequests::Outcome;
  MetricFamily ended =
      Family("lite_manager_node_requests_total",
             "Requests the manager sent agents (allocate_lmr_memory, "
             "release_lmr_memory, bind_service_ring), by how they ended: ok or "
             "error (the agent's answer), timeout (none within "
             "--request_timeout_ms), abandoned (the node ended or the manager "
             "stopped first)",
             kCounter);
  MetricFamily in_flight =
      Family("lite_manager_node_requests_in_flight",
             "Requests sent to agents and not answered yet", kGauge);
  MetricFamily latency = Family(
      "lite_manager_node_request_duration_seconds",
      "From sending a request to an agent to its answer (answered requests)",
      MetricType::Histogram);
  for (size_t k = 0; k < NodeRequests::kKinds; ++k) {
    const std::string kind = NodeRequests::KindName(static_cast<Kind>(k));
    for (size_t o = 0; o < NodeRequests::kOutcomes; ++o) {
      Add(ended,
          {{"kind", kind},
           {"outcome", NodeRequests::OutcomeName(static_cast<Outcome>(o))}},
          static_cast<double>(s.ended[k][o]));
    }
    Add(in_flight, {{"kind", kind}}, static_cast<double>(s.in_flight[k]));
    AddHistogram(latency, {{"kind", kind}}, s.latency[k]);
  }
  out.push_back(std::move(ended));
  out.push_back(std::move(in_flight));
  out.push_back(std::move(latency));
}

}  // namespace

std::vector<MetricFamily> ManagerFamilies(const ManagerMetricsSnapshot& s) {
  const ManagerCounters& c = s.counters;
  std::vector<MetricFamily> out;

  MetricFamily members =
      Family("lite_manager_members",
             "Node records by state: alive (leased), failed, left", kGauge);
  Add(members, {{"state", "alive"}}, static_cast<double>(c.nodes_alive));
  Add(members, {{"state", "failed"}}, static_cast<double>(s.nodes_failed));
  Add(members, {{"state", "left"}}, static_cast<double>(s.nodes_left));
  out.push_back(std::move(members));
  out.push_back(Single("lite_manager_members_draining",
                       "Alive nodes that are draining (no new LMRs on them)",
                       kGauge, static_cast<double>(s.nodes_draining)));
  out.push_back(Single("lite_manager_sessions_open",
                       "Agents' Session streams open", kGauge,
                       static_cast<double>(c.sessions_open)));
  out.push_back(Single("lite_manager_watchers", "Watch streams open", kGauge,
                       static_cast<double>(c.watchers)));
  MetricFamily lmrs =
      Family("lite_manager_lmrs",
             "LMRs registered: live, and releasing (freed, waiting for their "
             "grants' acknowledgements and their home's release)",
             kGauge);
  Add(lmrs, {{"state", "live"}}, static_cast<double>(c.lmrs));
  Add(lmrs, {{"state", "releasing"}}, static_cast<double>(c.lmrs_releasing));
  out.push_back(std::move(lmrs));
  MetricFamily bytes =
      Family("lite_manager_lmr_bytes",
             "The sizes of the LMRs registered, by state as lite_manager_lmrs",
             kGauge);
  Add(bytes, {{"state", "live"}}, static_cast<double>(s.lmr_bytes));
  Add(bytes, {{"state", "releasing"}},
      static_cast<double>(s.lmr_bytes_releasing));
  out.push_back(std::move(bytes));
  out.push_back(Single("lite_manager_grants",
                       "Map grants held by nodes (live, not revoked)", kGauge,
                       static_cast<double>(c.grants)));
  out.push_back(Single("lite_manager_services", "RPC services registered",
                       kGauge, static_cast<double>(s.services)));
  out.push_back(Single("lite_manager_recovering",
                       "1 while a restarted manager waits for agents to "
                       "restore their grants (--recovery_window_ms), else 0",
                       kGauge, s.recovering ? 1 : 0));
  out.push_back(Single("lite_manager_last_event_sequence",
                       "Sequence number of the last cluster event (agents "
                       "report theirs as lite_agent_applied_event_sequence)",
                       kGauge, static_cast<double>(s.last_event_sequence)));

  out.push_back(Single("lite_manager_joins_total", "Joins admitted", kCounter,
                       static_cast<double>(c.joins)));
  out.push_back(Single("lite_manager_heartbeats_total",
                       "Heartbeats received (each renews a lease)", kCounter,
                       static_cast<double>(c.heartbeats)));
  out.push_back(Single("lite_manager_events_total", "Cluster events announced",
                       kCounter, static_cast<double>(c.events)));
  out.push_back(Failures(c));
  out.push_back(Single("lite_manager_member_leaves_total",
                       "Node incarnations ended by Leave", kCounter,
                       static_cast<double>(c.leaves)));
  out.push_back(Single("lite_manager_grants_issued_total", "Map grants issued",
                       kCounter, static_cast<double>(c.grants_issued)));
  out.push_back(Single("lite_manager_grants_revoked_total",
                       "Map grants the manager revoked (their LMR freed or "
                       "lost, or its home ended; not restored after a "
                       "manager restart)",
                       kCounter, static_cast<double>(c.grants_revoked)));
  out.push_back(Single("lite_manager_peer_reports_total",
                       "PeerFailureReports received from agents", kCounter,
                       static_cast<double>(c.peer_reports)));
  out.push_back(Single("lite_manager_peer_reports_ignored_total",
                       "PeerFailureReports about a node not alive in that "
                       "incarnation",
                       kCounter, static_cast<double>(c.peer_reports_ignored)));
  out.push_back(Single("lite_manager_nodes_suspect",
                       "Live nodes SUSPECT now: lease run out, their peers "
                       "being asked whether their lite.ko still answers",
                       kGauge, static_cast<double>(c.nodes_suspect)));
  MetricFamily suspicions = Family(
      "lite_manager_suspicions_total",
      "Leases that ran out into SUSPECT, by how it ended: recovered (a "
      "heartbeat came), failed (the peers found it gone, none answered, or "
      "--suspect_max_ms passed)",
      kCounter);
  Add(suspicions, {{"outcome", "recovered"}},
      static_cast<double>(c.suspicions_recovered));
  Add(suspicions, {{"outcome", "failed"}},
      static_cast<double>(c.suspect_failures));
  out.push_back(std::move(suspicions));
  out.push_back(Single("lite_manager_probes_sent_total",
                       "ProbePeer requests sent to the peers of SUSPECT nodes",
                       kCounter, static_cast<double>(c.probes_sent)));
  MetricFamily acks = Family(
      "lite_manager_revoke_acks_total",
      "Acknowledgements of revoked grants in the fenced free: received (one "
      "a release waited for), implied (the holder's incarnation ended), late "
      "(nothing waited for it any more)",
      kCounter);
  Add(acks, {{"how", "received"}}, static_cast<double>(c.revoke_acks));
  Add(acks, {{"how", "implied"}}, static_cast<double>(c.revoke_acks_implied));
  Add(acks, {{"how", "late"}}, static_cast<double>(c.revoke_acks_late));
  out.push_back(std::move(acks));
  out.push_back(Single("lite_manager_lmr_releases_total",
                       "Freed LMRs whose home gave the memory back (also "
                       "quarantined ones)",
                       kCounter, static_cast<double>(c.lmrs_released)));
  out.push_back(Single("lite_manager_lmr_quarantines_total",
                       "Freed LMRs whose fence timed out "
                       "(--free_fence_timeout_ms): their home keeps the pages "
                       "out of use",
                       kCounter, static_cast<double>(c.lmrs_quarantined)));
  out.push_back(Single("lite_manager_release_retries_total",
                       "ReleaseLmrMemory requests sent again (no answer, or "
                       "an error)",
                       kCounter, static_cast<double>(c.release_retries)));
  out.push_back(Single("lite_manager_lmrs_lost_total",
                       "LMRs removed because their home lost their RDMA "
                       "device (LmrLost)",
                       kCounter, static_cast<double>(c.lmrs_lost)));
  AddNodeRequests(s.node_requests, out);
  return out;
}

}  // namespace lite::controlplane
