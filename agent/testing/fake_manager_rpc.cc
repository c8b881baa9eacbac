// FakeManager's RPC service calls: scripted answers and records.
#include <utility>

#include "agent/testing/fake_manager.h"

namespace lite::agent::testing {

void FakeManager::SetRpcDefaults() {
  absl::MutexLock lock(&mu_);
  on_register_service_ =
      [this](const lite::v1::RegisterServiceRequest& req,
             lite::v1::RegisterServiceResponse* resp)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {
            lite::v1::Service* s = resp->mutable_service();
            s->set_service_id(req.restore_service_id() != 0
                                  ? req.restore_service_id()
                                  : (uint64_t{req.caller().node_id()} << 32) |
                                        next_seq_++);
            s->set_name(req.name());
            s->set_node_id(req.caller().node_id());
            s->set_port(req.port());
            return grpc::Status::OK;
          };
  on_unregister_service_ = [](const lite::v1::UnregisterServiceRequest&,
                              lite::v1::UnregisterServiceResponse*) {
    return grpc::Status::OK;
  };
  on_open_service_ = [](const lite::v1::OpenServiceRequest& req,
                        lite::v1::OpenServiceResponse* resp) {
    lite::v1::Service* s = resp->mutable_service();
    s->set_service_id((uint64_t{2} << 32) | 7);
    s->set_name(req.name());
    s->set_node_id(2);
    s->set_port(5);
    s->set_max_request_bytes(64);
    s->set_max_reply_bytes(128);
    s->set_depth(8);
    return grpc::Status::OK;
  };
  on_bind_service_ = [](const lite::v1::BindServiceRequest&,
                        lite::v1::BindServiceResponse* resp) {
    lite::v1::BoundServiceRing* r = resp->mutable_ring();
    r->set_ring_address(0x5000);
    r->set_ring_key(0x66);
    r->set_depth(8);
    r->set_slot_bytes(64);
    return grpc::Status::OK;
  };
}

void FakeManager::OnRegisterService(
    Handler<lite::v1::RegisterServiceRequest, lite::v1::RegisterServiceResponse>
        h) {
  absl::MutexLock lock(&mu_);
  on_register_service_ = std::move(h);
}

void FakeManager::OnUnregisterService(
    Handler<lite::v1::UnregisterServiceRequest,
            lite::v1::UnregisterServiceResponse>
        h) {
  absl::MutexLock lock(&mu_);
  on_unregister_service_ = std::move(h);
}

void FakeManager::OnOpenService(
    Handler<lite::v1::OpenServiceRequest, lite::v1::OpenServiceResponse> h) {
  absl::MutexLock lock(&mu_);
  on_open_service_ = std::move(h);
}

void FakeManager::OnBindService(
    Handler<lite::v1::BindServiceRequest, lite::v1::BindServiceResponse> h) {
  absl::MutexLock lock(&mu_);
  on_bind_service_ = std::move(h);
}

std::vector<lite::v1::RegisterServiceRequest> FakeManager::service_registers()
    const {
  absl::MutexLock lock(&mu_);
  return service_registers_;
}

std::vector<lite::v1::UnregisterServiceRequest>
FakeManager::service_unregisters() const {
  absl::MutexLock lock(&mu_);
  return service_unregisters_;
}

std::vector<lite::v1::OpenServiceRequest> FakeManager::opens() const {
  absl::MutexLock lock(&mu_);
  return opens_;
}

std::vector<lite::v1::BindServiceRequest> FakeManager::binds() const {
  absl::MutexLock lock(&mu_);
  return binds_;
}

grpc::Status FakeManager::RegisterService(
    grpc::ServerContext*, const lite::v1::RegisterServiceRequest* req,
    lite::v1::RegisterServiceResponse* resp) {
  absl::MutexLock lock(&mu_);
  service_registers_.push_back(*req);
  call_order_.push_back("RegisterService");
  return on_register_service_(*req, resp);
}

grpc::Status FakeManager::UnregisterService(
    grpc::ServerContext*, const lite::v1::UnregisterServiceRequest* req,
    lite::v1::UnregisterServiceResponse* resp) {
  absl::MutexLock lock(&mu_);
  service_unregisters_.push_back(*req);
  call_order_.push_back("UnregisterService");
  return on_unregister_service_(*req, resp);
}

grpc::Status FakeManager::OpenService(grpc::ServerContext*,
                                      const lite::v1::OpenServiceRequest* req,
                                      lite::v1::OpenServiceResponse* resp) {
  absl::MutexLock lock(&mu_);
  opens_.push_back(*req);
  call_order_.push_back("OpenService");
  return on_open_service_(*req, resp);
}

grpc::Status FakeManager::BindService(grpc::ServerContext*,
                                      const lite::v1::BindServiceRequest* req,
                                      lite::v1::BindServiceResponse* resp) {
  absl::MutexLock lock(&mu_);
  binds_.push_back(*req);
  call_order_.push_back("BindService");
  return on_bind_service_(*req, resp);
}

}  // namespace lite::agent::testing
