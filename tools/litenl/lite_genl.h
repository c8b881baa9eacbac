// lite_genl: a small C++ client for lite.ko's generic-netlink family
// (kmod/include/uapi/lite.h has the contract). It encodes requests, decodes
// replies and events, and turns kernel errors into absl::Status carrying the
// errno and the kernel's extended-ack message. Used by `litenl`; meant for
// liteagent's module channel too.
//
// libnl stays an implementation detail: this header needs no libnl include
// path. A Client is not thread-safe: one request at a time (wrap it in a
// mutex to share it). Every wait is bounded by the timeout given to Open().
#ifndef LITE_TOOLS_LITENL_LITE_GENL_H_
#define LITE_TOOLS_LITENL_LITE_GENL_H_

#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

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

// Decoders, exposed for tests: a whole netlink message of the family.
absl::StatusOr<PeerInfo> DecodePeer(const nlmsghdr* msg);
absl::StatusOr<NodeInfo> DecodeNode(const nlmsghdr* msg);
absl::StatusOr<Event> DecodeEvent(const nlmsghdr* msg);
// The error of an NLMSG_ERROR message: errno and extended-ack message.
absl::Status DecodeError(const nlmsghdr* msg);

// A socket for requests (commands and dumps).
class Client {
 public:
  // Resolves the family. NotFound (errno ENOENT) if lite.ko is not loaded.
  static absl::StatusOr<std::unique_ptr<Client>> Open(
      absl::Duration timeout = absl::Seconds(10));
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

  // Appended to every later request (see RawAttr).
  void set_extra_attrs(std::vector<RawAttr> attrs) {
    extra_attrs_ = std::move(attrs);
  }

 private:
  struct Request;
  Client(nl_sock* sock, int family);
  absl::Status Transact(Request& request);

  nl_sock* sock_;
  int family_;
  std::vector<RawAttr> extra_attrs_;
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

#endif  // LITE_TOOLS_LITENL_LITE_GENL_H_
