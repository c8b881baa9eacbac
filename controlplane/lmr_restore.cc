// LmrRegistry: grants restored from the agents after a manager restart,
// the orphans revoked when recovery ends, what a node's end takes with it,
// and the listings.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/access.h"
#include "controlplane/lmr_registry.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::Grant;
using lite::v1::Lmr;

namespace {

bool SameGrant(const Grant& a, const Grant& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

absl::Status LmrRegistry::ValidateRestore(
    const lite::v1::RestoreGrantRequest& request,
    const ManagerOptions& options) {
  if (!request.has_grant()) {
    return absl::InvalidArgumentError("grant is not set");
  }
  const Grant& grant = request.grant();
  const uint32_t caller_id = request.caller().node_id();
  if (HighHalf(grant.grant_id()) != caller_id ||
      LowHalf(grant.grant_id()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grant.grant_id ", IdHex(grant.grant_id()), " was not issued to node ",
        caller_id,
        " (its high 32 bits name the holder and its low 32 bits are nonzero)"));
  }
  if (grant.holder_node_id() != caller_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grant.holder_node_id is ", grant.holder_node_id(),
        "; a node can only restore its own grants (caller is node ", caller_id,
        ")"));
  }
  if (grant.holder_incarnation() == 0 || grant.epoch() == 0) {
    return absl::InvalidArgumentError(
        "grant.holder_incarnation and grant.epoch must be set as issued");
  }
  if (LowHalf(grant.lmr_id()) == 0 ||
      HighHalf(grant.lmr_id()) != grant.home_node_id() ||
      grant.home_node_id() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grant.lmr_id ", IdHex(grant.lmr_id()), " and grant.home_node_id ",
        grant.home_node_id(),
        " do not match (an LMR id's high 32 bits are its home node)"));
  }
  LITE_RETURN_IF_ERROR(
      names::ValidateLmrName("grant.lmr_name", grant.lmr_name()));
  LITE_RETURN_IF_ERROR(
      ValidateCredentials("grant.requester", grant.requester()));
  LITE_RETURN_IF_ERROR(ValidateAccess("grant.access", grant.access()));
  LITE_RETURN_IF_ERROR(ValidateSize("grant.size_bytes", grant.size_bytes(),
                                    options.max_lmr_size_bytes));
  LITE_RETURN_IF_ERROR(ValidateChunks("grant.chunks", grant.chunks(),
                                      grant.size_bytes(),
                                      options.max_lmr_chunks));
  return absl::OkStatus();
}

absl::StatusOr<lite::v1::RestoreGrantResponse> LmrRegistry::Restore(
    const lite::v1::Member& caller,
    const lite::v1::RestoreGrantRequest& request, bool recovering) {
  const Grant& grant = request.grant();
  const uint32_t caller_id = caller.node_id();
  if (!recovering) {
    return absl::FailedPreconditionError(
        "grants can only be restored while the manager is recovering after a "
        "restart (JoinResponse.manager_recovering); map the LMR again");
  }
  if (grant.holder_incarnation() != caller.incarnation()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "grant ", IdHex(grant.grant_id()), " was issued to incarnation ",
        grant.holder_incarnation(), " of node ", caller_id,
        ", which is now incarnation ", caller.incarnation(),
        "; grants end with their holder's incarnation: revoke it"));
  }
  // Recorded without its chunks (they are the LMR's, see MapLmr).
  Grant record = grant;
  record.clear_chunks();
  if (std::optional<Grant> existing = store_->GetGrant(grant.grant_id());
      existing.has_value()) {
    if (SameGrant(*existing, record)) {
      lite::v1::RestoreGrantResponse response;
      *response.mutable_grant() = grant;
      return response;
    }
    return absl::AlreadyExistsError(absl::StrCat(
        "a different grant ", IdHex(grant.grant_id()), " is already recorded"));
  }
  std::optional<Lmr> lmr = store_->GetLmr(grant.lmr_id());
  const bool releasing =
      lmr.has_value() && lmr->state() == lite::v1::LMR_STATE_RELEASING;
  if (request.revoking() || releasing) {
    // Not a grant any more: an acknowledgement its LMR's release waits for
    // (or nothing, if recovery ends with its LMR not RELEASING).
    fenced_free_->RestoreRevoking(grant);
    store_->RaiseGrantSeq(caller_id, LowHalf(grant.grant_id()));
    lite::v1::RestoreGrantResponse response;
    *response.mutable_grant() = grant;
    response.set_revoked(!request.revoking());
    return response;
  }
  if (lmr.has_value()) {
    if (lmr->name() != grant.lmr_name() ||
        lmr->size_bytes() != grant.size_bytes() ||
        lmr->epoch() != grant.epoch()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "grant ", IdHex(grant.grant_id()), " does not match ", LmrLabel(*lmr),
          " as its home re-registered it (name, size or epoch differ); the "
          "grant is stale: revoke it"));
    }
    LITE_RETURN_IF_ERROR(CheckAccess(LmrLabel(*lmr), lmr->mode(),
                                     lmr->owner_uid(), lmr->owner_gid(),
                                     grant.requester(), grant.access()));
  }
  LITE_RETURN_IF_ERROR(CheckGrantRoom(caller_id));
  LITE_RETURN_IF_ERROR(CheckLmrGrantRoom(grant.lmr_id()));
  store_->PutGrant(record);
  store_->RaiseGrantSeq(caller_id, LowHalf(grant.grant_id()));
  lite::v1::RestoreGrantResponse response;
  *response.mutable_grant() = grant;
  return response;
}

