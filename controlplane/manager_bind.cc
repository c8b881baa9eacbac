// BindService (docs/rpc.md): a client node's lite.ko asks for its ring at a
// service's node. The manager forwards it as NodeRequest.bind_service_ring
// down the server node's session and answers the caller with the server's
// BoundServiceRing, or with why there is none: the server did not answer
// in time, ended, or the manager shut down. Access was checked at
// OpenService; a bind only reserves memory for a node that opened.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

namespace {

// The uapi's LITE_RPC_SLOT_ALIGN and LITE_RPC_MSG_MAX.
constexpr uint32_t kSlotAlign = 64;
constexpr uint32_t kMsgMax = 1u << 20;

}  // namespace

absl::Status ManagerState::BindService(
    const lite::v1::BindServiceRequest& request, BindDone done) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  if (request.service_id() == 0) {
    return absl::InvalidArgumentError(
        "service_id is 0; pass the id OpenService returned");
  }
  const uint32_t slot = request.reply_slot_bytes();
  if (slot < kSlotAlign || slot > kMsgMax || slot % kSlotAlign != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("reply_slot_bytes ", slot, " is not a multiple of ",
                     kSlotAlign, " in [", kSlotAlign, ", ", kMsgMax, "]"));
  }
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * caller, CheckCallerLocked(request.caller()));
  auto it = services_.find(request.service_id());
  if (it == services_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no service ", IdHex(request.service_id()),
                     " (unregistered, or ended with its node); open it again"));
  }
  const lite::v1::Service& service = it->second;
  auto server_it = live_.find(service.node_id());
  if (server_it == live_.end() || !server_it->second.session_open) {
    return absl::UnavailableError(
        absl::StrCat("node ", service.node_id(), " serving '", service.name(),
                     "' has no open session; retry shortly"));
  }
  Live& server = server_it->second;
  LITE_RETURN_IF_ERROR(CheckNotSuspectLocked(
      server, absl::StrCat("a ring of service '", service.name(), "'")));
  const uint32_t client = caller->member.node_id();
  // Only a node that opened the service binds to it (OpenService checked
  // the requester's access); while recovering, nodes bind again to what
  // they opened before the restart, and that counts as opening.
  auto openers = openers_.find(service.service_id());
  if (openers == openers_.end() || !openers->second.contains(client)) {
    if (!recovering_) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller->member), " did not open service '", service.name(),
          "' (", IdHex(service.service_id()), "); OpenService first"));
    }
  }
  // Each bind is a request in the server's session: bounded per server, so
  // that no node can overflow another's session (review cp M3), and per
  // caller, so that one caller cannot take all of a server's room.
  const int64_t limit = options_.max_pending_binds_per_node;
  auto waiting = [](const absl::flat_hash_map<uint32_t, int64_t>& counts,
                    uint32_t node) -> int64_t {
    auto found = counts.find(node);
    return found == counts.end() ? 0 : found->second;
  };
  const bool by_client = waiting(binds_by_client_, client) >= limit;
  if (by_client || waiting(binds_by_server_, service.node_id()) >= limit) {
    return absl::ResourceExhaustedError(absl::StrCat(
        by_client ? NodeLabel(caller->member)
                  : absl::StrCat("node ", service.node_id(), " (the server)"),
        " has ", limit, " binds waiting for their server: the limit is ", limit,
        " (--max_pending_binds_per_node); retry shortly"));
  }
  openers_[service.service_id()].insert(client);

  const absl::Time now = clock_->Now();
  const uint64_t request_id = node_requests_.Start(
      NodeRequests::Kind::kBindServiceRing, service.node_id(),
      server.member.incarnation(), now, now + options_.request_timeout);
  PendingBind pending;
  pending.service_id = service.service_id();
  pending.name = service.name();
  pending.server_node_id = service.node_id();
  pending.client_node_id = client;
  pending.done = std::move(done);

  lite::v1::ManagerMessage message;
  auto* node_request = message.mutable_request();
  node_request->set_request_id(request_id);
  node_request->set_deadline_ms(
      absl::ToInt64Milliseconds(options_.request_timeout));
  auto* bind = node_request->mutable_bind_service_ring();
  bind->set_service_id(service.service_id());
  bind->set_port(service.port());
  bind->set_client_node_id(caller->member.node_id());
  bind->set_client_incarnation(caller->member.incarnation());
  bind->set_reply_address(request.reply_address());
  bind->set_reply_key(request.reply_key());
  bind->set_reply_slot_bytes(slot);

  AddDeadlineLocked(now + options_.request_timeout);
  ++binds_by_client_[client];
  ++binds_by_server_[service.node_id()];
  pending_binds_.emplace(request_id, std::move(pending));
  events_.SendTo(service.node_id(), std::move(message));
  return absl::OkStatus();
}

