// ManagerState: the LMR registry, access checks and grants.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/access.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::Grant;
using lite::v1::Lmr;

namespace {

uint32_t HighHalf(uint64_t id) { return static_cast<uint32_t>(id >> 32); }
uint32_t LowHalf(uint64_t id) { return static_cast<uint32_t>(id); }
uint64_t MakeId(uint32_t node_id, uint32_t seq) {
  return (uint64_t{node_id} << 32) | seq;
}

std::string LmrLabel(const Lmr& lmr) {
  return absl::StrCat("LMR '", lmr.name(), "' (", IdHex(lmr.lmr_id()), ")");
}

// Whether a re-registration describes the LMR already recorded.
bool SameLmr(const Lmr& a, const Lmr& b) {
  if (a.name() != b.name() || a.home_node_id() != b.home_node_id() ||
      a.size_bytes() != b.size_bytes() || a.owner_uid() != b.owner_uid() ||
      a.owner_gid() != b.owner_gid() || a.mode() != b.mode() ||
      a.memory_key() != b.memory_key() || a.read_key() != b.read_key() ||
      a.origin() != b.origin() || a.chunks_size() != b.chunks_size()) {
    return false;
  }
  for (int i = 0; i < a.chunks_size(); ++i) {
    if (a.chunks(i).address() != b.chunks(i).address() ||
        a.chunks(i).length_bytes() != b.chunks(i).length_bytes()) {
      return false;
    }
  }
  return true;
}

bool SameGrant(const Grant& a, const Grant& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

}  // namespace

absl::Status ManagerState::CheckNotRecoveringLocked() const {
  if (!recovering_) return absl::OkStatus();
  // The names of LMRs not re-registered yet are unknown until their homes
  // come back: a new LMR now could take one of them (review cp M8).
  return absl::UnavailableError(absl::StrCat(
      "manager recovering, retry: new LMRs are accepted once the homes have "
      "re-registered theirs (in at most ",
      absl::FormatDuration(recovery_end_ - clock_->Now()), ")"));
}

absl::Status ManagerState::CheckLmrNameFreeLocked(
    const std::string& name) const {
  if (std::optional<uint64_t> id = store_->FindLmrId(name); id.has_value()) {
    const Lmr existing = *store_->GetLmr(*id);
    return absl::AlreadyExistsError(absl::StrCat(
        "LMR name '", name, "' is taken by ", IdHex(existing.lmr_id()),
        " on node ", existing.home_node_id(), "; choose another name"));
  }
  if (pending_names_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "LMR name '", name,
        "' is taken by an allocation in progress; choose another name"));
  }
  return absl::OkStatus();
}

std::optional<std::pair<uint32_t, uint64_t>> ManagerState::RevokeGrantLocked(
    uint64_t grant_id, lite::v1::RemovalCause cause, bool ack_requested) {
  std::optional<Grant> grant = store_->GetGrant(grant_id);
  if (!grant.has_value()) return std::nullopt;
  store_->DeleteGrant(grant_id);
  Event event;
  auto* revoked = event.mutable_grant_revoked();
  revoked->set_grant_id(grant_id);
  revoked->set_lmr_id(grant->lmr_id());
  revoked->set_holder_node_id(grant->holder_node_id());
  revoked->set_holder_incarnation(grant->holder_incarnation());
  revoked->set_cause(cause);
  revoked->set_ack_requested(ack_requested);
  events_.Emit(std::move(event));
  ++counters_.grants_revoked;
  return std::make_pair(grant->holder_node_id(), grant->holder_incarnation());
}

