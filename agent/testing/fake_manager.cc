#include "agent/testing/fake_manager.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace lite::agent::testing {

FakeManager::FakeManager() {
  on_join_ =
      [this](const lite::v1::JoinRequest& req, lite::v1::JoinResponse* resp)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {
            resp->set_node_id(1);
            resp->set_incarnation(next_incarnation_++);
            resp->set_lease_duration_ms(1000);
            resp->set_heartbeat_interval_ms(20);
            lite::v1::Member* self = resp->add_members();
            self->set_node_id(1);
            self->set_node_name(req.node_name());
            self->set_rdma_address(req.rdma_address());
            self->set_incarnation(resp->incarnation());
            self->set_state(lite::v1::NODE_STATE_ALIVE);
            return grpc::Status::OK;
          };
  on_register_ =
      [this](const lite::v1::RegisterLmrRequest& req,
             lite::v1::RegisterLmrResponse* resp)
          ABSL_NO_THREAD_SAFETY_ANALYSIS {
            lite::v1::Lmr* lmr = resp->mutable_lmr();
            lmr->set_lmr_id(req.lmr_id() != 0
                                ? req.lmr_id()
                                : (uint64_t{req.caller().node_id()} << 32) |
                                      next_seq_++);
            lmr->set_name(req.name());
            lmr->set_home_node_id(req.caller().node_id());
            lmr->set_size_bytes(req.size_bytes());
            lmr->set_owner_uid(req.owner().uid());
            lmr->set_owner_gid(req.owner().gid());
            lmr->set_mode(req.mode());
            lmr->set_epoch(req.caller().incarnation());
            *lmr->mutable_chunks() = req.chunks();
            lmr->set_memory_key(req.memory_key());
            lmr->set_read_key(req.read_key());
            lmr->set_origin(req.origin() == lite::v1::LMR_ORIGIN_UNSPECIFIED
                                ? lite::v1::LMR_ORIGIN_REGISTERED
                                : req.origin());
            return grpc::Status::OK;
          };
  on_restore_ = [](const lite::v1::RestoreGrantRequest& req,
                   lite::v1::RestoreGrantResponse* resp) {
    *resp->mutable_grant() = req.grant();
    return grpc::Status::OK;
  };
  on_map_ = [this](
                const lite::v1::MapLmrRequest& req,
                lite::v1::MapLmrResponse* resp) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    lite::v1::Grant* g = resp->mutable_grant();
    g->set_grant_id((uint64_t{req.caller().node_id()} << 32) | next_seq_++);
    g->set_lmr_id((uint64_t{2} << 32) | 1);
    g->set_lmr_name(req.name());
    g->set_home_node_id(2);
    g->set_holder_node_id(req.caller().node_id());
    g->set_holder_incarnation(req.caller().incarnation());
    *g->mutable_requester() = req.requester();
    *g->mutable_access() = req.access();
    g->set_epoch(1);
    g->set_size_bytes(4096);
    lite::v1::LmrChunk* c = g->add_chunks();
    c->set_address(0x1000);
    c->set_length_bytes(4096);
    return grpc::Status::OK;
  };
  SetRpcDefaults();
}

void FakeManager::OnJoin(
    Handler<lite::v1::JoinRequest, lite::v1::JoinResponse> h) {
  absl::MutexLock lock(&mu_);
  on_join_ = std::move(h);
}

void FakeManager::OnRegisterLmr(
    Handler<lite::v1::RegisterLmrRequest, lite::v1::RegisterLmrResponse> h) {
  absl::MutexLock lock(&mu_);
  on_register_ = std::move(h);
}

void FakeManager::OnRestoreGrant(
    Handler<lite::v1::RestoreGrantRequest, lite::v1::RestoreGrantResponse> h) {
  absl::MutexLock lock(&mu_);
  on_restore_ = std::move(h);
}

void FakeManager::OnMapLmr(
    Handler<lite::v1::MapLmrRequest, lite::v1::MapLmrResponse> h) {
  absl::MutexLock lock(&mu_);
  on_map_ = std::move(h);
}

void FakeManager::SetAutoAck(bool on) {
  absl::MutexLock lock(&mu_);
  auto_ack_ = on;
}

void FakeManager::Push(const lite::v1::ManagerMessage& msg) {
  absl::MutexLock lock(&mu_);
  outbox_.push_back(msg);
}

void FakeManager::EndSession() {
  absl::MutexLock lock(&mu_);
  if (session_ctx_ != nullptr) session_ctx_->TryCancel();
}

bool FakeManager::WaitForSessions(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return sessions_opened_ >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

bool FakeManager::WaitFor(const std::function<bool(const FakeManager&)>& pred,
                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this, &pred]()
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pred(*this); };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

int FakeManager::heartbeats_locked() const {
  int n = 0;
  for (const auto& m : received_) n += m.has_heartbeat() ? 1 : 0;
  return n;
}

std::vector<lite::v1::JoinRequest> FakeManager::joins() const {
  absl::MutexLock lock(&mu_);
  return joins_;
}
std::vector<lite::v1::AgentMessage> FakeManager::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}
std::vector<lite::v1::RegisterLmrRequest> FakeManager::registers() const {
  absl::MutexLock lock(&mu_);
  return registers_;
}
std::vector<lite::v1::RestoreGrantRequest> FakeManager::restores() const {
  absl::MutexLock lock(&mu_);
  return restores_;
}
std::vector<lite::v1::LeaveRequest> FakeManager::leaves() const {
  absl::MutexLock lock(&mu_);
  return leaves_;
}
std::vector<lite::v1::MapLmrRequest> FakeManager::maps() const {
  absl::MutexLock lock(&mu_);
  return maps_;
}
std::vector<lite::v1::AllocLmrRequest> FakeManager::allocs() const {
  absl::MutexLock lock(&mu_);
  return allocs_;
}
std::vector<lite::v1::FreeLmrRequest> FakeManager::frees() const {
  absl::MutexLock lock(&mu_);
  return frees_;
}
std::vector<std::string> FakeManager::call_order() const {
  absl::MutexLock lock(&mu_);
  return call_order_;
}
int FakeManager::sessions_opened() const {
  absl::MutexLock lock(&mu_);
  return sessions_opened_;
}

