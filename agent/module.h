// The agent's narrow interface to lite.ko.
//
// liteagent never touches RDMA or application memory itself: it tells the
// kernel module who this node is, which peers exist, which LMR memory to
// allocate or free, which grants to revoke, which rings of RPC services to
// reserve for client nodes, and it answers the module's upcalls
// (applications asking to allocate, register, map, unmap or free an LMR, or
// to register, open, bind or unregister an RPC service). Every method maps
// one-to-one onto one generic-netlink command of lite.ko's family (the real
// implementation arrives with the data path); the FakeModule in fake_module.h
// implements it in-process for tests.
//
// Thread safety: implementations must allow concurrent calls from different
// threads (the session thread applies events while upcall workers complete
// upcalls and the NodeAgent service reads counters).
#ifndef LITE_AGENT_MODULE_H_
#define LITE_AGENT_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lite/v1/agent.pb.h"
#include "lite/v1/manager.pb.h"
#include "lite/v1/types.pb.h"

namespace lite::agent {

// A peer as lite.ko needs it to connect RC QPs: the node id, the incarnation
// (carried in rdma_cm private data so a restarted peer is told apart) and
// where its lite.ko accepts rdma_cm connections; its name in the cluster, by
// which applications may find it (empty: unnamed); and the pair secret with
// which both lite.ko prove who they are (issue #16).
struct Peer {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  std::string rdma_address;
  std::string name;
  // kPairSecretBytes from the manager, for this node's and the peer's
  // current incarnations; empty when the manager gave none (lite.ko with
  // peer_auth=1 then refuses every connection with the peer). Write-only in
  // lite.ko: ListPeers leaves it empty. Never log it.
  std::string secret;
};

// The size of a pair secret (lite.ko's LITE_PEER_SECRET_LEN).
inline constexpr size_t kPairSecretBytes = 32;

// ---- Upcalls: requests applications made through /dev/lite. ----
// The credentials are taken by lite.ko from the calling task, never from the
// caller's arguments.

// lite_alloc: allocate a new LMR on home_node_id (0 = this node).
struct AllocUpcall {
  std::string name;
  uint64_t size_bytes = 0;
  uint32_t mode = 0;
  uint32_t home_node_id = 0;
};

// lite_register: the application's own memory, already pinned by lite.ko,
// which reports where it is.
struct RegisterUpcall {
  std::string name;
  uint64_t size_bytes = 0;
  uint32_t mode = 0;
  std::vector<lite::v1::LmrChunk> chunks = {};
  uint32_t memory_key = 0;
};

// lite_map: a new handle to an LMR by name.
struct MapUpcall {
  std::string name;
  bool read = false;
  bool write = false;
};

// lite_unmap / close: the handle is gone from lite.ko; tell the manager.
struct UnmapUpcall {
  uint64_t grant_id = 0;
};

// lite_free: free an LMR by name (only its owner may).
struct FreeUpcall {
  std::string name;
};

// ---- RPC upcalls (issue #11, docs/rpc.md) ----

// lite_rpc_register: lite.ko made the service's rings at `port`; the
// manager records it (owner = the upcall's credentials) and names its id.
struct RpcRegisterUpcall {
  std::string name;
  uint32_t mode = 0;  // subset of 0777: the x bit lets a user call it
  uint32_t port = 0;
  uint32_t max_request_bytes = 0;
  uint32_t max_reply_bytes = 0;
  uint32_t depth = 0;
  uint32_t max_clients = 0;
};

// The service's file closed or lite_rpc_unregister: tell the manager.
// Nobody waits for the answer (like UNMAP); the agent retries while the
// manager is unreachable.
struct RpcUnregisterUpcall {
  uint64_t service_id = 0;
};

// lite_rpc_open: resolve a name; the manager checks the x bit.
struct RpcOpenUpcall {
  std::string name;
};

// After an open, when this node has no ring at the server yet: this node's
// reply slots, which the manager hands to the server's lite.ko.
struct RpcBindUpcall {
  uint64_t service_id = 0;
  uint64_t reply_address = 0;
  uint32_t reply_key = 0;
  uint32_t reply_slot_bytes = 0;
};

struct Upcall {
  // Assigned by the module; unique among pending upcalls. Never 0.
  uint64_t upcall_id = 0;
  lite::v1::Credentials credentials;
  std::variant<AllocUpcall, RegisterUpcall, MapUpcall, UnmapUpcall, FreeUpcall,
               RpcRegisterUpcall, RpcUnregisterUpcall, RpcOpenUpcall,
               RpcBindUpcall>
      request;
};

// What the agent answers an upcall with. lite.ko wakes the application's
// ioctl with it.
struct UpcallReply {
  uint64_t upcall_id = 0;
  // OK or why the request failed (the manager's code and message).
  absl::Status status = absl::OkStatus();
  // On OK for alloc and register: the LMR as the manager recorded it. For a
  // register upcall, lite.ko from now on hosts the pinned memory under
  // lmr.lmr_id.
  std::optional<lite::v1::Lmr> lmr = std::nullopt;
  // On OK for map: the grant. lite.ko installs it behind a new handle.
  std::optional<lite::v1::Grant> grant = std::nullopt;
  // On OK for RPC register: the manager's id for the service, under which
  // lite.ko publishes it.
  std::optional<uint64_t> service_id = std::nullopt;
  // On OK for RPC open: the service (lite.ko takes its id, node, port,
  // sizes and depth).
  std::optional<lite::v1::Service> service = std::nullopt;
  // On OK for RPC bind: this node's ring at the server.
  std::optional<lite::v1::BoundServiceRing> ring = std::nullopt;
  // Not 0: the errno the application gets instead of the one the status'
  // code maps to (a bind's RESOURCE_EXHAUSTED is EUSERS, not ENOSPC).
  int error_errno = 0;
};

// A service this node's lite.ko serves (LITE_CMD_RPC_SERVICE_GET): the
// Service fields lite.ko knows (id, name, node, port, owner, mode, sizes,
// depth, max_clients, clients, queued, served), and whether it is being
// unregistered.
struct ServedService {
  lite::v1::Service service;
  bool closing = false;
};

// ---- Module events: things lite.ko noticed on the data path. ----

// The RC connection to a peer failed (QP error, rdma_cm disconnect).
struct PeerConnectionFailed {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  std::string reason;
  // lite.ko's reason, a positive errno (0: none given). EHOSTDOWN: the
  // peer stopped answering on the data path (peer_reports.h).
  int reason_errno = 0;
};

// lite.ko can no longer reach a hosted LMR over RDMA (LITE_CMD_EVENT_LMR_LOST:
// its RDMA device was removed). Grants on this node into it are revoked
// already; the manager revokes the others and releases it.
struct LmrLost {
  uint64_t lmr_id = 0;
  // A positive errno (ENODEV).
  int reason_errno = 0;
};

using ModuleMessage = std::variant<Upcall, PeerConnectionFailed, LmrLost>;

class Module {
 public:
  virtual ~Module() = default;

