// ManagerState: what it reports about itself, for logs, tests, the
// benchmark and litemgr's metrics endpoint (manager_metrics.h).
#include <optional>

#include "controlplane/manager_state.h"

namespace lite::controlplane {

ManagerCounters ManagerState::counters() const {
  absl::MutexLock lock(&mu_);
  return CountersLocked();
}

ManagerMetricsSnapshot ManagerState::MetricsSnapshot() const {
  absl::MutexLock lock(&mu_);
  ManagerMetricsSnapshot out;
  out.counters = CountersLocked();
  out.nodes_failed = store_->NodeCountInState(lite::v1::NODE_STATE_FAILED);
  out.nodes_left = store_->NodeCountInState(lite::v1::NODE_STATE_LEFT);
  for (const auto& [node_id, live] : live_) {
    if (live.member.draining()) ++out.nodes_draining;
  }
  out.lmr_bytes_releasing = fenced_free_.BytesReleasing();
  out.lmr_bytes = store_->LmrBytes() - out.lmr_bytes_releasing;
  out.services = services_.size();
  out.recovering = recovering_;
  out.last_event_sequence = store_->LastEventSequence();
  out.node_requests = node_requests_.summary();
  return out;
}

ManagerCounters ManagerState::CountersLocked() const {
  ManagerCounters out = counters_;
  out.departed_index = departed_.size();
  out.nodes_alive = live_.size();
  out.sessions_open = 0;
  for (const auto& [node_id, live] : live_) {
    if (live.session_open) ++out.sessions_open;
    if (live.suspect_since != absl::InfiniteFuture()) ++out.nodes_suspect;
  }
  out.grants_issued = lmrs_.counters().grants_issued;
  out.grants_revoked = lmrs_.counters().grants_revoked;
  const FencedFree::Counters& fenced = fenced_free_.counters();
  out.revoke_acks = fenced.revoke_acks;
  out.revoke_acks_implied = fenced.revoke_acks_implied;
  out.revoke_acks_late = fenced.revoke_acks_late;
  out.lmrs_released = fenced.lmrs_released;
  out.lmrs_quarantined = fenced.lmrs_quarantined;
  out.release_retries = fenced.release_retries;
  out.lmrs_releasing = fenced_free_.size();
  out.lmrs = store_->LmrCount() - fenced_free_.size();
  out.grants = store_->GrantCount();
  out.watchers = events_.watchers();
  out.events = events_.events_emitted();
  return out;
}

}  // namespace lite::controlplane
