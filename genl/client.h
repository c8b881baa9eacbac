// lite_genl: a small C++ client for lite.ko's generic-netlink family
// (kmod/include/uapi/lite.h has the contract). It encodes requests, decodes
// replies, dumps, upcalls and events, and turns kernel errors into
// absl::Status carrying the errno and the kernel's extended-ack message.
// Used by `litenl` and by liteagent's NetlinkModule.
//
// libnl stays an implementation detail: this header needs no libnl include
// path. A Client is thread-safe: a receiver thread of its own reads the
// socket and hands each reply to the request waiting for it (by sequence
// number), and queues what lite.ko sends unasked (upcalls to the attached
// agent, events if the client joined the events group) for
// NextNotification(). Every wait is bounded by the timeout given to Open().
#ifndef LITE_GENL_CLIENT_H_
#define LITE_GENL_CLIENT_H_

#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

struct nl_msg;
struct nl_sock;
struct nlmsghdr;
struct nlmsgerr;

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
};

// One peer of LITE_CMD_PEER_GET.
struct PeerInfo {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
  in_addr addr{};
  uint32_t state = 0;  // enum lite_peer_state
  uint32_t role = 0;   // enum lite_peer_role
  uint32_t qps_connected = 0;
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
  std::vector<Chunk> chunks;  // lengths add up to size
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
  kFree = 4
};

// One LITE_CMD_UPCALL: an application's control call, for the agent.
struct UpcallRequest {
  uint64_t upcall_id = 0;  // never 0
  UpcallKind kind = UpcallKind::kAlloc;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  std::string name;           // kAlloc, kMap, kFree
  uint64_t size = 0;          // kAlloc
  uint32_t mode = 0;          // kAlloc
  uint32_t home_node_id = 0;  // kAlloc: 0 = this node
  uint32_t access = 0;        // kMap: enum lite_access
  uint64_t grant_id = 0;      // kUnmap
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
};

// What lite.ko sends without being asked.
using Notification = std::variant<UpcallRequest, Event>;

// An extra u32 attribute appended to requests: for testing the kernel's
// validation (unknown or misplaced attributes), never needed otherwise.
struct RawAttr {
  uint16_t type = 0;
  uint32_t value = 0;
};

// The errno a failed call carries (the kernel's, or a local one), 0 if none.
int ErrnoOf(const absl::Status& status);

// "10.211.0.11" -> in_addr; InvalidArgument for anything but a dotted quad.
absl::StatusOr<in_addr> ParseIPv4(absl::string_view text);
std::string FormatIPv4(in_addr addr);

const char* PeerStateName(uint32_t state);  // "connecting", "connected"
const char* PeerRoleName(uint32_t role);    // "initiator", "acceptor"
const char* EventTypeName(EventType type);  // "connected", "failed", "removed"
const char* UpcallKindName(UpcallKind kind);  // "alloc", "map", ...

// Decoders, exposed for tests: a whole netlink message of the family. Each
// checks the command, that every required attribute is there, and the
// values' ranges (chunk counts and lengths, ids not 0, names).
absl::StatusOr<PeerInfo> DecodePeer(const nlmsghdr* msg);
absl::StatusOr<NodeInfo> DecodeNode(const nlmsghdr* msg);
absl::StatusOr<Event> DecodeEvent(const nlmsghdr* msg);
// LMR_ALLOC's reply. Chunk lists: LITE_ATTR_CHUNKS may come more than once
// in a message (one attribute holds at most 64 KiB, ~1800 chunks); the
// chunks are all of them in order. The encoders below put at most 2048
// chunks in one.
absl::StatusOr<LmrMemory> DecodeLmrMemory(const nlmsghdr* msg);
// LMR_GET and GRANT_GET entries. lite.ko continues an entry whose chunks do
// not fit in one dump message in the next ones (same attributes, the
// following chunks): with @partial, the chunks may add up to less than the
// size, and Merge*Part() puts the pieces together.
absl::StatusOr<LmrInfo> DecodeLmr(const nlmsghdr* msg, bool partial = false);
absl::StatusOr<GrantInfo> DecodeGrant(const nlmsghdr* msg,
                                      bool partial = false);
// Appends @part to @entries, or its chunks to the last entry if that is the
// same LMR (grant) and still lacks chunks. EBADMSG if an entry ends early
// or a continuation does not match.
absl::Status MergeLmrPart(std::vector<LmrInfo>* lmrs, LmrInfo part);
absl::Status MergeGrantPart(std::vector<GrantInfo>* grants, GrantInfo part);
absl::StatusOr<UpcallRequest> DecodeUpcall(const nlmsghdr* msg);  // UPCALL
// An upcall or an event.
absl::StatusOr<Notification> DecodeNotification(const nlmsghdr* msg);
// The error of an NLMSG_ERROR message: errno and extended-ack message.
absl::Status DecodeError(const nlmsghdr* msg);

