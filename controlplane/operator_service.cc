#include "controlplane/operator_service.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc/status.h"
#include "common/tls/identity.h"
#include "controlplane/audit.h"
#include "controlplane/stream_pump.h"
#include "controlplane/unary_reply.h"

namespace lite::controlplane {

namespace {

std::string NodeFields(uint32_t node_id, const std::string& node_name) {
  return node_name.empty() ? absl::StrCat("node=", node_id)
                           : absl::StrCat("node_name=", Quoted(node_name));
}

// One operator's Watch stream.
class WatchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // `outbox` is the watch OpenWatch registered; `hold` the caller's hold
  // on role operator (released in OnDone).
  WatchReactor(ManagerState* state, const tls::Authz* authz,
               std::shared_ptr<Outbox> outbox, uint64_t hold)
      : state_(state), authz_(authz), outbox_(std::move(outbox)), hold_(hold) {
    // Headers first (queued until gRPC binds this reactor), so that a client
    // knows the watch is registered before the first event.
    StartSendInitialMetadata();
    pump_ = std::make_shared<StreamPump<WatchReactor>>(
        this, outbox_, StreamPump<WatchReactor>::Mode::kWatch);
    outbox_->SetListener(pump_);
    pump_->OnOutboxReady();
  }

  void OnWriteDone(bool ok) override { pump_->OnWriteDone(ok); }

  void OnCancel() override {
    state_->CloseWatch(outbox_);
    pump_->Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    authz_->Release(hold_);
    state_->CloseWatch(outbox_);
    pump_->Detach();
    delete this;
  }

 private:
  ManagerState* const state_;
  const tls::Authz* const authz_;
  std::shared_ptr<Outbox> outbox_;
  const uint64_t hold_;
  std::shared_ptr<StreamPump<WatchReactor>> pump_;
};

// A Watch refused before it started: no role, a request that did not
// parse, or a since_revision OpenWatch refused.
class RejectWatch final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RejectWatch(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

absl::Status ClusterOperatorService::Allowed(
    grpc::CallbackServerContext* context, std::string* caller) const {
  return authz_->Require(*context->auth_context(), tls::Role::kOperator,
                         caller);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListNodes(
    grpc::CallbackServerContext* context,
    const lite::v1::ListNodesRequest* request,
    lite::v1::ListNodesResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    return Reply(context, absl::StatusOr<lite::v1::ListNodesResponse>(allowed),
                 response);
  }
  return Reply(context, state_->ListNodes(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListLmrs(
    grpc::CallbackServerContext* context,
    const lite::v1::ListLmrsRequest* request,
    lite::v1::ListLmrsResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    return Reply(context, absl::StatusOr<lite::v1::ListLmrsResponse>(allowed),
                 response);
  }
  return Reply(context, state_->ListLmrs(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListServices(
    grpc::CallbackServerContext* context,
    const lite::v1::ListServicesRequest* request,
    lite::v1::ListServicesResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    return Reply(context,
                 absl::StatusOr<lite::v1::ListServicesResponse>(allowed),
                 response);
  }
  return Reply(context, state_->ListServices(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListGrants(
    grpc::CallbackServerContext* context,
    const lite::v1::ListGrantsRequest* request,
    lite::v1::ListGrantsResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    return Reply(context, absl::StatusOr<lite::v1::ListGrantsResponse>(allowed),
                 response);
  }
  return Reply(context, state_->ListGrants(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::DrainNode(
    grpc::CallbackServerContext* context,
    const lite::v1::DrainNodeRequest* request,
    lite::v1::DrainNodeResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    // No request field: the caller is not an operator (audit.h).
    AuditRefused(caller, context->peer(), "DrainNode", allowed);
    return Reply(context, absl::StatusOr<lite::v1::DrainNodeResponse>(allowed),
                 response);
  }
  absl::StatusOr<lite::v1::DrainNodeResponse> result =
      state_->DrainNode(*request);
  Audit(caller, "DrainNode",
        absl::StrCat(NodeFields(request->node_id(), request->node_name()),
                     request->cancel() ? " cancel" : ""),
        result.status());
  return Reply(context, std::move(result), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::EvictNode(
    grpc::CallbackServerContext* context,
    const lite::v1::EvictNodeRequest* request,
    lite::v1::EvictNodeResponse* response) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) {
    // No request field: the caller is not an operator (audit.h).
    AuditRefused(caller, context->peer(), "EvictNode", allowed);
    return Reply(context, absl::StatusOr<lite::v1::EvictNodeResponse>(allowed),
                 response);
  }
  absl::StatusOr<lite::v1::EvictNodeResponse> result =
      state_->EvictNode(*request);
  Audit(caller, "EvictNode",
        absl::StrCat(NodeFields(request->node_id(), request->node_name()),
                     " reason=", Quoted(request->reason())),
        result.status());
  return Reply(context, std::move(result), response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* ClusterOperatorService::Watch(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  std::string caller;
  absl::Status allowed = Allowed(context, &caller);
  if (!allowed.ok()) return new RejectWatch(ToGrpcStatus(allowed));
  lite::v1::WatchRequest parsed;
  grpc::ByteBuffer copy(*request);
  grpc::Status status =
      grpc::SerializationTraits<lite::v1::WatchRequest>::Deserialize(&copy,
                                                                     &parsed);
  if (!status.ok()) {
    return new RejectWatch(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                     absl::StrCat("could not parse a WatchRequest: ",
                                  status.error_message())));
  }
  // With since_revision, the events after it come first (no gap after a
  // listing of that revision); OpenWatch's refusal ends the stream with
  // its code (OUT_OF_RANGE: list again; RESOURCE_EXHAUSTED: too many).
  absl::StatusOr<std::shared_ptr<Outbox>> opened =
      state_->OpenWatch(parsed.since_revision());
  if (!opened.ok()) return new RejectWatch(ToGrpcStatus(opened.status()));
  // The watch holds role operator while it lasts (authz.h): withdrawn from
  // the authz file, or the certificate expired, the watch ends with the
  // reason and is unregistered, so no further event reaches the caller.
  std::shared_ptr<Outbox> outbox = *std::move(opened);
  absl::StatusOr<uint64_t> hold = authz_->Hold(
      caller, tls::Role::kOperator, tls::PeerNotAfter(*context->auth_context()),
      [state = state_, outbox](const absl::Status& why) {
        outbox->Close(why, /*drain=*/false);
        state->CloseWatch(outbox);
      });
  if (!hold.ok()) {
    state_->CloseWatch(outbox);
    return new RejectWatch(ToGrpcStatus(hold.status()));
  }
  return new WatchReactor(state_, authz_, std::move(outbox), *hold);
}

}  // namespace lite::controlplane