grpc::Status FakeManager::Join(grpc::ServerContext*,
                               const lite::v1::JoinRequest* req,
                               lite::v1::JoinResponse* resp) {
  absl::MutexLock lock(&mu_);
  joins_.push_back(*req);
  call_order_.push_back("Join");
  return on_join_(*req, resp);
}

grpc::Status FakeManager::Session(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<lite::v1::ManagerMessage, lite::v1::AgentMessage>*
        stream) {
  {
    absl::MutexLock lock(&mu_);
    session_ctx_ = ctx;
    ++sessions_opened_;
    call_order_.push_back("Session");
  }
  bool reader_done = false;
  std::thread reader([&] {
    lite::v1::AgentMessage msg;
    while (stream->Read(&msg)) {
      absl::MutexLock lock(&mu_);
      received_.push_back(msg);
      if (msg.has_heartbeat() && auto_ack_) {
        lite::v1::ManagerMessage ack;
        ack.mutable_heartbeat_ack()->set_heartbeat_seq(
            msg.heartbeat().heartbeat_seq());
        ack.mutable_heartbeat_ack()->set_lease_remaining_ms(1000);
        outbox_.push_back(ack);
      }
    }
    absl::MutexLock lock(&mu_);
    reader_done = true;
  });
  while (true) {
    lite::v1::ManagerMessage out;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return reader_done || !outbox_.empty();
      };
      // Bounded so that a cancelled call is noticed even with nothing to do.
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(20));
      if (reader_done || ctx->IsCancelled()) break;
      if (outbox_.empty()) continue;
      out = outbox_.front();
      outbox_.pop_front();
    }
    if (!stream->Write(out)) break;
  }
  ctx->TryCancel();
  reader.join();
  absl::MutexLock lock(&mu_);
  session_ctx_ = nullptr;
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "session ended");
}

grpc::Status FakeManager::Leave(grpc::ServerContext*,
                                const lite::v1::LeaveRequest* req,
                                lite::v1::LeaveResponse*) {
  absl::MutexLock lock(&mu_);
  leaves_.push_back(*req);
  call_order_.push_back("Leave");
  // The real manager announces the Leave and then ends the session.
  if (session_ctx_ != nullptr) session_ctx_->TryCancel();
  return grpc::Status::OK;
}

grpc::Status FakeManager::RegisterLmr(grpc::ServerContext*,
                                      const lite::v1::RegisterLmrRequest* req,
                                      lite::v1::RegisterLmrResponse* resp) {
  absl::MutexLock lock(&mu_);
  registers_.push_back(*req);
  call_order_.push_back("RegisterLmr");
  return on_register_(*req, resp);
}

grpc::Status FakeManager::RestoreGrant(grpc::ServerContext*,
                                       const lite::v1::RestoreGrantRequest* req,
                                       lite::v1::RestoreGrantResponse* resp) {
  absl::MutexLock lock(&mu_);
  restores_.push_back(*req);
  call_order_.push_back("RestoreGrant");
  return on_restore_(*req, resp);
}

grpc::Status FakeManager::MapLmr(grpc::ServerContext*,
                                 const lite::v1::MapLmrRequest* req,
                                 lite::v1::MapLmrResponse* resp) {
  absl::MutexLock lock(&mu_);
  maps_.push_back(*req);
  call_order_.push_back("MapLmr");
  return on_map_(*req, resp);
}

grpc::Status FakeManager::AllocLmr(grpc::ServerContext*,
                                   const lite::v1::AllocLmrRequest* req,
                                   lite::v1::AllocLmrResponse* resp) {
  absl::MutexLock lock(&mu_);
  allocs_.push_back(*req);
  call_order_.push_back("AllocLmr");
  lite::v1::Lmr* lmr = resp->mutable_lmr();
  lmr->set_lmr_id((uint64_t{req->caller().node_id()} << 32) | next_seq_++);
  lmr->set_name(req->name());
  lmr->set_home_node_id(req->caller().node_id());
  lmr->set_size_bytes(req->size_bytes());
  lmr->set_owner_uid(req->owner().uid());
  lmr->set_owner_gid(req->owner().gid());
  lmr->set_mode(req->mode());
  lmr->set_epoch(req->caller().incarnation());
  lmr->set_origin(lite::v1::LMR_ORIGIN_ALLOCATED);
  return grpc::Status::OK;
}

grpc::Status FakeManager::FreeLmr(grpc::ServerContext*,
                                  const lite::v1::FreeLmrRequest* req,
                                  lite::v1::FreeLmrResponse*) {
  absl::MutexLock lock(&mu_);
  frees_.push_back(*req);
  call_order_.push_back("FreeLmr");
  return grpc::Status::OK;
}

FakeManagerServer::FakeManagerServer(int port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("127.0.0.1:", port),
                           grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(&manager_);
  server_ = builder.BuildAndStart();
}

FakeManagerServer::~FakeManagerServer() { Stop(); }

std::string FakeManagerServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void FakeManagerServer::Stop() {
  if (server_ == nullptr) return;
  manager_.EndSession();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  server_->Wait();
  server_.reset();
}

}  // namespace lite::agent::testing
