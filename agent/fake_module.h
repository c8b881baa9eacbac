// FakeModule: an in-process test double of lite.ko behind the Module
// interface. It keeps the module's state as plain bookkeeping (identity,
// peers, hosted LMRs with made-up addresses, installed grants), records every
// call, and lets tests play the applications' side: inject upcalls and module
// events, and wait for the agent's replies.
//
// It is what `liteagent_fake --module=fake` runs with (host tests, laptops);
// no RDMA and no real memory is involved. The production liteagent does not
// link it.
#ifndef LITE_AGENT_FAKE_MODULE_H_
#define LITE_AGENT_FAKE_MODULE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/module.h"

namespace lite::agent {

struct FakeModuleOptions {
  // This node's name (the agent's --node_name), as lite.ko would know it;
  // a peer may not have it. Empty: unnamed.
  std::string node_name;
  // How much LMR memory AllocateLmrMemory may hand out in total.
  uint64_t memory_bytes = uint64_t{1} << 30;
  // Allocations are split into chunks of at most this size, so multi-chunk
  // LMRs are exercised.
  uint64_t max_chunk_bytes = uint64_t{64} << 20;
  // The made-up global memory key reported for every LMR.
  uint32_t memory_key = 0x117e;
  // The made-up read-only key reported for every LMR (0: none, as lite.ko
  // with key_mode=global).
  uint32_t read_key = 0x117f;
  // TEST ONLY: after every change of identity or peers, the module rewrites
  // this file (atomically) with what it holds — "self ID INCARNATION", then
  // "peer ID INCARNATION SHA256" per peer, where SHA256 is the hex SHA-256 of
  // the peer's pair secret ("-" without one) — so that a host test can check
  // that both ends of a pair hold the same secret without any secret leaving
  // the process. Empty: no file.
  std::string peers_file;
  // TEST ONLY: peers whose kernel is "gone" for ProbePeer, read at every
  // probe so that a test can change it while the agent runs: node ids or
  // node names separated by white space or commas, '#' to the end of a line
  // a comment. A probe of a peer listed answers UNAVAILABLE, as lite.ko's
  // EHOSTDOWN. No file (or empty): every known peer acknowledges. Empty
  // path: only SetPeerUnreachable counts.
  std::string unreachable_file;
  // TEST ONLY: AllocateLmrMemory takes this long before it answers, as
  // lite.ko does zeroing and mapping a large LMR (seconds for gigabytes).
  absl::Duration allocate_delay = absl::ZeroDuration();
};

class FakeModule final : public Module {
 public:
  explicit FakeModule(FakeModuleOptions options = {});

  // ---- Module ----
  std::string Name() const override { return "fake"; }
  absl::StatusOr<std::optional<lite::v1::NodeIdentity>> GetIdentity() override;
  absl::Status SetIdentity(const lite::v1::NodeIdentity& identity) override;
  absl::Status AddPeer(const Peer& peer) override;
  absl::Status RemovePeer(uint32_t node_id, uint64_t incarnation) override;
  absl::StatusOr<std::vector<Peer>> ListPeers() override;
  // fake_module_probe.cc: OK with the peer's incarnation and a made-up round
  // trip for a peer added with AddPeer; NOT_FOUND for any other node;
  // FAILED_PRECONDITION another incarnation; UNAVAILABLE for a peer made
  // unreachable (SetPeerUnreachable, unreachable_file). Waits while probes
  // are held (HoldProbes).
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
  // fake_module_rpc.cc: lite.ko's RPC_BIND and RPC_SERVICE_GET.
  absl::StatusOr<lite::v1::BoundServiceRing> BindServiceRing(
      const lite::v1::BindServiceRing& request) override;
  absl::StatusOr<std::vector<ServedService>> ListServices() override;
  absl::StatusOr<ModuleMessage> Receive() override;
  absl::Status CompleteUpcall(const UpcallReply& reply) override;
  void Close() override;
  absl::StatusOr<std::vector<lite::v1::Counter>> GetCounters() override;

