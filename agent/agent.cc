// Agent: construction, the connection loop (Run: Join, Adopt, Restore, then
// a Session, again and again), shutdown, and what NodeAgent reports. Joining
// and restoring are in agent_restore.cc, the session in agent_session.cc.
#include "agent/agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/backoff.h"
#include "common/grpc/status.h"
#include "common/log/log.h"

namespace lite::agent {

Agent::Agent(AgentOptions options, Module* module,
             std::unique_ptr<lite::v1::ClusterManager::StubInterface> stub)
    : options_(std::move(options)),
      module_(module),
      stub_(std::move(stub)),
      started_at_(absl::Now()),
      counters_({
          {"agent.joins", "successful Joins"},
          {"agent.joins_restored",
           "Joins where a restarted manager adopted this node's identity"},
          {"agent.peer_downgrades_refused",
           "MemberJoined events refused: an older incarnation of a known peer"},
          {"agent.join_failures", "Joins that failed"},
          {"agent.sessions_opened", "Session streams opened"},
          {"agent.sessions_ended", "Session streams that ended"},
          {"agent.heartbeats_sent", "heartbeats sent"},
          {"agent.heartbeat_acks", "heartbeat acks received"},
          {"agent.heartbeats_late",
           "heartbeats sent more than an interval late (the agent was stopped "
           "or starved); the time is not counted as the manager's silence"},
          {"agent.events_applied", "events applied, all kinds"},
          {"agent.events.member_joined", "MemberJoined events applied"},
          {"agent.events.member_left", "MemberLeft events applied"},
          {"agent.events.member_failed", "MemberFailed events applied"},
          {"agent.events.member_drain_changed",
           "MemberDrainChanged events applied"},
          {"agent.events.lmr_added", "LmrAdded events applied"},
          {"agent.events.lmr_removed", "LmrRemoved events applied"},
          {"agent.events.grant_revoked", "GrantRevoked events applied"},
          {"agent.events.recovery_complete", "RecoveryComplete events applied"},
          {"agent.events.member_suspected",
           "MemberSuspected events (logged; peers are kept as they are)"},
          {"agent.events.member_recovered",
           "MemberRecovered events (logged; peers are kept as they are)"},
          {"agent.events.service_added",
           "ServiceAdded events (seen; nothing for the agent to do)"},
          {"agent.events.service_removed",
           "ServiceRemoved events (seen; nothing for the agent to do)"},
          {"agent.events.unknown", "events of a kind this agent does not know"},
          {"agent.event_gaps",
           "sessions ended because an event sequence number was skipped"},
          {"agent.requests.allocate_lmr_memory",
           "AllocateLmrMemory requests answered"},
          {"agent.requests.unknown",
           "requests of a kind this agent does not know (UNIMPLEMENTED)"},
          {"agent.requests_failed", "requests answered with an error"},
          {"agent.requests_dropped",
           "requests not run: their session ended first"},
          {"agent.lmrs_reregistered",
           "hosted LMRs registered again after a Join"},
          {"agent.lmrs_dropped",
           "hosted LMRs freed because the manager refused them for good"},
          {"agent.grants_restored", "grants restored after a manager restart"},
          {"agent.grants_revoked", "grants revoked in the module"},
          {"agent.upcalls.alloc", "alloc upcalls received"},
          {"agent.upcalls.register", "register upcalls received"},
          {"agent.upcalls.map", "map upcalls received"},
          {"agent.upcalls.unmap", "unmap upcalls received"},
          {"agent.upcalls.free", "free upcalls received"},
          {"agent.upcalls.rpc_register",
           "RPC service register upcalls received"},
          {"agent.upcalls.rpc_unregister",
           "RPC service unregister upcalls received"},
          {"agent.upcalls.rpc_open", "RPC service open upcalls received"},
          {"agent.upcalls.rpc_bind", "RPC ring bind upcalls received"},
          {"agent.upcalls_failed", "upcalls answered with an error"},
          {"agent.module_errors", "module calls that failed"},
          {"agent.module_events.peer_connection_failed",
           "peer connection failures lite.ko reported"},
          {"agent.peer_failures_reported",
           "data-path peer failures (EHOSTDOWN) reported to the manager"},
          {"agent.peer_failures_unreported",
           "data-path peer failures not reported: no session open, or too "
           "many queued"},
          {"agent.leaves", "Leave calls made"},
          {"agent.grant_revokes_timed_out",
           "GRANT_REVOKE answers ETIMEDOUT (operations still in flight); "
           "asked again"},
          {"agent.grant_revoke_acks",
           "revocations acknowledged to the manager (drained)"},
          {"agent.grant_revoke_acks_dropped",
           "acknowledgements of an ended incarnation's grants, not sent "
           "(implied by its end)"},
          {"agent.grants_given_back",
           "revocations completed by lite.ko's UNMAP upcall"},
          {"agent.lmrs_releasing",
           "LmrRemoved with release_follows for an LMR hosted here"},
          {"agent.lmr_releasing_marks_failed",
           "releasing LMRs lite.ko could not be told about (a restarted "
           "agent would register them as live)"},
          {"agent.lmrs_reregistered_releasing",
           "LMRs lite.ko listed as releasing, registered again as releasing "
           "after a (re)join"},
          {"agent.requests.release_lmr_memory",
           "ReleaseLmrMemory requests answered"},
          {"agent.lmrs_released", "LMR memory freed on the manager's request"},
          {"agent.lmrs_quarantined",
           "LMR memory quarantined (never reused) on the manager's request"},
          {"agent.module_events.lmr_lost",
           "LMRs lite.ko lost with their RDMA device"},
          {"agent.lmrs_lost_reported", "LmrLost reports sent to the manager"},
          {"agent.requests.bind_service_ring",
           "BindServiceRing requests answered (rings of services this node "
           "serves)"},
          {"agent.services_reregistered",
           "RPC services lite.ko still served, registered again after a "
           "(re)join"},
          {"agent.services_not_restored",
           "RPC services the manager refused to register again (lite.ko "
           "keeps serving them; not listed)"},
          {"agent.services_unregistered",
           "RPC services whose end the manager heard of"},
          {"agent.services_unregister_refused",
           "RPC service unregistrations the manager refused for good"},
          {"agent.services_unregister_abandoned",
           "RPC service unregistrations given up after retrying"},
          {"agent.services_unclaimed",
           "RPC services registered for a process gone before the answer "
           "(unregistered again)"},
          {"agent.requests.probe_peer",
           "ProbePeer requests received (is a suspect node's kernel alive?)"},
          {"agent.peer_probes.acknowledged",
           "peer probes the node's kernel acknowledged"},
          {"agent.peer_probes.unreachable",
           "peer probes the node did not acknowledge (UNAVAILABLE)"},
          {"agent.peer_probes.other",
           "peer probes answered otherwise (no such peer, another "
           "incarnation, invalid, lite.ko's error)"},
          {"agent.peer_probes.refused",
           "peer probes refused RESOURCE_EXHAUSTED: too many running at once"},
          {"agent.peer_probes.dropped",
           "peer probe answers not sent: their session ended first"},
          {"agent.messages_unsent",
           "acks and reports dropped: too many queued while no session was "
           "open"},
      }),
      peers_(module),
      grants_(module),
      upcalls_(options_.upcalls, module, stub_.get(), this, &grants_,
               &counters_, &upcall_stats_),
      revoker_(options_.revoker, module, &grants_, &counters_,
               [this](uint64_t grant_id, uint64_t incarnation) {
                 QueueAck(grant_id, incarnation);
               }),
      service_stats_(module, &counters_),
      prober_(options_.prober, module) {}

Agent::~Agent() { Shutdown(); }

void Agent::Start() {
  started_ = true;
  revoker_.Start();
  service_stats_.Start();
  prober_.Start();
  upcalls_.Start();
  runner_ = std::thread([this] { Run(); });
}

void Agent::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
  }
  if (started_) {
    // The manager ends the session (with OK) once it has announced the
    // Leave; give it a moment, then cancel whatever is still running.
    LeaveIfJoined();
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&run_done_), options_.leave_grace);
    }
    contexts_.CancelAll();
    runner_.join();
    revoker_.Stop();
    service_stats_.Stop();
  }
  module_->Close();
  // After Close: the fake's held probes wait for it. No session is open
  // now, so late answers are dropped.
  prober_.Stop();
  if (started_) upcalls_.Stop();
  SetState(lite::v1::MANAGER_CONNECTION_STATE_LEFT);
}

