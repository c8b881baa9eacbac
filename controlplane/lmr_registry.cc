// LmrRegistry: registering, mapping, unmapping and freeing LMRs, the
// revocation of grants, and the limits on LMRs and grants.
#include "controlplane/lmr_registry.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/access.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::Grant;
using lite::v1::Lmr;

namespace {

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

}  // namespace

LmrRegistry::LmrRegistry(const ManagerOptions& options, const Clock* clock,
                         Store* store, EventBus* events, NodeRequests* requests,
                         FencedFree* fenced_free, Deferred* deferred,
                         NotSuspect not_suspect)
    : options_(options),
      clock_(clock),
      store_(store),
      events_(events),
      requests_(requests),
      fenced_free_(fenced_free),
      deferred_(deferred),
      not_suspect_(std::move(not_suspect)) {}

absl::Status LmrRegistry::CheckNameFree(const std::string& name) const {
  if (std::optional<uint64_t> id = store_->FindLmrId(name); id.has_value()) {
    const Lmr existing = *store_->GetLmr(*id);
    return absl::AlreadyExistsError(absl::StrCat(
        "LMR name '", name, "' is taken by ", IdHex(existing.lmr_id()),
        " on node ", existing.home_node_id(), "; choose another name"));
  }
  if (alloc_names_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "LMR name '", name,
        "' is taken by an allocation in progress; choose another name"));
  }
  return absl::OkStatus();
}

std::optional<std::pair<uint32_t, uint64_t>> LmrRegistry::RevokeGrant(
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
  events_->Emit(std::move(event));
  ++counters_.grants_revoked;
  return std::make_pair(grant->holder_node_id(), grant->holder_incarnation());
}

size_t LmrRegistry::RemoveLmr(uint64_t lmr_id, lite::v1::RemovalCause cause,
                              bool release) {
  std::optional<Lmr> lmr = store_->GetLmr(lmr_id);
  if (!lmr.has_value()) return 0;
  if (lmr->state() == lite::v1::LMR_STATE_RELEASING) {
    // Its home ended: the memory went with that incarnation, and
    // LmrRemoved was announced when the release began.
    fenced_free_->Drop(lmr_id);
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
  events_->Emit(std::move(event));
  if (release) fenced_free_->Start(*std::move(lmr), std::move(pending));
  return grants.size();
}

// ------------------------------------------------------------------ register

absl::Status LmrRegistry::ValidateRegister(
    const lite::v1::RegisterLmrRequest& request,
    const ManagerOptions& options) {
  LITE_RETURN_IF_ERROR(ValidateCredentials("owner", request.owner()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  LITE_RETURN_IF_ERROR(ValidateSize("size_bytes", request.size_bytes(),
                                    options.max_lmr_size_bytes));
  LITE_RETURN_IF_ERROR(ValidateMode("mode", request.mode()));
  LITE_RETURN_IF_ERROR(ValidateChunks("chunks", request.chunks(),
                                      request.size_bytes(),
                                      options.max_lmr_chunks));
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
  return absl::OkStatus();
}

absl::StatusOr<Lmr> LmrRegistry::Register(
    const lite::v1::Member& caller, const lite::v1::RegisterLmrRequest& request,
    bool recovering) {
  const bool reregister = request.lmr_id() != 0;
  const uint32_t home = caller.node_id();
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
  lmr.set_epoch(caller.incarnation());
  lmr.set_created_at_unix_ms(absl::ToUnixMillis(now));
  lmr.set_state(lite::v1::LMR_STATE_LIVE);

  if (!reregister) {
    if (caller.draining()) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller),
          " is draining; no new LMR may be registered on it (DrainNode with "
          "cancel puts it back in service)"));
    }
    LITE_RETURN_IF_ERROR(CheckNameFree(request.name()));
    LITE_RETURN_IF_ERROR(CheckOwnerRoom(request.owner().uid()));
    LITE_RETURN_IF_ERROR(CheckHomeRoom(home, request.owner().uid(),
                                       request.size_bytes(),
                                       request.chunks_size()));
    const uint32_t seq = store_->NextLmrSeq(home);
    if (seq == 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat(NodeLabel(caller), " has used every LMR id"));
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
        return WithoutKey(*existing);
      }
      Lmr comparable = lmr;
      comparable.set_epoch(existing->epoch());
      comparable.set_created_at_unix_ms(existing->created_at_unix_ms());
      if (SameLmr(comparable, *existing)) {
        return WithoutKey(*existing);  // A retry that succeeded.
      }
      return absl::AlreadyExistsError(absl::StrCat(
          LmrLabel(*existing),
          " is already registered with different attributes (name, size, "
          "owner, mode, chunks or key); free it first"));
    }
    // Outside recovery only an id this manager issued (and no longer
    // holds: checked above) comes back, after its home's rejoin; a made-up
    // one would be an LMR no limit counted (review cp M2).
    if (!recovering && LowHalf(request.lmr_id()) > store_->LastLmrSeq(home)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lmr_id ", IdHex(request.lmr_id()),
          " was never issued by this manager and it is not recovering; "
          "register the LMR anew (lmr_id 0)"));
    }
    if (!request.releasing() && caller.draining()) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller),
          " is draining; no LMR may be registered on it, not even again "
          "(DrainNode with cancel puts it back in service)"));
    }
    LITE_RETURN_IF_ERROR(CheckOwnerRoom(request.owner().uid()));
    LITE_RETURN_IF_ERROR(CheckHomeRoom(home, request.owner().uid(),
                                       request.size_bytes(),
                                       request.chunks_size()));
    if (request.releasing()) {
      // Out of the namespace already: no name check, no LmrAdded. Grants
      // restored into it as live are revoked now, and waited for.
      store_->RaiseLmrSeq(home, LowHalf(request.lmr_id()));
      lmr.set_state(lite::v1::LMR_STATE_RELEASING);
      std::map<uint64_t, std::pair<uint32_t, uint64_t>> pending;
      for (uint64_t grant_id : store_->GrantIdsForLmr(lmr.lmr_id())) {
        auto holder = RevokeGrant(grant_id, lite::v1::REMOVAL_CAUSE_LMR_FREED,
                                  /*ack_requested=*/true);
        if (holder.has_value()) pending.emplace(grant_id, *holder);
      }
      Lmr answer = WithoutKey(lmr);
      fenced_free_->Start(std::move(lmr), std::move(pending));
      return answer;
    }
    LITE_RETURN_IF_ERROR(CheckNameFree(request.name()));
    store_->RaiseLmrSeq(home, LowHalf(request.lmr_id()));
  }

  store_->PutLmr(lmr);
  Event event;
  *event.mutable_lmr_added()->mutable_lmr() = WithoutKey(lmr);
  events_->Emit(std::move(event));

  if (reregister && recovering) {
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
        RevokeGrant(grant_id, lite::v1::REMOVAL_CAUSE_NOT_RESTORED);
      }
    }
  }
  return WithoutKey(std::move(lmr));
}

