// ManagerState: the fenced free. A freed (or lost) LMR leaves the namespace
// at once but stays RELEASING until no node can reach its memory: every
// holder of a grant into it acknowledged that lite.ko drained the revoked
// grant (GrantRevokeAck), or ended its incarnation (its MemberFailed or
// MemberLeft goes out first, and the home's lite.ko tears down its
// connections to it before LMR_FREE returns). Then the home is sent
// ReleaseLmrMemory; after --free_fence_timeout_ms with acks still missing,
// ReleaseLmrMemory with quarantine. The request is sent again with backoff
// until the home answers OK (or NOT_FOUND), or its incarnation ends.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

namespace {

// Backoff of release requests: 100 ms doubling, at most 10 s.
absl::Duration ReleaseBackoff(int attempts) {
  const absl::Duration first = absl::Milliseconds(100);
  const absl::Duration most = absl::Seconds(10);
  return std::min(first * (int64_t{1} << std::min(attempts, 7)), most);
}

std::string LmrText(uint64_t lmr_id) {
  return absl::StrCat("LMR ", IdHex(lmr_id));
}

// "node 3 ('node2')": operators know nodes by name, the manager by id.
std::string NodeText(const Store& store, uint32_t node_id) {
  std::optional<lite::v1::Member> member = store.GetNode(node_id);
  return member ? NodeLabel(*member) : absl::StrCat("node ", node_id);
}

}  // namespace

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

void ManagerState::SetReleaseTimerLocked(uint64_t lmr_id, Release& release,
                                         absl::Time when) {
  if (release.timer != absl::InfiniteFuture()) {
    release_timers_.erase({release.timer, lmr_id});
  }
  release.timer = when;
  if (when == absl::InfiniteFuture()) return;
  release_timers_.insert({when, lmr_id});
  AddDeadlineLocked(when);
}