  // "fake", later "netlink": for logs and status.
  virtual std::string Name() const = 0;

  // ---- Node identity ----
  // The identity lite.ko holds from an earlier session (it survives agent
  // restarts), or nullopt when the module has none yet.
  virtual absl::StatusOr<std::optional<lite::v1::NodeIdentity>>
  GetIdentity() = 0;
  // Both fields nonzero.
  virtual absl::Status SetIdentity(const lite::v1::NodeIdentity& identity) = 0;

  // ---- Peers ----
  // Adds a peer, or replaces the peer with the same node id (a different
  // incarnation or address is a new peer: the old connections are torn down).
  // The same peer again (id, incarnation, address, name) with another
  // secret only replaces the secret: connected QPs stay, later connections
  // use the new one (the manager restarted with a new key, or this node has
  // a new incarnation).
  virtual absl::Status AddPeer(const Peer& peer) = 0;
  // Removes the peer if it has this incarnation: its QPs go to error, every
  // operation on it fails with EHOSTDOWN, handles into its LMRs go stale.
  // NOT_FOUND if there is no such peer.
  virtual absl::Status RemovePeer(uint32_t node_id, uint64_t incarnation) = 0;
  // Without their secrets (lite.ko never reads one back).
  virtual absl::StatusOr<std::vector<Peer>> ListPeers() = 0;
  // Asks lite.ko whether the peer's kernel still acknowledges
  // (LITE_CMD_PEER_PROBE: a zero-byte RDMA WRITE on one of its RC
  // connections to the peer, answered by the peer's RDMA device whatever its
  // user space does). Blocks up to lite.ko's bound, 2 * peer_timeout_ms +
  // 1 s: never call it on the session thread. OK with the incarnation that
  // acknowledged and the round trip; UNAVAILABLE the peer did not
  // acknowledge (EHOSTDOWN: its connections ran out of retries, or none is
  // up); NOT_FOUND no such peer (ENOENT); FAILED_PRECONDITION the peer
  // lite.ko knows is another incarnation than `incarnation`.
  virtual absl::StatusOr<lite::v1::ProbedPeer> ProbePeer(
      uint32_t node_id, uint64_t incarnation) = 0;

