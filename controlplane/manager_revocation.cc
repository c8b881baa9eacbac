// Revocation: a node whose certificate lost role node in the authz file is
// failed at once (review cp-2026-11-28 M4), so that it stops receiving the
// pair secrets of new members and its LMRs and grants go, as for an
// eviction. Called from the authz's holder thread (service.cc).
#include <string>

#include "common/log/log.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"

namespace lite::controlplane {

bool ManagerState::RevokeNode(const std::string& node_name,
                              const std::string& reason) {
  Locked lock(this);
  if (shut_down_) return false;
  const std::optional<uint32_t> node_id = store_->FindNodeId(node_name);
  if (!node_id.has_value() || !live_.contains(*node_id)) return false;
  LITE_LOG_WARNING("revoking node %u (%s): %s", *node_id,
                   text::EscapeForTerminal(node_name), reason);
  EndIncarnationLocked(*node_id, /*left=*/false,
                       lite::v1::FAILURE_CAUSE_EVICTED, reason);
  return true;
}

}  // namespace lite::controlplane
