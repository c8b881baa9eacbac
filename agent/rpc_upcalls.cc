// The RPC upcalls (issue #11, docs/rpc.md) as ClusterManager calls:
// RPC_REGISTER -> RegisterService (the owner is the upcall's credentials,
// taken by lite.ko), RPC_OPEN -> OpenService (the manager checks the x bit
// for the requester), RPC_BIND -> BindService (the manager forwards it to
// the server's node). RPC_UNREGISTER never comes here: nobody waits for it
// (ServiceUnregisterer). gRPC codes become errnos as for the LMR upcalls
// (StatusToErrno), except a bind's RESOURCE_EXHAUSTED, which is EUSERS:
// every ring of the service is taken, not memory.
#include <cerrno>
#include <variant>

#include "absl/strings/str_format.h"
#include "agent/upcall_dispatcher.h"
#include "common/grpc/status.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::agent {
namespace {

// The manager's answer goes to lite.ko as is: one out of the uapi's ranges
// would be refused there and leave the caller waiting, so it fails here.
absl::Status CheckOpened(const lite::v1::Service& s) {
  if (s.service_id() == 0 || s.node_id() == 0 || s.port() == 0 ||
      s.port() > LITE_RPC_PORT_MAX || s.depth() == 0 ||
      s.depth() > LITE_RPC_DEPTH_MAX ||
      s.max_request_bytes() > LITE_RPC_MSG_MAX ||
      s.max_reply_bytes() > LITE_RPC_MSG_MAX) {
    return absl::InternalError(absl::StrFormat(
        "the manager's service %#x is out of lite.ko's ranges (node %u, port "
        "%u, depth %u, sizes %u/%u)",
        s.service_id(), s.node_id(), s.port(), s.depth(), s.max_request_bytes(),
        s.max_reply_bytes()));
  }
  return absl::OkStatus();
}

absl::Status CheckRing(const lite::v1::BoundServiceRing& r) {
  if (r.depth() == 0 || r.depth() > LITE_RPC_DEPTH_MAX ||
      r.slot_bytes() < LITE_RPC_SLOT_ALIGN ||
      r.slot_bytes() % LITE_RPC_SLOT_ALIGN != 0 ||
      r.slot_bytes() > LITE_RPC_MSG_MAX) {
    return absl::InternalError(absl::StrFormat(
        "the server's ring is out of lite.ko's ranges (depth %u, %u-byte "
        "slots)",
        r.depth(), r.slot_bytes()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status UpcallDispatcher::CallRpc(const lite::v1::NodeCaller& caller,
                                       const Upcall& upcall,
                                       grpc::ClientContext* ctx,
                                       UpcallReply* reply) {
  if (const auto* r = std::get_if<RpcRegisterUpcall>(&upcall.request)) {
    lite::v1::RegisterServiceRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_owner() = upcall.credentials;
    req.set_name(r->name);
    req.set_mode(r->mode);
    req.set_port(r->port);
    req.set_max_request_bytes(r->max_request_bytes);
    req.set_max_reply_bytes(r->max_reply_bytes);
    req.set_depth(r->depth);
    req.set_max_clients(r->max_clients);
    lite::v1::RegisterServiceResponse resp;
    absl::Status s = FromGrpcStatus(stub_->RegisterService(ctx, req, &resp));
    if (!s.ok()) return s;
    if (resp.service().service_id() == 0) {
      return absl::InternalError("the manager registered the service as id 0");
    }
    reply->service_id = resp.service().service_id();
    return absl::OkStatus();
  }
  if (const auto* r = std::get_if<RpcOpenUpcall>(&upcall.request)) {
    lite::v1::OpenServiceRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_requester() = upcall.credentials;
    req.set_name(r->name);
    lite::v1::OpenServiceResponse resp;
    absl::Status s = FromGrpcStatus(stub_->OpenService(ctx, req, &resp));
    if (s.ok()) s = CheckOpened(resp.service());
    if (!s.ok()) return s;
    reply->service = resp.service();
    return absl::OkStatus();
  }
  if (const auto* r = std::get_if<RpcBindUpcall>(&upcall.request)) {
    lite::v1::BindServiceRequest req;
    *req.mutable_caller() = caller;
    req.set_service_id(r->service_id);
    req.set_reply_address(r->reply_address);
    req.set_reply_key(r->reply_key);
    req.set_reply_slot_bytes(r->reply_slot_bytes);
    lite::v1::BindServiceResponse resp;
    absl::Status s = FromGrpcStatus(stub_->BindService(ctx, req, &resp));
    if (absl::IsResourceExhausted(s)) reply->error_errno = EUSERS;
    if (s.ok()) s = CheckRing(resp.ring());
    if (!s.ok()) return s;
    reply->ring = resp.ring();
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrFormat(
      "upcall %u: no manager call for its kind", upcall.upcall_id));
}

}  // namespace lite::agent
