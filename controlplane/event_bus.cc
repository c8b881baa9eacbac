#include "controlplane/event_bus.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::ManagerMessage;

EventBus::EventBus(const ManagerOptions& options, const Clock* clock,
                   Store* store)
    : options_(options), clock_(clock), store_(store) {}

std::shared_ptr<Outbox> EventBus::AddSession(uint32_t node_id) {
  Session& session = sessions_[node_id];
  session.outbox = std::make_shared<Outbox>(options_.session_queue_limit);
  session.compact = false;
  return session.outbox;
}

void EventBus::SetCompact(uint32_t node_id, bool compact) {
  auto it = sessions_.find(node_id);
  if (it != sessions_.end()) it->second.compact = compact;
}

void EventBus::SendTo(uint32_t node_id, ManagerMessage message) {
  auto it = sessions_.find(node_id);
  if (it == sessions_.end()) return;
  Push(it->second.outbox,
       std::make_shared<const OutMessage>(std::move(message)), node_id);
}

void EventBus::EndSession(uint32_t node_id, absl::Status why, bool drain) {
  auto it = sessions_.find(node_id);
  if (it == sessions_.end()) return;
  it->second.outbox->Close(std::move(why), drain);
  sessions_.erase(it);
}

std::shared_ptr<Outbox> EventBus::OutboxOf(uint32_t node_id) const {
  auto it = sessions_.find(node_id);
  return it == sessions_.end() ? nullptr : it->second.outbox;
}

void EventBus::Push(const std::shared_ptr<Outbox>& outbox,
                    const OutMessagePtr& message, uint32_t node_id) {
  switch (outbox->Push(message)) {
    case Outbox::PushResult::kQueued:
      break;
    case Outbox::PushResult::kQueuedNotify:
      to_notify_.push_back(outbox);
      break;
    case Outbox::PushResult::kFull:
      overflowed_.emplace_back(outbox, node_id);
      break;
  }
}

void EventBus::Emit(Event event, const std::shared_ptr<Outbox>& extra,
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
  for (const auto& [node_id, session] : sessions_) {
    Push(session.outbox,
         compact_out != nullptr && session.compact ? compact_out : out,
         node_id);
  }
  for (const auto& watcher : watchers_) Push(watcher, out, 0);
  if (extra != nullptr) Push(extra, out, 0);
  if (options_.watch_history > 0) {
    history_.push_back(out);
    if (static_cast<int64_t>(history_.size()) > options_.watch_history) {
      history_.pop_front();
    }
  }
  ++events_emitted_;
}

absl::StatusOr<std::shared_ptr<Outbox>> EventBus::OpenWatch(
    uint64_t since_revision) {
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
  auto outbox = std::make_shared<Outbox>(options_.session_queue_limit);
  // Under the caller's lock, as the registration: nothing emitted between.
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
    for (; it != history_.end(); ++it) Push(outbox, *it, 0);
  }
  watchers_.insert(outbox);
  return outbox;
}

void EventBus::CloseWatch(const std::shared_ptr<Outbox>& watch) {
  watchers_.erase(watch);
}

void EventBus::CloseAll(const absl::Status& why) {
  for (auto& [node_id, session] : sessions_) {
    session.outbox->Close(why, /*drain=*/false);
  }
  for (const auto& watcher : watchers_) watcher->Close(why, /*drain=*/false);
  watchers_.clear();
}

std::vector<uint32_t> EventBus::TakeOverflowedSessions() {
  std::vector<uint32_t> nodes;
  std::vector<std::pair<std::shared_ptr<Outbox>, uint32_t>> batch;
  batch.swap(overflowed_);
  for (auto& [outbox, node_id] : batch) {
    if (outbox->closed()) continue;  // Already handled.
    auto it = sessions_.find(node_id);
    if (node_id == 0 || it == sessions_.end() || it->second.outbox != outbox) {
      watchers_.erase(outbox);
      outbox->Close(
          absl::ResourceExhaustedError(absl::StrCat(
              "this watch fell more than ", options_.session_queue_limit,
              " events behind (--session_queue_limit); watch again")),
          /*drain=*/false);
      continue;
    }
    if (std::find(nodes.begin(), nodes.end(), node_id) == nodes.end()) {
      nodes.push_back(node_id);
    }
  }
  return nodes;
}

std::vector<std::shared_ptr<Outbox>> EventBus::TakeToNotify() {
  std::vector<std::shared_ptr<Outbox>> notify;
  notify.swap(to_notify_);
  return notify;
}

}  // namespace lite::controlplane
