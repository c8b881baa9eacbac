// The values lite.ko's generic netlink family carries (kmod/include/uapi/
// lite.h has the contract), as plain C++ structs: what the codec decodes
// from lite.ko's messages and encodes into requests, and what the Client
// returns. No libnl here: these are all a caller of the Client needs.
#ifndef LITE_GENL_TYPES_H_
#define LITE_GENL_TYPES_H_

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::genl {

// What LITE_CMD_NODE_GET reports.
struct NodeInfo {
  uint16_t cm_port = 0;
  uint32_t qps_per_peer = 0;
  uint32_t num_peers = 0;
  // Set once LITE_CMD_NODE_SET succeeded.
  std::optional<uint32_t> node_id;
  std::optional<uint64_t> incarnation;
  std::optional<in_addr> addr;
  // The attached agent's netlink port, if one is attached.
  std::optional<uint32_t> agent_portid;
  // The node's name (LITE_ATTR_NODE_NAME), empty if it has none.
  std::string name;
};

// LITE_CMD_PEER_PROBE's answer: the peer's kernel acknowledged.
struct ProbeResult {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;  // of the peer that acknowledged
  uint64_t round_trip_ns = 0;
};

// One peer of LITE_CMD_PEER_GET.
struct PeerInfo {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  in_addr addr{};
  uint32_t state = 0;  // enum lite_peer_state
  uint32_t role = 0;   // enum lite_peer_role
  uint32_t qps_connected = 0;
  std::string name;  // LITE_ATTR_NODE_NAME, empty if the peer has none
  // LITE_ATTR_PEER_REFUSALS: connections with the peer refused since it was
  // added (0 from a lite.ko without peer authentication).
  uint32_t refusals = 0;
  // Set while a refusal since the peer was last connected is remembered:
  // why (enum lite_refusal, LITE_ATTR_PEER_LAST_REFUSAL) and who refused
  // (enum lite_refused_by, LITE_ATTR_PEER_REFUSED_BY; unset if not said).
  std::optional<uint32_t> last_refusal;
  std::optional<uint32_t> refused_by;
};

enum class EventType { kPeerConnected, kPeerFailed, kPeerRemoved };

// One LITE_CMD_EVENT_* message.
struct Event {
  EventType type = EventType::kPeerConnected;
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  in_addr addr{};
  uint32_t state = 0;
  uint32_t qps_connected = 0;
  std::optional<uint32_t> qp_index;  // kPeerFailed
  std::optional<uint32_t> reason;    // kPeerFailed: a positive errno
};

// One piece of LMR memory: an RDMA address valid with the memory key.
struct Chunk {
  uint64_t addr = 0;
  uint64_t length = 0;  // > 0
  bool operator==(const Chunk&) const = default;
};

// LITE_CMD_LMR_ALLOC's request: memory for an LMR the manager created.
struct LmrAllocRequest {
  uint64_t lmr_id = 0;  // not 0
  std::string name;     // 1..LITE_NAME_MAX bytes
  uint64_t size = 0;    // 1..LITE_LMR_SIZE_MAX
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0;  // subset of 0666
};

// LITE_CMD_LMR_ALLOC's reply: where the memory is.
struct LmrMemory {
  uint32_t memory_key = 0;
  // LITE_ATTR_READ_KEY: the read-only region's rkey (key_mode=lmr); 0 when
  // absent (key_mode=global, or a lite.ko before it).
  uint32_t read_key = 0;
  std::vector<Chunk> chunks;  // 1..LITE_CHUNKS_MAX
};

// One LMR this node hosts (LITE_CMD_LMR_GET).
struct LmrInfo {
  uint64_t lmr_id = 0;
  std::string name;
  uint64_t size = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t mode = 0;
  uint64_t epoch = 0;  // 0 until LITE_CMD_LMR_UPDATE set one
  uint32_t memory_key = 0;
  uint32_t read_key = 0;      // as LmrMemory's
  std::vector<Chunk> chunks;  // lengths add up to size
  // LITE_ATTR_RELEASING: the manager freed it and the home waits for
  // LMR_FREE; set by LITE_CMD_LMR_UPDATE, never cleared.
  bool releasing = false;
};

// A grant: what LITE_CMD_UPCALL_COMPLETE installs for a MAP upcall, and what
// LITE_CMD_GRANT_GET reports (with the requester and the revoked flag).
struct GrantInfo {
  uint64_t grant_id = 0;
  uint64_t lmr_id = 0;
  std::string name;           // the LMR's
  uint32_t home_node_id = 0;  // LITE_ATTR_NODE_ID
  uint32_t access = 0;        // enum lite_access
  uint64_t epoch = 0;
  uint64_t size = 0;
  uint32_t memory_key = 0;
  std::vector<Chunk> chunks;        // lengths add up to size
  uint64_t holder_incarnation = 0;  // LITE_ATTR_INCARNATION: this node's
  int64_t granted_at_ms = 0;
  // LITE_CMD_GRANT_GET only (ignored when completing an upcall).
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  bool revoked = false;
};

// enum lite_upcall_kind.
enum class UpcallKind : uint32_t {
  kAlloc = 1,
  kMap = 2,
  kUnmap = 3,
  kFree = 4,
  kRpcRegister = 5,
  kRpcUnregister = 6,
  kRpcOpen = 7,
  kRpcBind = 8,
};

// One LITE_CMD_UPCALL: an application's control call, for the agent.
struct UpcallRequest {
  uint64_t upcall_id = 0;  // never 0
  UpcallKind kind = UpcallKind::kAlloc;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  // The caller's supplementary groups (at most LITE_GROUPS_MAX; for kUnmap
  // the requester's at its map), and whether it had more than were sent.
  std::vector<uint32_t> groups;
  bool groups_truncated = false;
  std::string name;           // kAlloc, kMap, kFree, kRpcRegister, kRpcOpen
  uint64_t size = 0;          // kAlloc
  uint32_t mode = 0;          // kAlloc (0666), kRpcRegister (0777)
  uint32_t home_node_id = 0;  // kAlloc: 0 = this node
  uint32_t access = 0;        // kMap: enum lite_access
  uint64_t grant_id = 0;      // kUnmap
  // kRpcRegister: the service as the server process asked for it.
  uint32_t port = 0;
  uint32_t max_request = 0;
  uint32_t max_reply = 0;
  uint32_t depth = 0;
  uint32_t max_clients = 0;
  uint64_t service_id = 0;  // kRpcUnregister, kRpcBind
  // kRpcBind: this node's reply slots for the service.
  uint64_t rpc_addr = 0;
  uint32_t memory_key = 0;
  uint32_t slot_bytes = 0;
};

// A service as RPC_OPEN's answer carries it: where to call it and its sizes.
struct RpcServiceAddress {
  uint64_t service_id = 0;  // not 0
  uint32_t node_id = 0;     // the server's, not 0
  uint32_t port = 0;        // 1..LITE_RPC_PORT_MAX
  uint32_t max_request = 0;
  uint32_t max_reply = 0;
  uint32_t depth = 0;  // 1..LITE_RPC_DEPTH_MAX
};

// A client node's ring at the server: LITE_CMD_RPC_BIND's reply, and what
// RPC_BIND's answer carries back to the client's lite.ko.
struct RpcRing {
  uint64_t addr = 0;
  uint32_t memory_key = 0;
  uint32_t depth = 0;       // 1..LITE_RPC_DEPTH_MAX
  uint32_t slot_bytes = 0;  // LITE_RPC_SLOT_ALIGN..LITE_RPC_MSG_MAX
  bool operator==(const RpcRing&) const = default;
};

// LITE_CMD_RPC_BIND: reserve a ring of a service this node serves for a
// client node, whose replies go to its reply slots.
struct RpcBindRequest {
  uint64_t service_id = 0;  // not 0
  uint32_t port = 0;        // 1..LITE_RPC_PORT_MAX
  uint32_t client_node_id = 0;
  uint64_t client_incarnation = 0;
  uint64_t reply_addr = 0;
  uint32_t reply_key = 0;
  uint32_t reply_slot_bytes = 0;  // LITE_RPC_SLOT_ALIGN..LITE_RPC_MSG_MAX
};

// One service this node serves (LITE_CMD_RPC_SERVICE_GET). No key, no
// address.
struct ServiceInfo {
  uint64_t service_id = 0;
  std::string name;
  uint32_t port = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  uint32_t mode = 0;  // subset of 0777
  uint32_t max_request = 0;
  uint32_t max_reply = 0;
  uint32_t depth = 0;
  uint32_t max_clients = 0;
  uint32_t clients = 0;  // rings bound
  uint64_t queued = 0;   // arrived, not taken yet
  uint64_t served = 0;   // answered or released, total
  bool closing = false;  // being unregistered
};

// LITE_CMD_UPCALL_COMPLETE: the answer to an upcall.
struct UpcallCompletion {
  uint64_t upcall_id = 0;
  // 0 = success, else the positive errno (< 4096) the application gets.
  uint32_t error = 0;
  // Why, in words; cut to LITE_MESSAGE_BUF - 1 bytes when longer.
  std::string message;
  std::optional<uint64_t> lmr_id;  // on success of kAlloc
  std::optional<GrantInfo> grant;  // on success of kMap
  // On success of kRpcRegister: LITE_ATTR_SERVICE_ID only.
  std::optional<uint64_t> service_id;
  std::optional<RpcServiceAddress> service;  // on success of kRpcOpen
  std::optional<RpcRing> ring;               // on success of kRpcBind
};

// LITE_CMD_EVENT_LMR_LOST: a hosted LMR's RDMA device was removed.
struct LmrLostEvent {
  uint64_t lmr_id = 0;  // not 0
  uint32_t reason = 0;  // a positive errno (ENODEV)
};

// What lite.ko sends without being asked.
using Notification = std::variant<UpcallRequest, Event, LmrLostEvent>;

// An extra u32 attribute appended to requests: for testing the kernel's
// validation (unknown or misplaced attributes), never needed otherwise.
struct RawAttr {
  uint16_t type = 0;
  uint32_t value = 0;
};

// "10.211.0.11" -> in_addr; InvalidArgument for anything but a dotted quad.
absl::StatusOr<in_addr> ParseIPv4(absl::string_view text);
std::string FormatIPv4(in_addr addr);

const char* PeerStateName(uint32_t state);  // "connecting", "connected"
const char* PeerRoleName(uint32_t role);    // "initiator", "acceptor"
// enum lite_refusal in words, e.g. "authentication failed (pair secret
// mismatch or stale incarnation)"; "unknown reason" for a value this library
// does not know (a newer lite.ko).
const char* RefusalName(uint32_t refusal);
// enum lite_refused_by: "the peer", "this node", "unknown".
const char* RefusedByName(uint32_t refused_by);
const char* EventTypeName(EventType type);  // "connected", "failed", "removed"
const char* UpcallKindName(UpcallKind kind);  // "alloc", "map", ...

}  // namespace lite::genl

#endif  // LITE_GENL_TYPES_H_