size_t ManagerState::RemoveLmrLocked(uint64_t lmr_id,
                                     lite::v1::RemovalCause cause,
                                     bool release) {
  std::optional<Lmr> lmr = store_->GetLmr(lmr_id);
  if (!lmr.has_value()) return 0;
  if (lmr->state() == lite::v1::LMR_STATE_RELEASING) {
    // Its home ended: the memory went with that incarnation, and
    // LmrRemoved was announced when the release began.
    fenced_free_.Drop(lmr_id);
    store_->DeleteLmr(lmr_id);
    return 0;
  }
  // Every grant into it is revoked by the one LmrRemoved below (its
  // revokes_grants), not by one GrantRevoked each: an event goes to every
  // session, and one per grant would be more than an idle session may
  // queue (review cp H2).
  const std::vector<uint64_t> grants = store_->GrantIdsForLmr(lmr_id);
  std::map<uint64_t, std::pair<uint32_t, uint64_t>> pending;
  Event event;
  auto* removed = event.mutable_lmr_removed();
  for (uint64_t grant_id : grants) {
    std::optional<Grant> grant = store_->GetGrant(grant_id);
    if (!grant.has_value()) continue;
    store_->DeleteGrant(grant_id);
    auto* revoked = removed->add_revoked();
    revoked->set_grant_id(grant_id);
    revoked->set_holder_node_id(grant->holder_node_id());
    revoked->set_holder_incarnation(grant->holder_incarnation());
    if (release) {
      pending.emplace(grant_id, std::make_pair(grant->holder_node_id(),
                                               grant->holder_incarnation()));
    }
  }
  counters_.grants_revoked += grants.size();
  if (!release) store_->DeleteLmr(lmr_id);
  removed->set_lmr_id(lmr_id);
  removed->set_name(lmr->name());
  removed->set_home_node_id(lmr->home_node_id());
  removed->set_cause(cause);
  removed->set_release_follows(release);
  removed->set_revokes_grants(true);
  removed->set_grants_revoked(static_cast<uint32_t>(grants.size()));
  events_.Emit(std::move(event));
  if (release) fenced_free_.Start(*std::move(lmr), std::move(pending));
  return grants.size();
}

// ------------------------------------------------------------------ register

