#include "agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/backoff.h"
#include "agent/validation.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "common/names/names.h"
#include "common/status/macros.h"

namespace lite::agent {

// One session's stream and the state its reader and heartbeat threads share.
struct Agent::Session {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriterInterface<lite::v1::AgentMessage,
                                                    lite::v1::ManagerMessage>>
      stream;
  lite::v1::NodeCaller caller;
  absl::Duration heartbeat_interval;
  // No ack for this long ends the session: the manager is hung or the path
  // to it is dead without the connection noticing.
  absl::Duration ack_timeout;

  // gRPC allows one writer at a time; the reader thread writes results and
  // the heartbeat thread writes heartbeats.
  absl::Mutex write_mu;
  uint64_t heartbeat_seq ABSL_GUARDED_BY(write_mu) = 0;

  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Time last_ack ABSL_GUARDED_BY(mu);
  std::string broken_reason ABSL_GUARDED_BY(mu);

  bool Write(const lite::v1::AgentMessage& msg) {
    absl::MutexLock lock(&write_mu);
    return stream->Write(msg);
  }
  bool SendHeartbeat(uint64_t applied_event_sequence) {
    lite::v1::AgentMessage msg;
    lite::v1::Heartbeat* hb = msg.mutable_heartbeat();
    hb->set_node_id(caller.node_id());
    hb->set_incarnation(caller.incarnation());
    hb->set_applied_event_sequence(applied_event_sequence);
    absl::MutexLock lock(&write_mu);
    hb->set_heartbeat_seq(++heartbeat_seq);
    // The agent applies batched events one by one, like single ones.
    if (heartbeat_seq == 1) hb->set_accept_event_batches(true);
    return stream->Write(msg);
  }
};

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
          {"agent.join_failures", "Joins that failed"},
          {"agent.sessions_opened", "Session streams opened"},
          {"agent.sessions_ended", "Session streams that ended"},
          {"agent.heartbeats_sent", "heartbeats sent"},
          {"agent.heartbeat_acks", "heartbeat acks received"},
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
          {"agent.events.unknown", "events of a kind this agent does not know"},
          {"agent.event_gaps",
           "sessions ended because an event sequence number was skipped"},
          {"agent.requests.allocate_lmr_memory",
           "AllocateLmrMemory requests answered"},
          {"agent.requests.unknown",
           "requests of a kind this agent does not know (UNIMPLEMENTED)"},
          {"agent.requests_failed", "requests answered with an error"},
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
          {"agent.upcalls_failed", "upcalls answered with an error"},
          {"agent.module_errors", "module calls that failed"},
          {"agent.module_events.peer_connection_failed",
           "peer connection failures lite.ko reported"},
          {"agent.leaves", "Leave calls made"},
      }),
      peers_(module),
      grants_(module),
      upcalls_(options_.upcalls, module, stub_.get(), this, &grants_,
               &counters_) {}

Agent::~Agent() { Shutdown(); }

void Agent::Start() {
  started_ = true;
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
  }
  module_->Close();
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

absl::StatusOr<lite::v1::JoinResponse> Agent::Join() {
  lite::v1::JoinRequest req;
  req.set_node_name(options_.node_name);
  req.set_rdma_address(options_.rdma_address);
  absl::StatusOr<std::optional<lite::v1::NodeIdentity>> identity =
      module_->GetIdentity();
  if (!identity.ok()) {
    ModuleError("reading the node identity", identity.status());
    return identity.status();
  }
  if (identity->has_value()) *req.mutable_restore() = **identity;

  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::JoinResponse resp;
  grpc::Status status = stub_->Join(&ctx, req, &resp);
  if (!status.ok()) return FromGrpcStatus(status);
  if (resp.node_id() == 0 || resp.incarnation() == 0 ||
      resp.lease_duration_ms() == 0) {
    return absl::InternalError(absl::StrFormat(
        "the manager answered Join with node id %u, incarnation %u, lease %u "
        "ms; all must be nonzero",
        resp.node_id(), resp.incarnation(), resp.lease_duration_ms()));
  }
  counters_.Add("agent.joins");
  if (resp.restored()) counters_.Add("agent.joins_restored");
  LITE_LOG_INFO(
      "joined as node %u incarnation %u%s: %d members, event sequence %u, "
      "lease %u ms, heartbeat every %u ms%s",
      resp.node_id(), resp.incarnation(),
      resp.restored() ? " (identity restored)" : "", resp.members_size(),
      resp.event_sequence(), resp.lease_duration_ms(),
      resp.heartbeat_interval_ms(),
      resp.manager_recovering()
          ? absl::StrFormat(", manager recovering for %u ms",
                            resp.recovery_remaining_ms())
          : "");
  return resp;
}

