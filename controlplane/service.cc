#include "controlplane/service.h"

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "common/names/names.h"
#include "common/tls/identity.h"
#include "controlplane/audit.h"
#include "controlplane/stream_pump.h"
#include "controlplane/unary_reply.h"
#include "grpcpp/alarm.h"

namespace lite::controlplane {

namespace {

// The second half of a node's check: a certificate with role node acts only
// for the node id the manager gave its name. Node id 0 is left to the state
// machine, which refuses it as INVALID_ARGUMENT (field errors come first)
// and changes nothing. This early check answers with the certificate's own
// node; the binding one is made again under the state machine's lock with
// the change (ManagerState::ActingAs, set around each call below).
absl::Status CheckActsFor(const ManagerState& state, const tls::Authz& authz,
                          const std::string& caller, uint32_t node_id) {
  if (authz.insecure() || node_id == 0) return absl::OkStatus();
  const std::optional<uint32_t> own = state.NodeIdOf(caller);
  if (own == node_id) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "certificate ", Quoted(caller), " may act only for its own node (",
      own.has_value() ? absl::StrCat("node ", *own)
                      : std::string("which has not joined"),
      "), not for node ", node_id));
}

// Role node; sets *caller to the certificate's name. A caller without it
// is audited with no request field (audit.h: AuditRefused), so nothing
// such a caller sends reaches the log.
absl::Status Identify(grpc::CallbackServerContext* context,
                      const tls::Authz& authz, absl::string_view method,
                      std::string* caller) {
  absl::Status known =
      authz.Require(*context->auth_context(), tls::Role::kNode, caller);
  if (!known.ok()) AuditRefused(*caller, context->peer(), method, known);
  return known;
}

// A unary node RPC: check the caller, then (only if allowed) `call` the
// state machine; audit and reply either way.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* NodeRpc(grpc::CallbackServerContext* context,
                                  const ManagerState& state,
                                  const tls::Authz& authz,
                                  absl::string_view method, uint32_t node_id,
                                  const std::string& fields, Response* response,
                                  Call call) {
  std::string caller;
  if (absl::Status known = Identify(context, authz, method, &caller);
      !known.ok()) {
    return Reply(context, absl::StatusOr<Response>(known), response);
  }
  absl::Status allowed = CheckActsFor(state, authz, caller, node_id);
  std::optional<ManagerState::ActingAs> acting;
  if (!authz.insecure()) acting.emplace(caller);
  absl::StatusOr<Response> result =
      allowed.ok() ? call() : absl::StatusOr<Response>(allowed);
  Audit(caller, method, fields, result.status());
  return Reply(context, std::move(result), response);
}

std::string CallerFields(const lite::v1::NodeCaller& caller) {
  return absl::StrCat("node=", caller.node_id(),
                      " incarnation=", caller.incarnation());
}

// A Session refused before its first message (no certificate, no role).
class RejectSession final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit RejectSession(const absl::Status& status) {
    Finish(ToGrpcStatus(status));
  }
  void OnDone() override { delete this; }
};

// One agent's Session stream. Reads are handled inline (they only call the
// state machine); writes come from the node's outbox through a StreamPump.
// Session streams not bound to a node yet (no first heartbeat), per
// (manager, certificate name): at most one each, so that a node certificate
// cannot hold any number of them open (review cp M2).
class UnboundSessions {
 public:
  static UnboundSessions& Get() {
    static auto* unbound = new UnboundSessions;
    return *unbound;
  }
  bool Add(const ManagerState* state, const std::string& name) {
    absl::MutexLock lock(&mu_);
    return names_.insert({state, name}).second;
  }
  void Remove(const ManagerState* state, const std::string& name) {
    absl::MutexLock lock(&mu_);
    names_.erase({state, name});
  }

 private:
  absl::Mutex mu_;
  std::set<std::pair<const ManagerState*, std::string>> names_
      ABSL_GUARDED_BY(mu_);
};

// The first-heartbeat deadline: shared with the alarm's callback, which may
// run after the reactor is gone (then `done` is set and it does nothing).
struct FirstHeartbeat {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  grpc::CallbackServerContext* context = nullptr;
};

class SessionReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SessionReactor(ManagerState* state, const tls::Authz* authz,
                 std::string caller, grpc::CallbackServerContext* context)
      : state_(state),
        authz_(authz),
        caller_(std::move(caller)),
        context_(context) {
    // The stream holds role node while it lasts (authz.h): when the authz
    // file withdraws it, or the certificate expires, Revoked ends it.
    absl::StatusOr<uint64_t> hold = authz_->Hold(
        caller_, tls::Role::kNode, tls::PeerNotAfter(*context->auth_context()),
        [this](const absl::Status& why) { Revoked(why); });
    if (!hold.ok()) {
      Finish(ToGrpcStatus(hold.status()));
      return;
    }
    hold_ = *hold;
    // With certificates: one stream per node name waits for its first
    // heartbeat, and for one lease at most (--insecure has no names).
    if (!authz_->insecure()) {
      if (!UnboundSessions::Get().Add(state_, caller_)) {
        Finish(grpc::Status(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat(
                "another session of certificate ", Quoted(caller_),
                " is waiting for its first heartbeat; one at a time")));
        return;
      }
      unbound_ = true;
    }
    first_ = std::make_shared<FirstHeartbeat>();
    first_->context = context_;
    std::weak_ptr<FirstHeartbeat> weak = first_;
    alarm_ = std::make_unique<grpc::Alarm>();
    alarm_->Set(absl::ToChronoTime(absl::Now() + state_->lease()),
                [weak](bool fired) {
                  std::shared_ptr<FirstHeartbeat> first = weak.lock();
                  if (!fired || first == nullptr) return;
                  absl::MutexLock lock(&first->mu);
                  if (!first->done) first->context->TryCancel();
                });
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The agent half-closed the stream or the connection is gone.
      const absl::Status why =
          context_->IsCancelled()
              ? absl::CancelledError("the connection to the agent was lost")
              : absl::OkStatus();
      if (bound_) {
        End(why);
        pump_->Finish(grpc::Status::OK);
      } else {
        Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "the stream closed before its first heartbeat"));
      }
      return;
    }
    lite::v1::AgentMessage message;
    grpc::Status parsed =
        grpc::SerializationTraits<lite::v1::AgentMessage>::Deserialize(
            &in_, &message);
    if (!parsed.ok()) {
      Fail(absl::InvalidArgumentError(absl::StrCat(
          "could not parse an AgentMessage: ", parsed.error_message())));
      return;
    }
    if (!bound_) {
      Open(message);
      return;
    }
    absl::Status handled;
    if (message.has_heartbeat()) {
      handled = state_->Heartbeat(binding_, message.heartbeat());
    } else if (message.has_result()) {
      handled = state_->HandleResult(binding_, message.result());
    } else if (message.has_peer_failure()) {
      handled = state_->PeerFailure(binding_, message.peer_failure());
    } else if (message.has_grant_revoke_ack()) {
      handled = state_->GrantRevokeAck(binding_, message.grant_revoke_ack());
    } else if (message.has_lmr_lost()) {
      handled = state_->LmrLost(binding_, message.lmr_lost());
    } else {
      handled = absl::InvalidArgumentError(
          "empty AgentMessage; set heartbeat, result, peer_failure, "
          "grant_revoke_ack or lmr_lost");
    }
    if (!handled.ok()) {
      Fail(handled);
      return;
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override { pump_->OnWriteDone(ok); }

  void OnDone() override {
    FirstHeartbeatDone();
    alarm_.reset();  // Cancels it; a callback still to run finds `done`.
    // First: once Release returns, Revoked is not running and never will.
    authz_->Release(hold_);
    if (pump_ != nullptr) pump_->Detach();
    if (bound_) End(absl::CancelledError("the session ended"));
    delete this;
  }

 private:
  // From the authz's holder thread, before OnDone. The node is failed by
  // name (its session, if bound, ends with the reason, and it gets no
  // further pair secrets); a stream not bound yet is cancelled.
  void Revoked(const absl::Status& why) {
    state_->RevokeNode(caller_, std::string(why.message()));
    if (!opened_.load()) context_->TryCancel();
  }

  // The first message came (or the stream ended): no deadline from now on,
  // and the name may open another unbound session.
  void FirstHeartbeatDone() {
    if (first_ != nullptr) {
      absl::MutexLock lock(&first_->mu);
      first_->done = true;
    }
    if (unbound_) UnboundSessions::Get().Remove(state_, caller_);
    unbound_ = false;
  }

  void Open(const lite::v1::AgentMessage& message) {
    FirstHeartbeatDone();
    if (!message.has_heartbeat()) {
      Fail(absl::InvalidArgumentError(
          "the first message on a session must be a Heartbeat with the node "
          "id and incarnation Join returned"));
      return;
    }
    // The session speaks for the node of its first heartbeat, so that is
    // where the certificate is bound to it.
    absl::Status allowed =
        CheckActsFor(*state_, *authz_, caller_, message.heartbeat().node_id());
    if (!allowed.ok()) {
      LITE_LOG_WARNING("refused a session from %s: %s", Quoted(caller_),
                       allowed.message());
      Fail(allowed);
      return;
    }
    std::optional<ManagerState::ActingAs> acting;
    if (!authz_->insecure()) acting.emplace(caller_);
    absl::StatusOr<OpenedSession> opened =
        state_->OpenSession(message.heartbeat());
    if (!opened.ok()) {
      Fail(opened.status());
      return;
    }
    bound_ = true;
    opened_.store(true);
    binding_ = opened->binding;
    pump_ = std::make_shared<StreamPump<SessionReactor>>(
        this, opened->outbox,
        message.heartbeat().accept_event_batches()
            ? StreamPump<SessionReactor>::Mode::kBatchedSession
            : StreamPump<SessionReactor>::Mode::kSession,
        SessionRecipient{.self = {binding_.node_id, binding_.incarnation},
                         .secrets = &state_->pair_secrets()});
    opened->outbox->SetListener(pump_);
    pump_->OnOutboxReady();  // Something may be queued already.
    StartRead(&in_);
  }

  // Ends the stream with an error from this side; a bound session's node is
  // failed, because its session cannot be reopened.
  void Fail(const absl::Status& status) {
    if (!bound_) {
      Finish(ToGrpcStatus(status));
      return;
    }
    pump_->Finish(ToGrpcStatus(status));
    End(status);
  }

  void End(const absl::Status& why) {
    if (ended_) return;
    ended_ = true;
    state_->SessionEnded(binding_, why);
  }

  ManagerState* const state_;
  const tls::Authz* const authz_;
  const std::string caller_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer in_;
  bool bound_ = false;
  std::atomic<bool> opened_{false};  // bound_, for Revoked's thread
  uint64_t hold_ = 0;
  bool ended_ = false;
  SessionBinding binding_;
  std::shared_ptr<StreamPump<SessionReactor>> pump_;
  bool unbound_ = false;  // Counted in UnboundSessions.
  std::shared_ptr<FirstHeartbeat> first_;
  std::unique_ptr<grpc::Alarm> alarm_;
};

}  // namespace

