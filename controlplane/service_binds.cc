// ServiceRegistry: BindService (docs/rpc.md). A client node's lite.ko asks
// for its ring at a service's node; the request goes down the server
// node's session as NodeRequest.bind_service_ring, and the caller gets the
// server's BoundServiceRing, or why there is none: the server did not
// answer in time, ended, or the manager shut down. Access was checked at
// OpenService; a bind only reserves memory for a node that opened.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controlplane/manager_util.h"
#include "controlplane/service_registry.h"

namespace lite::controlplane {

absl::Status ServiceRegistry::ValidateBind(
    const lite::v1::BindServiceRequest& request) {
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
  return absl::OkStatus();
}

absl::Status ServiceRegistry::Bind(const lite::v1::Member& caller,
                                   const lite::v1::Member& server,
                                   const lite::v1::Service& service,
                                   const lite::v1::BindServiceRequest& request,
                                   bool recovering, BindDone done) {
  const uint32_t client = caller.node_id();
  // Only a node that opened the service binds to it (OpenService checked
  // the requester's access); while recovering, nodes bind again to what
  // they opened before the restart, and that counts as opening.
  auto openers = openers_.find(service.service_id());
  if (openers == openers_.end() || !openers->second.contains(client)) {
    if (!recovering) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(caller), " did not open service '", service.name(), "' (",
          IdHex(service.service_id()), "); OpenService first"));
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
        by_client ? NodeLabel(caller)
                  : absl::StrCat("node ", service.node_id(), " (the server)"),
        " has ", limit, " binds waiting for their server: the limit is ", limit,
        " (--max_pending_binds_per_node); retry shortly"));
  }
  openers_[service.service_id()].insert(client);

  const absl::Time now = clock_->Now();
  const uint64_t request_id = requests_->Start(
      NodeRequests::Kind::kBindServiceRing, service.node_id(),
      server.incarnation(), now, now + options_.request_timeout);
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
  bind->set_client_node_id(caller.node_id());
  bind->set_client_incarnation(caller.incarnation());
  bind->set_reply_address(request.reply_address());
  bind->set_reply_key(request.reply_key());
  bind->set_reply_slot_bytes(request.reply_slot_bytes());

  ++binds_by_client_[client];
  ++binds_by_server_[service.node_id()];
  binds_.emplace(request_id, std::move(pending));
  events_->SendTo(service.node_id(), std::move(message));
  return absl::OkStatus();
}

void ServiceRegistry::FinishBind(
    uint64_t request_id,
    absl::StatusOr<lite::v1::BindServiceResponse> outcome) {
  auto it = binds_.find(request_id);
  if (it == binds_.end()) return;
  // Unless it was answered or timed out (counted then), it was given up.
  requests_->End(request_id, NodeRequests::Outcome::kAbandoned, clock_->Now());
  PendingBind pending = std::move(it->second);
  binds_.erase(it);
  for (auto [counts, node] :
       {std::make_pair(&binds_by_client_, pending.client_node_id),
        std::make_pair(&binds_by_server_, pending.server_node_id)}) {
    auto count = counts->find(node);
    if (count != counts->end() && --count->second <= 0) counts->erase(count);
  }
  deferred_->push_back(
      [done = std::move(pending.done), outcome = std::move(outcome)]() mutable {
        done(std::move(outcome));
      });
}

void ServiceRegistry::BindAnswered(const lite::v1::NodeRequestResult& result) {
  const PendingBind& pending = binds_.at(result.request_id());
  const std::string label = absl::StrCat("node ", pending.server_node_id,
                                         " serving '", pending.name, "'");
  requests_->End(result.request_id(),
                 result.status_code() == 0 ? NodeRequests::Outcome::kOk
                                           : NodeRequests::Outcome::kError,
                 clock_->Now());
  if (result.status_code() != 0) {
    const std::string& why = result.status_message();
    FinishBind(
        result.request_id(),
        absl::Status(AgentCode(result.status_code()),
                     absl::StrCat(label, " gave no ring: ",
                                  why.empty() ? "no reason given" : why)));
    return;
  }
  const lite::v1::BoundServiceRing& ring = result.bound_service_ring();
  if (!result.has_bound_service_ring() || ring.depth() == 0 ||
      ring.slot_bytes() < kSlotAlign || ring.slot_bytes() > kMsgMax) {
    FinishBind(result.request_id(),
               absl::InternalError(
                   absl::StrCat(label,
                                " answered the bind with an unusable ring "
                                "(no ring, depth 0 or slot bytes out of "
                                "range); this is a bug in its agent")));
    return;
  }
  lite::v1::BindServiceResponse response;
  *response.mutable_ring() = ring;
  FinishBind(result.request_id(), std::move(response));
}

void ServiceRegistry::BindTimedOut(uint64_t request_id) {
  const std::string name = binds_.at(request_id).name;
  FinishBind(
      request_id,
      absl::UnavailableError(absl::StrCat(
          "the node serving '", name, "' did not answer the bind within ",
          absl::ToInt64Milliseconds(options_.request_timeout),
          " ms (--request_timeout_ms); retry")));
}

void ServiceRegistry::FailBinds(uint32_t server_node_id,
                                const absl::Status& why) {
  std::vector<uint64_t> ids;
  for (const auto& [request_id, pending] : binds_) {
    if (server_node_id == 0 || pending.server_node_id == server_node_id) {
      ids.push_back(request_id);
    }
  }
  for (uint64_t request_id : ids) FinishBind(request_id, why);
}

void ServiceRegistry::FailAllBinds(const absl::Status& why) {
  FailBinds(0, why);
}

}  // namespace lite::controlplane