absl::StatusOr<lite::v1::RegisterLmrResponse> ManagerState::RegisterLmr(
    const lite::v1::RegisterLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("owner", request.owner()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  LITE_RETURN_IF_ERROR(ValidateSize("size_bytes", request.size_bytes(),
                                    options_.max_lmr_size_bytes));
  LITE_RETURN_IF_ERROR(ValidateMode("mode", request.mode()));
  LITE_RETURN_IF_ERROR(ValidateChunks("chunks", request.chunks(),
                                      request.size_bytes(),
                                      options_.max_lmr_chunks));
  const bool reregister = request.lmr_id() != 0;
  if (!reregister && request.origin() != lite::v1::LMR_ORIGIN_UNSPECIFIED &&
      request.origin() != lite::v1::LMR_ORIGIN_REGISTERED) {
    return absl::InvalidArgumentError(
        "origin ALLOCATED is only accepted when re-registering (lmr_id set); "
        "a new registration is always REGISTERED");
  }
  if (!lite::v1::LmrOrigin_IsValid(request.origin())) {
    return absl::InvalidArgumentError(
        absl::StrCat("origin ", request.origin(), " is not a LmrOrigin"));
  }
  if (request.releasing() && !reregister) {
    return absl::InvalidArgumentError(
        "releasing is only accepted when re-registering (lmr_id set): a new "
        "registration cannot be releasing");
  }
  if (reregister && LowHalf(request.lmr_id()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lmr_id ", IdHex(request.lmr_id()),
        " has a zero sequence (low 32 bits); it is not an id this manager "
        "issues"));
  }

  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  const uint32_t home = caller->member.node_id();
  const absl::Time now = clock_->Now();

  Lmr lmr;
  lmr.set_name(request.name());
  lmr.set_home_node_id(home);
  lmr.set_size_bytes(request.size_bytes());
  lmr.set_owner_uid(request.owner().uid());
  lmr.set_owner_gid(request.owner().gid());
  lmr.set_mode(request.mode());
  *lmr.mutable_chunks() = request.chunks();
  lmr.set_memory_key(request.memory_key());
  lmr.set_read_key(request.read_key());
  lmr.set_origin(request.origin() == lite::v1::LMR_ORIGIN_UNSPECIFIED
                     ? lite::v1::LMR_ORIGIN_REGISTERED
                     : request.origin());
  lmr.set_epoch(caller->member.incarnation());
  lmr.set_created_at_unix_ms(absl::ToUnixMillis(now));
  lmr.set_state(lite::v1::LMR_STATE_LIVE);

  if (!reregister) {
    LITE_RETURN_IF_ERROR(CheckNotRecoveringLocked());
    if (caller->member.draining()) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller->member),
          " is draining; no new LMR may be registered on it (DrainNode with "
          "cancel puts it back in service)"));
    }
    LITE_RETURN_IF_ERROR(CheckLmrNameFreeLocked(request.name()));
    LITE_RETURN_IF_ERROR(CheckOwnerRoomLocked(request.owner().uid()));
    LITE_RETURN_IF_ERROR(CheckHomeRoomLocked(home, request.owner().uid(),
                                             request.size_bytes(),
                                             request.chunks_size()));
    const uint32_t seq = store_->NextLmrSeq(home);
    if (seq == 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat(NodeLabel(caller->member), " has used every LMR id"));
    }
    lmr.set_lmr_id(MakeId(home, seq));
  } else {
    if (HighHalf(request.lmr_id()) != home) {
      return absl::PermissionDeniedError(
          absl::StrCat("LMR ", IdHex(request.lmr_id()), " was created on node ",
                       HighHalf(request.lmr_id()),
                       "; only that node's agent may "
                       "re-register it, not node ",
                       home));
    }
    lmr.set_lmr_id(request.lmr_id());
    if (std::optional<Lmr> existing = store_->GetLmr(request.lmr_id());
        existing.has_value()) {
      if (existing->state() == lite::v1::LMR_STATE_RELEASING) {
        // Freed while the home was restoring or retrying: it stays freed;
        // the home learns it from the record's state.
        lite::v1::RegisterLmrResponse response;
        *response.mutable_lmr() = WithoutKey(*existing);
        return response;
      }
      Lmr comparable = lmr;
      comparable.set_epoch(existing->epoch());
      comparable.set_created_at_unix_ms(existing->created_at_unix_ms());
      if (SameLmr(comparable, *existing)) {
        lite::v1::RegisterLmrResponse response;
        *response.mutable_lmr() = WithoutKey(*existing);
        return response;  // A retry of a registration that succeeded.
      }
      return absl::AlreadyExistsError(absl::StrCat(
          LmrLabel(*existing),
          " is already registered with different attributes (name, size, "
          "owner, mode, chunks or key); free it first"));
    }
    // Outside recovery only an id this manager issued (and no longer
    // holds: checked above) comes back, after its home's rejoin; a made-up
    // one would be an LMR no limit counted (review cp M2).
    if (!recovering_ && LowHalf(request.lmr_id()) > store_->LastLmrSeq(home)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lmr_id ", IdHex(request.lmr_id()),
          " was never issued by this manager and it is not recovering; "
          "register the LMR anew (lmr_id 0)"));
    }
    if (!request.releasing() && caller->member.draining()) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller->member),
          " is draining; no LMR may be registered on it, not even again "
          "(DrainNode with cancel puts it back in service)"));
    }
    LITE_RETURN_IF_ERROR(CheckOwnerRoomLocked(request.owner().uid()));
    LITE_RETURN_IF_ERROR(CheckHomeRoomLocked(home, request.owner().uid(),
                                             request.size_bytes(),
                                             request.chunks_size()));
    if (request.releasing()) {
      // Out of the namespace already: no name check, no LmrAdded. Grants
      // restored into it as live are revoked now, and waited for.
      store_->RaiseLmrSeq(home, LowHalf(request.lmr_id()));
      lmr.set_state(lite::v1::LMR_STATE_RELEASING);
      std::map<uint64_t, std::pair<uint32_t, uint64_t>> pending;
      for (uint64_t grant_id : store_->GrantIdsForLmr(lmr.lmr_id())) {
        auto holder =
            RevokeGrantLocked(grant_id, lite::v1::REMOVAL_CAUSE_LMR_FREED,
                              /*ack_requested=*/true);
        if (holder.has_value()) pending.emplace(grant_id, *holder);
      }
      lite::v1::RegisterLmrResponse response;
      *response.mutable_lmr() = WithoutKey(lmr);
      fenced_free_.Start(std::move(lmr), std::move(pending));
      return response;
    }
    LITE_RETURN_IF_ERROR(CheckLmrNameFreeLocked(request.name()));
    store_->RaiseLmrSeq(home, LowHalf(request.lmr_id()));
  }

  store_->PutLmr(lmr);
  Event event;
  *event.mutable_lmr_added()->mutable_lmr() = WithoutKey(lmr);
  events_.Emit(std::move(event));

  if (reregister && recovering_) {
    // Grants restored before their LMR came back are checked now.
    for (uint64_t grant_id : store_->GrantIdsForLmr(lmr.lmr_id())) {
      const Grant grant = *store_->GetGrant(grant_id);
      const bool matches = grant.epoch() == lmr.epoch() &&
                           grant.lmr_name() == lmr.name() &&
                           grant.size_bytes() == lmr.size_bytes() &&
                           grant.home_node_id() == lmr.home_node_id();
      if (!matches ||
          !CheckAccess(LmrLabel(lmr), lmr.mode(), lmr.owner_uid(),
                       lmr.owner_gid(), grant.requester(), grant.access())
               .ok()) {
        RevokeGrantLocked(grant_id, lite::v1::REMOVAL_CAUSE_NOT_RESTORED);
      }
    }
  }
  lite::v1::RegisterLmrResponse response;
  *response.mutable_lmr() = WithoutKey(std::move(lmr));
  return response;
}

