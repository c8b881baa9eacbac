#include "agent/grant_gate.h"

#include "absl/strings/str_format.h"
#include "common/status/macros.h"

namespace lite::agent {

absl::StatusOr<bool> GrantGate::Revoke(uint64_t grant_id) {
  absl::MutexLock lock(&mu_);
  absl::Status s = module_->RevokeGrant(grant_id);
  if (s.ok()) return true;
  if (!absl::IsNotFound(s)) return s;
  RememberLocked(grant_id);
  return false;
}

void GrantGate::Mark(uint64_t grant_id) {
  absl::MutexLock lock(&mu_);
  RememberLocked(grant_id);
}

void GrantGate::RememberLocked(uint64_t grant_id) {
  if (revoked_.insert(grant_id).second) {
    revoked_order_.push_back(grant_id);
    if (revoked_order_.size() > kRememberRevoked) {
      revoked_.erase(revoked_order_.front());
      revoked_order_.pop_front();
    }
  }
}

void GrantGate::MarkLmr(uint64_t lmr_id, bool ack) {
  absl::MutexLock lock(&mu_);
  auto [it, added] = revoked_lmrs_.emplace(lmr_id, ack);
  it->second = it->second || ack;
  if (!added) return;
  revoked_lmrs_order_.push_back(lmr_id);
  if (revoked_lmrs_order_.size() > kRememberRevoked) {
    revoked_lmrs_.erase(revoked_lmrs_order_.front());
    revoked_lmrs_order_.pop_front();
  }
}

void GrantGate::SetRefusalSink(RefusalSink sink) {
  absl::MutexLock lock(&mu_);
  refusal_sink_ = std::move(sink);
}

absl::StatusOr<int> GrantGate::SetHolder(uint32_t node_id,
                                         uint64_t incarnation) {
  absl::MutexLock lock(&mu_);
  node_id_ = node_id;
  incarnation_ = incarnation;
  LITE_ASSIGN_OR_RETURN(const std::vector<lite::v1::Grant> grants,
                        module_->ListGrants());
  int revoked = 0;
  for (const lite::v1::Grant& g : grants) {
    if (g.holder_node_id() == node_id &&
        g.holder_incarnation() == incarnation) {
      continue;
    }
    absl::Status s = module_->RevokeGrant(g.grant_id());
    // DEADLINE_EXCEEDED: revoked, still draining in lite.ko; the manager
    // does not wait for a previous incarnation's grants.
    if (!s.ok() && !absl::IsNotFound(s) && !absl::IsDeadlineExceeded(s)) {
      return s;
    }
    ++revoked;
  }
  return revoked;
}

absl::Status GrantGate::Install(const lite::v1::Grant& grant,
                                const std::function<absl::Status()>& install) {
  RefusalSink sink;
  bool ack = false;
  {
    absl::MutexLock lock(&mu_);
    auto lmr = revoked_lmrs_.find(grant.lmr_id());
    if (lmr == revoked_lmrs_.end()) return InstallLocked(grant, install);
    sink = refusal_sink_;
    ack = lmr->second;
  }
  // Revoked with its LMR: the revocation (and its ack) is this grant's
  // too, though the module never held it.
  if (sink != nullptr) sink(grant, ack);
  return absl::AbortedError(absl::StrFormat(
      "grant %#x was revoked before it could be installed (LMR %#x was "
      "freed or its home failed); map again",
      grant.grant_id(), grant.lmr_id()));
}

absl::Status GrantGate::InstallLocked(
    const lite::v1::Grant& grant,
    const std::function<absl::Status()>& install) {
  if (revoked_.contains(grant.grant_id())) {
    return absl::AbortedError(absl::StrFormat(
        "grant %#x was revoked before it could be installed (the LMR was "
        "freed or its home failed); map again",
        grant.grant_id()));
  }
  if (grant.holder_node_id() != node_id_ ||
      grant.holder_incarnation() != incarnation_) {
    return absl::AbortedError(absl::StrFormat(
        "grant %#x was made for node %u incarnation %u, but this node is now "
        "%u incarnation %u; map again",
        grant.grant_id(), grant.holder_node_id(), grant.holder_incarnation(),
        node_id_, incarnation_));
  }
  return install();
}

}  // namespace lite::agent
