// ServiceRegistry: registering, opening, listing and ending RPC services.
// The data path never comes here: calls go from lite.ko to lite.ko; the
// manager only names services and says who may call them.
#include "controlplane/service_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "controlplane/access.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::Service;

namespace {

// The uapi's limits (kmod/include/uapi/lite_rpc.h, lite.h), which lite.ko
// checks too: the manager refuses what no lite.ko could serve.
constexpr uint32_t kMaxDepth = 1024;    // LITE_RPC_DEPTH_MAX
constexpr uint32_t kMaxClients = 1025;  // LITE_RPC_CLIENTS_MAX
constexpr uint32_t kMaxPort = 16383;    // LITE_RPC_PORT_MAX

uint32_t NodeOf(uint64_t service_id) {
  return static_cast<uint32_t>(service_id >> 32);
}

std::string ServiceLabel(const Service& service) {
  return absl::StrCat("service '", service.name(), "'");
}

absl::Status ValidateRange(absl::string_view field, uint32_t value,
                           uint32_t min, uint32_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is %d; it must be %d..%d", field, value, min, max));
}

// Registering the same service again (a retried restore) changes nothing.
bool SameService(const Service& s, const lite::v1::RegisterServiceRequest& r) {
  return s.name() == r.name() && s.port() == r.port() &&
         s.owner_uid() == r.owner().uid() && s.owner_gid() == r.owner().gid() &&
         s.mode() == r.mode() &&
         s.max_request_bytes() == r.max_request_bytes() &&
         s.max_reply_bytes() == r.max_reply_bytes() && s.depth() == r.depth() &&
         s.max_clients() == r.max_clients();
}

}  // namespace

absl::Status ServiceRegistry::ValidateRegister(
    const lite::v1::RegisterServiceRequest& r) {
  LITE_RETURN_IF_ERROR(ValidateCredentials("owner", r.owner()));
  LITE_RETURN_IF_ERROR(names::ValidateLmrName("name", r.name()));
  if (r.mode() & ~0777u) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mode is 0%o; a service's mode is a subset of 0777", r.mode()));
  }
  LITE_RETURN_IF_ERROR(ValidateRange("port", r.port(), 1, kMaxPort));
  LITE_RETURN_IF_ERROR(ValidateRange("max_request_bytes", r.max_request_bytes(),
                                     0, ServiceRegistry::kMsgMax));
  LITE_RETURN_IF_ERROR(ValidateRange("max_reply_bytes", r.max_reply_bytes(), 0,
                                     ServiceRegistry::kMsgMax));
  LITE_RETURN_IF_ERROR(ValidateRange("depth", r.depth(), 1, kMaxDepth));
  LITE_RETURN_IF_ERROR(
      ValidateRange("max_clients", r.max_clients(), 1, kMaxClients));
  if (r.restore_service_id() != 0 &&
      static_cast<uint32_t>(r.restore_service_id()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "restore_service_id ", IdHex(r.restore_service_id()),
        " has a zero sequence (low 32 bits); it is not an id this manager "
        "issues"));
  }
  return absl::OkStatus();
}

ServiceRegistry::ServiceRegistry(const ManagerOptions& options,
                                 const Clock* clock, EventBus* events,
                                 NodeRequests* requests, Deferred* deferred)
    : options_(options),
      clock_(clock),
      events_(events),
      requests_(requests),
      deferred_(deferred) {}

absl::StatusOr<Service> ServiceRegistry::Register(
    const lite::v1::Member& caller,
    const lite::v1::RegisterServiceRequest& request) {
  const uint32_t node = caller.node_id();
  const uint64_t restore = request.restore_service_id();
  if (restore != 0 && NodeOf(restore) != node) {
    return absl::PermissionDeniedError(absl::StrCat(
        "restore_service_id ", IdHex(restore), " belongs to node ",
        NodeOf(restore), ", not to the caller ", NodeLabel(caller)));
  }
  if (restore != 0) {
    if (auto it = services_.find(restore); it != services_.end()) {
      if (SameService(it->second, request)) {
        return it->second;
      }
      return absl::AlreadyExistsError(
          absl::StrCat("service id ", IdHex(restore), " is ",
                       ServiceLabel(it->second), " with other attributes"));
    }
  } else if (caller.draining()) {
    return absl::FailedPreconditionError(absl::StrCat(
        NodeLabel(caller),
        " is draining; no new service may be registered on it (DrainNode "
        "with cancel puts it back in service)"));
  }
  if (auto it = names_.find(request.name()); it != names_.end()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a service named '", request.name(), "' exists (id ", IdHex(it->second),
        " on node ", NodeOf(it->second), "); see ListServices"));
  }
  if (ports_.contains({node, request.port()})) {
    return absl::AlreadyExistsError(absl::StrCat(NodeLabel(caller),
                                                 " has a service on port ",
                                                 request.port(), " already"));
  }
  uint64_t id = restore;
  if (id == 0) {
    uint32_t& seq = seq_[node];
    if (seq == UINT32_MAX) {
      return absl::ResourceExhaustedError(
          absl::StrCat(NodeLabel(caller), " has used every service id"));
    }
    id = (static_cast<uint64_t>(node) << 32) | ++seq;
  } else {
    // A restored id is never issued again to another service.
    uint32_t& seq = seq_[node];
    seq = std::max(seq, static_cast<uint32_t>(restore));
  }

  Service service;
  service.set_service_id(id);
  service.set_name(request.name());
  service.set_node_id(node);
  service.set_node_incarnation(caller.incarnation());
  service.set_port(request.port());
  service.set_owner_uid(request.owner().uid());
  service.set_owner_gid(request.owner().gid());
  service.set_owner_pid(request.owner().pid());
  service.set_mode(request.mode());
  service.set_max_request_bytes(request.max_request_bytes());
  service.set_max_reply_bytes(request.max_reply_bytes());
  service.set_depth(request.depth());
  service.set_max_clients(request.max_clients());
  service.set_registered_at_unix_ms(absl::ToUnixMillis(clock_->Now()));
  services_.emplace(id, service);
  names_.emplace(service.name(), id);
  ports_.insert({node, service.port()});

  Event event;
  *event.mutable_service_added()->mutable_service() = service;
  events_->Emit(std::move(event));
  return service;
}

