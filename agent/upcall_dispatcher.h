// Answers the module's upcalls: applications asking (through /dev/lite and
// lite.ko) to allocate, register, map, unmap or free LMRs, and to register,
// open, bind and unregister RPC services (rpc_upcalls.cc; unregistrations
// go to a ServiceUnregisterer, since nobody waits for them). One thread
// receives from the module; a small pool of workers turns each upcall into a
// ClusterManager call on the node's behalf and hands the answer back to the
// module. Upcalls wait (bounded by --upcall_timeout) while the agent is not
// connected, so that new grants simply wait while the manager is away.
#ifndef LITE_AGENT_UPCALL_DISPATCHER_H_
#define LITE_AGENT_UPCALL_DISPATCHER_H_

#include <deque>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/context_registry.h"
#include "agent/counters.h"
#include "agent/grant_gate.h"
#include "agent/module.h"
#include "agent/service_unregisterer.h"
#include "agent/upcall_stats.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::agent {

// What the dispatcher needs from the agent's connection.
class CallerSource {
 public:
  virtual ~CallerSource() = default;
  // The node's identity once the agent is connected (session open); waits
  // until then, until `deadline`, or until shutdown (then nullopt).
  virtual std::optional<lite::v1::NodeCaller> WaitForCaller(
      absl::Time deadline) = 0;
  // lite.ko found a peer's connection failed: tell the manager if it is
  // the data path's verdict that the peer is down (peer_reports.h).
  virtual void ReportPeerFailure(const PeerConnectionFailed& failed) = 0;
  // lite.ko lost a hosted LMR's device: tell the manager (LmrLost).
  virtual void ReportLmrLost(const LmrLost& lost) = 0;
  // lite.ko gave a grant back (its UNMAP upcall): a revocation waiting for
  // it to drain is complete.
  virtual void GrantGivenBack(uint64_t grant_id) = 0;
};

struct UpcallDispatcherOptions {
  int workers = 4;
  // From the moment the agent receives an upcall until it answers it.
  absl::Duration upcall_timeout = absl::Seconds(10);
  ServiceUnregistererOptions unregister;
};

class UpcallDispatcher {
 public:
  UpcallDispatcher(UpcallDispatcherOptions options, Module* module,
                   lite::v1::ClusterManager::StubInterface* stub,
                   CallerSource* callers, GrantGate* grants, Counters* counters,
                   UpcallStats* stats);
  ~UpcallDispatcher();

  void Start();
  // Unregistrations not delivered yet (tests, status).
  size_t UnregistersPending() const { return unregisterer_.Pending(); }
  // Requires module->Close() first (it ends the receive thread). Cancels
  // calls in flight, answers queued upcalls with UNAVAILABLE, joins threads.
  void Stop();

 private:
  struct Queued {
    Upcall upcall;
    absl::Time deadline;
    absl::Time received;
  };

  void ReceiveLoop();
  void WorkerLoop();
  void Handle(const Queued& item);
  // Runs the manager call for one upcall; fills reply.lmr / reply.grant.
  absl::Status Call(const lite::v1::NodeCaller& caller, const Upcall& upcall,
                    absl::Time deadline, UpcallReply* reply);
  // rpc_upcalls.cc: the manager call of an RPC upcall (register, open,
  // bind); fills reply.service_id / service / ring and error_errno.
  absl::Status CallRpc(const lite::v1::NodeCaller& caller, const Upcall& upcall,
                       grpc::ClientContext* ctx, UpcallReply* reply);
  // Records the answer's code and time in stats_ (as the application
  // gets it, before lite.ko is told).
  void Answered(const Queued& item, absl::StatusCode code);
  // Answers lite.ko; returns what it said (NOT_FOUND or CANCELLED: the
  // caller is gone).
  absl::Status Complete(const Upcall& upcall, UpcallReply reply);
  // FreeLmr for an LMR whose ALLOC answer found its caller gone: the
  // application was told the allocation failed, so it must not stay.
  void FreeUnclaimed(const lite::v1::NodeCaller& caller, const Upcall& upcall,
                     const lite::v1::Lmr& lmr, absl::Time deadline);
  // UnmapLmr for a grant the module did not take.
  void ReleaseGrant(const lite::v1::NodeCaller& caller, uint64_t grant_id,
                    absl::Time deadline);

  const UpcallDispatcherOptions options_;
  Module* const module_;
  lite::v1::ClusterManager::StubInterface* const stub_;
  CallerSource* const callers_;
  GrantGate* const grants_;
  Counters* const counters_;
  UpcallStats* const stats_;
  ContextRegistry contexts_;
  ServiceUnregisterer unregisterer_;

  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread receiver_;
  std::vector<std::thread> workers_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_UPCALL_DISPATCHER_H_