  // ---- LMR memory this node hosts ----
  // Allocates memory for a new LMR (the manager's AllocateLmrMemory request).
  // RESOURCE_EXHAUSTED when there is not enough memory; ALREADY_EXISTS when
  // lmr_id is already hosted.
  virtual absl::StatusOr<lite::v1::AllocatedLmrMemory> AllocateLmrMemory(
      const lite::v1::AllocateLmrMemory& request) = 0;
  // Frees allocated memory, or unpins registered memory. NOT_FOUND if the
  // LMR is not hosted here. With `quarantine` (LITE_ATTR_QUARANTINE) the
  // LMR leaves the table but its pages are never reused while lite.ko is
  // loaded: the manager could not prove that no node still reaches them.
  virtual absl::Status FreeLmrMemory(uint64_t lmr_id, bool quarantine) = 0;
  // Records the manager's view of a hosted LMR (its id, epoch, ...), e.g.
  // after an allocation is announced or after a re-registration gave the LMR
  // a new id. NOT_FOUND if lmr_id is not hosted here. A record in state
  // LMR_STATE_RELEASING also marks the LMR releasing (MarkLmrReleasing).
  virtual absl::Status UpdateHostedLmr(uint64_t lmr_id,
                                       const lite::v1::Lmr& lmr) = 0;
  // The manager freed a hosted LMR and its memory waits for
  // ReleaseLmrMemory (LMR_UPDATE with LITE_ATTR_RELEASING). Sticky: nothing
  // clears it. lite.ko remembers it across agent restarts, the agent does
  // not, so a restarted agent re-registers the LMR as releasing instead of
  // bringing it back to life. NOT_FOUND if lmr_id is not hosted here.
  virtual absl::Status MarkLmrReleasing(uint64_t lmr_id) = 0;
  // Every LMR this node hosts, for re-registration after a manager restart
  // or a rejoin; state LMR_STATE_RELEASING for one marked releasing.
  virtual absl::StatusOr<std::vector<lite::v1::Lmr>> ListHostedLmrs() = 0;

  // ---- Grants held by applications on this node ----
  // Revokes a grant: handles behind it fail with ESTALE from now on. OK once
  // nothing of it is in flight and nothing will be posted (drained).
  // NOT_FOUND if lite.ko does not hold it (unmapped and drained);
  // DEADLINE_EXCEEDED (ETIMEDOUT) revoked but still draining after lite.ko's
  // bound: ask again. Blocks up to that bound.
  virtual absl::Status RevokeGrant(uint64_t grant_id) = 0;
  // Every grant lite.ko holds and has not revoked, for RestoreGrant after a
  // manager restart.
  virtual absl::StatusOr<std::vector<lite::v1::Grant>> ListGrants() = 0;
  // Revoked grants lite.ko still lists (LITE_ATTR_REVOKED): not drained yet,
  // or drained but not unmapped by their application. Restored as revoking.
  virtual absl::StatusOr<std::vector<lite::v1::Grant>> ListRevokedGrants() = 0;

  // ---- RPC services this node serves ----
  // Reserves a ring of the service at request.port() for the client node
  // (lite.ko's LITE_CMD_RPC_BIND; the manager's BindServiceRing). NOT_FOUND
  // no such service (or being unregistered); FAILED_PRECONDITION the id is
  // not the port's (ESTALE); RESOURCE_EXHAUSTED every ring is taken
  // (EUSERS); UNAVAILABLE the client is not a connected peer (EHOSTDOWN);
  // INVALID_ARGUMENT a field out of the uapi's range.
  virtual absl::StatusOr<lite::v1::BoundServiceRing> BindServiceRing(
      const lite::v1::BindServiceRing& request) = 0;
  // Every service lite.ko serves, in port order: for heartbeat stats and
  // re-registration after a rejoin.
  virtual absl::StatusOr<std::vector<ServedService>> ListServices() = 0;

  // ---- Upcalls and module events ----
  // Blocks until lite.ko has an upcall or an event. Returns CANCELLED once
  // Close() was called (also when called while another thread waits).
  virtual absl::StatusOr<ModuleMessage> Receive() = 0;
  // Answers a pending upcall. NOT_FOUND if it is not pending (answered
  // already, or the application gave up and lite.ko dropped it). Works after
  // Close(), so that shutdown can answer what is still queued.
  virtual absl::Status CompleteUpcall(const UpcallReply& reply) = 0;
  // Wakes Receive() for good; for shutdown.
  virtual void Close() = 0;

  // ---- Counters ----
  // The module's counters, names starting with "module.".
  virtual absl::StatusOr<std::vector<lite::v1::Counter>> GetCounters() = 0;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_MODULE_H_
