#include "agent/peer_reports.h"

#include <cerrno>
#include <string>

namespace lite::agent {

std::optional<lite::v1::PeerFailureReport> PeerFailureToReport(
    const PeerConnectionFailed& failed, uint32_t self) {
  if (failed.reason_errno != EHOSTDOWN || failed.node_id == 0 ||
      failed.incarnation == 0 || failed.node_id == self) {
    return std::nullopt;
  }
  lite::v1::PeerFailureReport report;
  report.set_node_id(failed.node_id);
  report.set_incarnation(failed.incarnation);
  report.set_reason_errno(failed.reason_errno);
  report.set_detail(failed.reason.substr(0, kMaxReportDetail));
  return report;
}

}  // namespace lite::agent