// ------------------------------------------------------------------ ends

LmrRegistry::NodeEndedCounts LmrRegistry::NodeEnded(uint32_t node_id, bool left,
                                                    const std::string& label) {
  NodeEndedCounts counts;
  // Its LMRs go away with it, announced, and so does every grant into them.
  const lite::v1::RemovalCause removal =
      left ? lite::v1::REMOVAL_CAUSE_HOME_LEFT
           : lite::v1::REMOVAL_CAUSE_HOME_FAILED;
  for (uint64_t lmr_id : store_->LmrIdsOnHome(node_id)) {
    counts.revoked += RemoveLmr(lmr_id, removal);
    ++counts.lmrs;
  }
  // Its own grants die with its kernel state: dropped, not announced.
  const std::vector<uint64_t> held = store_->GrantIdsHeldBy(node_id);
  for (uint64_t grant_id : held) store_->DeleteGrant(grant_id);
  counts.dropped = held.size();
  // Allocations it was asked for will never be answered.
  std::vector<uint64_t> abandoned;
  for (const auto& [request_id, pending] : allocs_) {
    if (pending.lmr.home_node_id() == node_id) abandoned.push_back(request_id);
  }
  for (uint64_t request_id : abandoned) {
    const std::string name = allocs_.at(request_id).lmr.name();
    FinishAlloc(request_id, absl::UnavailableError(absl::StrCat(
                                label, (left ? " left" : " failed"),
                                " before answering the allocation of LMR '",
                                name, "'; retry on a live node")));
  }
  return counts;
}

size_t LmrRegistry::RevokeOrphans() {
  // Grants restored into LMRs that no home re-registered cannot be checked
  // or honoured: revoke them.
  // One LmrRemoved (revokes_grants) per missing LMR, not one GrantRevoked
  // per grant: every session gets each event (review cp H2).
  size_t orphans = 0;
  std::map<uint64_t, lite::v1::Grant> missing;  // LMR -> one grant into it.
  uint64_t after = 0;
  while (true) {
    std::vector<lite::v1::Grant> page =
        store_->ListGrants(0, 0, after, kMaxPageSize);
    if (page.empty()) break;
    after = page.back().grant_id();
    for (const lite::v1::Grant& grant : page) {
      if (!store_->GetLmr(grant.lmr_id()).has_value()) {
        missing.emplace(grant.lmr_id(), grant);
      }
    }
  }
  for (const auto& [lmr_id, grant] : missing) {
    const std::vector<uint64_t> ids = store_->GrantIdsForLmr(lmr_id);
    Event removed;
    auto* r = removed.mutable_lmr_removed();
    for (uint64_t grant_id : ids) {
      std::optional<lite::v1::Grant> orphan = store_->GetGrant(grant_id);
      if (!orphan.has_value()) continue;
      auto* revoked = r->add_revoked();
      revoked->set_grant_id(grant_id);
      revoked->set_holder_node_id(orphan->holder_node_id());
      revoked->set_holder_incarnation(orphan->holder_incarnation());
      store_->DeleteGrant(grant_id);
    }
    orphans += ids.size();
    counters_.grants_revoked += ids.size();
    r->set_lmr_id(lmr_id);
    r->set_name(grant.lmr_name());
    r->set_home_node_id(grant.home_node_id());
    r->set_cause(lite::v1::REMOVAL_CAUSE_NOT_RESTORED);
    r->set_revokes_grants(true);
    r->set_grants_revoked(static_cast<uint32_t>(ids.size()));
    events_->Emit(std::move(removed));
  }
  return orphans;
}

// ------------------------------------------------------------------ listings

std::vector<Lmr> LmrRegistry::ListLmrs(uint32_t home_node_id, uint64_t after_id,
                                       int limit, bool* more) const {
  std::vector<Lmr> lmrs = store_->ListLmrs(home_node_id, after_id, limit + 1);
  *more = static_cast<int>(lmrs.size()) > limit;
  if (*more) lmrs.pop_back();
  for (Lmr& lmr : lmrs) {
    if (fenced_free_->Releasing(lmr.lmr_id())) {
      lmr.set_revokes_pending(fenced_free_->AcksMissing(lmr.lmr_id()));
    }
    lmr = WithoutKey(std::move(lmr));
  }
  return lmrs;
}

std::vector<Grant> LmrRegistry::ListGrants(uint64_t lmr_id,
                                           uint32_t holder_node_id,
                                           uint64_t after_id, int limit,
                                           bool* more) const {
  std::vector<Grant> grants =
      store_->ListGrants(lmr_id, holder_node_id, after_id, limit + 1);
  *more = static_cast<int>(grants.size()) > limit;
  if (*more) grants.pop_back();
  for (Grant& grant : grants) grant = WithoutKey(std::move(grant));
  return grants;
}

}  // namespace lite::controlplane
