#include "agent/netlink_rpc.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/netlink_module.h"
#include "common/status/macros.h"

namespace lite::agent {

absl::Status RpcRequestFromGenl(const genl::UpcallRequest& r, Upcall* u) {
  switch (r.kind) {
    case genl::UpcallKind::kRpcRegister:
      u->request = RpcRegisterUpcall{.name = r.name,
                                     .mode = r.mode,
                                     .port = r.port,
                                     .max_request_bytes = r.max_request,
                                     .max_reply_bytes = r.max_reply,
                                     .depth = r.depth,
                                     .max_clients = r.max_clients};
      return absl::OkStatus();
    case genl::UpcallKind::kRpcUnregister:
      u->request = RpcUnregisterUpcall{.service_id = r.service_id};
      return absl::OkStatus();
    case genl::UpcallKind::kRpcOpen:
      u->request = RpcOpenUpcall{.name = r.name};
      return absl::OkStatus();
    case genl::UpcallKind::kRpcBind:
      u->request = RpcBindUpcall{.service_id = r.service_id,
                                 .reply_address = r.rpc_addr,
                                 .reply_key = r.memory_key,
                                 .reply_slot_bytes = r.slot_bytes};
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("upcall %u has unknown kind %u", r.upcall_id,
                          static_cast<uint32_t>(r.kind)));
  }
}

absl::Status AddRpcAnswer(const UpcallReply& reply, genl::UpcallCompletion* c) {
  if (reply.service_id.has_value() + reply.service.has_value() +
          reply.ring.has_value() >
      1) {
    return absl::InvalidArgumentError(
        "the reply has more than one of a service id, a service and a ring");
  }
  if (reply.service_id.has_value()) {
    if (*reply.service_id == 0) {
      return absl::InvalidArgumentError("the reply's service id is 0");
    }
    c->service_id = *reply.service_id;
    return absl::OkStatus();
  }
  if (reply.ring.has_value()) {
    c->ring = genl::RpcRing{.addr = reply.ring->ring_address(),
                            .memory_key = reply.ring->ring_key(),
                            .depth = reply.ring->depth(),
                            .slot_bytes = reply.ring->slot_bytes()};
    return absl::OkStatus();
  }
  if (!reply.service.has_value()) return absl::OkStatus();
  const lite::v1::Service& s = *reply.service;
  if (s.service_id() == 0 || s.node_id() == 0) {
    return absl::InvalidArgumentError(
        "the reply's service has no id or no node");
  }
  c->service = genl::RpcServiceAddress{.service_id = s.service_id(),
                                       .node_id = s.node_id(),
                                       .port = s.port(),
                                       .max_request = s.max_request_bytes(),
                                       .max_reply = s.max_reply_bytes(),
                                       .depth = s.depth()};
  return absl::OkStatus();
}

genl::RpcBindRequest RpcBindFromProto(const lite::v1::BindServiceRing& r) {
  return genl::RpcBindRequest{.service_id = r.service_id(),
                              .port = r.port(),
                              .client_node_id = r.client_node_id(),
                              .client_incarnation = r.client_incarnation(),
                              .reply_addr = r.reply_address(),
                              .reply_key = r.reply_key(),
                              .reply_slot_bytes = r.reply_slot_bytes()};
}

lite::v1::BoundServiceRing RingFromGenl(const genl::RpcRing& ring) {
  lite::v1::BoundServiceRing out;
  out.set_ring_address(ring.addr);
  out.set_ring_key(ring.memory_key);
  out.set_depth(ring.depth);
  out.set_slot_bytes(ring.slot_bytes);
  return out;
}

ServedService ServiceFromGenl(const genl::ServiceInfo& info, uint32_t node_id) {
  ServedService out;
  lite::v1::Service& s = out.service;
  s.set_service_id(info.service_id);
  s.set_name(info.name);
  s.set_node_id(node_id);
  s.set_port(info.port);
  s.set_owner_uid(info.uid);
  s.set_owner_gid(info.gid);
  s.set_owner_pid(info.pid);
  s.set_mode(info.mode);
  s.set_max_request_bytes(info.max_request);
  s.set_max_reply_bytes(info.max_reply);
  s.set_depth(info.depth);
  s.set_max_clients(info.max_clients);
  s.set_clients(info.clients);
  s.set_queued(info.queued);
  s.set_served(info.served);
  out.closing = info.closing;
  return out;
}

absl::StatusOr<lite::v1::BoundServiceRing> NetlinkModule::BindServiceRing(
    const lite::v1::BindServiceRing& request) {
  absl::StatusOr<genl::RpcRing> ring =
      client_->RpcBind(RpcBindFromProto(request));
  if (!ring.ok()) {
    const int err = genl::ErrnoOf(ring.status());
    const absl::StatusCode code =
        err ? ErrnoToModuleCode(err) : ring.status().code();
    return absl::Status(
        code,
        absl::StrFormat("binding a ring of service %#x (port %u) for "
                        "node %u: %s",
                        request.service_id(), request.port(),
                        request.client_node_id(), ring.status().message()));
  }
  return RingFromGenl(*ring);
}

absl::StatusOr<std::vector<ServedService>> NetlinkModule::ListServices() {
  LITE_ASSIGN_OR_RETURN(const uint32_t self, NodeId());
  absl::StatusOr<std::vector<genl::ServiceInfo>> services =
      client_->ListServices();
  if (!services.ok()) {
    const int err = genl::ErrnoOf(services.status());
    return absl::Status(
        err ? ErrnoToModuleCode(err) : services.status().code(),
        absl::StrCat("listing RPC services: ", services.status().message()));
  }
  std::vector<ServedService> out;
  out.reserve(services->size());
  for (const genl::ServiceInfo& s : *services) {
    out.push_back(ServiceFromGenl(s, self));
  }
  return out;
}

}  // namespace lite::agent