void ManagerState::StartReleaseLocked(
    lite::v1::Lmr lmr,
    std::map<uint64_t, std::pair<uint32_t, uint64_t>> pending) {
  const uint64_t lmr_id = lmr.lmr_id();
  lmr.set_state(lite::v1::LMR_STATE_RELEASING);
  Release release;
  release.home_node_id = lmr.home_node_id();
  release.pending = std::move(pending);
  // Revoking grants restored before the LMR came back (recovery only).
  for (auto it = restored_revoking_.begin(); it != restored_revoking_.end();) {
    if (it->second.lmr_id == lmr_id) {
      release.pending[it->first] = {it->second.holder_node_id,
                                    it->second.holder_incarnation};
      it = restored_revoking_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [grant_id, holder] : release.pending) {
    pending_acks_[grant_id] = lmr_id;
  }
  const absl::Time now = clock_->Now();
  if (!recovering_) release.fence_deadline = now + options_.free_fence_timeout;
  store_->PutLmr(lmr);
  releases_[lmr_id] = std::move(release);
  LITE_LOG_INFO("%s '%s' is releasing: %d revoked grants to be acknowledged",
                LmrText(lmr_id), lmr.name(),
                releases_.at(lmr_id).pending.size());
  AdvanceReleaseLocked(lmr_id, now);
}

void ManagerState::AdvanceReleaseLocked(uint64_t lmr_id, absl::Time now) {
  auto it = releases_.find(lmr_id);
  if (it == releases_.end()) return;
  Release& r = it->second;
  // Until recovery ends more revoking grants may be restored into it.
  if (recovering_)
    return SetReleaseTimerLocked(lmr_id, r, absl::InfiniteFuture());
  if (r.request_id != 0) {
    if (now < r.request_deadline) {
      return SetReleaseTimerLocked(lmr_id, r, r.request_deadline);
    }
    LITE_LOG_WARNING(
        "%s did not answer the release of %s within %d ms; sending it "
        "again",
        NodeText(*store_, r.home_node_id), LmrText(lmr_id),
        absl::ToInt64Milliseconds(options_.request_timeout));
    node_requests_.End(r.request_id, NodeRequests::Outcome::kTimeout, now);
    release_requests_.erase(r.request_id);
    r.request_id = 0;
    r.retry_at = now + ReleaseBackoff(r.attempts);
    ++counters_.release_retries;
  }
  if (!r.pending.empty() && !r.quarantine) {
    if (now < r.fence_deadline) {
      return SetReleaseTimerLocked(lmr_id, r, r.fence_deadline);
    }
    std::vector<std::string> holders;
    for (const auto& [grant_id, holder] : r.pending) {
      holders.push_back(absl::StrCat(NodeText(*store_, holder.first),
                                     " incarnation ", holder.second, " (grant ",
                                     IdHex(grant_id), ")"));
    }
    LITE_LOG_WARNING(
        "%s: no acknowledgement within %d ms (--free_fence_timeout_ms) from "
        "%s; its home quarantines the memory instead of freeing it",
        LmrText(lmr_id), absl::ToInt64Milliseconds(options_.free_fence_timeout),
        absl::StrJoin(holders, ", "));
    r.quarantine = true;
    ++counters_.lmrs_quarantined;
  }
  if (now < r.retry_at) return SetReleaseTimerLocked(lmr_id, r, r.retry_at);
  auto home = live_.find(r.home_node_id);
  if (home == live_.end() || !home->second.session_open) {
    // Its session is not open yet (restoring): try again shortly.
    r.retry_at = now + ReleaseBackoff(r.attempts++);
    return SetReleaseTimerLocked(lmr_id, r, r.retry_at);
  }
  r.request_id = node_requests_.Start(NodeRequests::Kind::kReleaseLmrMemory,
                                      r.home_node_id,
                                      home->second.member.incarnation(), now);
  r.request_deadline = now + options_.request_timeout;
  ++r.attempts;
  release_requests_[r.request_id] = lmr_id;
  lite::v1::ManagerMessage message;
  auto* request = message.mutable_request();
  request->set_request_id(r.request_id);
  request->set_deadline_ms(static_cast<uint64_t>(
      absl::ToInt64Milliseconds(options_.request_timeout)));
  request->mutable_release_lmr_memory()->set_lmr_id(lmr_id);
  request->mutable_release_lmr_memory()->set_quarantine(r.quarantine);
  SetReleaseTimerLocked(lmr_id, r, r.request_deadline);
  events_.SendTo(r.home_node_id, std::move(message));
}

void ManagerState::DropReleaseLocked(uint64_t lmr_id) {
  auto it = releases_.find(lmr_id);
  if (it == releases_.end()) return;
  Release& r = it->second;
  SetReleaseTimerLocked(lmr_id, r, absl::InfiniteFuture());
  if (r.request_id != 0) {
    // Its home ended before answering.
    node_requests_.End(r.request_id, NodeRequests::Outcome::kAbandoned,
                       clock_->Now());
    release_requests_.erase(r.request_id);
  }
  for (const auto& [grant_id, holder] : r.pending)
    pending_acks_.erase(grant_id);
  releases_.erase(it);
}

absl::Status ManagerState::ReleaseResultLocked(
    const SessionBinding& binding, const lite::v1::NodeRequestResult& result) {
  const uint64_t lmr_id = release_requests_.at(result.request_id());
  Release& r = releases_.at(lmr_id);
  release_requests_.erase(result.request_id());
  r.request_id = 0;
  const absl::Time now = clock_->Now();
  const int32_t code = result.status_code();
  node_requests_.End(
      result.request_id(),
      code == 0 ? NodeRequests::Outcome::kOk : NodeRequests::Outcome::kError,
      now);
  if (code == 0 || code == static_cast<int32_t>(absl::StatusCode::kNotFound)) {
    LITE_LOG_INFO("%s %s the memory of %s%s",
                  NodeText(*store_, binding.node_id),
                  r.quarantine ? "quarantined" : "freed", LmrText(lmr_id),
                  code == 0 ? "" : " (it was not hosted any more)");
    ++counters_.lmrs_released;
    DropReleaseLocked(lmr_id);
    store_->DeleteLmr(lmr_id);
    return absl::OkStatus();
  }
  LITE_LOG_WARNING("%s could not release %s (code %d: %s); retrying",
                   NodeText(*store_, binding.node_id), LmrText(lmr_id), code,
                   text::EscapeForTerminal(result.status_message()));
  ++counters_.release_retries;
  r.retry_at = now + ReleaseBackoff(r.attempts);
  AdvanceReleaseLocked(lmr_id, now);
  return absl::OkStatus();
}

void ManagerState::ImplyAcksLocked(uint32_t node_id, uint64_t incarnation) {
  const absl::Time now = clock_->Now();
  std::vector<uint64_t> emptied;
  for (auto& [lmr_id, r] : releases_) {
    const size_t before = r.pending.size();
    for (auto it = r.pending.begin(); it != r.pending.end();) {
      if (it->second.first == node_id && it->second.second == incarnation) {
        pending_acks_.erase(it->first);
        it = r.pending.erase(it);
      } else {
        ++it;
      }
    }
    if (r.pending.size() == before) continue;
    counters_.revoke_acks_implied += before - r.pending.size();
    if (r.pending.empty()) emptied.push_back(lmr_id);
  }
  for (auto it = restored_revoking_.begin(); it != restored_revoking_.end();) {
    if (it->second.holder_node_id == node_id &&
        it->second.holder_incarnation == incarnation) {
      it = restored_revoking_.erase(it);
    } else {
      ++it;
    }
  }
  // After the holder's MemberFailed/MemberLeft on every session, so the
  // home removes the peer before it frees.
  for (uint64_t lmr_id : emptied) AdvanceReleaseLocked(lmr_id, now);
}

absl::Time ManagerState::ReleasesDueLocked(absl::Time now) {
  while (!release_timers_.empty() && release_timers_.begin()->first <= now) {
    const uint64_t lmr_id = release_timers_.begin()->second;
    Release& r = releases_.at(lmr_id);
    // Advance re-arms it later than now, or not at all.
    SetReleaseTimerLocked(lmr_id, r, absl::InfiniteFuture());
    AdvanceReleaseLocked(lmr_id, now);
  }
  return release_timers_.empty() ? absl::InfiniteFuture()
                                 : release_timers_.begin()->first;
}

void ManagerState::ReleasesAfterRecoveryLocked() {
  if (!restored_revoking_.empty()) {
    // Their LMRs came back live or not at all: nothing is freed under them.
    LITE_LOG_INFO(
        "%d revoking grants restored into LMRs that are not releasing; no "
        "release waits for them",
        restored_revoking_.size());
    restored_revoking_.clear();
  }
  const absl::Time now = clock_->Now();
  std::vector<uint64_t> ids;
  for (auto& [lmr_id, r] : releases_) {
    r.fence_deadline = now + options_.free_fence_timeout;
    ids.push_back(lmr_id);
  }
  for (uint64_t lmr_id : ids) AdvanceReleaseLocked(lmr_id, now);
}

void ManagerState::RestoreRevokingLocked(const lite::v1::Grant& grant) {
  const std::pair<uint32_t, uint64_t> holder{grant.holder_node_id(),
                                             grant.holder_incarnation()};
  if (auto it = releases_.find(grant.lmr_id()); it != releases_.end()) {
    it->second.pending[grant.grant_id()] = holder;
    pending_acks_[grant.grant_id()] = grant.lmr_id();
    return;
  }
  restored_revoking_[grant.grant_id()] =
      RestoredRevoke{grant.lmr_id(), holder.first, holder.second};
}

absl::Status ManagerState::GrantRevokeAck(const SessionBinding& binding,
                                          const lite::v1::GrantRevokeAck& ack) {
  LITE_RETURN_IF_ERROR(
      ValidateGrantRevokeAck(ack, binding.node_id, binding.incarnation));
  const uint64_t grant_id = ack.grant_id();
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckBindingLocked(binding));
  if (store_->GetGrant(grant_id).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("grant ", IdHex(grant_id),
                     " is live: it was not revoked, so there is nothing to "
                     "acknowledge"));
  }
  if (auto it = pending_acks_.find(grant_id); it != pending_acks_.end()) {
    const uint64_t lmr_id = it->second;
    Release& r = releases_.at(lmr_id);
    const auto holder = r.pending.at(grant_id);
    if (holder.first != binding.node_id ||
        holder.second != binding.incarnation) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grant ", IdHex(grant_id), " was revoked from node ", holder.first,
          " incarnation ", holder.second, ", not from this session's"));
    }
    pending_acks_.erase(it);
    r.pending.erase(grant_id);
    ++counters_.revoke_acks;
    LITE_LOG_DEBUG("node %d acknowledged the revocation of grant %s",
                   binding.node_id, IdHex(grant_id));
    if (r.pending.empty()) AdvanceReleaseLocked(lmr_id, clock_->Now());
    return absl::OkStatus();
  }
  if (restored_revoking_.erase(grant_id) > 0) {
    ++counters_.revoke_acks;
    return absl::OkStatus();
  }
  // Its release is over, its home ended, or it was revoked without
  // ack_requested (NOT_RESTORED, HOME_FAILED): nothing waits for it.
  ++counters_.revoke_acks_late;
  LITE_LOG_DEBUG("acknowledgement of grant %s from node %d: nothing waits",
                 IdHex(grant_id), binding.node_id);
  return absl::OkStatus();
}

