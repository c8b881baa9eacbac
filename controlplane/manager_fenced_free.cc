// ManagerState: the session messages of the fenced free (fenced_free.h,
// which holds its state): a holder's GrantRevokeAck, and a home's LmrLost,
// which removes the LMR as a free does (cause DEVICE_REMOVED).
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

absl::Status ManagerState::GrantRevokeAck(const SessionBinding& binding,
                                          const lite::v1::GrantRevokeAck& ack) {
  LITE_RETURN_IF_ERROR(
      ValidateGrantRevokeAck(ack, binding.node_id, binding.incarnation));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckBindingLocked(binding));
  return fenced_free_.Ack({binding.node_id, binding.incarnation},
                          ack.grant_id());
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
  lmrs_.RemoveLmr(lmr_id, lite::v1::REMOVAL_CAUSE_DEVICE_REMOVED,
                  /*release=*/true);
  return absl::OkStatus();
}

}  // namespace lite::controlplane
