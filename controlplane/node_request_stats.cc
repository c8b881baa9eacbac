#include "controlplane/node_request_stats.h"

namespace lite::controlplane {

const char* NodeRequestStats::KindName(Kind kind) {
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

const char* NodeRequestStats::OutcomeName(Outcome outcome) {
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

void NodeRequestStats::Sent(uint64_t request_id, Kind kind, absl::Time now) {
  if (!in_flight_.emplace(request_id, std::make_pair(kind, now)).second) {
    return;  // Request ids are unique; nothing to count twice.
  }
  ++summary_.in_flight[static_cast<size_t>(kind)];
}

void NodeRequestStats::Ended(uint64_t request_id, Outcome outcome,
                             absl::Time now) {
  auto it = in_flight_.find(request_id);
  if (it == in_flight_.end()) return;
  const auto [kind, sent] = it->second;
  in_flight_.erase(it);
  const size_t k = static_cast<size_t>(kind);
  --summary_.in_flight[k];
  ++summary_.ended[k][static_cast<size_t>(outcome)];
  if (outcome == Outcome::kOk || outcome == Outcome::kError) {
    summary_.latency[k].Observe(now - sent);
  }
}

}  // namespace lite::controlplane
