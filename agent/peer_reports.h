// Which of lite.ko's peer failures the agent passes on to the manager
// (PeerFailureReport), and in what form. Only the data path's verdict that
// a peer stopped answering (PEER_FAILED with EHOSTDOWN: an RC connection's
// retries ran out within peer_timeout_ms) is evidence that the node is
// down; refusals, authentication failures and connect timeouts are about
// the connection, and the manager's lease covers a node that never
// connects.
#ifndef LITE_AGENT_PEER_REPORTS_H_
#define LITE_AGENT_PEER_REPORTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "agent/module.h"
#include "lite/v1/manager.pb.h"

namespace lite::agent {

// The manager's limit on PeerFailureReport.detail.
inline constexpr size_t kMaxReportDetail = 256;
// Reports queued for the session at most; more are dropped and counted
// (lite.ko sends one per verdict, so this only bounds a misbehaving module).
inline constexpr size_t kMaxQueuedReports = 64;

// The report for `failed`, seen by node `self`, or nullopt when it is not
// one the manager should hear: not EHOSTDOWN, no node id or incarnation,
// or about this node itself. The detail is cut to kMaxReportDetail bytes.
std::optional<lite::v1::PeerFailureReport> PeerFailureToReport(
    const PeerConnectionFailed& failed, uint32_t self);

}  // namespace lite::agent

#endif  // LITE_AGENT_PEER_REPORTS_H_
