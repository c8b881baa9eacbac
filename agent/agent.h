// Agent: liteagent's link to the cluster manager, following the life of an
// agent that proto/lite/v1/manager.proto specifies:
//
//   Join (with the module's identity as `restore`) -> re-register hosted
//   LMRs and restore grants -> Session: heartbeats up, ordered events and
//   node-addressed requests down -> on any end of the session, Join again,
//   with exponential backoff and jitter while the manager is unreachable.
//
// Events are applied to the module (peers, grant revocations, freed LMR
// memory) strictly in sequence order; a gap ends the session (the next Join
// resynchronizes the member list). Upcalls from applications are answered
// by an UpcallDispatcher once the session is open.
#ifndef LITE_AGENT_AGENT_H_
#define LITE_AGENT_AGENT_H_

#include <grpcpp/channel.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/context_registry.h"
#include "agent/counters.h"
#include "agent/event_log.h"
#include "agent/grant_gate.h"
#include "agent/module.h"
#include "agent/peer_prober.h"
#include "agent/peer_table.h"
#include "agent/revoker.h"
#include "agent/service_stats.h"
#include "agent/upcall_dispatcher.h"
#include "agent/upcall_stats.h"
#include "lite/v1/agent.pb.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::agent {

struct AgentOptions {
  std::string node_name;
  std::string rdma_address;
  // As configured, for GetStatus.
  std::string manager_address;
  // Deadline of each unary call to the manager.
  absl::Duration rpc_timeout = absl::Seconds(5);
  // Reconnect backoff: first wait, and the cap.
  absl::Duration backoff_initial = absl::Milliseconds(100);
  absl::Duration backoff_max = absl::Seconds(5);
  // How long Shutdown waits for the manager to end the session after Leave.
  absl::Duration leave_grace = absl::Seconds(2);
  UpcallDispatcherOptions upcalls;
  RevokerOptions revoker;
  // The manager's probe_peer requests (peer_prober.h).
  PeerProberOptions prober;
  // Optional; not owned.
  EventLog* event_log = nullptr;
};

class Agent final : public CallerSource {
 public:
  // `module` must outlive the agent.
  Agent(AgentOptions options, Module* module,
        std::unique_ptr<lite::v1::ClusterManager::StubInterface> stub);
  ~Agent() override;

  // Starts the connection thread and the upcall dispatcher.
  void Start();
  // Leaves the cluster if joined, ends the session, stops every thread and
  // closes the module. Bounded by rpc_timeout + leave_grace. Idempotent.
  void Shutdown();

  // For NodeAgent.
  lite::v1::GetStatusResponse Status() const;
  std::vector<lite::v1::Member> Peers() const { return peers_.List(); }
  // The agent's counters followed by the module's, sorted by name.
  std::vector<lite::v1::Counter> CounterSnapshot() const;
  // For the metrics endpoint, which reads the module's counters itself
  // (with a bound on the wait): the agent's own, sorted by name, and how
  // upcalls were answered.
  std::vector<lite::v1::Counter> AgentCounters() const {
    return counters_.Snapshot();
  }
  UpcallStats::Summary UpcallSummary() const { return upcall_stats_.summary(); }

  // CallerSource.
  std::optional<lite::v1::NodeCaller> WaitForCaller(
      absl::Time deadline) override;
  // Queues a PeerFailureReport on the open session, if the failure is one
  // the manager should hear (peer_reports.h); sent at once, not with the
  // next heartbeat. Lock order: mu_, then the session's mu.
  void ReportPeerFailure(const PeerConnectionFailed& failed) override;
  // Queues an LmrLost on the open session, or keeps it for the next one
  // (the LMR keeps its id across incarnations of this node).
  void ReportLmrLost(const LmrLost& lost) override;
  void GrantGivenBack(uint64_t grant_id) override;

 private:
  // How a session ended, which decides what the connection loop does next.
  enum class SessionEnd {
    // The manager went away or the stream broke: back off, then Join.
    kBroken,
    // This incarnation is over (own MemberFailed/MemberLeft, stale
    // incarnation): Join again.
    kIncarnationOver,
    // Shutdown.
    kShutdown,
  };
  struct Session;