// ------------------------------------------------------------------ map

absl::StatusOr<Grant> LmrRegistry::Map(const lite::v1::Member& caller,
                                       const lite::v1::MapLmrRequest& request) {
  std::optional<uint64_t> lmr_id = store_->FindLmrId(request.name());
  if (!lmr_id.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no LMR named '", request.name(), "'; see ListLmrs"));
  }
  const Lmr lmr = *store_->GetLmr(*lmr_id);
  LITE_RETURN_IF_ERROR(CheckAccess(LmrLabel(lmr), lmr.mode(), lmr.owner_uid(),
                                   lmr.owner_gid(), request.requester(),
                                   request.access()));
  LITE_RETURN_IF_ERROR(not_suspect_(
      lmr.home_node_id(), absl::StrCat("a new map of LMR '", lmr.name(), "'")));
  const uint32_t holder = caller.node_id();
  LITE_RETURN_IF_ERROR(CheckGrantRoom(holder));
  LITE_RETURN_IF_ERROR(CheckLmrGrantRoom(lmr.lmr_id()));
  const uint32_t seq = store_->NextGrantSeq(holder);
  if (seq == 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat(NodeLabel(caller), " has used every grant id"));
  }
  Grant grant;
  grant.set_grant_id(MakeId(holder, seq));
  grant.set_lmr_id(lmr.lmr_id());
  grant.set_lmr_name(lmr.name());
  grant.set_home_node_id(lmr.home_node_id());
  grant.set_holder_node_id(holder);
  grant.set_holder_incarnation(caller.incarnation());
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
  *grant.mutable_chunks() = lmr.chunks();
  return grant;
}

absl::Status LmrRegistry::Unmap(const lite::v1::Member& caller,
                                uint64_t grant_id) {
  std::optional<Grant> grant = store_->GetGrant(grant_id);
  if (!grant.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no grant ", IdHex(grant_id),
                     " (it may have been revoked already); see ListGrants"));
  }
  if (grant->holder_node_id() != caller.node_id()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "grant ", IdHex(grant_id), " is held by node ", grant->holder_node_id(),
        ", not by the caller, node ", caller.node_id()));
  }
  store_->DeleteGrant(grant_id);
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> LmrRegistry::Free(
    const lite::v1::FreeLmrRequest& request) {
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
  return static_cast<uint32_t>(RemoveLmr(
      lmr.lmr_id(), lite::v1::REMOVAL_CAUSE_LMR_FREED, /*release=*/true));
}