absl::Status Agent::Adopt(const lite::v1::JoinResponse& join) {
  lite::v1::NodeIdentity identity;
  identity.set_node_id(join.node_id());
  identity.set_incarnation(join.incarnation());
  if (absl::Status s = module_->SetIdentity(identity); !s.ok()) {
    ModuleError("setting the node identity", s);
    return s;
  }
  {
    absl::MutexLock lock(&mu_);
    node_id_ = join.node_id();
    incarnation_ = join.incarnation();
    incarnation_live_ = true;
    applied_event_sequence_ = join.event_sequence();
  }
  // A new incarnation holds no grants: the manager dropped the old ones.
  absl::StatusOr<int> revoked =
      grants_.SetHolder(join.node_id(), join.incarnation());
  if (!revoked.ok()) {
    ModuleError("revoking the previous incarnation's grants", revoked.status());
  } else if (*revoked > 0) {
    counters_.Add("agent.grants_revoked", *revoked);
    LITE_LOG_INFO("revoked %d grants of the previous incarnation", *revoked);
  }
  // While the manager recovers, peers missing from the list may just not
  // have rejoined yet; RecoveryComplete settles it.
  std::vector<lite::v1::Member> members(join.members().begin(),
                                        join.members().end());
  if (absl::Status s =
          peers_.Reconcile(members, join.node_id(), join.manager_recovering());
      !s.ok()) {
    ModuleError("programming peers", s);
  }
  return absl::OkStatus();
}

absl::Status Agent::Restore(const lite::v1::JoinResponse& join) {
  SetState(lite::v1::MANAGER_CONNECTION_STATE_RESTORING);
  const lite::v1::NodeCaller caller = Caller();
  absl::StatusOr<std::vector<lite::v1::Lmr>> hosted = module_->ListHostedLmrs();
  if (!hosted.ok()) {
    ModuleError("listing hosted LMRs", hosted.status());
    return hosted.status();
  }
  for (const lite::v1::Lmr& lmr : *hosted) {
    if (ShuttingDown()) return absl::CancelledError("shutting down");
    LITE_RETURN_IF_ERROR(ReRegister(caller, lmr));
  }
  // Only a restored identity keeps its grants; a new incarnation's were
  // revoked in Adopt.
  if (join.restored()) return RestoreGrants(caller, join.manager_recovering());
  return absl::OkStatus();
}