void Agent::Run() {
  Backoff backoff(options_.backoff_initial, options_.backoff_max);
  while (!ShuttingDown()) {
    SetState(lite::v1::MANAGER_CONNECTION_STATE_JOINING);
    absl::StatusOr<lite::v1::JoinResponse> join = Join();
    if (join.ok()) {
      absl::Status s = Adopt(*join);
      if (s.ok() && !ShuttingDown()) s = Restore(*join);
      if (!s.ok()) {
        NoteError("after Join", s);
      } else if (!ShuttingDown()) {
        bool acked = false;
        SessionEnd end = RunSession(*join, &acked);
        // A session that worked resets the backoff: the next Join is quick.
        if (acked) backoff.Reset();
        if (end == SessionEnd::kShutdown) break;
      }
    } else {
      counters_.Add("agent.join_failures");
      NoteError("Join", join.status());
    }
    if (ShuttingDown()) break;
    {
      absl::MutexLock lock(&mu_);
      ++reconnects_;
    }
    SetState(lite::v1::MANAGER_CONNECTION_STATE_BACKOFF);
    const absl::Duration wait = backoff.Next();
    LITE_LOG_INFO("joining again in %s", absl::FormatDuration(wait));
    if (!SleepUnlessShutdown(wait)) break;
  }
  LeaveIfJoined();
  absl::MutexLock lock(&mu_);
  run_done_ = true;
}

