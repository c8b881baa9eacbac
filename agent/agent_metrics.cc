#include "agent/agent_metrics.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/kernel_metrics.h"
#include "common/log/log.h"
#include "common/metrics/families.h"

namespace lite::agent {
namespace {

using metrics::Add;
using metrics::AddHistogram;
using metrics::Family;
using metrics::Single;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr MetricType kGauge = MetricType::Gauge;
constexpr MetricType kCounter = MetricType::Counter;

constexpr CounterFamily kAgentFamilies[] = {
    {"lite_agent_joins_total", kCounter,
     "Joins to the manager, by result (ok, failed)"},
    {"lite_agent_joins_restored_total", kCounter,
     "Joins where a restarted manager adopted this node's identity"},
    {"lite_agent_sessions_opened_total", kCounter, "Session streams opened"},
    {"lite_agent_sessions_ended_total", kCounter, "Session streams that ended"},
    {"lite_agent_heartbeats_sent_total", kCounter, "Heartbeats sent"},
    {"lite_agent_heartbeat_acks_total", kCounter,
     "Heartbeat acknowledgements received"},
    {"lite_agent_heartbeats_late_total", kCounter,
     "Heartbeats sent more than an interval late (the agent was stopped or "
     "starved of CPU)"},
    {"lite_agent_events_applied_total", kCounter,
     "Cluster events applied to lite.ko, by kind"},
    {"lite_agent_event_gaps_total", kCounter,
     "Sessions ended because an event sequence number was skipped"},
    {"lite_agent_manager_requests_total", kCounter,
     "Requests from the manager answered, by kind"},
    {"lite_agent_manager_requests_failed_total", kCounter,
     "Requests from the manager answered with an error"},
    {"lite_agent_manager_requests_dropped_total", kCounter,
     "Requests from the manager not run: their session ended first (the "
     "manager gives them up)"},
    {"lite_agent_upcalls_received_total", kCounter,
     "Upcalls received from lite.ko, by kind (rpc_unregister ones get no "
     "answer)"},
    {"lite_agent_module_errors_total", kCounter,
     "Calls to lite.ko that failed"},
    {"lite_agent_module_events_total", kCounter,
     "What lite.ko reported from the data path, by event "
     "(peer_connection_failed, lmr_lost)"},
    {"lite_agent_peer_failure_reports_total", kCounter,
     "Data-path peer failures, by whether they were reported to the manager "
     "(result=sent) or not (result=not_sent: no session, or too many "
     "queued)"},
    {"lite_agent_peer_probes_total", kCounter,
     "The manager's probes of suspect peers, by result (acknowledged, "
     "unreachable, other, refused: too many at once, dropped: the session "
     "ended first)"},
    {"lite_agent_grants_revoked_total", kCounter,
     "Grants revoked in lite.ko on the manager's word"},
    {"lite_agent_grant_revoke_acks_total", kCounter,
     "Revocations acknowledged to the manager once drained"},
};

constexpr CounterMapping kAgentMappings[] = {
    {"joins", "lite_agent_joins_total", "result", "ok"},
    {"join_failures", "lite_agent_joins_total", "result", "failed"},
    {"joins_restored", "lite_agent_joins_restored_total"},
    {"sessions_opened", "lite_agent_sessions_opened_total"},
    {"sessions_ended", "lite_agent_sessions_ended_total"},
    {"heartbeats_sent", "lite_agent_heartbeats_sent_total"},
    {"heartbeat_acks", "lite_agent_heartbeat_acks_total"},
    {"heartbeats_late", "lite_agent_heartbeats_late_total"},
    // The sum of the kinds below.
    {"events_applied", nullptr},
    {"events.member_joined", "lite_agent_events_applied_total", "kind",
     "member_joined"},
    {"events.member_left", "lite_agent_events_applied_total", "kind",
     "member_left"},
    {"events.member_failed", "lite_agent_events_applied_total", "kind",
     "member_failed"},
    {"events.member_drain_changed", "lite_agent_events_applied_total", "kind",
     "member_drain_changed"},
    {"events.lmr_added", "lite_agent_events_applied_total", "kind",
     "lmr_added"},
    {"events.lmr_removed", "lite_agent_events_applied_total", "kind",
     "lmr_removed"},
    {"events.grant_revoked", "lite_agent_events_applied_total", "kind",
     "grant_revoked"},
    {"events.recovery_complete", "lite_agent_events_applied_total", "kind",
     "recovery_complete"},
    {"events.member_suspected", "lite_agent_events_applied_total", "kind",
     "member_suspected"},
    {"events.member_recovered", "lite_agent_events_applied_total", "kind",
     "member_recovered"},
    {"events.service_added", "lite_agent_events_applied_total", "kind",
     "service_added"},
    {"events.service_removed", "lite_agent_events_applied_total", "kind",
     "service_removed"},
    {"events.unknown", "lite_agent_events_applied_total", "kind", "unknown"},
    {"event_gaps", "lite_agent_event_gaps_total"},
    {"requests.allocate_lmr_memory", "lite_agent_manager_requests_total",
     "kind", "allocate_lmr_memory"},
    {"requests.release_lmr_memory", "lite_agent_manager_requests_total", "kind",
     "release_lmr_memory"},
    {"requests.bind_service_ring", "lite_agent_manager_requests_total", "kind",
     "bind_service_ring"},
    {"requests.probe_peer", "lite_agent_manager_requests_total", "kind",
     "probe_peer"},
    {"requests.unknown", "lite_agent_manager_requests_total", "kind",
     "unknown"},
    {"requests_failed", "lite_agent_manager_requests_failed_total"},
    {"requests_dropped", "lite_agent_manager_requests_dropped_total"},
    {"upcalls.alloc", "lite_agent_upcalls_received_total", "kind", "alloc"},
    {"upcalls.register", "lite_agent_upcalls_received_total", "kind",
     "register"},
    {"upcalls.map", "lite_agent_upcalls_received_total", "kind", "map"},
    {"upcalls.unmap", "lite_agent_upcalls_received_total", "kind", "unmap"},
    {"upcalls.free", "lite_agent_upcalls_received_total", "kind", "free"},
    {"upcalls.rpc_register", "lite_agent_upcalls_received_total", "kind",
     "rpc_register"},
    {"upcalls.rpc_unregister", "lite_agent_upcalls_received_total", "kind",
     "rpc_unregister"},
    {"upcalls.rpc_open", "lite_agent_upcalls_received_total", "kind",
     "rpc_open"},
    {"upcalls.rpc_bind", "lite_agent_upcalls_received_total", "kind",
     "rpc_bind"},
    // lite_agent_upcalls_answered_total{code!="OK"} has them by code.
    {"upcalls_failed", nullptr},
    {"module_errors", "lite_agent_module_errors_total"},
    {"module_events.peer_connection_failed", "lite_agent_module_events_total",
     "event", "peer_connection_failed"},
    {"module_events.lmr_lost", "lite_agent_module_events_total", "event",
     "lmr_lost"},
    {"peer_failures_reported", "lite_agent_peer_failure_reports_total",
     "result", "sent"},
    {"peer_failures_unreported", "lite_agent_peer_failure_reports_total",
     "result", "not_sent"},
    {"peer_probes.acknowledged", "lite_agent_peer_probes_total", "result",
     "acknowledged"},
    {"peer_probes.unreachable", "lite_agent_peer_probes_total", "result",
     "unreachable"},
    {"peer_probes.other", "lite_agent_peer_probes_total", "result", "other"},
    {"peer_probes.refused", "lite_agent_peer_probes_total", "result",
     "refused"},
    {"peer_probes.dropped", "lite_agent_peer_probes_total", "result",
     "dropped"},
    {"grants_revoked", "lite_agent_grants_revoked_total"},
    {"grant_revoke_acks", "lite_agent_grant_revoke_acks_total"},
};

// MANAGER_CONNECTION_STATE_CONNECTED -> "connected".
std::string StateLabel(lite::v1::ManagerConnectionState state) {
  absl::string_view name = lite::v1::ManagerConnectionState_Name(state);
  absl::ConsumePrefix(&name, "MANAGER_CONNECTION_STATE_");
  return absl::AsciiStrToLower(name);
}

void AddStatus(const lite::v1::GetStatusResponse& status,
               std::vector<MetricFamily>& out) {
  MetricFamily state =
      Family("lite_agent_manager_connection_state",
             "1 for the state of the agent's link to the manager (joining, "
             "restoring, connected, backoff, left), 0 for the others",
             kGauge);
  for (int i = lite::v1::ManagerConnectionState_MIN;
       i <= lite::v1::ManagerConnectionState_MAX; ++i) {
    const auto s = static_cast<lite::v1::ManagerConnectionState>(i);
    if (!lite::v1::ManagerConnectionState_IsValid(i) ||
        s == lite::v1::MANAGER_CONNECTION_STATE_UNSPECIFIED) {
      continue;
    }
    Add(state, {{"state", StateLabel(s)}},
        status.manager_connection_state() == s ? 1 : 0);
  }
  out.push_back(std::move(state));
  out.push_back(Single("lite_agent_reconnects_total",
                       "Sessions ended and Joins retried since the agent "
                       "started",
                       kCounter, static_cast<double>(status.reconnects())));
  out.push_back(Single("lite_agent_session_uptime_seconds",
                       "How long the session has been open (0 when not "
                       "connected)",
                       kGauge, status.session_uptime_ms() / 1000.0));
  out.push_back(Single("lite_agent_applied_event_sequence",
                       "The last cluster event applied (the manager's is "
                       "lite_manager_last_event_sequence)",
                       kGauge,
                       static_cast<double>(status.applied_event_sequence())));
  MetricFamily node =
      Family("lite_agent_node_info",
             "1, labelled with this node's name, id and incarnation (id and "
             "incarnation 0 before the first Join)",
             kGauge);
  Add(node,
      {{"node_name", status.node_name()},
       {"node_id", absl::StrCat(status.node_id())},
       {"incarnation", absl::StrCat(status.incarnation())}},
      1);
  out.push_back(std::move(node));
}

void AddUpcalls(const UpcallStats::Summary& summary,
                std::vector<MetricFamily>& out) {
  MetricFamily answered = Family(
      "lite_agent_upcalls_answered_total",
      "Upcalls answered, by kind and the status the application got (OK, "
      "NOT_FOUND, PERMISSION_DENIED, UNAVAILABLE ...; docs/agent.md maps "
      "each to its errno)",
      kCounter);
  MetricFamily latency = Family(
      "lite_agent_upcall_duration_seconds",
      "From the agent's receipt of an upcall to its answer, including any "
      "wait for the manager connection",
      MetricType::Histogram);
  for (size_t k = 0; k < summary.size(); ++k) {
    // Nobody waits for an answer to these (upcall_dispatcher.h).
    if (std::string(kUpcallKinds[k]) == "rpc_unregister") continue;
    for (const auto& [code, count] : summary[k].answered) {
      Add(answered,
          {{"kind", kUpcallKinds[k]}, {"code", absl::StatusCodeToString(code)}},
          static_cast<double>(count));
    }
    AddHistogram(latency, {{"kind", kUpcallKinds[k]}}, summary[k].latency);
  }
  out.push_back(std::move(answered));
  out.push_back(std::move(latency));
}

}  // namespace

const CounterTable& AgentCounterTable() {
  static const CounterTable table = {
      .prefix = "agent.",
      .families = kAgentFamilies,
      .mappings = kAgentMappings,
      .other = {"lite_agent_counter_total", kCounter,
                "The agent's other counters, by name (litectl agent counters "
                "explains each, as agent.NAME)"},
  };
  return table;
}

AgentMetrics::AgentMetrics(const Agent* agent,
                           CounterReader::ReadFn module_counters,
                           absl::Duration module_bound)
    : agent_(agent),
      module_counters_(std::move(module_counters), module_bound) {}

std::vector<MetricFamily> AgentMetrics::Collect() const {
  std::vector<MetricFamily> out;
  AddStatus(agent_->Status(), out);
  for (MetricFamily& f :
       MapCounters(agent_->AgentCounters(), AgentCounterTable())) {
    out.push_back(std::move(f));
  }
  AddUpcalls(agent_->UpcallSummary(), out);
  absl::StatusOr<std::vector<lite::v1::Counter>> module =
      module_counters_.Read();
  out.push_back(Single(
      "lite_kernel_counters_up",
      "1 if the module's counters were read for this scrape, 0 if the read "
      "failed or took longer than its bound, 2 s (then no lite_kernel_ "
      "metric is exported; the agent's log says why)",
      kGauge, module.ok() ? 1 : 0));
  if (!module.ok()) {
    LITE_LOG_WARNING("metrics: reading the module's counters: %s",
                     module.status().ToString());
    return out;
  }
  for (MetricFamily& f : MapCounters(*module, KernelCounterTable())) {
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace lite::agent