// Encoders, exposed for tests: the attributes of a request, appended to
// @msg (after its generic netlink header). InvalidArgument (EINVAL) for a
// value out of the uapi's range, EMSGSIZE if the message is too small.
absl::Status EncodeLmrAlloc(nl_msg* msg, const LmrAllocRequest& request);
absl::Status EncodeUpcallCompletion(nl_msg* msg, const UpcallCompletion& c);
// The attributes of a MAP answer (without the GRANT_GET-only ones).
absl::Status EncodeGrant(nl_msg* msg, const GrantInfo& grant);
// Bytes a message for @completion needs (for nlmsg_alloc_size).
size_t UpcallCompletionSize(const UpcallCompletion& completion);

class Client {
 public:
  struct Options {
    // Bound of every request (send to the last reply).
    absl::Duration timeout = absl::Seconds(10);
    // Join the events multicast group (needs CAP_NET_ADMIN): events then
    // come out of NextNotification().
    bool events = false;
    // Most notifications queued; more are dropped (and reported).
    size_t max_queued = 65536;
  };

  // Resolves the family. NotFound (errno ENOENT) if lite.ko is not loaded.
  static absl::StatusOr<std::unique_ptr<Client>> Open(
      absl::Duration timeout = absl::Seconds(10));
  static absl::StatusOr<std::unique_ptr<Client>> Open(const Options& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // This socket's netlink port: what the kernel reports as the agent's.
  uint32_t portid() const;

  absl::Status AttachAgent();
  absl::Status DetachAgent();
  absl::Status SetNode(uint32_t node_id, uint64_t incarnation, in_addr addr);
  absl::StatusOr<NodeInfo> GetNode();
  absl::Status AddPeer(uint32_t node_id, uint64_t incarnation, in_addr addr);
  // With an incarnation, removes the peer only if it has that one.
  absl::Status RemovePeer(uint32_t node_id,
                          std::optional<uint64_t> incarnation = std::nullopt);
  absl::StatusOr<std::vector<PeerInfo>> ListPeers();

  // LMR memory this node hosts.
  absl::StatusOr<LmrMemory> AllocLmr(const LmrAllocRequest& request);
  absl::Status FreeLmr(uint64_t lmr_id);
  absl::Status UpdateLmr(uint64_t lmr_id, std::optional<uint64_t> new_lmr_id,
                         std::optional<uint64_t> epoch);
  absl::StatusOr<std::vector<LmrInfo>> ListLmrs();

  // Grants applications on this node hold.
  absl::Status RevokeGrant(uint64_t grant_id);
  absl::StatusOr<std::vector<GrantInfo>> ListGrants();

  // Answers an upcall (the attached agent only).
  absl::Status CompleteUpcall(const UpcallCompletion& completion);

  // The next upcall (on the attached socket) or event (Options::events), or
  // nullopt if none came within @timeout. DataLoss (ENOBUFS) once after
  // messages were lost (socket buffer overrun, or the queue was full);
  // Cancelled after InterruptNotifications(); the socket's error if it broke.
  absl::StatusOr<std::optional<Notification>> NextNotification(
      absl::Duration timeout);
  // Wakes NextNotification() callers for good (they return Cancelled).
  // Requests keep working.
  void InterruptNotifications();

  // Appended to every later request (see RawAttr). Not thread-safe: set it
  // before requests are made.
  void set_extra_attrs(std::vector<RawAttr> attrs) {
    extra_attrs_ = std::move(attrs);
  }

 private:
  struct Request;
  struct Waiter;
  Client(nl_sock* sock, int family, int wake_fd, const Options& options);
  absl::Status Transact(Request& request);
  void ReceiveLoop();
  void Dispatch(const nlmsghdr* hdr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailAll(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  nl_sock* const sock_;
  const int family_;
  const int wake_fd_;  // eventfd: stops the receiver thread
  const Options options_;
  std::vector<RawAttr> extra_attrs_;

  absl::Mutex send_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // One dump at a time: the kernel runs one per socket.
  absl::Mutex dump_mu_ ABSL_ACQUIRED_BEFORE(send_mu_);
  absl::Mutex mu_;
  uint32_t next_seq_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint32_t, std::shared_ptr<Waiter>> waiters_
      ABSL_GUARDED_BY(mu_);
  std::deque<Notification> queue_ ABSL_GUARDED_BY(mu_);
  // Lost or undecodable notifications not reported yet.
  absl::Status notification_error_ ABSL_GUARDED_BY(mu_);
  // The receiver stopped for good (socket error): every request fails.
  absl::Status broken_ ABSL_GUARDED_BY(mu_);
  bool interrupted_ ABSL_GUARDED_BY(mu_) = false;
  std::thread receiver_;
};

// A socket subscribed to the events multicast group (needs CAP_NET_ADMIN).
class EventStream {
 public:
  static absl::StatusOr<std::unique_ptr<EventStream>> Open();
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // The next event, or nullopt if none came within @timeout.
  absl::StatusOr<std::optional<Event>> Next(absl::Duration timeout);

 private:
  explicit EventStream(nl_sock* sock);

  nl_sock* sock_;
  std::deque<Event> pending_;
  absl::Status decode_error_;
};

}  // namespace lite::genl

#endif  // LITE_GENL_CLIENT_H_