void Agent::LeaveIfJoined() {
  lite::v1::LeaveRequest req;
  {
    absl::MutexLock lock(&mu_);
    if (!incarnation_live_) return;
    incarnation_live_ = false;
    req.mutable_caller()->set_node_id(node_id_);
    req.mutable_caller()->set_incarnation(incarnation_);
  }
  counters_.Add("agent.leaves");
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::LeaveResponse resp;
  const absl::Status s = FromGrpcStatus(stub_->Leave(&ctx, req, &resp));
  if (s.ok()) {
    LITE_LOG_INFO("left the cluster (node %u incarnation %u)",
                  req.caller().node_id(), req.caller().incarnation());
  } else {
    LITE_LOG_WARNING("Leave failed: %s", s.ToString());
  }
}

std::optional<lite::v1::NodeCaller> Agent::WaitForCaller(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return shutting_down_ ||
           state_ == lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
  };
  mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  if (shutting_down_ ||
      state_ != lite::v1::MANAGER_CONNECTION_STATE_CONNECTED) {
    return std::nullopt;
  }
  lite::v1::NodeCaller caller;
  caller.set_node_id(node_id_);
  caller.set_incarnation(incarnation_);
  return caller;
}

lite::v1::GetStatusResponse Agent::Status() const {
  lite::v1::GetStatusResponse out;
  out.set_node_name(options_.node_name);
  out.set_rdma_address(options_.rdma_address);
  out.set_manager_address(options_.manager_address);
  out.set_started_at_unix_ms(absl::ToUnixMillis(started_at_));
  absl::MutexLock lock(&mu_);
  out.set_node_id(node_id_);
  out.set_incarnation(incarnation_);
  out.set_manager_connection_state(state_);
  if (state_ == lite::v1::MANAGER_CONNECTION_STATE_CONNECTED) {
    out.set_session_uptime_ms(
        absl::ToInt64Milliseconds(absl::Now() - session_opened_at_));
  }
  out.set_applied_event_sequence(applied_event_sequence_);
  out.set_reconnects(reconnects_);
  out.set_last_error(last_error_);
  return out;
}

std::vector<lite::v1::Counter> Agent::CounterSnapshot() const {
  std::vector<lite::v1::Counter> out = counters_.Snapshot();
  absl::StatusOr<std::vector<lite::v1::Counter>> module =
      module_->GetCounters();
  if (module.ok()) {
    out.insert(out.end(), module->begin(), module->end());
  } else {
    counters_.Add("agent.module_errors");
    LITE_LOG_WARNING("reading the module's counters: %s",
                     module.status().ToString());
  }
  std::sort(out.begin(), out.end(),
            [](const lite::v1::Counter& a, const lite::v1::Counter& b) {
              return a.name() < b.name();
            });
  return out;
}

void Agent::SetState(lite::v1::ManagerConnectionState state) {
  absl::MutexLock lock(&mu_);
  // LEFT is final.
  if (state_ == lite::v1::MANAGER_CONNECTION_STATE_LEFT) return;
  state_ = state;
}

void Agent::NoteError(absl::string_view what, const absl::Status& status) {
  const std::string text = absl::StrCat(what, ": ", status.ToString());
  LITE_LOG_WARNING("%s", text);
  absl::MutexLock lock(&mu_);
  last_error_ = text;
}

void Agent::ModuleError(absl::string_view what, const absl::Status& status) {
  counters_.Add("agent.module_errors");
  LITE_LOG_ERROR("module: %s: %s", what, status.ToString());
}

bool Agent::SleepUnlessShutdown(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&shutting_down_), d);
  return !shutting_down_;
}

bool Agent::ShuttingDown() const {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

lite::v1::NodeCaller Agent::Caller() const {
  absl::MutexLock lock(&mu_);
  lite::v1::NodeCaller caller;
  caller.set_node_id(node_id_);
  caller.set_incarnation(incarnation_);
  return caller;
}

}  // namespace lite::agent
