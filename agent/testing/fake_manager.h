// FakeManager: a scriptable lite.v1.ClusterManager for the agent's unit
// tests. It records every call, answers unary calls with handlers a test
// can replace, and lets a test push ManagerMessages into the open Session and
// end it, so that the agent's reactions can be checked one at a time without
// the real litemgr.
#ifndef LITE_AGENT_TESTING_FAKE_MANAGER_H_
#define LITE_AGENT_TESTING_FAKE_MANAGER_H_

#include <grpcpp/grpcpp.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::agent::testing {

class FakeManager final : public lite::v1::ClusterManager::Service {
 public:
  template <typename Req, typename Resp>
  using Handler = std::function<grpc::Status(const Req&, Resp*)>;

  FakeManager();

  // ---- Script (set before the agent calls) ----
  // Default: node 1, incarnation 1, 2, ... per Join, lease 1000 ms,
  // heartbeats every 20 ms, no members but the caller.
  void OnJoin(Handler<lite::v1::JoinRequest, lite::v1::JoinResponse> h);
  // Default: OK, echoing the request as the LMR (id 0 -> node<<32 | n).
  void OnRegisterLmr(
      Handler<lite::v1::RegisterLmrRequest, lite::v1::RegisterLmrResponse> h);
  // Default: OK.
  void OnRestoreGrant(
      Handler<lite::v1::RestoreGrantRequest, lite::v1::RestoreGrantResponse> h);
  // Default: OK, a grant for the caller on the named LMR.
  void OnMapLmr(Handler<lite::v1::MapLmrRequest, lite::v1::MapLmrResponse> h);
  // RPC services (fake_manager_rpc.cc). Defaults: RegisterService OK with
  // restore_service_id or node<<32 | n; UnregisterService OK; OpenService OK
  // with service 0x200000007 on node 2 port 5 (64/128 bytes, depth 8);
  // BindService OK with a ring of depth 8 and 64-byte slots.
  void OnRegisterService(Handler<lite::v1::RegisterServiceRequest,
                                 lite::v1::RegisterServiceResponse>
                             h);
  void OnUnregisterService(Handler<lite::v1::UnregisterServiceRequest,
                                   lite::v1::UnregisterServiceResponse>
                               h);
  void OnOpenService(
      Handler<lite::v1::OpenServiceRequest, lite::v1::OpenServiceResponse> h);
  void OnBindService(
      Handler<lite::v1::BindServiceRequest, lite::v1::BindServiceResponse> h);
  std::vector<lite::v1::RegisterServiceRequest> service_registers() const;
  std::vector<lite::v1::UnregisterServiceRequest> service_unregisters() const;
  std::vector<lite::v1::OpenServiceRequest> opens() const;
  std::vector<lite::v1::BindServiceRequest> binds() const;
  // Whether heartbeats are acknowledged. Default true.
  void SetAutoAck(bool on);

  // ---- Session control ----
  // Queues a message for the open session (or the next one to open).
  void Push(const lite::v1::ManagerMessage& msg);
  // Cancels the open session (the agent sees it end).
  void EndSession();
  // Waits until `n` sessions have been opened in total.
  bool WaitForSessions(int n, absl::Duration timeout);
  // Waits until pred(recorded calls) holds; true if it did within timeout.
  bool WaitFor(const std::function<bool(const FakeManager&)>& pred,
               absl::Duration timeout);

