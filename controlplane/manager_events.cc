// ManagerState: the event and watch machinery — every event gets the next
// sequence number and goes to each session's and watcher's Outbox; an
// outbox that falls too far behind is closed (a session's node is declared
// failed) — and the requests sent on sessions: a NodeRequestResult is
// checked against the one request table and handed to the part that asked.
// Membership, sessions and time are in manager_state.cc, LMRs and grants in
// manager_lmrs.cc.
#include <algorithm>
#include <iterator>
#include <memory>
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

using lite::v1::Event;
using lite::v1::ManagerMessage;

void ManagerState::PushLocked(const std::shared_ptr<Outbox>& outbox,
                              const OutMessagePtr& message, uint32_t node) {
  switch (outbox->Push(message)) {
    case Outbox::PushResult::kQueued:
      break;
    case Outbox::PushResult::kQueuedNotify:
      to_notify_.push_back(outbox);
      break;
    case Outbox::PushResult::kFull:
      overflowed_.emplace_back(outbox, node);
      break;
  }
}

void ManagerState::EmitLocked(Event event, const std::shared_ptr<Outbox>& extra,
                              const Event* compact) {
  event.set_sequence(store_->NextEventSequence());
  event.set_time_unix_ms(absl::ToUnixMillis(clock_->Now()));
  OutMessagePtr compact_out;
  if (compact != nullptr) {
    ManagerMessage message;
    *message.mutable_event() = *compact;
    message.mutable_event()->set_sequence(event.sequence());
    message.mutable_event()->set_time_unix_ms(event.time_unix_ms());
    compact_out = std::make_shared<const OutMessage>(std::move(message));
  }
  ManagerMessage message;
  *message.mutable_event() = std::move(event);
  auto out = std::make_shared<const OutMessage>(std::move(message));
  for (auto& [node_id, live] : live_) {
    PushLocked(live.outbox,
               compact_out != nullptr && live.compact_recovery_complete
                   ? compact_out
                   : out,
               node_id);
  }
  for (const auto& watcher : watchers_) PushLocked(watcher, out, 0);
  if (extra != nullptr) PushLocked(extra, out, 0);
  if (options_.watch_history > 0) {
    history_.push_back(out);
    if (static_cast<int64_t>(history_.size()) > options_.watch_history) {
      history_.pop_front();
    }
  }
  ++counters_.events;
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
      return AllocResultLocked(binding, result);
    case NodeRequests::Kind::kReleaseLmrMemory:
      return ReleaseResultLocked(binding, result);
    case NodeRequests::Kind::kBindServiceRing:
      return BindResultLocked(binding, result);
    case NodeRequests::Kind::kProbePeer:
      return ProbeResultLocked(binding, result);
  }
  return absl::InternalError("a request of no known kind");
}

void ManagerState::SendToNodeLocked(Live& live, ManagerMessage message) {
  PushLocked(live.outbox,
             std::make_shared<const OutMessage>(std::move(message)),
             live.member.node_id());
}

void ManagerState::HandleOverflowsLocked() {
  while (!overflowed_.empty()) {
    std::vector<std::pair<std::shared_ptr<Outbox>, uint32_t>> batch;
    batch.swap(overflowed_);
    for (auto& [outbox, node_id] : batch) {
      if (outbox->closed()) continue;  // Already handled.
      auto it = live_.find(node_id);
      if (node_id == 0 || it == live_.end() || it->second.outbox != outbox) {
        watchers_.erase(outbox);
        outbox->Close(
            absl::ResourceExhaustedError(absl::StrCat(
                "this watch fell more than ", options_.session_queue_limit,
                " events behind (--session_queue_limit); watch again")),
            /*drain=*/false);
        continue;
      }
      ++counters_.session_overflows;
      const std::string label = NodeLabel(it->second.member);
      outbox->Close(
          absl::ResourceExhaustedError(absl::StrCat(
              "the session of ", label, " fell more than ",
              options_.session_queue_limit,
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
  auto outbox = std::make_shared<Outbox>(options_.session_queue_limit);
  if (shut_down_) {
    outbox->Close(absl::UnavailableError("litemgr is shutting down"), false);
    return outbox;
  }
  if (static_cast<int64_t>(watchers_.size()) >= options_.max_watchers) {
    return absl::ResourceExhaustedError(absl::StrCat(
        options_.max_watchers,
        " watches are open, the most this manager serves (--max_watchers); "
        "close one first"));
  }
  const uint64_t last = store_->LastEventSequence();
  if (since_revision > last) {
    return absl::InvalidArgumentError(
        absl::StrCat("since_revision ", since_revision,
                     " is past this manager's last event ", last,
                     "; use a listing's revision"));
  }
  // Events after since_revision must all be in the history; the first one
  // kept is history_.front() (or none: last + 1).
  const uint64_t oldest_kept =
      history_.empty() ? last + 1
                       : history_.front()->message().event().sequence();
  if (since_revision != 0 && since_revision + 1 < oldest_kept) {
    return absl::OutOfRangeError(absl::StrCat(
        "since_revision ", since_revision,
        " is older than this manager's event history (it keeps events from ",
        oldest_kept,
        ", --watch_history); list again and watch from that revision"));
  }
  // Under the same lock as the registration: nothing emitted in between.
  if (since_revision != 0) {
    // The history is ordered by sequence; skip what the caller has seen.
    auto it = std::upper_bound(history_.begin(), history_.end(), since_revision,
                               [](uint64_t since, const OutMessagePtr& m) {
                                 return since < m->message().event().sequence();
                               });
    if (std::distance(it, history_.end()) >= options_.session_queue_limit) {
      // The replay alone would overflow the watch's queue.
      return absl::OutOfRangeError(absl::StrCat(
          "since_revision ", since_revision, " is ",
          std::distance(it, history_.end()),
          " events behind, more than a watch may queue "
          "(--session_queue_limit); list again and watch from that revision"));
    }
    for (; it != history_.end(); ++it) PushLocked(outbox, *it, 0);
  }
  watchers_.insert(outbox);
  return outbox;
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
  watchers_.erase(watch);
}

}  // namespace lite::controlplane