// ------------------------------------------------------------------ map

absl::StatusOr<lite::v1::MapLmrResponse> ManagerState::MapLmr(
    const lite::v1::MapLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("requester", request.requester()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  LITE_RETURN_IF_ERROR(ValidateAccess("access", request.access()));

  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  std::optional<uint64_t> lmr_id = store_->FindLmrId(request.name());
  if (!lmr_id.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no LMR named '", request.name(), "'; see ListLmrs"));
  }
  const Lmr lmr = *store_->GetLmr(*lmr_id);
  LITE_RETURN_IF_ERROR(CheckAccess(LmrLabel(lmr), lmr.mode(), lmr.owner_uid(),
                                   lmr.owner_gid(), request.requester(),
                                   request.access()));
  if (auto home = live_.find(lmr.home_node_id()); home != live_.end()) {
    LITE_RETURN_IF_ERROR(CheckNotSuspectLocked(
        home->second, absl::StrCat("a new map of LMR '", lmr.name(), "'")));
  }
  const uint32_t holder = caller->member.node_id();
  LITE_RETURN_IF_ERROR(CheckGrantRoomLocked(holder));
  LITE_RETURN_IF_ERROR(CheckLmrGrantRoomLocked(lmr.lmr_id()));
  const uint32_t seq = store_->NextGrantSeq(holder);
  if (seq == 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat(NodeLabel(caller->member), " has used every grant id"));
  }
  Grant grant;
  grant.set_grant_id(MakeId(holder, seq));
  grant.set_lmr_id(lmr.lmr_id());
  grant.set_lmr_name(lmr.name());
  grant.set_home_node_id(lmr.home_node_id());
  grant.set_holder_node_id(holder);
  grant.set_holder_incarnation(caller->member.incarnation());
  *grant.mutable_requester() = request.requester();
  *grant.mutable_access() = request.access();
  grant.set_epoch(lmr.epoch());
  grant.set_size_bytes(lmr.size_bytes());
  grant.set_memory_key(GrantKey(lmr, request.access()));
  grant.set_granted_at_unix_ms(absl::ToUnixMillis(clock_->Now()));
  // The record refers to its LMR's chunks instead of keeping a copy (up to
  // --max_lmr_chunks per grant, review cp M2); only the answer has them.
  store_->PutGrant(grant);
  ++counters_.grants_issued;
  lite::v1::MapLmrResponse response;
  *response.mutable_grant() = std::move(grant);
  *response.mutable_grant()->mutable_chunks() = lmr.chunks();
  return response;
}

absl::StatusOr<lite::v1::UnmapLmrResponse> ManagerState::UnmapLmr(
    const lite::v1::UnmapLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  if (request.grant_id() == 0) {
    return absl::InvalidArgumentError(
        "grant_id is 0; pass the id MapLmr returned");
  }
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  std::optional<Grant> grant = store_->GetGrant(request.grant_id());
  if (!grant.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no grant ", IdHex(request.grant_id()),
                     " (it may have been revoked already); see ListGrants"));
  }
  if (grant->holder_node_id() != caller->member.node_id()) {
    return absl::PermissionDeniedError(
        absl::StrCat("grant ", IdHex(request.grant_id()), " is held by node ",
                     grant->holder_node_id(), ", not by the caller, node ",
                     caller->member.node_id()));
  }
  store_->DeleteGrant(request.grant_id());
  return lite::v1::UnmapLmrResponse();
}

