#include "controlplane/node_requests.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lite::controlplane {

const char* NodeRequests::KindName(Kind kind) {
  switch (kind) {
    case Kind::kAllocateLmrMemory:
      return "allocate_lmr_memory";
    case Kind::kReleaseLmrMemory:
      return "release_lmr_memory";
    case Kind::kBindServiceRing:
      return "bind_service_ring";
    case Kind::kProbePeer:
      return "probe_peer";
  }
  return "unknown";
}

const char* NodeRequests::OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kError:
      return "error";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kAbandoned:
      return "abandoned";
  }
  return "unknown";
}

uint64_t NodeRequests::Start(Kind kind, uint32_t node_id, uint64_t incarnation,
                             absl::Time now, absl::Time deadline) {
  const uint64_t id = ++last_id_;
  in_flight_.emplace(id, Request{kind, node_id, incarnation, now, deadline});
  if (deadline != absl::InfiniteFuture()) deadlines_.insert({deadline, id});
  ++summary_.in_flight[static_cast<size_t>(kind)];
  return id;
}

absl::StatusOr<std::optional<NodeRequests::Request>> NodeRequests::Answered(
    uint64_t request_id, uint32_t node_id, uint64_t incarnation) const {
  auto it = in_flight_.find(request_id);
  if (it == in_flight_.end()) {
    if (request_id != 0 && request_id <= last_id_) return std::nullopt;
    return absl::InvalidArgumentError(
        absl::StrCat("result names request ", request_id,
                     ", which this manager never sent"));
  }
  const Request& request = it->second;
  if (request.node_id != node_id || request.incarnation != incarnation) {
    return absl::InvalidArgumentError(absl::StrCat(
        "result names request ", request_id, ", which was not sent to node ",
        node_id, " incarnation ", incarnation));
  }
  return request;
}

bool NodeRequests::End(uint64_t request_id, Outcome outcome, absl::Time now) {
  auto it = in_flight_.find(request_id);
  if (it == in_flight_.end()) return false;
  const Request request = it->second;
  in_flight_.erase(it);
  if (request.deadline != absl::InfiniteFuture()) {
    deadlines_.erase({request.deadline, request_id});
  }
  const size_t k = static_cast<size_t>(request.kind);
  --summary_.in_flight[k];
  ++summary_.ended[k][static_cast<size_t>(outcome)];
  if (outcome == Outcome::kOk || outcome == Outcome::kError) {
    summary_.latency[k].Observe(now - request.sent);
  }
  return true;
}

std::optional<std::pair<uint64_t, NodeRequests::Kind>> NodeRequests::NextDue(
    absl::Time now) const {
  if (deadlines_.empty() || deadlines_.begin()->first > now) {
    return std::nullopt;
  }
  const uint64_t id = deadlines_.begin()->second;
  return std::make_pair(id, in_flight_.at(id).kind);
}

absl::Time NodeRequests::NextDeadline() const {
  return deadlines_.empty() ? absl::InfiniteFuture()
                            : deadlines_.begin()->first;
}

}  // namespace lite::controlplane
