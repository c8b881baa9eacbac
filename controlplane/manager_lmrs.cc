// ManagerState: the LMR and grant calls of lite.v1.ClusterManager and the
// listings of ClusterOperator. Each validates its request, checks its
// caller is a live member (and, where it matters, the home: membership is
// ManagerState's) and hands the rest to the LMR registry part,
// LmrRegistry (lmr_registry.h), under the one lock.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

absl::Status ManagerState::CheckNotRecoveringLocked() const {
  if (!recovering_) return absl::OkStatus();
  // The names of LMRs not re-registered yet are unknown until their homes
  // come back: a new LMR now could take one of them (review cp M8).
  return absl::UnavailableError(absl::StrCat(
      "manager recovering, retry: new LMRs are accepted once the homes have "
      "re-registered theirs (in at most ",
      absl::FormatDuration(recovery_end_ - clock_->Now()), ")"));
}

absl::StatusOr<lite::v1::RegisterLmrResponse> ManagerState::RegisterLmr(
    const lite::v1::RegisterLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(LmrRegistry::ValidateRegister(request, options_));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  // A new LMR waits for the recovery window's end; a re-registration is
  // what the window is for.
  if (request.lmr_id() == 0) LITE_RETURN_IF_ERROR(CheckNotRecoveringLocked());
  LITE_ASSIGN_OR_RETURN(lite::v1::Lmr lmr,
                        lmrs_.Register(caller->member, request, recovering_));
  lite::v1::RegisterLmrResponse response;
  *response.mutable_lmr() = std::move(lmr);
  return response;
}

absl::Status ManagerState::AllocLmr(const lite::v1::AllocLmrRequest& request,
                                    AllocDone done) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("owner", request.owner()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  LITE_RETURN_IF_ERROR(ValidateSize("size_bytes", request.size_bytes(),
                                    options_.max_lmr_size_bytes));
  LITE_RETURN_IF_ERROR(ValidateMode("mode", request.mode()));

  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  LITE_RETURN_IF_ERROR(CheckNotRecoveringLocked());
  const uint32_t home_id = request.home_node_id() == 0
                               ? caller->member.node_id()
                               : request.home_node_id();
  std::optional<lite::v1::Member> home_record = store_->GetNode(home_id);
  if (!home_record.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("home_node_id ", home_id,
                     " is not a member of this cluster; see ListNodes"));
  }
  auto home_it = live_.find(home_id);
  if (home_it == live_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        NodeLabel(*home_record), " is ", NodeStateName(home_record->state()),
        "; allocate on a live node"));
  }
  Live& home = home_it->second;
  if (home.member.draining()) {
    return absl::FailedPreconditionError(absl::StrCat(
        NodeLabel(home.member),
        " is draining; allocate on another node (DrainNode with cancel puts "
        "it back in service)"));
  }
  if (!home.session_open) {
    return absl::UnavailableError(absl::StrCat(
        NodeLabel(home.member),
        " has no open session (it joined but has not opened it yet, or is "
        "restoring); retry shortly"));
  }
  LITE_RETURN_IF_ERROR(CheckNotSuspectLocked(home, "an allocation on it"));
  return lmrs_.Alloc(home.member, request, std::move(done));
}

absl::StatusOr<lite::v1::MapLmrResponse> ManagerState::MapLmr(
    const lite::v1::MapLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("requester", request.requester()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  LITE_RETURN_IF_ERROR(ValidateAccess("access", request.access()));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  LITE_ASSIGN_OR_RETURN(lite::v1::Grant grant,
                        lmrs_.Map(caller->member, request));
  lite::v1::MapLmrResponse response;
  *response.mutable_grant() = std::move(grant);
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
  LITE_RETURN_IF_ERROR(lmrs_.Unmap(caller->member, request.grant_id()));
  return lite::v1::UnmapLmrResponse();
}

absl::StatusOr<lite::v1::FreeLmrResponse> ManagerState::FreeLmr(
    const lite::v1::FreeLmrRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(ValidateCredentials("requester", request.requester()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", request.name()));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckCallerLocked(request.caller()).status());
  LITE_ASSIGN_OR_RETURN(const uint32_t revoked, lmrs_.Free(request));
  lite::v1::FreeLmrResponse response;
  response.set_grants_revoked(revoked);
  return response;
}

absl::StatusOr<lite::v1::RestoreGrantResponse> ManagerState::RestoreGrant(
    const lite::v1::RestoreGrantRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  LITE_RETURN_IF_ERROR(LmrRegistry::ValidateRestore(request, options_));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  return lmrs_.Restore(caller->member, request, recovering_);
}

absl::StatusOr<lite::v1::ListLmrsResponse> ManagerState::ListLmrs(
    const lite::v1::ListLmrsRequest& request) const {
  LITE_ASSIGN_OR_RETURN(const Page page,
                        ParsePage(request.page_size(), request.page_token()));
  absl::MutexLock lock(&mu_);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  bool more = false;
  lite::v1::ListLmrsResponse response;
  for (lite::v1::Lmr& lmr : lmrs_.ListLmrs(request.home_node_id(),
                                           page.after_id, page.size, &more)) {
    *response.add_lmrs() = std::move(lmr);
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
  bool more = false;
  lite::v1::ListGrantsResponse response;
  for (lite::v1::Grant& grant :
       lmrs_.ListGrants(request.lmr_id(), request.holder_node_id(),
                        page.after_id, page.size, &more)) {
    *response.add_grants() = std::move(grant);
  }
  response.set_revision(store_->LastEventSequence());
  if (more) {
    response.set_next_page_token(
        PageToken(response.grants(response.grants_size() - 1).grant_id()));
  }
  return response;
}

}  // namespace lite::controlplane