grpc::ServerUnaryReactor* ClusterManagerService::Join(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string caller;
  absl::Status allowed =
      authz_->Require(*context->auth_context(), tls::Role::kNode, &caller);
  if (!allowed.ok()) {
    // Not parsed: nothing from a caller without a role is looked at.
    AuditRefused(caller, context->peer(), "Join", allowed);
    reactor->Finish(ToGrpcStatus(allowed));
    return reactor;
  }
  lite::v1::JoinRequest parsed;
  grpc::ByteBuffer copy(*request);
  grpc::Status status =
      grpc::SerializationTraits<lite::v1::JoinRequest>::Deserialize(&copy,
                                                                    &parsed);
  if (!status.ok()) {
    const absl::Status bad = absl::InvalidArgumentError(absl::StrCat(
        "could not parse a JoinRequest: ", status.error_message()));
    Audit(caller, "Join", "", bad);
    reactor->Finish(ToGrpcStatus(bad));
    return reactor;
  }
  const std::string fields =
      absl::StrCat("node_name=", Quoted(parsed.node_name()));
  // A node certificate joins only as its own name; a malformed name is
  // reported as such (no certificate can carry it).
  if (!authz_->insecure() && parsed.node_name() != caller) {
    absl::Status refused =
        names::ValidateNodeName("node_name", parsed.node_name());
    if (refused.ok()) {
      refused = absl::PermissionDeniedError(absl::StrCat(
          "certificate ", Quoted(caller), " may join only as node ",
          Quoted(caller), ", not as ", Quoted(parsed.node_name())));
    }
    Audit(caller, "Join", fields, refused);
    reactor->Finish(ToGrpcStatus(refused));
    return reactor;
  }
  absl::StatusOr<std::string> wire = state_->JoinWire(parsed);
  if (wire.ok()) {
    grpc::Slice slice(*wire);
    *response = grpc::ByteBuffer(&slice, 1);
  }
  Audit(caller, "Join", fields, wire.status());
  reactor->Finish(ToGrpcStatus(wire.status()));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
ClusterManagerService::Session(grpc::CallbackServerContext* context) {
  std::string caller;
  absl::Status allowed =
      authz_->Require(*context->auth_context(), tls::Role::kNode, &caller);
  if (!allowed.ok()) return new RejectSession(allowed);
  return new SessionReactor(state_, authz_, std::move(caller), context);
}

grpc::ServerUnaryReactor* ClusterManagerService::Leave(
    grpc::CallbackServerContext* context, const lite::v1::LeaveRequest* request,
    lite::v1::LeaveResponse* response) {
  return NodeRpc(context, *state_, *authz_, "Leave",
                 request->caller().node_id(), CallerFields(request->caller()),
                 response, [&]() -> absl::StatusOr<lite::v1::LeaveResponse> {
                   absl::Status left = state_->Leave(*request);
                   if (!left.ok()) return left;
                   return lite::v1::LeaveResponse();
                 });
}

grpc::ServerUnaryReactor* ClusterManagerService::RegisterLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::RegisterLmrRequest* request,
    lite::v1::RegisterLmrResponse* response) {
  return NodeRpc(
      context, *state_, *authz_, "RegisterLmr", request->caller().node_id(),
      absl::StrCat(CallerFields(request->caller()), " lmr=", request->lmr_id(),
                   " name=", Quoted(request->name()), " size=",
                   request->size_bytes(), " uid=", request->owner().uid(),
                   request->releasing() ? " releasing" : ""),
      response, [&] { return state_->RegisterLmr(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::AllocLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::AllocLmrRequest* request,
    lite::v1::AllocLmrResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string caller;
  const std::string fields = absl::StrCat(
      CallerFields(request->caller()), " name=", Quoted(request->name()),
      " size=", request->size_bytes(), " home=", request->home_node_id(),
      " uid=", request->owner().uid());
  if (absl::Status known = Identify(context, *authz_, "AllocLmr", &caller);
      !known.ok()) {
    reactor->Finish(ToGrpcStatus(known));
    return reactor;
  }
  absl::Status started =
      CheckActsFor(*state_, *authz_, caller, request->caller().node_id());
  std::optional<ManagerState::ActingAs> acting;
  if (!authz_->insecure()) acting.emplace(caller);
  if (started.ok()) {
    // The reactor and response stay valid until Finish: `done` runs once,
    // and is the one place the outcome is known (the home answers later).
    started = state_->AllocLmr(
        *request, [reactor, response, caller,
                   fields](absl::StatusOr<lite::v1::AllocLmrResponse> result) {
          Audit(caller, "AllocLmr", fields, result.status());
          if (result.ok()) *response = std::move(*result);
          reactor->Finish(ToGrpcStatus(result.status()));
        });
  }
  if (!started.ok()) {
    Audit(caller, "AllocLmr", fields, started);
    reactor->Finish(ToGrpcStatus(started));
  }
  return reactor;
}

grpc::ServerUnaryReactor* ClusterManagerService::MapLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::MapLmrRequest* request,
    lite::v1::MapLmrResponse* response) {
  return NodeRpc(context, *state_, *authz_, "MapLmr",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " name=", Quoted(request->name()),
                              " uid=", request->requester().uid(),
                              " gid=", request->requester().gid(),
                              " access=", request->access().read() ? "r" : "",
                              request->access().write() ? "w" : ""),
                 response, [&] { return state_->MapLmr(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::UnmapLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::UnmapLmrRequest* request,
    lite::v1::UnmapLmrResponse* response) {
  return NodeRpc(context, *state_, *authz_, "UnmapLmr",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " grant=", request->grant_id()),
                 response, [&] { return state_->UnmapLmr(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::FreeLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::FreeLmrRequest* request,
    lite::v1::FreeLmrResponse* response) {
  return NodeRpc(context, *state_, *authz_, "FreeLmr",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " name=", Quoted(request->name()),
                              " uid=", request->requester().uid()),
                 response, [&] { return state_->FreeLmr(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::RestoreGrant(
    grpc::CallbackServerContext* context,
    const lite::v1::RestoreGrantRequest* request,
    lite::v1::RestoreGrantResponse* response) {
  return NodeRpc(context, *state_, *authz_, "RestoreGrant",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " grant=", request->grant().grant_id(),
                              " lmr=", request->grant().lmr_id(),
                              request->revoking() ? " revoking" : ""),
                 response, [&] { return state_->RestoreGrant(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::RegisterService(
    grpc::CallbackServerContext* context,
    const lite::v1::RegisterServiceRequest* request,
    lite::v1::RegisterServiceResponse* response) {
  return NodeRpc(
      context, *state_, *authz_, "RegisterService", request->caller().node_id(),
      absl::StrCat(
          CallerFields(request->caller()), " name=", Quoted(request->name()),
          " port=", request->port(), " uid=", request->owner().uid(),
          " gid=", request->owner().gid(),
          " mode=", absl::StrFormat("0%o", request->mode()),
          request->restore_service_id()
              ? absl::StrCat(" restore=", request->restore_service_id())
              : ""),
      response, [&] { return state_->RegisterService(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::UnregisterService(
    grpc::CallbackServerContext* context,
    const lite::v1::UnregisterServiceRequest* request,
    lite::v1::UnregisterServiceResponse* response) {
  return NodeRpc(context, *state_, *authz_, "UnregisterService",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " service=", request->service_id()),
                 response, [&] { return state_->UnregisterService(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::OpenService(
    grpc::CallbackServerContext* context,
    const lite::v1::OpenServiceRequest* request,
    lite::v1::OpenServiceResponse* response) {
  return NodeRpc(context, *state_, *authz_, "OpenService",
                 request->caller().node_id(),
                 absl::StrCat(CallerFields(request->caller()),
                              " name=", Quoted(request->name()),
                              " uid=", request->requester().uid(),
                              " gid=", request->requester().gid()),
                 response, [&] { return state_->OpenService(*request); });
}

grpc::ServerUnaryReactor* ClusterManagerService::BindService(
    grpc::CallbackServerContext* context,
    const lite::v1::BindServiceRequest* request,
    lite::v1::BindServiceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string caller;
  // The reply address and key stay out of the audit, like grants' keys.
  const std::string fields = absl::StrCat(
      CallerFields(request->caller()), " service=", request->service_id(),
      " slot_bytes=", request->reply_slot_bytes());
  if (absl::Status known = Identify(context, *authz_, "BindService", &caller);
      !known.ok()) {
    reactor->Finish(ToGrpcStatus(known));
    return reactor;
  }
  absl::Status started =
      CheckActsFor(*state_, *authz_, caller, request->caller().node_id());
  std::optional<ManagerState::ActingAs> acting;
  if (!authz_->insecure()) acting.emplace(caller);
  if (started.ok()) {
    // As AllocLmr: `done` runs once, when the server node answers.
    started = state_->BindService(
        *request, [reactor, response, caller, fields](
                      absl::StatusOr<lite::v1::BindServiceResponse> result) {
          Audit(caller, "BindService", fields, result.status());
          if (result.ok()) *response = std::move(*result);
          reactor->Finish(ToGrpcStatus(result.status()));
        });
  }
  if (!started.ok()) {
    Audit(caller, "BindService", fields, started);
    reactor->Finish(ToGrpcStatus(started));
  }
  return reactor;
}

}  // namespace lite::controlplane
