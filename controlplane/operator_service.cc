#include "controlplane/operator_service.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc/status.h"
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

// One operator's Watch stream.
class WatchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit WatchReactor(ManagerState* state) : state_(state) {
    // Headers first (queued until gRPC binds this reactor), so that a client
    // knows the watch is registered before the first event.
    StartSendInitialMetadata();
    outbox_ = state_->OpenWatch();
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
    state_->CloseWatch(outbox_);
    pump_->Detach();
    delete this;
  }

 private:
  ManagerState* const state_;
  std::shared_ptr<Outbox> outbox_;
  std::shared_ptr<StreamPump<WatchReactor>> pump_;
};

// A Watch whose request did not parse.
class RejectWatch final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RejectWatch(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerUnaryReactor* ClusterOperatorService::ListNodes(
    grpc::CallbackServerContext* context,
    const lite::v1::ListNodesRequest* request,
    lite::v1::ListNodesResponse* response) {
  return Reply(context, state_->ListNodes(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListLmrs(
    grpc::CallbackServerContext* context,
    const lite::v1::ListLmrsRequest* request,
    lite::v1::ListLmrsResponse* response) {
  return Reply(context, state_->ListLmrs(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::ListGrants(
    grpc::CallbackServerContext* context,
    const lite::v1::ListGrantsRequest* request,
    lite::v1::ListGrantsResponse* response) {
  return Reply(context, state_->ListGrants(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::DrainNode(
    grpc::CallbackServerContext* context,
    const lite::v1::DrainNodeRequest* request,
    lite::v1::DrainNodeResponse* response) {
  return Reply(context, state_->DrainNode(*request), response);
}

grpc::ServerUnaryReactor* ClusterOperatorService::EvictNode(
    grpc::CallbackServerContext* context,
    const lite::v1::EvictNodeRequest* request,
    lite::v1::EvictNodeResponse* response) {
  return Reply(context, state_->EvictNode(*request), response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* ClusterOperatorService::Watch(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
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
  return new WatchReactor(state_);
}

}  // namespace lite::controlplane
