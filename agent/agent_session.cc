// Agent: one Session stream with the manager — heartbeats up (HeartbeatLoop),
// events (ApplyEvent, strictly in sequence order, on the reader) and
// node-addressed requests (HandleRequest, in order, on the session's
// RequestWorker) down. See agent.h for the life cycle.
#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/peer_reports.h"
#include "agent/request_worker.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "common/names/names.h"

namespace lite::agent {

// One session's stream and the state its reader and heartbeat threads share.
struct Agent::Session {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReaderWriterInterface<lite::v1::AgentMessage,
                                                    lite::v1::ManagerMessage>>
      stream;
  lite::v1::NodeCaller caller;
  // Agent::session_serial_'s number for it, set under the agent's mu_
  // before the reader loop starts.
  uint64_t serial = 0;
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
  // PeerFailureReports for the heartbeat thread to send at once (a report
  // is worth most before the failed node's lease runs out).
  std::vector<lite::v1::PeerFailureReport> reports ABSL_GUARDED_BY(mu);
  // Acks, LmrLost reports and the answers of probes (which run off the
  // reader thread), likewise sent at once.
  std::vector<lite::v1::AgentMessage> outgoing ABSL_GUARDED_BY(mu);

  bool Write(const lite::v1::AgentMessage& msg) {
    absl::MutexLock lock(&write_mu);
    return stream->Write(msg);
  }
  bool SendHeartbeat(uint64_t applied_event_sequence,
                     std::vector<lite::v1::ServiceStats> service_stats = {}) {
    lite::v1::AgentMessage msg;
    lite::v1::Heartbeat* hb = msg.mutable_heartbeat();
    for (lite::v1::ServiceStats& st : service_stats) {
      *hb->add_service_stats() = std::move(st);
    }
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
    session_ = &session;
    session.serial = ++session_serial_;
    // What was made while no session was open; an ended incarnation's acks
    // are implied by its end.
    std::vector<lite::v1::AgentMessage> unsent;
    unsent.swap(unsent_);
    for (lite::v1::AgentMessage& m : unsent) {
      if (m.has_grant_revoke_ack() &&
          m.grant_revoke_ack().holder_incarnation() != incarnation_) {
        counters_.Add("agent.grant_revoke_acks_dropped");
        continue;
      }
      SendOrKeepLocked(std::move(m));
    }
  }
  LITE_LOG_INFO("session open as node %u incarnation %u",
                session.caller.node_id(), session.caller.incarnation());

