// lite.v1.ClusterOperator (listings, drain, evict, watch) over gRPC: the
// operators' half of litemgr, served on the same port as ClusterManager
// (service.h) and, like it, only moving messages to and from ManagerState.
// Watch is a raw (ByteBuffer) method so that each event is serialized once
// for all watchers.
//
// Who may call: every method needs a certificate with role operator;
// DrainNode and EvictNode are audit-logged (audit.h).
#ifndef LITE_CONTROLPLANE_OPERATOR_SERVICE_H_
#define LITE_CONTROLPLANE_OPERATOR_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "common/tls/authz.h"
#include "controlplane/manager_state.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::controlplane {

namespace internal {
using CO = lite::v1::ClusterOperator;
using ClusterOperatorBase =
    CO::WithCallbackMethod_ListNodes<CO::WithCallbackMethod_ListLmrs<
        CO::WithCallbackMethod_ListGrants<CO::WithCallbackMethod_ListServices<
            CO::WithCallbackMethod_DrainNode<CO::WithCallbackMethod_EvictNode<
                CO::WithRawCallbackMethod_Watch<CO::Service>>>>>>>;
}  // namespace internal

class ClusterOperatorService final : public internal::ClusterOperatorBase {
 public:
  // `state` and `authz` must outlive the service.
  ClusterOperatorService(ManagerState* state, const tls::Authz* authz)
      : state_(state), authz_(authz) {}

  grpc::ServerUnaryReactor* ListNodes(
      grpc::CallbackServerContext* context,
      const lite::v1::ListNodesRequest* request,
      lite::v1::ListNodesResponse* response) override;
  grpc::ServerUnaryReactor* ListLmrs(
      grpc::CallbackServerContext* context,
      const lite::v1::ListLmrsRequest* request,
      lite::v1::ListLmrsResponse* response) override;
  grpc::ServerUnaryReactor* ListGrants(
      grpc::CallbackServerContext* context,
      const lite::v1::ListGrantsRequest* request,
      lite::v1::ListGrantsResponse* response) override;
  grpc::ServerUnaryReactor* ListServices(
      grpc::CallbackServerContext* context,
      const lite::v1::ListServicesRequest* request,
      lite::v1::ListServicesResponse* response) override;
  grpc::ServerUnaryReactor* DrainNode(
      grpc::CallbackServerContext* context,
      const lite::v1::DrainNodeRequest* request,
      lite::v1::DrainNodeResponse* response) override;
  grpc::ServerUnaryReactor* EvictNode(
      grpc::CallbackServerContext* context,
      const lite::v1::EvictNodeRequest* request,
      lite::v1::EvictNodeResponse* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;

 private:
  absl::Status Allowed(grpc::CallbackServerContext* context,
                       std::string* caller) const;

  ManagerState* const state_;
  const tls::Authz* const authz_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_OPERATOR_SERVICE_H_