absl::StatusOr<lite::v1::FreeLmrResponse> ManagerState::FreeLmr(
    const lite::v1::FreeLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("requester", request.requester()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckCallerLocked(request.caller()).status());
  std::optional<uint64_t> lmr_id = store_->FindLmrId(request.name());
  if (!lmr_id.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no LMR named '", request.name(), "'; see ListLmrs"));
  }
  const Lmr lmr = *store_->GetLmr(*lmr_id);
  if (request.requester().uid() != lmr.owner_uid()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "only the owner (uid ", lmr.owner_uid(), ") may free ", LmrLabel(lmr),
        "; the requester is uid ", request.requester().uid()));
  }
  lite::v1::FreeLmrResponse response;
  response.set_grants_revoked(static_cast<uint32_t>(RemoveLmrLocked(
      lmr.lmr_id(), lite::v1::REMOVAL_CAUSE_LMR_FREED, /*release=*/true)));
  return response;
}

// ------------------------------------------------------------------ restore

absl::StatusOr<lite::v1::RestoreGrantResponse> ManagerState::RestoreGrant(
    const lite::v1::RestoreGrantRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
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
                                    options_.max_lmr_size_bytes));
  LITE_RETURN_IF_ERROR(ValidateChunks("grant.chunks", grant.chunks(),
                                      grant.size_bytes(),
                                      options_.max_lmr_chunks));

  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  if (!recovering_) {
    return absl::FailedPreconditionError(
        "grants can only be restored while the manager is recovering after a "
        "restart (JoinResponse.manager_recovering); map the LMR again");
  }
  if (grant.holder_incarnation() != caller->member.incarnation()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "grant ", IdHex(grant.grant_id()), " was issued to incarnation ",
        grant.holder_incarnation(), " of node ", caller_id,
        ", which is now incarnation ", caller->member.incarnation(),
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
    fenced_free_.RestoreRevoking(grant);
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
  LITE_RETURN_IF_ERROR(CheckGrantRoomLocked(caller_id));
  LITE_RETURN_IF_ERROR(CheckLmrGrantRoomLocked(grant.lmr_id()));
  store_->PutGrant(record);
  store_->RaiseGrantSeq(caller_id, LowHalf(grant.grant_id()));
  lite::v1::RestoreGrantResponse response;
  *response.mutable_grant() = grant;
  return response;
}

// ------------------------------------------------------------------ listings

absl::StatusOr<lite::v1::ListLmrsResponse> ManagerState::ListLmrs(
    const lite::v1::ListLmrsRequest& request) const {
  LITE_ASSIGN_OR_RETURN(const Page page,
                        ParsePage(request.page_size(), request.page_token()));
  absl::MutexLock lock(&mu_);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  std::vector<Lmr> lmrs =
      store_->ListLmrs(request.home_node_id(), page.after_id, page.size + 1);
  const bool more = static_cast<int>(lmrs.size()) > page.size;
  if (more) lmrs.pop_back();
  lite::v1::ListLmrsResponse response;
  for (Lmr& lmr : lmrs) {
    if (fenced_free_.Releasing(lmr.lmr_id())) {
      lmr.set_revokes_pending(fenced_free_.AcksMissing(lmr.lmr_id()));
    }
    *response.add_lmrs() = WithoutKey(std::move(lmr));
  }
  response.set_revision(store_->LastEventSequence());
  if (more) {
    response.set_next_page_token(
        PageToken(response.lmrs(response.lmrs_size() - 1).lmr_id()));
  }
  return response;
}

absl::StatusOr<lite::v1::ListGrantsResponse> ManagerState::ListGrants(
    const lite::v1::ListGrantsRequest& request) const {
  LITE_ASSIGN_OR_RETURN(const Page page,
                        ParsePage(request.page_size(), request.page_token()));
  absl::MutexLock lock(&mu_);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  std::vector<Grant> grants = store_->ListGrants(
      request.lmr_id(), request.holder_node_id(), page.after_id, page.size + 1);
  const bool more = static_cast<int>(grants.size()) > page.size;
  if (more) grants.pop_back();
  lite::v1::ListGrantsResponse response;
  for (Grant& grant : grants)
    *response.add_grants() = WithoutKey(std::move(grant));
  response.set_revision(store_->LastEventSequence());
  if (more) {
    response.set_next_page_token(
        PageToken(response.grants(response.grants_size() - 1).grant_id()));
  }
  return response;
}

}  // namespace lite::controlplane