  void Run();
  absl::StatusOr<lite::v1::JoinResponse> Join();
  // Programs the module with the Join's outcome: identity, peers, grants.
  absl::Status Adopt(const lite::v1::JoinResponse& join);
  // Re-registers hosted LMRs and restores (or drops) held grants.
  absl::Status Restore(const lite::v1::JoinResponse& join);
  absl::Status ReRegister(const lite::v1::NodeCaller& caller,
                          const lite::v1::Lmr& lmr);
  // One RestoreGrant call to the manager (a grant lite.ko holds, or, with
  // `revoking`, one it still drains after a revocation).
  absl::Status RestoreGrant(const lite::v1::NodeCaller& caller,
                            const lite::v1::Grant& grant, bool revoking,
                            lite::v1::RestoreGrantResponse* resp);
  absl::Status RestoreGrants(const lite::v1::NodeCaller& caller,
                             bool manager_recovering);
  // agent_rpc.cc: re-registers the RPC services lite.ko still serves, under
  // the ids lite.ko has (RegisterService restore_service_id).
  absl::Status RestoreServices(const lite::v1::NodeCaller& caller);
  // agent_rpc.cc: NodeRequest.bind_service_ring, checked, to lite.ko.
  absl::StatusOr<lite::v1::BoundServiceRing> BindServiceRing(
      uint32_t self, const lite::v1::BindServiceRing& bind);
  SessionEnd RunSession(const lite::v1::JoinResponse& join,
                        bool* heartbeat_acked);
  void HeartbeatLoop(Session* session);
  // Applies one event, with the pair secrets that came in its message;
  // returns false when the session must end (gap, or this incarnation is
  // over, which *over is set for).
  bool ApplyEvent(const lite::v1::Event& event, const PeerSecrets& secrets,
                  bool* over);
  // The well-formed pair secrets of a Join answer or a session message;
  // counts and reports (without them) the others.
  PeerSecrets Secrets(
      const google::protobuf::RepeatedPtrField<lite::v1::PeerSecret>& in);
  void HandleRequest(Session* session, const lite::v1::NodeRequest& request);
  // NodeRequest.probe_peer, checked and handed to the
  // prober; OK when the prober answers it later.
  absl::Status StartProbe(Session* session,
                          const lite::v1::NodeRequest& request);
  // The prober's answer to request `request_id` of the session numbered
  // `session_serial`: queued on that session if it is still the open one,
  // dropped otherwise (the manager abandons requests of an ended session).
  void ProbeAnswered(uint64_t session_serial, uint64_t request_id,
                     uint32_t node_id, uint64_t incarnation,
                     const absl::StatusOr<lite::v1::ProbedPeer>& answer);
  // ReleaseLmrMemory: the fenced free's last step, on this home.
  absl::Status ReleaseLmrMemory(uint32_t self,
                                const lite::v1::ReleaseLmrMemory& release);
  // The revoker's ack sink: a GrantRevokeAck for the session, if the grant
  // was revoked from this incarnation (an ended one's acks are implied).
  void QueueAck(uint64_t grant_id, uint64_t holder_incarnation);
  // Queues `msg` on the open session for the heartbeat thread to send, or
  // keeps it (bounded) for the next session.
  void SendOrKeepLocked(lite::v1::AgentMessage msg)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LeaveIfJoined();

  void SetState(lite::v1::ManagerConnectionState state);
  void NoteError(absl::string_view what, const absl::Status& status);
  // Waits for d; false if shutdown began meanwhile.
  bool SleepUnlessShutdown(absl::Duration d);
  bool ShuttingDown() const;
  lite::v1::NodeCaller Caller() const;
  void ModuleError(absl::string_view what, const absl::Status& status);

  const AgentOptions options_;
  Module* const module_;
  const std::unique_ptr<lite::v1::ClusterManager::StubInterface> stub_;
  const absl::Time started_at_;
  mutable Counters counters_;
  PeerTable peers_;
  GrantGate grants_;
  ContextRegistry contexts_;
  UpcallStats upcall_stats_;
  UpcallDispatcher upcalls_;
  Revoker revoker_;
  ServiceStatsCache service_stats_;

  mutable absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool run_done_ ABSL_GUARDED_BY(mu_) = false;
  lite::v1::ManagerConnectionState state_ ABSL_GUARDED_BY(mu_) =
      lite::v1::MANAGER_CONNECTION_STATE_JOINING;
  uint32_t node_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t incarnation_ ABSL_GUARDED_BY(mu_) = 0;
  // The manager's identity token for node_id_ and incarnation_
  // (JoinResponse.identity_token), sent with them as Join's restore: a
  // restarted manager adopts the identity only with it. In memory only: an
  // agent restart loses it, and if the manager restarted too, the node
  // joins as new (docs/controlplane.md "Identity").
  std::string identity_token_ ABSL_GUARDED_BY(mu_);
  // Joined and not known to be over: Leave makes sense.
  bool incarnation_live_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t applied_event_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time session_opened_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The open session (RunSession's), for ReportPeerFailure; null if none.
  Session* session_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Numbers sessions (Session::serial): a late probe answer finds out
  // whether its session is still the open one (a new Session may sit at the
  // same address).
  uint64_t session_serial_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  // Hosted LMRs this node saw LmrRemoved with release_follows for and has
  // not released yet: re-registered as releasing after a manager restart.
  // In memory only: an agent restart makes a new incarnation, whose
  // re-registration of them is a new, live one (docs/agent.md).
  absl::flat_hash_set<uint64_t> releasing_lmrs_ ABSL_GUARDED_BY(mu_);
  // Acks and LmrLost reports made while no session was open.
  std::vector<lite::v1::AgentMessage> unsent_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);

  // Last: its workers call back into the agent (ProbeAnswered) until
  // Shutdown stops it.
  PeerProber prober_;
  std::thread runner_;
  bool started_ = false;
  bool shut_down_ = false;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_AGENT_H_