void ManagerState::FinishBindLocked(
    uint64_t request_id,
    absl::StatusOr<lite::v1::BindServiceResponse> outcome) {
  auto it = pending_binds_.find(request_id);
  if (it == pending_binds_.end()) return;
  // Unless it was answered or timed out (counted then), it was given up.
  node_requests_.End(request_id, NodeRequests::Outcome::kAbandoned,
                     clock_->Now());
  PendingBind pending = std::move(it->second);
  pending_binds_.erase(it);
  for (auto [counts, node] :
       {std::make_pair(&binds_by_client_, pending.client_node_id),
        std::make_pair(&binds_by_server_, pending.server_node_id)}) {
    auto count = counts->find(node);
    if (count != counts->end() && --count->second <= 0) counts->erase(count);
  }
  after_unlock_.push_back(
      [done = std::move(pending.done), outcome = std::move(outcome)]() mutable {
        done(std::move(outcome));
      });
}

absl::Status ManagerState::BindResultLocked(
    const SessionBinding& binding, const lite::v1::NodeRequestResult& result) {
  const PendingBind& pending = pending_binds_.at(result.request_id());
  const std::string label =
      absl::StrCat("node ", binding.node_id, " serving '", pending.name, "'");
  node_requests_.End(result.request_id(),
                     result.status_code() == 0 ? NodeRequests::Outcome::kOk
                                               : NodeRequests::Outcome::kError,
                     clock_->Now());
  if (result.status_code() != 0) {
    const std::string& why = result.status_message();
    FinishBindLocked(
        result.request_id(),
        absl::Status(AgentCode(result.status_code()),
                     absl::StrCat(label, " gave no ring: ",
                                  why.empty() ? "no reason given" : why)));
    return absl::OkStatus();
  }
  const lite::v1::BoundServiceRing& ring = result.bound_service_ring();
  if (!result.has_bound_service_ring() || ring.depth() == 0 ||
      ring.slot_bytes() < kSlotAlign || ring.slot_bytes() > kMsgMax) {
    FinishBindLocked(result.request_id(),
                     absl::InternalError(absl::StrCat(
                         label,
                         " answered the bind with an unusable ring "
                         "(no ring, depth 0 or slot bytes out of "
                         "range); this is a bug in its agent")));
    return absl::OkStatus();
  }
  lite::v1::BindServiceResponse response;
  *response.mutable_ring() = ring;
  FinishBindLocked(result.request_id(), std::move(response));
  return absl::OkStatus();
}

void ManagerState::BindTimedOutLocked(uint64_t request_id) {
  const std::string name = pending_binds_.at(request_id).name;
  FinishBindLocked(
      request_id,
      absl::UnavailableError(absl::StrCat(
          "the node serving '", name, "' did not answer the bind within ",
          absl::ToInt64Milliseconds(options_.request_timeout),
          " ms (--request_timeout_ms); retry")));
}

void ManagerState::FailBindsLocked(uint32_t server_node_id,
                                   const absl::Status& why) {
  std::vector<uint64_t> ids;
  for (const auto& [request_id, pending] : pending_binds_) {
    if (server_node_id == 0 || pending.server_node_id == server_node_id) {
      ids.push_back(request_id);
    }
  }
  for (uint64_t request_id : ids) FinishBindLocked(request_id, why);
}

}  // namespace lite::controlplane