absl::Status ServiceRegistry::Unregister(const lite::v1::Member& caller,
                                         uint64_t service_id) {
  if (service_id == 0) {
    return absl::InvalidArgumentError(
        "service_id is 0; pass the id RegisterService returned");
  }
  auto it = services_.find(service_id);
  if (it == services_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "no service ", IdHex(service_id),
        " (it may have ended with its node already); see ListServices"));
  }
  if (it->second.node_id() != caller.node_id()) {
    return absl::PermissionDeniedError(absl::StrCat(
        ServiceLabel(it->second), " is served by node ", it->second.node_id(),
        ", not by the caller ", NodeLabel(caller)));
  }
  Remove(service_id, lite::v1::SERVICE_REMOVAL_CAUSE_UNREGISTERED);
  return absl::OkStatus();
}

absl::StatusOr<Service> ServiceRegistry::Open(
    uint32_t caller_node_id, const std::string& name,
    const lite::v1::Credentials& requester) {
  auto found = names_.find(name);
  if (found == names_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no service named '", name, "'; see ListServices"));
  }
  const Service& service = services_.at(found->second);
  LITE_RETURN_IF_ERROR(CheckExecuteAccess(ServiceLabel(service), service.mode(),
                                          service.owner_uid(),
                                          service.owner_gid(), requester));
  // Remembered: BindService is refused to nodes that did not open it.
  openers_[service.service_id()].insert(caller_node_id);
  return service;
}

std::vector<Service> ServiceRegistry::List(uint32_t node_id, uint64_t after_id,
                                           int limit, bool* more) const {
  std::vector<Service> out;
  *more = false;
  for (auto it = services_.upper_bound(after_id); it != services_.end(); ++it) {
    if (node_id != 0 && it->second.node_id() != node_id) continue;
    if (static_cast<int>(out.size()) == limit) {
      *more = true;
      break;
    }
    out.push_back(it->second);
  }
  return out;
}

const Service* ServiceRegistry::Find(uint64_t service_id) const {
  auto it = services_.find(service_id);
  return it == services_.end() ? nullptr : &it->second;
}

void ServiceRegistry::Remove(uint64_t service_id,
                             lite::v1::ServiceRemovalCause cause) {
  auto it = services_.find(service_id);
  if (it == services_.end()) return;
  const Service service = std::move(it->second);
  services_.erase(it);
  openers_.erase(service_id);
  names_.erase(service.name());
  ports_.erase({service.node_id(), service.port()});
  Event event;
  auto* removed = event.mutable_service_removed();
  removed->set_service_id(service_id);
  removed->set_name(service.name());
  removed->set_node_id(service.node_id());
  removed->set_cause(cause);
  events_->Emit(std::move(event));
}

void ServiceRegistry::NodeEnded(uint32_t node_id, const absl::Status& why) {
  // What it opened, it opened in the incarnation that ended.
  for (auto& [service_id, nodes] : openers_) nodes.erase(node_id);
  const uint64_t first = static_cast<uint64_t>(node_id) << 32;
  std::vector<uint64_t> ids;
  for (auto it = services_.lower_bound(first);
       it != services_.end() && NodeOf(it->first) == node_id; ++it) {
    ids.push_back(it->first);
  }
  for (uint64_t id : ids) {
    Remove(id, lite::v1::SERVICE_REMOVAL_CAUSE_NODE_ENDED);
  }
  // The binds it was asked for will never be answered.
  FailBinds(node_id, why);
}

void ServiceRegistry::NoteStats(uint32_t node_id,
                                const lite::v1::Heartbeat& heartbeat) {
  for (const lite::v1::ServiceStats& stats : heartbeat.service_stats()) {
    auto it = services_.find(stats.service_id());
    // Only the node's own services; anything else is ignored.
    if (it == services_.end() || it->second.node_id() != node_id) continue;
    it->second.set_clients(stats.clients());
    it->second.set_queued(stats.queued());
    it->second.set_served(stats.served());
  }
}

}  // namespace lite::controlplane
