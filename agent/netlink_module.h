// NetlinkModule: the agent's Module on the real lite.ko, over its generic
// netlink family (kmod/include/uapi/lite.h) through lite_genl.
//
// One socket, attached as the node's agent (LITE_CMD_AGENT_ATTACH): while it
// is attached only it may change lite.ko's state, upcalls arrive on it, and
// it is subscribed to the events group. lite_genl's receiver thread hands
// replies to the waiting request and queues upcalls and events for
// Receive(). Every request is bounded by Options::request_timeout.
//
// Addresses: a Member's rdma_address is "IPv4:port" where port must be
// lite.ko's cm_port module parameter (lite.ko listens and connects on that
// one port on every node; NODE_SET and PEER_ADD carry only the IPv4
// address). Open() checks this node's address against NODE_GET's cm_port,
// AddPeer() each peer's: a mismatch is INVALID_ARGUMENT.
//
// Errors: the kernel's errno becomes a status code (ErrnoToModuleCode), the
// extended-ack message stays in the status message.
#ifndef LITE_AGENT_NETLINK_MODULE_H_
#define LITE_AGENT_NETLINK_MODULE_H_

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/module.h"
#include "genl/client.h"

namespace lite::agent {

struct NetlinkModuleOptions {
  // Where this node's lite.ko accepts rdma_cm connections, "IPv4:cm_port"
  // (the agent's --rdma_address).
  std::string rdma_address;
  // This node's name in the cluster (the agent's --node_name), sent with
  // its identity; empty: lite.ko leaves the node unnamed.
  std::string node_name;
  // Bound of every netlink request.
  absl::Duration request_timeout = absl::Seconds(10);
  // lite.ko's debugfs counters (one file per counter), read by
  // GetCounters() when present; empty to skip.
  std::string debugfs_dir = "/sys/kernel/debug/lite";
};

// errno (from lite.ko) -> status code, as the Module interface documents:
// ENOENT NOT_FOUND, EEXIST ALREADY_EXISTS, ENOSPC/ENOMEM/EMFILE/ENOBUFS/
// EUSERS RESOURCE_EXHAUSTED, EINVAL INVALID_ARGUMENT, EBUSY/ENXIO/ENOTCONN/
// ENODEV/ESTALE FAILED_PRECONDITION, EPERM/EACCES PERMISSION_DENIED,
// ETIMEDOUT DEADLINE_EXCEEDED, EHOSTDOWN/EAGAIN UNAVAILABLE, else INTERNAL.
absl::StatusCode ErrnoToModuleCode(int err);
// An upcall's status -> the errno the application gets (0 for OK):
// NOT_FOUND ENOENT, PERMISSION_DENIED EACCES, ALREADY_EXISTS EEXIST,
// INVALID_ARGUMENT EINVAL, RESOURCE_EXHAUSTED ENOSPC, UNAVAILABLE EAGAIN,
// DEADLINE_EXCEEDED ETIMEDOUT, FAILED_PRECONDITION EPERM, CANCELLED EINTR,
// ABORTED ESTALE, ...
int StatusToErrno(const absl::Status& status);

// "10.0.0.2:18600" -> address and port. INVALID_ARGUMENT for anything else
// (lite.ko speaks IPv4 only).
absl::Status ParseRdmaAddress(absl::string_view text, in_addr* addr,
                              uint16_t* port);

// Conversions between lite_genl's and the agent's types, exposed for tests.
absl::StatusOr<Upcall> UpcallFromGenl(const genl::UpcallRequest& request);
absl::StatusOr<genl::UpcallCompletion> CompletionFromReply(
    const UpcallReply& reply);
lite::v1::Lmr LmrFromGenl(const genl::LmrInfo& info, uint32_t home_node_id);
lite::v1::Grant GrantFromGenl(const genl::GrantInfo& info,
                              uint32_t holder_node_id);
PeerConnectionFailed FailureFromGenl(const genl::Event& event);
// LITE_CMD_PEER_PROBE's answer for a probe of `node_id` asked about as
// `incarnation` (netlink_probe.cc): EHOSTDOWN UNAVAILABLE (the peer did not
// acknowledge), ENOENT NOT_FOUND (no such peer), another incarnation than
// `incarnation` FAILED_PRECONDITION, other errnos by ErrnoToModuleCode
// (ETIMEDOUT, lite.ko's own bound or the request's, DEADLINE_EXCEEDED).
absl::StatusOr<lite::v1::ProbedPeer> ProbeAnswer(
    uint32_t node_id, uint64_t incarnation,
    const absl::StatusOr<genl::ProbeResult>& probe);

class NetlinkModule : public Module {
 public:
  // Opens the family, joins the events group and attaches as the node's
  // agent. NOT_FOUND if lite.ko is not loaded; FAILED_PRECONDITION if
  // another agent is attached (the message names its netlink port);
  // INVALID_ARGUMENT if rdma_address does not fit lite.ko's cm_port.
  static absl::StatusOr<std::unique_ptr<NetlinkModule>> Open(
      const NetlinkModuleOptions& options);
  // Detaches (closing the socket would too).
  ~NetlinkModule() override;

