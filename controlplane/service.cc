#include "controlplane/service.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "controlplane/stream_pump.h"

namespace lite::controlplane {

namespace {

template <typename Response>
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context,
                                absl::StatusOr<Response> result,
                                Response* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = std::move(*result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

// One agent's Session stream. Reads are handled inline (they only call the
// state machine); writes come from the node's outbox through a StreamPump.
class SessionReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SessionReactor(ManagerState* state, grpc::CallbackServerContext* context)
      : state_(state), context_(context) {
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
    if (pump_ != nullptr) pump_->Detach();
    if (bound_) End(absl::CancelledError("the session ended"));
    delete this;
  }

 private:
  void Open(const lite::v1::AgentMessage& message) {
    if (!message.has_heartbeat()) {
      Fail(absl::InvalidArgumentError(
          "the first message on a session must be a Heartbeat with the node "
          "id and incarnation Join returned"));
      return;
    }
    absl::StatusOr<OpenedSession> opened =
        state_->OpenSession(message.heartbeat());
    if (!opened.ok()) {
      Fail(opened.status());
      return;
    }
    bound_ = true;
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
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer in_;
  bool bound_ = false;
  bool ended_ = false;
  SessionBinding binding_;
  std::shared_ptr<StreamPump<SessionReactor>> pump_;
};

}  // namespace

grpc::ServerUnaryReactor* ClusterManagerService::Join(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  lite::v1::JoinRequest parsed;
  grpc::ByteBuffer copy(*request);
  grpc::Status status =
      grpc::SerializationTraits<lite::v1::JoinRequest>::Deserialize(&copy,
                                                                    &parsed);
  if (!status.ok()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 absl::StrCat("could not parse a JoinRequest: ",
                                              status.error_message())));
    return reactor;
  }
  absl::StatusOr<std::string> wire = state_->JoinWire(parsed);
  if (wire.ok()) {
    grpc::Slice slice(*wire);
    *response = grpc::ByteBuffer(&slice, 1);
  }
  reactor->Finish(ToGrpcStatus(wire.status()));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
ClusterManagerService::Session(grpc::CallbackServerContext* context) {
  return new SessionReactor(state_, context);
}

grpc::ServerUnaryReactor* ClusterManagerService::Leave(
    grpc::CallbackServerContext* context, const lite::v1::LeaveRequest* request,
    lite::v1::LeaveResponse* response) {
  absl::Status left = state_->Leave(*request);
  absl::StatusOr<lite::v1::LeaveResponse> result =
      left.ok()
          ? absl::StatusOr<lite::v1::LeaveResponse>(lite::v1::LeaveResponse())
          : absl::StatusOr<lite::v1::LeaveResponse>(left);
  return Reply(context, std::move(result), response);
}

grpc::ServerUnaryReactor* ClusterManagerService::RegisterLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::RegisterLmrRequest* request,
    lite::v1::RegisterLmrResponse* response) {
  return Reply(context, state_->RegisterLmr(*request), response);
}

grpc::ServerUnaryReactor* ClusterManagerService::AllocLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::AllocLmrRequest* request,
    lite::v1::AllocLmrResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // The reactor and response stay valid until Finish: `done` runs once.
  absl::Status started = state_->AllocLmr(
      *request,
      [reactor, response](absl::StatusOr<lite::v1::AllocLmrResponse> result) {
        if (result.ok()) *response = std::move(*result);
        reactor->Finish(ToGrpcStatus(result.status()));
      });
  if (!started.ok()) reactor->Finish(ToGrpcStatus(started));
  return reactor;
}

grpc::ServerUnaryReactor* ClusterManagerService::MapLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::MapLmrRequest* request,
    lite::v1::MapLmrResponse* response) {
  return Reply(context, state_->MapLmr(*request), response);
}

grpc::ServerUnaryReactor* ClusterManagerService::UnmapLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::UnmapLmrRequest* request,
    lite::v1::UnmapLmrResponse* response) {
  return Reply(context, state_->UnmapLmr(*request), response);
}

grpc::ServerUnaryReactor* ClusterManagerService::FreeLmr(
    grpc::CallbackServerContext* context,
    const lite::v1::FreeLmrRequest* request,
    lite::v1::FreeLmrResponse* response) {
  return Reply(context, state_->FreeLmr(*request), response);
}

grpc::ServerUnaryReactor* ClusterManagerService::RestoreGrant(
    grpc::CallbackServerContext* context,
    const lite::v1::RestoreGrantRequest* request,
    lite::v1::RestoreGrantResponse* response) {
  return Reply(context, state_->RestoreGrant(*request), response);
}

}  // namespace lite::controlplane
