// Agent: the RPC services this node serves (issue #11, docs/rpc.md) —
// rings reserved for client nodes at the manager's request
// (NodeRequest.bind_service_ring -> lite.ko's LITE_CMD_RPC_BIND), and the
// services lite.ko still serves registered again after a (re)join, under
// the ids lite.ko has, so that a restarted agent or manager keeps them
// listed. Upcalls are in rpc_upcalls.cc, heartbeat stats in
// service_stats.cc.
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::agent {

absl::StatusOr<lite::v1::BoundServiceRing> Agent::BindServiceRing(
    uint32_t self, const lite::v1::BindServiceRing& b) {
  // The manager names a service of this node, a client that exists and
  // reply slots lite.ko can write to; lite.ko checks again.
  if (b.service_id() == 0 || (b.service_id() >> 32) != self) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "service id %#x is not one of node %u's", b.service_id(), self));
  }
  if (b.port() == 0 || b.port() > LITE_RPC_PORT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrFormat("port %u (valid: 1..%u)", b.port(), LITE_RPC_PORT_MAX));
  }
  if (b.client_node_id() == 0 || b.client_incarnation() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("client node %u incarnation %u: both must be nonzero",
                        b.client_node_id(), b.client_incarnation()));
  }
  if (b.reply_slot_bytes() < LITE_RPC_SLOT_ALIGN ||
      b.reply_slot_bytes() > LITE_RPC_MSG_MAX ||
      b.reply_slot_bytes() % LITE_RPC_SLOT_ALIGN != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reply slots of %u bytes (valid: multiples of %u up to %u)",
        b.reply_slot_bytes(), LITE_RPC_SLOT_ALIGN, LITE_RPC_MSG_MAX));
  }
  absl::StatusOr<lite::v1::BoundServiceRing> ring = module_->BindServiceRing(b);
  if (!ring.ok()) return ring.status();
  LITE_LOG_INFO(
      "service %#x (port %u): ring of %u x %u bytes bound for node %u "
      "incarnation %u",
      b.service_id(), b.port(), ring->depth(), ring->slot_bytes(),
      b.client_node_id(), b.client_incarnation());
  return ring;
}

absl::Status Agent::RestoreServices(const lite::v1::NodeCaller& caller) {
  absl::StatusOr<std::vector<ServedService>> served = module_->ListServices();
  if (absl::IsUnimplemented(served.status())) return absl::OkStatus();
  if (!served.ok()) {
    ModuleError("listing RPC services", served.status());
    return served.status();
  }
  for (const ServedService& entry : *served) {
    if (ShuttingDown()) return absl::CancelledError("shutting down");
    const lite::v1::Service& s = entry.service;
    // Being unregistered: its RPC_UNREGISTER upcall tells the manager.
    if (entry.closing) continue;
    if ((s.service_id() >> 32) != caller.node_id()) {
      // lite.ko publishes it under an id of this node's old number, which
      // no manager will take back; its callers keep their bindings.
      counters_.Add("agent.services_not_restored");
      LITE_LOG_ERROR(
          "service '%s' (%#x, port %u) is served by lite.ko under another "
          "node's id (this node is now %u); not registered again, so it "
          "cannot be opened by name",
          s.name(), s.service_id(), s.port(), caller.node_id());
      continue;
    }
    lite::v1::RegisterServiceRequest req;
    *req.mutable_caller() = caller;
    // lite.ko keeps the owner's ids and pid, not its groups: the mode's
    // group class needs only the owner's gid.
    req.mutable_owner()->set_uid(s.owner_uid());
    req.mutable_owner()->set_gid(s.owner_gid());
    req.mutable_owner()->set_pid(s.owner_pid());
    req.set_name(s.name());
    req.set_mode(s.mode());
    req.set_port(s.port());
    req.set_max_request_bytes(s.max_request_bytes());
    req.set_max_reply_bytes(s.max_reply_bytes());
    req.set_depth(s.depth());
    req.set_max_clients(s.max_clients());
    req.set_restore_service_id(s.service_id());
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    ContextRegistry::Scoped scoped(&contexts_, &ctx);
    lite::v1::RegisterServiceResponse resp;
    const absl::Status st =
        FromGrpcStatus(stub_->RegisterService(&ctx, req, &resp));
    if (st.ok()) {
      counters_.Add("agent.services_reregistered");
      LITE_LOG_INFO("re-registered service '%s' as %#x (port %u)", s.name(),
                    s.service_id(), s.port());
      continue;
    }
    if (absl::IsUnavailable(st) || absl::IsDeadlineExceeded(st) ||
        absl::IsCancelled(st)) {
      // The manager is away: the next Join tries again.
      return absl::Status(st.code(),
                          absl::StrFormat("re-registering service '%s': %s",
                                          s.name(), st.message()));
    }
    // Refused for good (the name was taken meanwhile, draining, ...):
    // lite.ko keeps serving it for the callers bound already.
    counters_.Add("agent.services_not_restored");
    LITE_LOG_ERROR(
        "service '%s' (%#x, port %u) cannot be registered again: %s; lite.ko "
        "keeps serving it, but it cannot be opened by name",
        s.name(), s.service_id(), s.port(), st.ToString());
  }
  service_stats_.Refresh();
  return absl::OkStatus();
}

}  // namespace lite::agent
