// lite.v1.ClusterManager (the nodes' service) over gRPC: a thin layer that
// moves messages between the network and ManagerState. Uses gRPC's callback
// API so that thousands of sessions cost no thread each. Session is a raw
// (ByteBuffer) method so that each event is serialized once for all
// sessions, and Join is raw so that its member list is copied pre-encoded.
// The operators' service is operator_service.h.
//
// Who may call: every method needs a certificate with role node, acting only
// for the node named in it (Join's node_name; NodeCaller.node_id and the
// Session's first Heartbeat must be the id the manager gave that name).
// Mutating calls are audit-logged (audit.h). docs/controlplane.md, "Who may
// call what".
#ifndef LITE_CONTROLPLANE_SERVICE_H_
#define LITE_CONTROLPLANE_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/tls/authz.h"
#include "controlplane/manager_state.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::controlplane {

namespace internal {
using CM = lite::v1::ClusterManager;
// Every method on the callback API; Join and Session raw.
using ClusterManagerBase =
    CM::WithRawCallbackMethod_Join<CM::WithRawCallbackMethod_Session<
        CM::WithCallbackMethod_Leave<CM::WithCallbackMethod_RegisterLmr<
            CM::WithCallbackMethod_AllocLmr<CM::WithCallbackMethod_MapLmr<
                CM::WithCallbackMethod_UnmapLmr<CM::WithCallbackMethod_FreeLmr<
                    CM::WithCallbackMethod_RestoreGrant<
                        CM::WithCallbackMethod_RegisterService<
                            CM::WithCallbackMethod_UnregisterService<
                                CM::WithCallbackMethod_OpenService<
                                    CM::WithCallbackMethod_BindService<
                                        CM::Service>>>>>>>>>>>>>;
}  // namespace internal

class ClusterManagerService final : public internal::ClusterManagerBase {
 public:
  // `state` and `authz` must outlive the service. Authz::Insecure() (only
  // with litemgr --insecure) lets every caller act for any node.
  ClusterManagerService(ManagerState* state, const tls::Authz* authz)
      : state_(state), authz_(authz) {}

  grpc::ServerUnaryReactor* Join(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Session(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Leave(grpc::CallbackServerContext* context,
                                  const lite::v1::LeaveRequest* request,
                                  lite::v1::LeaveResponse* response) override;
  grpc::ServerUnaryReactor* RegisterLmr(
      grpc::CallbackServerContext* context,
      const lite::v1::RegisterLmrRequest* request,
      lite::v1::RegisterLmrResponse* response) override;
  grpc::ServerUnaryReactor* AllocLmr(
      grpc::CallbackServerContext* context,
      const lite::v1::AllocLmrRequest* request,
      lite::v1::AllocLmrResponse* response) override;
  grpc::ServerUnaryReactor* MapLmr(grpc::CallbackServerContext* context,
                                   const lite::v1::MapLmrRequest* request,
                                   lite::v1::MapLmrResponse* response) override;
  grpc::ServerUnaryReactor* UnmapLmr(
      grpc::CallbackServerContext* context,
      const lite::v1::UnmapLmrRequest* request,
      lite::v1::UnmapLmrResponse* response) override;
  grpc::ServerUnaryReactor* FreeLmr(
      grpc::CallbackServerContext* context,
      const lite::v1::FreeLmrRequest* request,
      lite::v1::FreeLmrResponse* response) override;
  grpc::ServerUnaryReactor* RestoreGrant(
      grpc::CallbackServerContext* context,
      const lite::v1::RestoreGrantRequest* request,
      lite::v1::RestoreGrantResponse* response) override;
  // RPC services (docs/rpc.md).
  grpc::ServerUnaryReactor* RegisterService(
      grpc::CallbackServerContext* context,
      const lite::v1::RegisterServiceRequest* request,
      lite::v1::RegisterServiceResponse* response) override;
  grpc::ServerUnaryReactor* UnregisterService(
      grpc::CallbackServerContext* context,
      const lite::v1::UnregisterServiceRequest* request,
      lite::v1::UnregisterServiceResponse* response) override;
  grpc::ServerUnaryReactor* OpenService(
      grpc::CallbackServerContext* context,
      const lite::v1::OpenServiceRequest* request,
      lite::v1::OpenServiceResponse* response) override;
  grpc::ServerUnaryReactor* BindService(
      grpc::CallbackServerContext* context,
      const lite::v1::BindServiceRequest* request,
      lite::v1::BindServiceResponse* response) override;

 private:
  ManagerState* const state_;
  const tls::Authz* const authz_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_SERVICE_H_
