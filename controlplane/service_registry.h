// The manager's part for RPC services (docs/rpc.md): the registry of named
// services that server processes register through their nodes, who opened
// which (the execute-bit check), and the binds in flight — a client node's
// request for its ring at the server node, sent down the server's session
// through the one request table and answered to the caller later.
//
// Services are kept in memory only: after a manager restart each node's
// agent registers what its lite.ko still serves again, with the id it had
// (restore_service_id), the way LMRs are re-registered.
//
// Callers pass members ManagerState has checked are live (the membership
// part's job); every method validates the rest and changes nothing when it
// returns an error. Not thread-safe: ManagerState calls it under its one
// lock, which also covers the EventBus, NodeRequests and deferred-callback
// list it is given.
#ifndef LITE_CONTROLPLANE_SERVICE_REGISTRY_H_
#define LITE_CONTROLPLANE_SERVICE_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controlplane/clock.h"
#include "controlplane/event_bus.h"
#include "controlplane/node_requests.h"
#include "controlplane/options.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

class ServiceRegistry {
 public:
  using BindDone =
      std::function<void(absl::StatusOr<lite::v1::BindServiceResponse>)>;
  // Work to run once the caller's lock is released (a bind's `done`).
  using Deferred = std::vector<std::function<void()>>;

  ServiceRegistry(const ManagerOptions& options, const Clock* clock,
                  EventBus* events, NodeRequests* requests, Deferred* deferred);

  // RegisterService's own fields (not the caller), checked before any state.
  static absl::Status ValidateRegister(
      const lite::v1::RegisterServiceRequest& request);
  // RegisterService for the live member `caller`, its request validated
  // (manager.proto is the spec).
  absl::StatusOr<lite::v1::Service> Register(
      const lite::v1::Member& caller,
      const lite::v1::RegisterServiceRequest& request);
  absl::Status Unregister(const lite::v1::Member& caller, uint64_t service_id);
  // OpenService: the requester's execute access; remembers that `caller`
  // opened it, which BindService requires.
  absl::StatusOr<lite::v1::Service> Open(
      uint32_t caller_node_id, const std::string& name,
      const lite::v1::Credentials& requester);
  // Up to `limit` services with id > after_id (node_id 0: any node); `more`
  // says whether there are further ones.
  std::vector<lite::v1::Service> List(uint32_t node_id, uint64_t after_id,
                                      int limit, bool* more) const;
  const lite::v1::Service* Find(uint64_t service_id) const;
  size_t size() const { return services_.size(); }

  // A heartbeat's ServiceStats of `node_id`'s own services.
  void NoteStats(uint32_t node_id, const lite::v1::Heartbeat& heartbeat);
  // `node_id`'s incarnation ended: its services go (announced, NODE_ENDED),
  // what it opened is forgotten, and binds waiting for it fail with `why`.
  void NodeEnded(uint32_t node_id, const absl::Status& why);

  // ---- binds
  // The uapi's LITE_RPC_SLOT_ALIGN and LITE_RPC_MSG_MAX.
  static constexpr uint32_t kSlotAlign = 64;
  static constexpr uint32_t kMsgMax = 1u << 20;
  // The request's own fields (service id, reply slot size).
  static absl::Status ValidateBind(const lite::v1::BindServiceRequest& request);
  // BindService from the live `caller` to `service`, whose node is live
  // with a session open as `server`: checks it opened the service (not
  // while `recovering`: nodes bind again to what they opened before the
  // restart) and the per-node bounds, then sends the request. `done` runs
  // once, deferred, with the ring or why there is none.
  absl::Status Bind(const lite::v1::Member& caller,
                    const lite::v1::Member& server,
                    const lite::v1::Service& service,
                    const lite::v1::BindServiceRequest& request,
                    bool recovering, BindDone done);
  // The answer to a bind's request (from the incarnation it went to).
  void BindAnswered(const lite::v1::NodeRequestResult& result);
  // The bind's deadline passed (NodeRequests said so and ended it).
  void BindTimedOut(uint64_t request_id);
  // Fails every bind in flight (the manager shuts down).
  void FailAllBinds(const absl::Status& why);

 private:
  // A BindService waiting for the server node's answer (the request is in
  // requests_ under the same id, with the server's incarnation).
  struct PendingBind {
    uint64_t service_id = 0;
    std::string name;
    uint32_t server_node_id = 0;
    uint32_t client_node_id = 0;
    BindDone done;
  };
  void Remove(uint64_t service_id, lite::v1::ServiceRemovalCause cause);
  void FinishBind(uint64_t request_id,
                  absl::StatusOr<lite::v1::BindServiceResponse> outcome);
  // Fails the binds sent to `server_node_id` (0: all) with `why`.
  void FailBinds(uint32_t server_node_id, const absl::Status& why);

  const ManagerOptions& options_;
  const Clock* const clock_;
  EventBus* const events_;
  NodeRequests* const requests_;
  Deferred* const deferred_;

  // By id (node id in the high half: one node's are adjacent), by name, by
  // (node, port); the last service sequence number given per node.
  std::map<uint64_t, lite::v1::Service> services_;
  absl::flat_hash_map<std::string, uint64_t> names_;
  std::set<std::pair<uint32_t, uint32_t>> ports_;
  absl::flat_hash_map<uint32_t, uint32_t> seq_;
  // Service -> the nodes whose live incarnation opened it.
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<uint32_t>> openers_;
  // Binds waiting, by request id; and per calling node and per server node
  // (review cp M3, --max_pending_binds_per_node); no zero entries.
  absl::flat_hash_map<uint64_t, PendingBind> binds_;
  absl::flat_hash_map<uint32_t, int64_t> binds_by_client_;
  absl::flat_hash_map<uint32_t, int64_t> binds_by_server_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_SERVICE_REGISTRY_H_