  std::string Name() const override { return "netlink"; }

  absl::StatusOr<std::optional<lite::v1::NodeIdentity>> GetIdentity() override;
  absl::Status SetIdentity(const lite::v1::NodeIdentity& identity) override;

  absl::Status AddPeer(const Peer& peer) override;
  absl::Status RemovePeer(uint32_t node_id, uint64_t incarnation) override;
  absl::StatusOr<std::vector<Peer>> ListPeers() override;
  // netlink_probe.cc.
  absl::StatusOr<lite::v1::ProbedPeer> ProbePeer(uint32_t node_id,
                                                 uint64_t incarnation) override;

  absl::StatusOr<lite::v1::AllocatedLmrMemory> AllocateLmrMemory(
      const lite::v1::AllocateLmrMemory& request) override;
  absl::Status FreeLmrMemory(uint64_t lmr_id, bool quarantine) override;
  absl::Status UpdateHostedLmr(uint64_t lmr_id,
                               const lite::v1::Lmr& lmr) override;
  absl::Status MarkLmrReleasing(uint64_t lmr_id) override;
  absl::StatusOr<std::vector<lite::v1::Lmr>> ListHostedLmrs() override;

  absl::Status RevokeGrant(uint64_t grant_id) override;
  absl::StatusOr<std::vector<lite::v1::Grant>> ListGrants() override;
  absl::StatusOr<std::vector<lite::v1::Grant>> ListRevokedGrants() override;

  // netlink_rpc.cc.
  absl::StatusOr<lite::v1::BoundServiceRing> BindServiceRing(
      const lite::v1::BindServiceRing& request) override;
  absl::StatusOr<std::vector<ServedService>> ListServices() override;

  absl::StatusOr<ModuleMessage> Receive() override;
  absl::Status CompleteUpcall(const UpcallReply& reply) override;
  void Close() override;

  absl::StatusOr<std::vector<lite::v1::Counter>> GetCounters() override;

 private:
  NetlinkModule(NetlinkModuleOptions options,
                std::unique_ptr<genl::Client> client, in_addr addr,
                uint16_t cm_port);
  // A Peer's address as lite.ko takes it.
  absl::StatusOr<in_addr> PeerAddress(const Peer& peer) const;
  // The node id lite.ko holds, 0 if none.
  absl::StatusOr<uint32_t> NodeId();
  // GRANT_GET's grants that are (not) revoked.
  absl::StatusOr<std::vector<lite::v1::Grant>> GrantsListed(bool revoked);

  const NetlinkModuleOptions options_;
  const std::unique_ptr<genl::Client> client_;
  const in_addr addr_;
  const uint16_t cm_port_;

  // UNMAP upcalls delivered and not answered yet: nobody waits for them in
  // lite.ko (it keeps no pending entry), so their answer is not sent.
  absl::Mutex unmap_mu_;
  absl::flat_hash_set<uint64_t> unmap_upcalls_ ABSL_GUARDED_BY(unmap_mu_);

  std::atomic<uint64_t> upcalls_received_{0};
  std::atomic<uint64_t> upcalls_completed_{0};
  std::atomic<uint64_t> upcalls_failed_{0};
  std::atomic<uint64_t> upcalls_malformed_{0};
  std::atomic<uint64_t> notifications_lost_{0};
  std::atomic<uint64_t> peer_failed_events_{0};
  std::atomic<uint64_t> lmr_lost_events_{0};
};

}  // namespace lite::agent

#endif  // LITE_AGENT_NETLINK_MODULE_H_