  // ---- Records (copies) ----
  std::vector<lite::v1::JoinRequest> joins() const;
  std::vector<lite::v1::AgentMessage> received() const;
  std::vector<lite::v1::RegisterLmrRequest> registers() const;
  std::vector<lite::v1::RestoreGrantRequest> restores() const;
  std::vector<lite::v1::LeaveRequest> leaves() const;
  std::vector<lite::v1::MapLmrRequest> maps() const;
  // AllocLmr answers OK with the LMR as the request describes it (id
  // node<<32 | n, homed on the caller); FreeLmr answers OK.
  std::vector<lite::v1::AllocLmrRequest> allocs() const;
  std::vector<lite::v1::FreeLmrRequest> frees() const;
  // The order of calls by method name ("Join", "Session", "RegisterLmr"...).
  std::vector<std::string> call_order() const;
  int sessions_opened() const;
  // Unlocked helpers for WaitFor predicates (called with the lock held).
  int heartbeats_locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const std::vector<lite::v1::AgentMessage>& received_locked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return received_;
  }
  const std::vector<lite::v1::JoinRequest>& joins_locked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return joins_;
  }
  int sessions_opened_locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return sessions_opened_;
  }

  // ---- ClusterManager ----
  grpc::Status Join(grpc::ServerContext*, const lite::v1::JoinRequest* req,
                    lite::v1::JoinResponse* resp) override;
  grpc::Status Session(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<lite::v1::ManagerMessage,
                               lite::v1::AgentMessage>* stream) override;
  grpc::Status Leave(grpc::ServerContext*, const lite::v1::LeaveRequest* req,
                     lite::v1::LeaveResponse* resp) override;
  grpc::Status RegisterLmr(grpc::ServerContext*,
                           const lite::v1::RegisterLmrRequest* req,
                           lite::v1::RegisterLmrResponse* resp) override;
  grpc::Status RestoreGrant(grpc::ServerContext*,
                            const lite::v1::RestoreGrantRequest* req,
                            lite::v1::RestoreGrantResponse* resp) override;
  grpc::Status MapLmr(grpc::ServerContext*, const lite::v1::MapLmrRequest* req,
                      lite::v1::MapLmrResponse* resp) override;
  grpc::Status AllocLmr(grpc::ServerContext*,
                        const lite::v1::AllocLmrRequest* req,
                        lite::v1::AllocLmrResponse* resp) override;
  grpc::Status FreeLmr(grpc::ServerContext*,
                       const lite::v1::FreeLmrRequest* req,
                       lite::v1::FreeLmrResponse* resp) override;

  grpc::Status RegisterService(
      grpc::ServerContext*, const lite::v1::RegisterServiceRequest* req,
      lite::v1::RegisterServiceResponse* resp) override;
  grpc::Status UnregisterService(
      grpc::ServerContext*, const lite::v1::UnregisterServiceRequest* req,
      lite::v1::UnregisterServiceResponse* resp) override;
  grpc::Status OpenService(grpc::ServerContext*,
                           const lite::v1::OpenServiceRequest* req,
                           lite::v1::OpenServiceResponse* resp) override;
  grpc::Status BindService(grpc::ServerContext*,
                           const lite::v1::BindServiceRequest* req,
                           lite::v1::BindServiceResponse* resp) override;

  mutable absl::Mutex mu_;

 private:
  // The RPC defaults (fake_manager_rpc.cc).
  void SetRpcDefaults();

  Handler<lite::v1::JoinRequest, lite::v1::JoinResponse> on_join_
      ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::RegisterLmrRequest, lite::v1::RegisterLmrResponse>
      on_register_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::RestoreGrantRequest, lite::v1::RestoreGrantResponse>
      on_restore_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::MapLmrRequest, lite::v1::MapLmrResponse> on_map_
      ABSL_GUARDED_BY(mu_);
  bool auto_ack_ ABSL_GUARDED_BY(mu_) = true;
  uint64_t next_incarnation_ ABSL_GUARDED_BY(mu_) = 1;
  uint32_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;

  std::deque<lite::v1::ManagerMessage> outbox_ ABSL_GUARDED_BY(mu_);
  grpc::ServerContext* session_ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  int sessions_opened_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<lite::v1::JoinRequest> joins_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::AgentMessage> received_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::RegisterLmrRequest> registers_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::RestoreGrantRequest> restores_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::LeaveRequest> leaves_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::MapLmrRequest> maps_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::AllocLmrRequest> allocs_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::FreeLmrRequest> frees_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> call_order_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::RegisterServiceRequest, lite::v1::RegisterServiceResponse>
      on_register_service_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::UnregisterServiceRequest,
          lite::v1::UnregisterServiceResponse>
      on_unregister_service_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::OpenServiceRequest, lite::v1::OpenServiceResponse>
      on_open_service_ ABSL_GUARDED_BY(mu_);
  Handler<lite::v1::BindServiceRequest, lite::v1::BindServiceResponse>
      on_bind_service_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::RegisterServiceRequest> service_registers_
      ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::UnregisterServiceRequest> service_unregisters_
      ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::OpenServiceRequest> opens_ ABSL_GUARDED_BY(mu_);
  std::vector<lite::v1::BindServiceRequest> binds_ ABSL_GUARDED_BY(mu_);
};

// A FakeManager served on a loopback port of its own.
class FakeManagerServer {
 public:
  // port 0: pick one.
  explicit FakeManagerServer(int port = 0);
  ~FakeManagerServer();
  FakeManager& manager() { return manager_; }
  int port() const { return port_; }
  std::string address() const;
  // Stops serving (ends every call), as a manager crash would.
  void Stop();

 private:
  FakeManager manager_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace lite::agent::testing

#endif  // LITE_AGENT_TESTING_FAKE_MANAGER_H_
