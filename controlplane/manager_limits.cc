// ManagerState: the bounds on what callers can make the manager keep
// (ManagerOptions max_*, flags in limit_flags.h). Each refusal is
// RESOURCE_EXHAUSTED and names the limit and its flag, so that an operator
// who hits one knows what to raise.
#include <string>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"

namespace lite::controlplane {

void ManagerState::NoteNodeRecordLocked(uint32_t node_id, bool departed,
                                        absl::Time now) {
  // Its earlier departure, if any, is over: both entries go, or a node
  // that fails and rejoins would leave one set entry each time (review cp
  // L9).
  if (auto at = departed_at_.find(node_id); at != departed_at_.end()) {
    departed_.erase({at->second, node_id});
    departed_at_.erase(at);
  }
  if (!departed) return;
  departed_at_[node_id] = now;
  departed_.insert({now, node_id});
  while (static_cast<int64_t>(departed_at_.size()) >
             options_.max_departed_records &&
         ForgetOldestDepartedLocked()) {
  }
}

bool ManagerState::ForgetOldestDepartedLocked() {
  for (auto it = departed_.begin(); it != departed_.end();) {
    const auto [when, node_id] = *it;
    it = departed_.erase(it);
    auto at = departed_at_.find(node_id);
    if (at == departed_at_.end() || at->second != when) continue;  // Stale.
    departed_at_.erase(at);
    if (live_.contains(node_id) || !store_->LmrIdsOnHome(node_id).empty() ||
        store_->GrantCountHeldBy(node_id) != 0) {
      continue;  // Still referred to: kept, no longer counted.
    }
    std::optional<lite::v1::Member> node = store_->GetNode(node_id);
    if (!node.has_value()) continue;
    LITE_LOG_INFO(
        "forgetting the record of %s, the oldest departed one "
        "(--max_departed_records %d)",
        text::EscapeForTerminal(NodeLabel(*node)),
        options_.max_departed_records);
    store_->DeleteNode(node_id);
    return true;
  }
  return false;
}

absl::Status ManagerState::CountJoinLocked(const std::string& name,
                                           absl::Time now) {
  const absl::Time horizon = now - absl::Minutes(1);
  // The map holds names seen in the last minute only: swept when it has
  // grown past what the node limit explains.
  if (static_cast<int64_t>(joins_.size()) > 2 * options_.max_nodes) {
    absl::erase_if(joins_, [&](const auto& entry) {
      return entry.second.empty() || entry.second.back() <= horizon;
    });
  }
  std::deque<absl::Time>& times = joins_[name];
  while (!times.empty() && times.front() <= horizon) times.pop_front();
  if (static_cast<int64_t>(times.size()) >= options_.max_joins_per_minute) {
    return Exhausted(
        absl::StrCat("node '", text::EscapeForTerminal(name), "' joined ",
                     times.size(), " times in the last minute"),
        options_.max_joins_per_minute, "max_joins_per_minute",
        "back off and join again later");
  }
  times.push_back(now);
  return absl::OkStatus();
}

absl::Status ManagerState::CheckNodeRoomLocked() {
  if (static_cast<int64_t>(store_->NodeCount()) < options_.max_nodes) {
    return absl::OkStatus();
  }
  if (ForgetOldestDepartedLocked()) return absl::OkStatus();
  return Exhausted(
      absl::StrCat("this manager keeps ", store_->NodeCount(),
                   " node records, none of them a departed one it may forget"),
      options_.max_nodes, "max_nodes",
      "a new node name cannot join until a node leaves or fails");
}

}  // namespace lite::controlplane