absl::Status Agent::ReRegister(const lite::v1::NodeCaller& caller,
                               const lite::v1::Lmr& lmr) {
  lite::v1::RegisterLmrRequest req;
  *req.mutable_caller() = caller;
  req.mutable_owner()->set_uid(lmr.owner_uid());
  req.mutable_owner()->set_gid(lmr.owner_gid());
  // The original caller's pid is not part of the record; the agent acts.
  req.mutable_owner()->set_pid(static_cast<uint32_t>(getpid()));
  req.set_name(lmr.name());
  req.set_size_bytes(lmr.size_bytes());
  req.set_mode(lmr.mode());
  *req.mutable_chunks() = lmr.chunks();
  req.set_memory_key(lmr.memory_key());
  // The id keeps its home part only if this node kept its id; otherwise the
  // LMR is registered as new and gets a fresh id.
  const bool keeps_id = (lmr.lmr_id() >> 32) == caller.node_id();
  if (keeps_id) {
    req.set_lmr_id(lmr.lmr_id());
    req.set_origin(lmr.origin() == lite::v1::LMR_ORIGIN_UNSPECIFIED
                       ? lite::v1::LMR_ORIGIN_REGISTERED
                       : lmr.origin());
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::RegisterLmrResponse resp;
  const absl::Status s = FromGrpcStatus(stub_->RegisterLmr(&ctx, req, &resp));
  if (s.ok()) {
    counters_.Add("agent.lmrs_reregistered");
    LITE_LOG_INFO("re-registered LMR '%s' as %#x (epoch %u)", lmr.name(),
                  resp.lmr().lmr_id(), resp.lmr().epoch());
    if (absl::Status u = module_->UpdateHostedLmr(lmr.lmr_id(), resp.lmr());
        !u.ok()) {
      ModuleError("recording a re-registered LMR", u);
    }
    return absl::OkStatus();
  }
  switch (s.code()) {
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kInvalidArgument: {
      // The manager will never accept this record (e.g. the name was taken
      // while this node was away): no one can map it again, so keeping the
      // memory would only leak it.
      counters_.Add("agent.lmrs_dropped");
      LITE_LOG_ERROR(
          "LMR '%s' (%#x) cannot be registered again: %s; "
          "freeing its memory",
          lmr.name(), lmr.lmr_id(), s.ToString());
      if (absl::Status f = module_->FreeLmrMemory(lmr.lmr_id()); !f.ok()) {
        ModuleError("freeing a refused LMR", f);
      }
      return absl::OkStatus();
    }
    case absl::StatusCode::kFailedPrecondition:
      if (!keeps_id) {
        // A new registration on a draining node: keep the memory and try
        // again at the next Join.
        LITE_LOG_WARNING("LMR '%s' not registered again for now: %s",
                         lmr.name(), s.ToString());
        return absl::OkStatus();
      }
      [[fallthrough]];
    default:
      return absl::Status(
          s.code(), absl::StrFormat("re-registering LMR '%s': %s", lmr.name(),
                                    s.message()));
  }
}

absl::Status Agent::RestoreGrants(const lite::v1::NodeCaller& caller,
                                  bool manager_recovering) {
  absl::StatusOr<std::vector<lite::v1::Grant>> grants = module_->ListGrants();
  if (!grants.ok()) {
    ModuleError("listing grants", grants.status());
    return grants.status();
  }
  auto revoke = [this](const lite::v1::Grant& g, const absl::Status& why) {
    LITE_LOG_WARNING("grant %#x on '%s' not restored (%s); revoking it",
                     g.grant_id(), g.lmr_name(), why.ToString());
    absl::StatusOr<bool> r = grants_.Revoke(g.grant_id());
    if (!r.ok()) {
      ModuleError("revoking a grant", r.status());
    } else if (*r) {
      counters_.Add("agent.grants_revoked");
    }
  };
  for (const lite::v1::Grant& g : *grants) {
    if (!manager_recovering) {
      revoke(g, absl::FailedPreconditionError(
                    "the manager's recovery window is over"));
      continue;
    }
    lite::v1::RestoreGrantRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_grant() = g;
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
    ContextRegistry::Scoped scoped(&contexts_, &ctx);
    lite::v1::RestoreGrantResponse resp;
    const absl::Status s =
        FromGrpcStatus(stub_->RestoreGrant(&ctx, req, &resp));
    switch (s.code()) {
      case absl::StatusCode::kOk:
        counters_.Add("agent.grants_restored");
        break;
      // The manager will not take this grant back (recovery ended, the mode
      // does not allow it, or the id is taken): lite.ko must not keep it.
      // (If FAILED_PRECONDITION meant a stale incarnation, the session will
      // be refused and the next Join revokes everything anyway.)
      case absl::StatusCode::kFailedPrecondition:
      case absl::StatusCode::kPermissionDenied:
      case absl::StatusCode::kAlreadyExists:
      case absl::StatusCode::kInvalidArgument:
        revoke(g, s);
        break;
      default:
        return absl::Status(
            s.code(), absl::StrFormat("restoring grant %#x: %s", g.grant_id(),
                                      s.message()));
    }
  }
  return absl::OkStatus();
}

Agent::SessionEnd Agent::RunSession(const lite::v1::JoinResponse& join,
                                    bool* heartbeat_acked) {
  Session session;
  ContextRegistry::Scoped scoped(&contexts_, &session.ctx);
  session.caller = Caller();
  const absl::Duration lease = absl::Milliseconds(join.lease_duration_ms());
  session.heartbeat_interval =
      join.heartbeat_interval_ms() > 0
          ? absl::Milliseconds(join.heartbeat_interval_ms())
          : lease / 4;
  // Never spin, whatever the manager says.
  session.heartbeat_interval =
      std::max(session.heartbeat_interval, absl::Milliseconds(10));
  session.ack_timeout = 2 * lease;
  {
    absl::MutexLock lock(&session.mu);
    session.last_ack = absl::Now();
  }
  session.stream = stub_->Session(&session.ctx);

  uint64_t applied;
  {
    absl::MutexLock lock(&mu_);
    applied = applied_event_sequence_;
  }
  // The first message binds the session to this incarnation.
  if (!session.SendHeartbeat(applied)) {
    const absl::Status s = FromGrpcStatus(session.stream->Finish());
    NoteError("opening the session", s);
    counters_.Add("agent.sessions_ended");
    if (ShuttingDown()) return SessionEnd::kShutdown;
    if (absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) {
      absl::MutexLock lock(&mu_);
      incarnation_live_ = false;
      return SessionEnd::kIncarnationOver;
    }
    return SessionEnd::kBroken;
  }
  counters_.Add("agent.heartbeats_sent");
  counters_.Add("agent.sessions_opened");
  {
    absl::MutexLock lock(&mu_);
    state_ = lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
    session_opened_at_ = absl::Now();
  }
  LITE_LOG_INFO("session open as node %u incarnation %u",
                session.caller.node_id(), session.caller.incarnation());

  std::thread heartbeats([this, &session] { HeartbeatLoop(&session); });
  lite::v1::ManagerMessage msg;
  bool over = false;
  bool ended_here = false;
  while (!ended_here && session.stream->Read(&msg)) {
    switch (msg.kind_case()) {
      case lite::v1::ManagerMessage::kEvent:
        ended_here = !ApplyEvent(msg.event(), &over);
        break;
      case lite::v1::ManagerMessage::kEventBatch:
        for (const lite::v1::Event& event : msg.event_batch().events()) {
          ended_here = !ApplyEvent(event, &over);
          if (ended_here) break;
        }
        break;
      case lite::v1::ManagerMessage::kRequest:
        HandleRequest(&session, msg.request());
        break;
      case lite::v1::ManagerMessage::kHeartbeatAck: {
        counters_.Add("agent.heartbeat_acks");
        *heartbeat_acked = true;
        absl::MutexLock lock(&session.mu);
        session.last_ack = absl::Now();
        break;
      }
      default:
        // A newer manager's message kind; nothing to do with it.
        LITE_LOG_DEBUG("ignoring a manager message of unknown kind %d",
                       static_cast<int>(msg.kind_case()));
        break;
    }
  }
  {
    absl::MutexLock lock(&session.mu);
    session.done = true;
  }
  heartbeats.join();
  // Finish blocks until the server ends the call unless it is cancelled.
  if (ended_here) session.ctx.TryCancel();
  const grpc::Status finished = session.stream->Finish();
  std::string broken_reason;
  {
    absl::MutexLock lock(&session.mu);
    broken_reason = session.broken_reason;
  }
  {
    absl::MutexLock lock(&mu_);
    session_opened_at_ = absl::InfinitePast();
    if (!shutting_down_) {
      state_ = lite::v1::MANAGER_CONNECTION_STATE_BACKOFF;
    }
  }
  counters_.Add("agent.sessions_ended");
  if (ShuttingDown()) return SessionEnd::kShutdown;
  if (over) {
    absl::MutexLock lock(&mu_);
    incarnation_live_ = false;
    return SessionEnd::kIncarnationOver;
  }
  if (ended_here) return SessionEnd::kBroken;  // NoteError already called.
  if (!broken_reason.empty()) {
    NoteError("session", absl::UnavailableError(broken_reason));
    return SessionEnd::kBroken;
  }
  const absl::Status s = FromGrpcStatus(finished);
  NoteError("session ended",
            s.ok() ? absl::AbortedError("the manager closed the session") : s);
  // The manager refuses or ended this incarnation: it is over.
  if (s.ok() || absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) {
    absl::MutexLock lock(&mu_);
    incarnation_live_ = false;
    return SessionEnd::kIncarnationOver;
  }
  return SessionEnd::kBroken;
}

void Agent::HeartbeatLoop(Session* session) {
  while (true) {
    {
      absl::MutexLock lock(&session->mu);
      session->mu.AwaitWithTimeout(absl::Condition(&session->done),
                                   session->heartbeat_interval);
      if (session->done) return;
      const absl::Duration silent = absl::Now() - session->last_ack;
      if (silent > session->ack_timeout) {
        session->broken_reason =
            absl::StrFormat("no heartbeat ack from the manager for %d ms",
                            absl::ToInt64Milliseconds(silent));
        LITE_LOG_WARNING("%s; ending the session", session->broken_reason);
        session->ctx.TryCancel();
        return;
      }
    }
    uint64_t applied;
    {
      absl::MutexLock lock(&mu_);
      applied = applied_event_sequence_;
    }
    // A failed write means the stream is gone; the reader sees it too.
    if (!session->SendHeartbeat(applied)) return;
    counters_.Add("agent.heartbeats_sent");
  }
}

bool Agent::ApplyEvent(const lite::v1::Event& event, bool* over) {
  uint64_t expected;
  uint32_t self;
  uint64_t incarnation;
  {
    absl::MutexLock lock(&mu_);
    expected = applied_event_sequence_ + 1;
    self = node_id_;
    incarnation = incarnation_;
  }
  if (event.sequence() != expected) {
    counters_.Add("agent.event_gaps");
    NoteError("session", absl::DataLossError(absl::StrFormat(
                             "event sequence %u arrived, %u was expected; "
                             "joining again to resynchronize",
                             event.sequence(), expected)));
    return false;
  }
  switch (event.kind_case()) {
    case lite::v1::Event::kMemberJoined: {
      counters_.Add("agent.events.member_joined");
      const lite::v1::Member& m = event.member_joined().member();
      if (m.node_id() == self) break;
      LITE_LOG_INFO("peer %u (%s) joined, incarnation %u, at %s", m.node_id(),
                    m.node_name(), m.incarnation(), m.rdma_address());
      if (absl::Status s = peers_.Upsert(m); !s.ok()) {
        ModuleError("MemberJoined", s);
      }
      break;
    }
    case lite::v1::Event::kMemberLeft:
    case lite::v1::Event::kMemberFailed: {
      const bool failed = event.has_member_failed();
      counters_.Add(failed ? "agent.events.member_failed"
                           : "agent.events.member_left");
      const uint32_t id = failed ? event.member_failed().node_id()
                                 : event.member_left().node_id();
      const uint64_t inc = failed ? event.member_failed().incarnation()
                                  : event.member_left().incarnation();
      const std::string why =
          failed
              ? absl::StrFormat(
                    "failed (%s: %s)",
                    lite::v1::FailureCause_Name(event.member_failed().cause()),
                    event.member_failed().reason())
              : std::string("left");
      if (id == self) {
        if (inc != incarnation) break;
        *over = true;
        if (!failed && ShuttingDown()) {
          // Our own Leave, announced: the expected end.
          LITE_LOG_INFO("the manager announced this node's Leave");
        } else {
          NoteError(
              "session",
              absl::AbortedError(absl::StrFormat(
                  "the manager says this node (incarnation %u) %s", inc, why)));
        }
        break;
      }
      absl::StatusOr<bool> removed = peers_.Remove(id, inc);
      if (!removed.ok()) {
        ModuleError(failed ? "MemberFailed" : "MemberLeft", removed.status());
      } else if (*removed) {
        LITE_LOG_INFO("peer %u incarnation %u %s", id, inc, why);
      }
      break;
    }
    case lite::v1::Event::kMemberDrainChanged: {
      counters_.Add("agent.events.member_drain_changed");
      const auto& d = event.member_drain_changed();
      if (d.node_id() != self) peers_.SetDraining(d.node_id(), d.draining());
      break;
    }
    case lite::v1::Event::kLmrAdded: {
      counters_.Add("agent.events.lmr_added");
      const lite::v1::Lmr& lmr = event.lmr_added().lmr();
      if (lmr.home_node_id() != self) break;
      // Keeps lite.ko's record (epoch) equal to the manager's. NOT_FOUND: a
      // registration whose upcall is not completed yet; it gets the record
      // then.
      absl::Status s = module_->UpdateHostedLmr(lmr.lmr_id(), lmr);
      if (!s.ok() && !absl::IsNotFound(s)) ModuleError("LmrAdded", s);
      break;
    }
    case lite::v1::Event::kLmrRemoved: {
      counters_.Add("agent.events.lmr_removed");
      const auto& r = event.lmr_removed();
      if (r.home_node_id() != self) break;
      // HOME_FAILED / HOME_LEFT concern an incarnation of this node that is
      // over: the memory stays so that it can be registered again.
      if (r.cause() != lite::v1::REMOVAL_CAUSE_LMR_FREED &&
          r.cause() != lite::v1::REMOVAL_CAUSE_ALLOCATION_ABANDONED) {
        break;
      }
      absl::Status s = module_->FreeLmrMemory(r.lmr_id());
      if (s.ok()) {
        LITE_LOG_INFO("freed LMR '%s' (%#x): %s", r.name(), r.lmr_id(),
                      lite::v1::RemovalCause_Name(r.cause()));
      } else if (!absl::IsNotFound(s)) {
        ModuleError("LmrRemoved", s);
      }
      break;
    }
    case lite::v1::Event::kGrantRevoked: {
      counters_.Add("agent.events.grant_revoked");
      const auto& g = event.grant_revoked();
      if (g.holder_node_id() != self) break;
      absl::StatusOr<bool> r = grants_.Revoke(g.grant_id());
      if (!r.ok()) {
        ModuleError("GrantRevoked", r.status());
      } else if (*r) {
        counters_.Add("agent.grants_revoked");
      }
      break;
    }
    case lite::v1::Event::kRecoveryComplete: {
      counters_.Add("agent.events.recovery_complete");
      std::vector<lite::v1::Member> members;
      for (const auto& m : event.recovery_complete().members()) {
        if (m.node_id() != self) members.push_back(m);
      }
      if (absl::Status s = peers_.RetainOnly(members); !s.ok()) {
        ModuleError("RecoveryComplete", s);
      }
      break;
    }
    default:
      counters_.Add("agent.events.unknown");
      break;
  }
  {
    absl::MutexLock lock(&mu_);
    applied_event_sequence_ = event.sequence();
  }
  counters_.Add("agent.events_applied");
  if (options_.event_log != nullptr) options_.event_log->Append(event);
  return !*over;
}

void Agent::HandleRequest(Session* session,
                          const lite::v1::NodeRequest& request) {
  lite::v1::AgentMessage out;
  lite::v1::NodeRequestResult* result = out.mutable_result();
  result->set_request_id(request.request_id());
  absl::Status s;
  switch (request.kind_case()) {
    case lite::v1::NodeRequest::kAllocateLmrMemory: {
      counters_.Add("agent.requests.allocate_lmr_memory");
      const auto& a = request.allocate_lmr_memory();
      if ((a.lmr_id() >> 32) != session->caller.node_id()) {
        s = absl::InvalidArgumentError(
            absl::StrFormat("lmr_id %#x does not belong to node %u", a.lmr_id(),
                            session->caller.node_id()));
      } else if (a.size_bytes() == 0) {
        s = absl::InvalidArgumentError("size_bytes is 0");
      } else if (s = names::ValidateLmrName("name", a.name()); s.ok()) {
        absl::StatusOr<lite::v1::AllocatedLmrMemory> mem =
            module_->AllocateLmrMemory(a);
        if (mem.ok()) {
          *result->mutable_allocated_lmr_memory() = *std::move(mem);
          LITE_LOG_INFO("allocated %u bytes for LMR '%s' (%#x)", a.size_bytes(),
                        a.name(), a.lmr_id());
        } else {
          s = mem.status();
        }
      }
      break;
    }
    default:
      counters_.Add("agent.requests.unknown");
      s = absl::UnimplementedError(absl::StrFormat(
          "request kind %d is unknown to this liteagent (older than the "
          "manager)",
          static_cast<int>(request.kind_case())));
      break;
  }
  if (!s.ok()) {
    counters_.Add("agent.requests_failed");
    result->set_status_code(static_cast<int32_t>(s.code()));
    result->set_status_message(std::string(s.message()));
    LITE_LOG_WARNING("request %u failed: %s", request.request_id(),
                     s.ToString());
  }
  // A failed write means the stream is gone; the manager abandons the
  // request on its side.
  session->Write(out);
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
