// FakeModule's RPC services (issue #11): what lite.ko keeps for services
// this node serves (port, owner, sizes, rings bound per client node,
// counters) and for services it calls (the ring each RPC_BIND answer
// installed), with lite.ko's refusals, so that host tests run the register,
// open, bind and unregister flows without lite.ko.
#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "agent/fake_module.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::agent {
namespace {

uint32_t SlotBytes(uint32_t max_request) {
  const uint32_t align = LITE_RPC_SLOT_ALIGN;
  return std::max(align, (max_request + align - 1) / align * align);
}

}  // namespace

bool FakeModule::InjectRpcLocked(uint64_t upcall_id,
                                 const lite::v1::Credentials& credentials,
                                 UpcallRequest* request) {
  if (auto* reg = std::get_if<RpcRegisterUpcall>(request)) {
    // lite.ko takes a port (the caller's, or the lowest free one) and makes
    // the rings before it asks the manager.
    if (reg->port == 0) {
      reg->port = 1;
      while (services_.contains(reg->port)) ++reg->port;
    }
    FakeService& s = services_[reg->port];
    s = FakeService{};
    lite::v1::Service& svc = s.served.service;
    svc.set_name(reg->name);
    svc.set_port(reg->port);
    svc.set_owner_uid(credentials.uid());
    svc.set_owner_gid(credentials.gid());
    svc.set_owner_pid(credentials.pid());
    svc.set_mode(reg->mode);
    svc.set_max_request_bytes(reg->max_request_bytes);
    svc.set_max_reply_bytes(reg->max_reply_bytes);
    svc.set_depth(reg->depth);
    svc.set_max_clients(reg->max_clients);
    if (identity_.has_value()) svc.set_node_id(identity_->node_id());
    registering_[upcall_id] = reg->port;
    return true;
  }
  if (const auto* unreg = std::get_if<RpcUnregisterUpcall>(request)) {
    // The service is gone from lite.ko before the agent hears of it.
    std::erase_if(services_, [&](const auto& entry) {
      return entry.second.served.service.service_id() == unreg->service_id;
    });
    RecordCall(absl::StrFormat("RpcUnregister %u", unreg->service_id));
    return false;
  }
  return true;
}

absl::Status FakeModule::CheckRpcReply(const Upcall& upcall,
                                       const UpcallReply& reply) {
  if (reply.lmr.has_value() || reply.grant.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "upcall %u: an RPC upcall's reply carries no LMR or grant",
        upcall.upcall_id));
  }
  const bool wants_id =
      std::holds_alternative<RpcRegisterUpcall>(upcall.request);
  const bool wants_service =
      std::holds_alternative<RpcOpenUpcall>(upcall.request);
  const bool wants_ring = std::holds_alternative<RpcBindUpcall>(upcall.request);
  if (wants_id != reply.service_id.has_value() ||
      wants_service != reply.service.has_value() ||
      wants_ring != reply.ring.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "upcall %u: a successful reply must carry %s", upcall.upcall_id,
        wants_id        ? "a service id"
        : wants_service ? "a service"
        : wants_ring    ? "a ring"
                        : "no result"));
  }
  if ((wants_id && *reply.service_id == 0) ||
      (wants_service && reply.service->service_id() == 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("upcall %u: service id 0", upcall.upcall_id));
  }
  if (std::holds_alternative<RpcOpenUpcall>(upcall.request)) {
    const lite::v1::Service& s = reply.service.value();
    // lite.ko's LITE_ATTR_* ranges for an open's answer.
    if (s.node_id() == 0 || s.port() == 0 || s.port() > LITE_RPC_PORT_MAX ||
        s.depth() == 0 || s.depth() > LITE_RPC_DEPTH_MAX ||
        s.max_request_bytes() > LITE_RPC_MSG_MAX ||
        s.max_reply_bytes() > LITE_RPC_MSG_MAX) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "upcall %u: service %#x is out of range (node %u port %u depth %u)",
          upcall.upcall_id, s.service_id(), s.node_id(), s.port(), s.depth()));
    }
  }
  if (wants_ring) {
    const lite::v1::BoundServiceRing& r = reply.ring.value();
    if (r.depth() == 0 || r.depth() > LITE_RPC_DEPTH_MAX ||
        r.slot_bytes() < LITE_RPC_SLOT_ALIGN ||
        r.slot_bytes() % LITE_RPC_SLOT_ALIGN != 0 ||
        r.slot_bytes() > LITE_RPC_MSG_MAX) {
      return absl::InvalidArgumentError(
          absl::StrFormat("upcall %u: ring of depth %u, %u-byte slots",
                          upcall.upcall_id, r.depth(), r.slot_bytes()));
    }
  }
  return absl::OkStatus();
}