  std::thread heartbeats([this, &session] { HeartbeatLoop(&session); });
  // Requests wait for lite.ko; acks and events must not wait for them.
  RequestWorker requests;
  lite::v1::ManagerMessage msg;
  bool over = false;
  bool ended_here = false;
  while (!ended_here && session.stream->Read(&msg)) {
    // The pair secrets for the members this message announces; only this
    // session gets them, next to the events everyone gets.
    const PeerSecrets secrets = msg.peer_secrets().empty()
                                    ? PeerSecrets()
                                    : Secrets(msg.peer_secrets());
    switch (msg.kind_case()) {
      case lite::v1::ManagerMessage::kEvent:
        ended_here = !ApplyEvent(msg.event(), secrets, &over);
        break;
      case lite::v1::ManagerMessage::kEventBatch:
        for (const lite::v1::Event& event : msg.event_batch().events()) {
          ended_here = !ApplyEvent(event, secrets, &over);
          if (ended_here) break;
        }
        break;
      case lite::v1::ManagerMessage::kRequest:
        // Every event before it is applied already: the reader applies
        // them as it reads.
        requests.Submit([this, &session, request = msg.request()] {
          HandleRequest(&session, request);
        });
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
  // The manager gives up a request whose session ended; the one lite.ko is
  // working on ends first (no write may follow Finish).
  if (const size_t dropped = requests.Stop(); dropped > 0) {
    counters_.Add("agent.requests_dropped", dropped);
    LITE_LOG_INFO("%u request(s) not run: their session ended", dropped);
  }
  const grpc::Status finished = session.stream->Finish();
  std::string broken_reason;
  {
    absl::MutexLock lock(&session.mu);
    broken_reason = session.broken_reason;
  }
  {
    absl::MutexLock lock(&mu_);
    session_ = nullptr;
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
  absl::Time next_beat = absl::Now() + session->heartbeat_interval;
  while (true) {
    std::vector<lite::v1::PeerFailureReport> reports;
    std::vector<lite::v1::AgentMessage> outgoing;
    {
      absl::MutexLock lock(&session->mu);
      auto woken = [session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(session->mu) {
        return session->done || !session->reports.empty() ||
               !session->outgoing.empty();
      };
      session->mu.AwaitWithDeadline(absl::Condition(&woken), next_beat);
      if (session->done) return;
      reports.swap(session->reports);
      outgoing.swap(session->outgoing);
    }
    for (const lite::v1::AgentMessage& msg : outgoing) {
      // A lost write loses the message with the session: the manager then
      // ends this incarnation, which implies its acks; a lost LMR stays
      // listed with chunk address 0 in lite.ko (see docs/agent.md).
      if (!session->Write(msg)) return;
      if (msg.has_lmr_lost()) counters_.Add("agent.lmrs_lost_reported");
    }
    for (const lite::v1::PeerFailureReport& report : reports) {
      lite::v1::AgentMessage msg;
      *msg.mutable_peer_failure() = report;
      if (!session->Write(msg)) return;
      counters_.Add("agent.peer_failures_reported");
      LITE_LOG_INFO(
          "reported node %u incarnation %u unreachable to the manager",
          report.node_id(), report.incarnation());
    }
    const absl::Time now = absl::Now();
    if (now < next_beat) continue;
    // More than an interval late: this process was stopped or starved
    // (SIGSTOP, no CPU), and heard no ack because it sent no heartbeat.
    // That time is this agent's silence, not the manager's: counted, a
    // pause past ack_timeout would end the session the moment the agent
    // runs again, and the manager, which holds the node SUSPECT through
    // such a pause, would then fail it (SESSION_CLOSED) and revoke its
    // LMRs' grants (tests/host/suspect_test).
    const absl::Duration late = now - next_beat;
    next_beat = now + session->heartbeat_interval;
    {
      absl::MutexLock lock(&session->mu);
      if (late > session->heartbeat_interval) {
        session->last_ack = std::min(now, session->last_ack + late);
        counters_.Add("agent.heartbeats_late");
        LITE_LOG_WARNING(
            "this agent ran %d ms late (stopped or starved of CPU): "
            "heartbeating again",
            absl::ToInt64Milliseconds(late));
      }
      const absl::Duration silent = now - session->last_ack;
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
    if (!session->SendHeartbeat(applied, service_stats_.ForHeartbeat())) {
      return;
    }
    counters_.Add("agent.heartbeats_sent");
  }
}

bool Agent::ApplyEvent(const lite::v1::Event& event, const PeerSecrets& secrets,
                       bool* over) {
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
      const std::string secret = SecretFor(secrets, m);
      if (secret.empty()) {
        counters_.Add("agent.peers_without_secret");
        LITE_LOG_WARNING(
            "no pair secret came with peer %u's MemberJoined (a manager "
            "older than peer authentication?); lite.ko with peer_auth=1 will "
            "not connect to it",
            m.node_id());
      }
      if (absl::Status s = peers_.Upsert(m, secret);
          absl::IsFailedPrecondition(s)) {
        counters_.Add("agent.peer_downgrades_refused");
        LITE_LOG_WARNING("MemberJoined refused: %s", s.message());
      } else if (!s.ok()) {
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
      // Its grants are revoked with it: this node's, if any, go now (off
      // this thread's waits: the revoker drains them).
      if (r.revokes_grants()) {
        revoker_.RevokeLmr(r.lmr_id(), r.release_follows());
        // Also those the manager lists for this node that lite.ko does not
        // hold: their acknowledgement is waited for all the same.
        for (const lite::v1::RevokedGrant& g : r.revoked()) {
          if (g.holder_node_id() != self) continue;
          revoker_.Revoke(g.grant_id(), g.holder_incarnation(),
                          r.release_follows());
        }
      }
      if (r.home_node_id() != self) break;
      if (r.release_follows()) {
        // The fenced free: the memory stays until ReleaseLmrMemory.
        counters_.Add("agent.lmrs_releasing");
        {
          absl::MutexLock lock(&mu_);
          releasing_lmrs_.insert(r.lmr_id());
        }
        LITE_LOG_INFO(
            "LMR '%s' (%#x) is releasing (%s); its memory waits "
            "for the holders' acknowledgements",
            r.name(), r.lmr_id(), lite::v1::RemovalCause_Name(r.cause()));
        // releasing_lmrs_ dies with this process; lite.ko's mark does not,
        // so an agent restarted before the release re-registers the LMR as
        // releasing instead of bringing it back under its name. Without the
        // mark only that case goes wrong: not worth failing the session.
        if (absl::Status m = module_->MarkLmrReleasing(r.lmr_id()); !m.ok()) {
          counters_.Add("agent.lmr_releasing_marks_failed");
          ModuleError(absl::StrFormat("marking LMR %#x releasing", r.lmr_id()),
                      m);
        }
        break;
      }
      // HOME_FAILED / HOME_LEFT concern an incarnation of this node that is
      // over: the memory stays so that it can be registered again.
      if (r.cause() != lite::v1::REMOVAL_CAUSE_LMR_FREED &&
          r.cause() != lite::v1::REMOVAL_CAUSE_ALLOCATION_ABANDONED) {
        break;
      }
      absl::Status s = module_->FreeLmrMemory(r.lmr_id(), /*quarantine=*/false);
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
      // Off this thread: lite.ko's answer waits for the grant to drain.
      revoker_.Revoke(g.grant_id(), g.holder_incarnation(), g.ack_requested());
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
    // SUSPECT (docs/controlplane.md): agents keep the peer as it is; its
    // lite.ko answers or it does not, whatever the manager thinks of its
    // agent. Logged so that a node's log says why a MapLmr was refused.
    case lite::v1::Event::kMemberSuspected: {
      counters_.Add("agent.events.member_suspected");
      const auto& m = event.member_suspected();
      if (m.node_id() == self) {
        LITE_LOG_WARNING(
            "the manager suspects this node (incarnation %u): %s; its "
            "heartbeats reach the manager late",
            m.incarnation(), m.reason());
      } else {
        LITE_LOG_INFO("peer %u (%s) incarnation %u SUSPECT: %s", m.node_id(),
                      m.node_name(), m.incarnation(), m.reason());
      }
      break;
    }
    case lite::v1::Event::kMemberRecovered: {
      counters_.Add("agent.events.member_recovered");
      const auto& m = event.member_recovered();
      if (m.node_id() == self) {
        LITE_LOG_WARNING(
            "the manager no longer suspects this node (incarnation %u), "
            "after %d ms",
            m.incarnation(), m.suspected_ms());
      } else {
        LITE_LOG_INFO("peer %u (%s) incarnation %u recovered after %d ms",
                      m.node_id(), m.node_name(), m.incarnation(),
                      m.suspected_ms());
      }
      break;
    }
    // For operators and watchers; agents have nothing to do (manager.proto).
    case lite::v1::Event::kServiceAdded:
      counters_.Add("agent.events.service_added");
      break;
    case lite::v1::Event::kServiceRemoved:
      counters_.Add("agent.events.service_removed");
      break;
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
    case lite::v1::NodeRequest::kBindServiceRing: {
      counters_.Add("agent.requests.bind_service_ring");
      absl::StatusOr<lite::v1::BoundServiceRing> ring = BindServiceRing(
          session->caller.node_id(), request.bind_service_ring());
      if (ring.ok()) {
        *result->mutable_bound_service_ring() = *std::move(ring);
      } else {
        s = ring.status();
      }
      break;
    }
    case lite::v1::NodeRequest::kProbePeer:
      counters_.Add("agent.requests.probe_peer");
      // Answered later, by the prober, unless refused here.
      s = StartProbe(session, request);
      if (s.ok()) return;
      break;
    case lite::v1::NodeRequest::kReleaseLmrMemory:
      counters_.Add("agent.requests.release_lmr_memory");
      s = ReleaseLmrMemory(session->caller.node_id(),
                           request.release_lmr_memory());
      break;
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

absl::Status Agent::StartProbe(Session* session,
                               const lite::v1::NodeRequest& request) {
  const lite::v1::ProbePeer& probe = request.probe_peer();
  const uint32_t self = session->caller.node_id();
  absl::Status s;
  if (probe.node_id() == 0 || probe.node_id() == self) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "probe_peer names node %u: a peer of node %u, not 0 or itself, is "
        "needed",
        probe.node_id(), self));
  } else if (probe.incarnation() == 0) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "probe_peer of node %u names incarnation 0", probe.node_id()));
  } else {
    s = prober_.Submit(
        probe.node_id(), probe.incarnation(),
        [this, serial = session->serial, request_id = request.request_id(),
         node_id = probe.node_id(), incarnation = probe.incarnation()](
            const absl::StatusOr<lite::v1::ProbedPeer>& answer) {
          ProbeAnswered(serial, request_id, node_id, incarnation, answer);
        });
    if (absl::IsResourceExhausted(s)) {
      counters_.Add("agent.peer_probes.refused");
    }
  }
  if (!s.ok() && !absl::IsResourceExhausted(s)) {
    counters_.Add("agent.peer_probes.other");
  }
  return s;
}

void Agent::ProbeAnswered(uint64_t session_serial, uint64_t request_id,
                          uint32_t node_id, uint64_t incarnation,
                          const absl::StatusOr<lite::v1::ProbedPeer>& answer) {
  lite::v1::AgentMessage out;
  lite::v1::NodeRequestResult* result = out.mutable_result();
  result->set_request_id(request_id);
  if (answer.ok()) {
    counters_.Add("agent.peer_probes.acknowledged");
    *result->mutable_probed_peer() = *answer;
    LITE_LOG_INFO(
        "probe of node %u incarnation %u (request %u): acknowledged in %d us",
        node_id, incarnation, request_id, answer->round_trip_ns() / 1000);
  } else {
    counters_.Add(absl::IsUnavailable(answer.status())
                      ? "agent.peer_probes.unreachable"
                      : "agent.peer_probes.other");
    counters_.Add("agent.requests_failed");
    result->set_status_code(static_cast<int32_t>(answer.status().code()));
    result->set_status_message(std::string(answer.status().message()));
    LITE_LOG_INFO("probe of node %u incarnation %u (request %u): %s", node_id,
                  incarnation, request_id, answer.status().ToString());
  }
  absl::MutexLock lock(&mu_);
  if (session_ == nullptr || session_->serial != session_serial) {
    // The session it came on is gone; the manager gave the request up.
    counters_.Add("agent.peer_probes.dropped");
    LITE_LOG_INFO("probe answer for request %u dropped: its session ended",
                  request_id);
    return;
  }
  absl::MutexLock session_lock(&session_->mu);
  session_->outgoing.push_back(std::move(out));
}

void Agent::ReportPeerFailure(const PeerConnectionFailed& failed) {
  absl::MutexLock lock(&mu_);
  std::optional<lite::v1::PeerFailureReport> report =
      PeerFailureToReport(failed, node_id_);
  if (!report.has_value()) return;
  if (session_ == nullptr) {
    // The manager's lease covers the node; nobody to tell now.
    counters_.Add("agent.peer_failures_unreported");
    LITE_LOG_WARNING("no session open: node %u not reported to the manager",
                     failed.node_id);
    return;
  }
  absl::MutexLock session_lock(&session_->mu);
  if (session_->reports.size() >= kMaxQueuedReports) {
    counters_.Add("agent.peer_failures_unreported");
    return;
  }
  session_->reports.push_back(*std::move(report));
}

absl::Status Agent::ReleaseLmrMemory(
    uint32_t self, const lite::v1::ReleaseLmrMemory& release) {
  const uint64_t lmr_id = release.lmr_id();
  if (lmr_id == 0 || (lmr_id >> 32) != self) {
    return absl::InvalidArgumentError(
        absl::StrFormat("lmr_id %#x is not an LMR of node %u", lmr_id, self));
  }
  // lite.ko frees (or quarantines) once the grants on this node into it are
  // gone and the connections to removed peers are torn down.
  absl::Status s = module_->FreeLmrMemory(lmr_id, release.quarantine());
  if (s.ok() || absl::IsNotFound(s)) {
    absl::MutexLock lock(&mu_);
    releasing_lmrs_.erase(lmr_id);
  }
  if (!s.ok()) return s;
  if (release.quarantine()) {
    counters_.Add("agent.lmrs_quarantined");
    LITE_LOG_WARNING(
        "quarantined the memory of LMR %#x: a holder never acknowledged its "
        "revocation, so its pages are never reused while lite.ko is loaded",
        lmr_id);
  } else {
    counters_.Add("agent.lmrs_released");
    LITE_LOG_INFO("released the memory of LMR %#x", lmr_id);
  }
  return absl::OkStatus();
}

void Agent::QueueAck(uint64_t grant_id, uint64_t holder_incarnation) {
  lite::v1::AgentMessage msg;
  msg.mutable_grant_revoke_ack()->set_grant_id(grant_id);
  msg.mutable_grant_revoke_ack()->set_holder_incarnation(holder_incarnation);
  absl::MutexLock lock(&mu_);
  if (holder_incarnation != incarnation_) {
    counters_.Add("agent.grant_revoke_acks_dropped");
    return;
  }
  SendOrKeepLocked(std::move(msg));
}

void Agent::ReportLmrLost(const LmrLost& lost) {
  lite::v1::AgentMessage msg;
  msg.mutable_lmr_lost()->set_lmr_id(lost.lmr_id);
  msg.mutable_lmr_lost()->set_reason_errno(lost.reason_errno);
  msg.mutable_lmr_lost()->set_detail(
      lost.reason_errno == ENODEV ? "the RDMA device was removed" : "");
  absl::MutexLock lock(&mu_);
  SendOrKeepLocked(std::move(msg));
}

void Agent::GrantGivenBack(uint64_t grant_id) {
  if (revoker_.Unmapped(grant_id)) counters_.Add("agent.grants_given_back");
}

void Agent::SendOrKeepLocked(lite::v1::AgentMessage msg) {
  // Far more than one node's revocations in flight at once.
  constexpr size_t kMaxUnsent = 65536;
  if (session_ != nullptr) {
    absl::MutexLock session_lock(&session_->mu);
    session_->outgoing.push_back(std::move(msg));
    return;
  }
  if (unsent_.size() >= kMaxUnsent) {
    counters_.Add("agent.messages_unsent");
    return;
  }
  unsent_.push_back(std::move(msg));
}

}  // namespace lite::agent
