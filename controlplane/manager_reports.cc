// ManagerState: nodes reporting other nodes unreachable on the data path
// (PeerFailureReport, the "peers report data-path errors" path of
// DESIGN.md). lite.ko gives up on a peer after peer_timeout_ms, well before
// the lease runs out; a report lets the manager fail that node sooner, but
// only on its own evidence too: the node has sent no heartbeat for more
// than two heartbeat intervals. So one agent, mistaken or hostile, cannot
// get a node failed that keeps heartbeating, and a node whose RDMA path is
// broken but whose control channel is not stays a member (its peers keep
// retrying their connections).
#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

absl::Duration ManagerState::ReportSilence() const {
  // The interval Join hands the agents (whole milliseconds, at least 1).
  const int64_t interval_ms =
      std::max<int64_t>(1, absl::ToInt64Milliseconds(options_.lease) /
                               std::max(1, options_.heartbeats_per_lease));
  return absl::Milliseconds(2 * interval_ms);
}

void ManagerState::DropReportLocked(Live& live) {
  report_deadlines_.erase({live.report_deadline, live.member.node_id()});
  live.report_deadline = absl::InfiniteFuture();
  LITE_LOG_INFO("%s heartbeated: the report on it (%s) is dropped",
                NodeLabel(live.member), live.report);
  live.report.clear();
}

absl::Status ManagerState::PeerFailure(
    const SessionBinding& binding, const lite::v1::PeerFailureReport& report) {
  LITE_RETURN_IF_ERROR(ValidatePeerFailureReport(report, binding.node_id));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  auto reporter = live_.find(binding.node_id);
  if (reporter == live_.end() ||
      reporter->second.member.incarnation() != binding.incarnation) {
    return StaleIncarnationError(
        binding.node_id, store_->GetNode(binding.node_id), binding.incarnation,
        reporter == live_.end() ? 0 : reporter->second.member.incarnation());
  }
  ++counters_.peer_reports;
  const std::string by = NodeLabel(reporter->second.member);
  auto it = live_.find(report.node_id());
  if (it == live_.end() ||
      it->second.member.incarnation() != report.incarnation()) {
    // Failed, left or rejoined already: the report is about the past.
    ++counters_.peer_reports_ignored;
    LITE_LOG_INFO(
        "%s reports node %d incarnation %d unreachable (%s); not alive in "
        "that incarnation, ignored",
        by, report.node_id(), report.incarnation(),
        text::EscapeForTerminal(report.detail()));
    return absl::OkStatus();
  }
  Live& live = it->second;
  const absl::Time now = clock_->Now();
  const absl::Duration silence = now - live.last_renewal;
  const std::string what =
      absl::StrCat(by, " found it unreachable on the data path (errno ",
                   report.reason_errno(), ": ",
                   text::EscapeForTerminal(report.detail()), ")");
  if (recovering_) {
    // Leases are stretched while agents reconnect: silence proves nothing.
    LITE_LOG_INFO("%s: %s; recorded only, the manager is recovering",
                  NodeLabel(live.member), what);
    return absl::OkStatus();
  }
  if (silence > ReportSilence()) {
    ++counters_.peer_report_failures;
    EndIncarnationLocked(
        report.node_id(), /*left=*/false, lite::v1::FAILURE_CAUSE_PEER_REPORTED,
        absl::StrCat(what, " and no heartbeat for ",
                     absl::ToInt64Milliseconds(silence), " ms (over ",
                     absl::ToInt64Milliseconds(ReportSilence()),
                     " ms, two heartbeat intervals)"));
    return absl::OkStatus();
  }
  // Believed if the silence reaches the limit before a heartbeat comes.
  // A later report keeps the first one's words; the deadline is the same.
  if (live.report_deadline == absl::InfiniteFuture()) {
    // Strictly more than two intervals, as above.
    live.report_deadline =
        live.last_renewal + ReportSilence() + absl::Milliseconds(1);
    live.report = what;
    report_deadlines_.insert({live.report_deadline, report.node_id()});
    AddDeadlineLocked(live.report_deadline);
  }
  LITE_LOG_INFO(
      "%s: %s; last heartbeat %d ms ago: failed if none comes within %d ms",
      NodeLabel(live.member), what, absl::ToInt64Milliseconds(silence),
      absl::ToInt64Milliseconds(live.report_deadline - now));
  return absl::OkStatus();
}

void ManagerState::FailReportedLocked(absl::Time now) {
  while (!report_deadlines_.empty() &&
         report_deadlines_.begin()->first <= now) {
    const uint32_t node_id = report_deadlines_.begin()->second;
    Live& live = live_.at(node_id);
    const std::string reason =
        absl::StrCat(live.report, " and no heartbeat for ",
                     absl::ToInt64Milliseconds(now - live.last_renewal),
                     " ms (over ", absl::ToInt64Milliseconds(ReportSilence()),
                     " ms, two heartbeat intervals)");
    ++counters_.peer_report_failures;
    // Erases the deadline with the node.
    EndIncarnationLocked(node_id, /*left=*/false,
                         lite::v1::FAILURE_CAUSE_PEER_REPORTED, reason);
  }
}

}  // namespace lite::controlplane
