// The client of lite.ko's generic netlink family ("lite"; kmod/include/
// uapi/lite.h has the contract): requests, dumps, upcalls and events, with
// kernel errors as absl::Status carrying the errno and the kernel's
// extended-ack message (errors.h). Used by `litenl` and by liteagent's
// NetlinkModule. The messages themselves are built and read by the codec
// (codec.h); this file owns the socket.
//
// libnl stays an implementation detail: this header needs no libnl include
// path. A Client is thread-safe: a receiver thread of its own reads the
// socket and hands each reply to the request waiting for it (by sequence
// number), and queues what lite.ko sends unasked (upcalls to the attached
// agent, events if the client joined the events group) for
// NextNotification(). Every wait is bounded by the timeout given to Open().
//
// Includes types.h and errors.h: every caller needs the values and ErrnoOf.
#ifndef LITE_GENL_CLIENT_H_
#define LITE_GENL_CLIENT_H_

#include <netinet/in.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "genl/errors.h"
#include "genl/types.h"

struct nl_sock;
struct nlmsghdr;

namespace lite::genl {

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
  // With a name (not empty), lite.ko knows this node by it too.
  absl::Status SetNode(uint32_t node_id, uint64_t incarnation, in_addr addr,
                       absl::string_view name = {});
  absl::StatusOr<NodeInfo> GetNode();
  // With a name (not empty), lite.ko knows the peer by it too. With a
  // secret (not empty: LITE_PEER_SECRET_LEN bytes), lite.ko authenticates
  // the connections with the peer by it; the same peer again with a secret
  // replaces only the secret.
  absl::Status AddPeer(uint32_t node_id, uint64_t incarnation, in_addr addr,
                       absl::string_view name = {},
                       absl::string_view secret = {});
  // With an incarnation, removes the peer only if it has that one.
  absl::Status RemovePeer(uint32_t node_id,
                          std::optional<uint64_t> incarnation = std::nullopt);
  absl::StatusOr<std::vector<PeerInfo>> ListPeers();
  // Is the peer's kernel alive? A zero-byte RDMA WRITE to it, acknowledged
  // by its RDMA device (LITE_CMD_PEER_PROBE; at most 2 * peer_timeout_ms +
  // 1 s). NotFound no such peer, Unavailable (EHOSTDOWN) it did not
  // acknowledge or has no connected QP.
  absl::StatusOr<ProbeResult> ProbePeer(uint32_t node_id);

  // LMR memory this node hosts.
  absl::StatusOr<LmrMemory> AllocLmr(const LmrAllocRequest& request);
  // @quarantine: LITE_ATTR_QUARANTINE (the fence timed out).
  absl::Status FreeLmr(uint64_t lmr_id, bool quarantine = false);
  // @releasing: LITE_ATTR_RELEASING, the manager freed it (sticky).
  absl::Status UpdateLmr(uint64_t lmr_id, std::optional<uint64_t> new_lmr_id,
                         std::optional<uint64_t> epoch, bool releasing = false);
  absl::StatusOr<std::vector<LmrInfo>> ListLmrs();

  // Grants applications on this node hold.
  absl::Status RevokeGrant(uint64_t grant_id);
  absl::StatusOr<std::vector<GrantInfo>> ListGrants();

  // RPC services this node serves (issue #11). RpcBind reserves a ring of
  // a service for a client node; ListServices dumps the services.
  absl::StatusOr<RpcRing> RpcBind(const RpcBindRequest& request);
  absl::StatusOr<std::vector<ServiceInfo>> ListServices();

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
