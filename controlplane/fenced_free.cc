#include "controlplane/fenced_free.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log/log.h"
#include "common/text/inert.h"
#include "controlplane/manager_util.h"

namespace lite::controlplane {

namespace {

// Backoff of release requests: 100 ms doubling, at most 10 s.
absl::Duration ReleaseBackoff(int attempts) {
  const absl::Duration first = absl::Milliseconds(100);
  const absl::Duration most = absl::Seconds(10);
  return std::min(first * (int64_t{1} << std::min(attempts, 7)), most);
}

}  // namespace

FencedFree::FencedFree(const ManagerOptions& options, const Clock* clock,
                       Store* store, EventBus* events, NodeRequests* requests,
                       OpenSessionOf open_session_of, bool recovering)
    : options_(options),
      clock_(clock),
      store_(store),
      events_(events),
      requests_(requests),
      open_session_of_(std::move(open_session_of)),
      recovering_(recovering) {}

uint32_t FencedFree::AcksMissing(uint64_t lmr_id) const {
  auto it = releases_.find(lmr_id);
  return it == releases_.end()
             ? 0
             : static_cast<uint32_t>(it->second.pending.size());
}

uint64_t FencedFree::BytesReleasing() const {
  uint64_t bytes = 0;
  for (const auto& [lmr_id, release] : releases_) {
    std::optional<lite::v1::Lmr> lmr = store_->GetLmr(lmr_id);
    if (lmr.has_value()) bytes += lmr->size_bytes();
  }
  return bytes;
}

absl::Time FencedFree::NextTimer() const {
  return timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first;
}

void FencedFree::SetTimer(uint64_t lmr_id, Release& release, absl::Time when) {
  if (release.timer != absl::InfiniteFuture()) {
    timers_.erase({release.timer, lmr_id});
  }
  release.timer = when;
  if (when == absl::InfiniteFuture()) return;
  timers_.insert({when, lmr_id});
}

void FencedFree::Start(lite::v1::Lmr lmr, std::map<uint64_t, Holder> pending) {
  const uint64_t lmr_id = lmr.lmr_id();
  lmr.set_state(lite::v1::LMR_STATE_RELEASING);
  Release release;
  release.home_node_id = lmr.home_node_id();
  release.pending = std::move(pending);
  // Revoking grants restored before the LMR came back (recovery only).
  for (auto it = restored_revoking_.begin(); it != restored_revoking_.end();) {
    if (it->second.lmr_id == lmr_id) {
      release.pending[it->first] = it->second.holder;
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
  Advance(lmr_id, now);
}

void FencedFree::Advance(uint64_t lmr_id, absl::Time now) {
  auto it = releases_.find(lmr_id);
  if (it == releases_.end()) return;
  Release& r = it->second;
  // Until recovery ends more revoking grants may be restored into it.
  if (recovering_) return SetTimer(lmr_id, r, absl::InfiniteFuture());
  if (r.request_id != 0) {
    if (now < r.request_deadline) {
      return SetTimer(lmr_id, r, r.request_deadline);
    }
    LITE_LOG_WARNING(
        "%s did not answer the release of %s within %d ms; sending it "
        "again",
        NodeText(*store_, r.home_node_id), LmrText(lmr_id),
        absl::ToInt64Milliseconds(options_.request_timeout));
    requests_->End(r.request_id, NodeRequests::Outcome::kTimeout, now);
    requests_to_lmr_.erase(r.request_id);
    r.request_id = 0;
    r.retry_at = now + ReleaseBackoff(r.attempts);
    ++counters_.release_retries;
  }
  if (!r.pending.empty() && !r.quarantine) {
    if (now < r.fence_deadline) {
      return SetTimer(lmr_id, r, r.fence_deadline);
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
  if (now < r.retry_at) return SetTimer(lmr_id, r, r.retry_at);
  const std::optional<uint64_t> home_incarnation =
      open_session_of_(r.home_node_id);
  if (!home_incarnation.has_value()) {
    // Its session is not open yet (restoring): try again shortly.
    r.retry_at = now + ReleaseBackoff(r.attempts++);
    return SetTimer(lmr_id, r, r.retry_at);
  }
  r.request_id = requests_->Start(NodeRequests::Kind::kReleaseLmrMemory,
                                  r.home_node_id, *home_incarnation, now);
  r.request_deadline = now + options_.request_timeout;
  ++r.attempts;
  requests_to_lmr_[r.request_id] = lmr_id;
  lite::v1::ManagerMessage message;
  auto* request = message.mutable_request();
  request->set_request_id(r.request_id);
  request->set_deadline_ms(static_cast<uint64_t>(
      absl::ToInt64Milliseconds(options_.request_timeout)));
  request->mutable_release_lmr_memory()->set_lmr_id(lmr_id);
  request->mutable_release_lmr_memory()->set_quarantine(r.quarantine);
  SetTimer(lmr_id, r, r.request_deadline);
  events_->SendTo(r.home_node_id, std::move(message));
}

void FencedFree::Drop(uint64_t lmr_id) {
  auto it = releases_.find(lmr_id);
  if (it == releases_.end()) return;
  Release& r = it->second;
  SetTimer(lmr_id, r, absl::InfiniteFuture());
  if (r.request_id != 0) {
    // Its home ended before answering.
    requests_->End(r.request_id, NodeRequests::Outcome::kAbandoned,
                   clock_->Now());
    requests_to_lmr_.erase(r.request_id);
  }
  for (const auto& [grant_id, holder] : r.pending)
    pending_acks_.erase(grant_id);
  releases_.erase(it);
}

void FencedFree::Answered(const lite::v1::NodeRequestResult& result) {
  const uint64_t lmr_id = requests_to_lmr_.at(result.request_id());
  Release& r = releases_.at(lmr_id);
  requests_to_lmr_.erase(result.request_id());
  r.request_id = 0;
  const absl::Time now = clock_->Now();
  const int32_t code = result.status_code();
  requests_->End(
      result.request_id(),
      code == 0 ? NodeRequests::Outcome::kOk : NodeRequests::Outcome::kError,
      now);
  if (code == 0 || code == static_cast<int32_t>(absl::StatusCode::kNotFound)) {
    LITE_LOG_INFO("%s %s the memory of %s%s", NodeText(*store_, r.home_node_id),
                  r.quarantine ? "quarantined" : "freed", LmrText(lmr_id),
                  code == 0 ? "" : " (it was not hosted any more)");
    ++counters_.lmrs_released;
    Drop(lmr_id);
    store_->DeleteLmr(lmr_id);
    return;
  }
  LITE_LOG_WARNING("%s could not release %s (code %d: %s); retrying",
                   NodeText(*store_, r.home_node_id), LmrText(lmr_id), code,
                   text::EscapeForTerminal(result.status_message()));
  ++counters_.release_retries;
  r.retry_at = now + ReleaseBackoff(r.attempts);
  Advance(lmr_id, now);
}

void FencedFree::HolderEnded(const Holder& holder) {
  const absl::Time now = clock_->Now();
  std::vector<uint64_t> emptied;
  for (auto& [lmr_id, r] : releases_) {
    const size_t before = r.pending.size();
    for (auto it = r.pending.begin(); it != r.pending.end();) {
      if (it->second == holder) {
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
    if (it->second.holder == holder) {
      it = restored_revoking_.erase(it);
    } else {
      ++it;
    }
  }
  // After the holder's MemberFailed/MemberLeft on every session, so the
  // home removes the peer before it frees.
  for (uint64_t lmr_id : emptied) Advance(lmr_id, now);
}

absl::Time FencedFree::Due(absl::Time now) {
  while (!timers_.empty() && timers_.begin()->first <= now) {
    const uint64_t lmr_id = timers_.begin()->second;
    Release& r = releases_.at(lmr_id);
    // Advance re-arms it later than now, or not at all.
    SetTimer(lmr_id, r, absl::InfiniteFuture());
    Advance(lmr_id, now);
  }
  return NextTimer();
}

void FencedFree::RecoveryEnded() {
  recovering_ = false;
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
  for (uint64_t lmr_id : ids) Advance(lmr_id, now);
}

void FencedFree::RestoreRevoking(const lite::v1::Grant& grant) {
  const Holder holder{grant.holder_node_id(), grant.holder_incarnation()};
  if (auto it = releases_.find(grant.lmr_id()); it != releases_.end()) {
    it->second.pending[grant.grant_id()] = holder;
    pending_acks_[grant.grant_id()] = grant.lmr_id();
    return;
  }
  restored_revoking_[grant.grant_id()] = RestoredRevoke{grant.lmr_id(), holder};
}

absl::Status FencedFree::Ack(const Holder& holder, uint64_t grant_id) {
  if (store_->GetGrant(grant_id).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("grant ", IdHex(grant_id),
                     " is live: it was not revoked, so there is nothing to "
                     "acknowledge"));
  }
  if (auto it = pending_acks_.find(grant_id); it != pending_acks_.end()) {
    const uint64_t lmr_id = it->second;
    Release& r = releases_.at(lmr_id);
    if (r.pending.at(grant_id) != holder) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grant ", IdHex(grant_id), " was revoked from node ",
          r.pending.at(grant_id).first, " incarnation ",
          r.pending.at(grant_id).second, ", not from this session's"));
    }
    pending_acks_.erase(it);
    r.pending.erase(grant_id);
    ++counters_.revoke_acks;
    LITE_LOG_DEBUG("node %d acknowledged the revocation of grant %s",
                   holder.first, IdHex(grant_id));
    if (r.pending.empty()) Advance(lmr_id, clock_->Now());
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
                 IdHex(grant_id), holder.first);
  return absl::OkStatus();
}
}  // namespace lite::controlplane