absl::Status ManagerState::LmrLost(const SessionBinding& binding,
                                   const lite::v1::LmrLost& report) {
  LITE_RETURN_IF_ERROR(ValidateLmrLost(report));
  const uint64_t lmr_id = report.lmr_id();
  if (static_cast<uint32_t>(lmr_id >> 32) != binding.node_id) {
    return absl::PermissionDeniedError(
        absl::StrCat("lmr_lost names ", LmrText(lmr_id),
                     ", which is homed on node ", lmr_id >> 32, "; node ",
                     binding.node_id, " may only report its own LMRs"));
  }
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckBindingLocked(binding));
  std::optional<lite::v1::Lmr> lmr = store_->GetLmr(lmr_id);
  if (!lmr.has_value() || lmr->state() == lite::v1::LMR_STATE_RELEASING) {
    LITE_LOG_INFO("%s lost %s, which is already gone or releasing",
                  NodeText(*store_, binding.node_id), LmrText(lmr_id));
    return absl::OkStatus();
  }
  ++counters_.lmrs_lost;
  LITE_LOG_WARNING("%s lost LMR '%s' (%s): errno %d%s%s; removing it",
                   NodeText(*store_, binding.node_id), lmr->name(),
                   IdHex(lmr_id), report.reason_errno(),
                   report.detail().empty() ? "" : ": ",
                   text::EscapeForTerminal(report.detail()));
  RemoveLmrLocked(lmr_id, lite::v1::REMOVAL_CAUSE_DEVICE_REMOVED,
                  /*release=*/true);
  return absl::OkStatus();
}

}  // namespace lite::controlplane