// ------------------------------------------------------------------ limits

absl::Status LmrRegistry::CheckGrantRoom(uint32_t holder) const {
  const size_t held = store_->GrantCountHeldBy(holder);
  if (static_cast<int64_t>(held) < options_.max_grants_per_node) {
    return absl::OkStatus();
  }
  return Exhausted(absl::StrCat("node ", holder, " holds ", held, " grants"),
                   options_.max_grants_per_node, "max_grants_per_node",
                   "unmap grants it no longer uses");
}

absl::Status LmrRegistry::CheckOwnerRoom(uint32_t uid) const {
  const size_t owned = store_->LmrCountOwnedBy(uid);
  if (static_cast<int64_t>(owned) < options_.max_lmrs_per_owner) {
    return absl::OkStatus();
  }
  return Exhausted(absl::StrCat("uid ", uid, " owns ", owned, " LMRs"),
                   options_.max_lmrs_per_owner, "max_lmrs_per_owner",
                   "free LMRs it no longer uses");
}

absl::Status LmrRegistry::CheckLmrGrantRoom(uint64_t lmr_id) const {
  const size_t into = store_->GrantCountForLmr(lmr_id);
  if (static_cast<int64_t>(into) < options_.max_grants_per_lmr) {
    return absl::OkStatus();
  }
  return Exhausted(
      absl::StrCat("LMR ", IdHex(lmr_id), " has ", into, " grants into it"),
      options_.max_grants_per_lmr, "max_grants_per_lmr",
      "unmap grants into it that are no longer used");
}

absl::Status LmrRegistry::CheckHomeRoom(uint32_t home, uint32_t uid,
                                        uint64_t bytes, int64_t chunks) const {
  const size_t lmrs = store_->LmrCountOnHome(home);
  if (static_cast<int64_t>(lmrs) >= options_.max_lmrs_per_node) {
    return Exhausted(
        absl::StrCat("node ", home, " is the home of ", lmrs, " LMRs"),
        options_.max_lmrs_per_node, "max_lmrs_per_node",
        "free LMRs on it, or use another home");
  }
  const uint64_t held_chunks = store_->LmrChunksOnHome(home);
  if (held_chunks + static_cast<uint64_t>(chunks) >
      static_cast<uint64_t>(options_.max_lmr_chunks_per_node)) {
    return Exhausted(absl::StrCat("node ", home, "'s LMRs have ", held_chunks,
                                  " chunks, and this one has ", chunks),
                     options_.max_lmr_chunks_per_node,
                     "max_lmr_chunks_per_node",
                     "free LMRs on it, or register larger chunks");
  }
  // Allocations in flight count too: they are bytes the owner asked for.
  uint64_t owned = store_->LmrBytesOwnedBy(uid);
  uint64_t owned_here = store_->LmrBytesOwnedOnHome(home, uid);
  for (const auto& [id, pending] : allocs_) {
    if (pending.lmr.owner_uid() != uid) continue;
    owned += pending.lmr.size_bytes();
    if (pending.lmr.home_node_id() == home) {
      owned_here += pending.lmr.size_bytes();
    }
  }
  if (owned + bytes > options_.max_lmr_bytes_per_owner) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "uid ", uid, " owns LMRs of ", owned, " bytes and asks for ", bytes,
        " more: the limit is ", options_.max_lmr_bytes_per_owner,
        " bytes cluster-wide (--max_lmr_bytes_per_owner); free LMRs it no "
        "longer uses"));
  }
  if (owned_here + bytes > options_.max_lmr_bytes_per_owner_per_home) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "uid ", uid, " owns LMRs of ", owned_here, " bytes on node ", home,
        " and asks for ", bytes, " more: the limit is ",
        options_.max_lmr_bytes_per_owner_per_home,
        " bytes per home (--max_lmr_bytes_per_owner_per_home); free LMRs "
        "there or use another home"));
  }
  return absl::OkStatus();
}

absl::Status LmrRegistry::CheckPendingRoom() const {
  if (static_cast<int64_t>(allocs_.size()) < options_.max_pending_allocs) {
    return absl::OkStatus();
  }
  return Exhausted(
      absl::StrCat(allocs_.size(), " allocations are waiting for their homes"),
      options_.max_pending_allocs, "max_pending_allocs", "retry shortly");
}

}  // namespace lite::controlplane
