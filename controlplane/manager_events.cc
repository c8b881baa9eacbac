// ManagerState and its parts for events and sessions: the EventBus
// (event_bus.h) carries every message; here the state reacts to it — a
// session that fell too far behind fails its node — and a
// NodeRequestResult is checked against the one request table
// (node_requests.h) and handed to the part that asked.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

absl::Status ManagerState::CheckBindingLocked(const SessionBinding& binding) {
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  auto it = live_.find(binding.node_id);
  if (it == live_.end() ||
      it->second.member.incarnation() != binding.incarnation) {
    return StaleIncarnationError(
        binding.node_id, store_->GetNode(binding.node_id), binding.incarnation,
        it == live_.end() ? 0 : it->second.member.incarnation());
  }
  return absl::OkStatus();
}

absl::Status ManagerState::HandleResult(
    const SessionBinding& binding, const lite::v1::NodeRequestResult& result) {
  if (result.request_id() == 0) {
    return absl::InvalidArgumentError(
        "result.request_id is 0; echo the request_id of the NodeRequest");
  }
  LITE_RETURN_IF_ERROR(ValidateNodeRequestResult(result));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckBindingLocked(binding));
  LITE_ASSIGN_OR_RETURN(
      std::optional<NodeRequests::Request> request,
      node_requests_.Answered(result.request_id(), binding.node_id,
                              binding.incarnation));
  if (!request.has_value()) {
    // Answered after the manager gave up on it (a timed-out allocation was
    // announced as LmrRemoved ALLOCATION_ABANDONED): nothing to do.
    LITE_LOG_DEBUG("late result for request %d from %s ignored",
                   result.request_id(),
                   NodeLabel(live_.at(binding.node_id).member));
    return absl::OkStatus();
  }
  switch (request->kind) {
    case NodeRequests::Kind::kAllocateLmrMemory:
      lmrs_.AllocAnswered(result, binding.incarnation);
      return absl::OkStatus();
    case NodeRequests::Kind::kReleaseLmrMemory:
      fenced_free_.Answered(result);
      return absl::OkStatus();
    case NodeRequests::Kind::kBindServiceRing:
      services_.BindAnswered(result);
      return absl::OkStatus();
    case NodeRequests::Kind::kProbePeer:
      return ProbeResultLocked(binding, result);
  }
  return absl::InternalError("a request of no known kind");
}

void ManagerState::HandleOverflowsLocked() {
  for (std::vector<uint32_t> nodes = events_.TakeOverflowedSessions();
       !nodes.empty(); nodes = events_.TakeOverflowedSessions()) {
    for (uint32_t node_id : nodes) {
      auto it = live_.find(node_id);
      if (it == live_.end()) continue;  // Ended meanwhile.
      ++counters_.session_overflows;
      events_.EndSession(
          node_id,
          absl::ResourceExhaustedError(absl::StrCat(
              "the session of ", NodeLabel(it->second.member),
              " fell more than ", options_.session_queue_limit,
              " messages behind (--session_queue_limit); the node was "
              "declared failed; Join again")),
          /*drain=*/false);
      EndIncarnationLocked(
          node_id, /*left=*/false, lite::v1::FAILURE_CAUSE_SESSION_OVERFLOW,
          absl::StrCat("session fell more than ", options_.session_queue_limit,
                       " messages behind"));
    }
  }
}

absl::StatusOr<std::shared_ptr<Outbox>> ManagerState::OpenWatch(
    uint64_t since_revision) {
  Locked lock(this);
  if (shut_down_) {
    auto outbox = std::make_shared<Outbox>(options_.session_queue_limit);
    outbox->Close(absl::UnavailableError("litemgr is shutting down"), false);
    return outbox;
  }
  return events_.OpenWatch(since_revision);
}

std::shared_ptr<Outbox> ManagerState::OpenWatch() {
  absl::StatusOr<std::shared_ptr<Outbox>> watch = OpenWatch(0);
  if (watch.ok()) return *std::move(watch);
  auto closed = std::make_shared<Outbox>(1);
  closed->Close(watch.status(), /*drain=*/false);
  return closed;
}

void ManagerState::CloseWatch(const std::shared_ptr<Outbox>& watch) {
  Locked lock(this);
  events_.CloseWatch(watch);
}

}  // namespace lite::controlplane