void FakeModule::ApplyRpcReply(const Upcall& upcall, const UpcallReply& reply) {
  if (std::holds_alternative<RpcRegisterUpcall>(upcall.request)) {
    auto port = registering_.find(upcall.upcall_id);
    if (port == registering_.end()) return;
    auto it = services_.find(port->second);
    registering_.erase(port);
    if (it == services_.end()) return;
    if (reply.status.ok()) {
      // lite.ko publishes the service under the manager's id.
      it->second.served.service.set_service_id(*reply.service_id);
    } else {
      services_.erase(it);  // lite.ko frees the rings, the port is free
    }
    return;
  }
  if (const auto* bind = std::get_if<RpcBindUpcall>(&upcall.request)) {
    if (reply.status.ok()) bound_[bind->service_id] = *reply.ring;
  }
}

absl::StatusOr<lite::v1::BoundServiceRing> FakeModule::BindServiceRing(
    const lite::v1::BindServiceRing& r) {
  // lite.ko's checks, in its order.
  if (r.service_id() == 0 || r.port() == 0 || r.port() > LITE_RPC_PORT_MAX ||
      r.client_node_id() == 0 || r.client_incarnation() == 0 ||
      r.reply_slot_bytes() < LITE_RPC_SLOT_ALIGN ||
      r.reply_slot_bytes() % LITE_RPC_SLOT_ALIGN != 0 ||
      r.reply_slot_bytes() > LITE_RPC_MSG_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RPC_BIND: service %#x port %u client %u/%u slot bytes %u",
        r.service_id(), r.port(), r.client_node_id(), r.client_incarnation(),
        r.reply_slot_bytes()));
  }
  absl::MutexLock lock(&mu_);
  RecordCall(absl::StrFormat("BindServiceRing %u %u %u", r.service_id(),
                             r.port(), r.client_node_id()));
  auto it = services_.find(r.port());
  if (it == services_.end() || it->second.served.service.service_id() == 0 ||
      it->second.served.closing) {
    return absl::NotFoundError(
        absl::StrFormat("no service at port %u", r.port()));
  }
  FakeService& s = it->second;
  if (s.served.service.service_id() != r.service_id()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("port %u serves %#x, not %#x", r.port(),
                        s.served.service.service_id(), r.service_id()));
  }
  const bool self =
      identity_.has_value() && identity_->node_id() == r.client_node_id();
  auto peer = peers_.find(r.client_node_id());
  if (!self && (peer == peers_.end() ||
                peer->second.incarnation != r.client_incarnation())) {
    return absl::UnavailableError(
        absl::StrFormat("node %u incarnation %u is not a peer",
                        r.client_node_id(), r.client_incarnation()));
  }
  // A client with a ring gets a fresh one in its place.
  if (!s.rings.contains(r.client_node_id()) &&
      s.rings.size() >= s.served.service.max_clients()) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("all %u rings of %#x are taken",
                        s.served.service.max_clients(), r.service_id()));
  }
  lite::v1::BoundServiceRing ring;
  ring.set_depth(s.served.service.depth());
  ring.set_slot_bytes(SlotBytes(s.served.service.max_request_bytes()));
  ring.set_ring_address(next_ring_address_);
  ring.set_ring_key(options_.memory_key + r.client_node_id());
  next_ring_address_ += uint64_t{ring.depth()} * ring.slot_bytes();
  s.rings[r.client_node_id()] = ring;
  s.served.service.set_clients(s.rings.size());
  return ring;
}

absl::StatusOr<std::vector<ServedService>> FakeModule::ListServices() {
  absl::MutexLock lock(&mu_);
  std::vector<ServedService> out;
  for (const auto& [port, s] : services_) {
    // Not published before the manager named its id.
    if (s.served.service.service_id() != 0) out.push_back(s.served);
  }
  return out;
}

void FakeModule::AddServedService(const ServedService& served) {
  absl::MutexLock lock(&mu_);
  FakeService& s = services_[served.service.port()];
  s = FakeService{};
  s.served = served;
}

bool FakeModule::SetServiceStats(uint64_t service_id, uint32_t clients,
                                 uint64_t queued, uint64_t served) {
  absl::MutexLock lock(&mu_);
  for (auto& [port, s] : services_) {
    if (s.served.service.service_id() != service_id) continue;
    s.served.service.set_clients(clients);
    s.served.service.set_queued(queued);
    s.served.service.set_served(served);
    return true;
  }
  return false;
}

std::optional<lite::v1::BoundServiceRing> FakeModule::BoundRing(
    uint64_t service_id) const {
  absl::MutexLock lock(&mu_);
  auto it = bound_.find(service_id);
  if (it == bound_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> FakeModule::RingClients(uint64_t service_id) const {
  absl::MutexLock lock(&mu_);
  std::vector<uint32_t> out;
  for (const auto& [port, s] : services_) {
    if (s.served.service.service_id() != service_id) continue;
    for (const auto& [node, ring] : s.rings) out.push_back(node);
  }
  return out;
}

}  // namespace lite::agent