  // ---- The applications' side, for tests ----
  using UpcallRequest = decltype(Upcall::request);
  // Queues an upcall as an application's ioctl would and returns its id. A
  // RegisterUpcall without chunks gets made-up pinned chunks covering
  // size_bytes. An UnmapUpcall drops the grant at once, as lite.ko does when
  // the handle goes away. An RpcRegisterUpcall with port 0 gets the lowest
  // free port; the service is served once the answer names its id. An
  // RpcUnregisterUpcall drops the service at once and is never pending
  // (nobody waits for its answer).
  uint64_t InjectUpcall(const lite::v1::Credentials& credentials,
                        UpcallRequest request);
  void InjectPeerConnectionFailed(const PeerConnectionFailed& event);
  void InjectLmrLost(const LmrLost& event);
  // The next `times` RevokeGrant calls for the grant answer
  // DEADLINE_EXCEEDED (lite.ko's ETIMEDOUT: operations still in flight);
  // the grant stays, revoked (ListRevokedGrants), until a later call.
  void SetRevokeTimeouts(uint64_t grant_id, int times);
  // The answer to upcall `id` fails with `status` and the upcall is gone,
  // as lite.ko answers when its caller left after the answer was claimed
  // (CancelledError: ECANCELED) or before (NotFoundError: ENOENT).
  void FailCompletion(uint64_t id, absl::Status status);
  // The agent's reply to an injected upcall, once it came; DEADLINE_EXCEEDED
  // if it did not within `timeout`.
  absl::StatusOr<UpcallReply> WaitForReply(uint64_t upcall_id,
                                           absl::Duration timeout);
  // A service lite.ko serves without a register upcall of this agent (an
  // agent restart): for restore tests. Replaces one with the same port.
  void AddServedService(const ServedService& served);
  // lite.ko's counters of a served service; false if it is not served.
  bool SetServiceStats(uint64_t service_id, uint32_t clients, uint64_t queued,
                       uint64_t served);
  // The ring an RPC_BIND answer installed for a service on this (client)
  // node; nullopt if none did.
  std::optional<lite::v1::BoundServiceRing> BoundRing(
      uint64_t service_id) const;
  // Client nodes holding a ring of the served service (BindServiceRing).
  std::vector<uint32_t> RingClients(uint64_t service_id) const;
  // The pair secret the peer was added with (empty: none); nullopt for an
  // unknown peer. lite.ko never tells; tests may ask the fake.
  std::optional<std::string> PeerSecret(uint32_t node_id) const;
  // Probes of the peer answer UNAVAILABLE (lite.ko's EHOSTDOWN: its kernel
  // is gone) while `unreachable`.
  void SetPeerUnreachable(uint32_t node_id, bool unreachable);
  // While held, ProbePeer waits (as a probe of a dead node waits for lite.ko's
  // bound) until ReleaseProbes or Close; then it answers as usual.
  void HoldProbes();
  void ReleaseProbes();
  // Waits until at least `count` ProbePeer calls wait, held; false if that
  // did not happen within `timeout`.
  bool AwaitHeldProbes(int count, absl::Duration timeout);
  // Every state-changing call made on the module, oldest first, one line
  // each (e.g. "AddPeer 2 1 10.0.0.2:7471"; never a secret), and every
  // probe ("ProbePeer 2 1"); the last 10000 are kept.
  std::vector<std::string> Calls() const;
  // Waits until at least `count` Receive() calls are blocked waiting (the
  // inbox was empty and the module open); false if that did not happen
  // within `timeout`. Lets a test prove a receiver is asleep before it acts.
  bool AwaitBlockedReceivers(int count, absl::Duration timeout);

 private:
  void RecordCall(std::string call) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // fake_module_probe.cc: whether options_.unreachable_file lists the peer.
  bool ListedUnreachable(const Peer& peer) const;
  // Rewrites options_.peers_file, if set.
  void WritePeersFileLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Made-up chunks covering size_bytes at fresh addresses.
  std::vector<lite::v1::LmrChunk> MakeChunks(uint64_t size_bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckReply(const Upcall& upcall, const UpcallReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // fake_module_rpc.cc: an RPC upcall as lite.ko takes it in (false: it is
  // never pending), its answer checked and applied.
  bool InjectRpcLocked(uint64_t upcall_id,
                       const lite::v1::Credentials& credentials,
                       UpcallRequest* request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckRpcReply(const Upcall& upcall, const UpcallReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyRpcReply(const Upcall& upcall, const UpcallReply& reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // A service lite.ko serves: registered (service.service_id() != 0) or
  // waiting for its register answer (id 0, keyed by upcall id).
  struct FakeService {
    ServedService served;
    // Client node -> its ring.
    std::map<uint32_t, lite::v1::BoundServiceRing> rings;
  };

  const FakeModuleOptions options_;
  mutable absl::Mutex mu_;
  std::optional<lite::v1::NodeIdentity> identity_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, Peer> peers_ ABSL_GUARDED_BY(mu_);
  // Same peer, new secret (lite.ko keeps the connections).
  uint64_t peer_secrets_replaced_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, lite::v1::Lmr> hosted_ ABSL_GUARDED_BY(mu_);
  uint64_t allocated_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_address_ ABSL_GUARDED_BY(mu_) = 0x7f0000000000;
  std::map<uint64_t, lite::v1::Grant> grants_ ABSL_GUARDED_BY(mu_);
  // Revoked, still draining (SetRevokeTimeouts).
  std::map<uint64_t, lite::v1::Grant> revoked_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, int> revoke_timeouts_ ABSL_GUARDED_BY(mu_);
  uint64_t lmrs_quarantined_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<ModuleMessage> inbox_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // Receive() calls waiting for a message or Close().
  int blocked_receivers_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_upcall_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Upcall> pending_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Status> failed_completions_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, UpcallReply> replies_ ABSL_GUARDED_BY(mu_);
  uint64_t upcalls_completed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t upcalls_failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::string> calls_ ABSL_GUARDED_BY(mu_);
  // By port.
  std::map<uint32_t, FakeService> services_ ABSL_GUARDED_BY(mu_);
  // Register upcalls waiting for their answer: upcall id -> port.
  std::map<uint64_t, uint32_t> registering_ ABSL_GUARDED_BY(mu_);
  // This node as a client: service id -> ring.
  std::map<uint64_t, lite::v1::BoundServiceRing> bound_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ring_address_ ABSL_GUARDED_BY(mu_) = 0x7e0000000000;
  // Probes (fake_module_probe.cc).
  std::set<uint32_t> unreachable_ ABSL_GUARDED_BY(mu_);
  bool probes_held_ ABSL_GUARDED_BY(mu_) = false;
  int held_probes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_FAKE_MODULE_H_
