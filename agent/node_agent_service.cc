#include "agent/node_agent_service.h"

#include "common/grpc/status.h"

namespace lite::agent {

grpc::Status NodeAgentService::RequireOperator(grpc::ServerContext* ctx) const {
  return ToGrpcStatus(
      authz_->Require(*ctx->auth_context(), tls::Role::kOperator, nullptr));
}

grpc::Status NodeAgentService::GetStatus(grpc::ServerContext* ctx,
                                         const lite::v1::GetStatusRequest*,
                                         lite::v1::GetStatusResponse* resp) {
  if (grpc::Status s = RequireOperator(ctx); !s.ok()) return s;
  *resp = agent_->Status();
  return grpc::Status::OK;
}

grpc::Status NodeAgentService::ListPeers(grpc::ServerContext* ctx,
                                         const lite::v1::ListPeersRequest*,
                                         lite::v1::ListPeersResponse* resp) {
  if (grpc::Status s = RequireOperator(ctx); !s.ok()) return s;
  for (const lite::v1::Member& m : agent_->Peers()) *resp->add_peers() = m;
  return grpc::Status::OK;
}

grpc::Status NodeAgentService::GetCounters(
    grpc::ServerContext* ctx, const lite::v1::GetCountersRequest*,
    lite::v1::GetCountersResponse* resp) {
  if (grpc::Status s = RequireOperator(ctx); !s.ok()) return s;
  for (const lite::v1::Counter& c : agent_->CounterSnapshot()) {
    *resp->add_counters() = c;
  }
  return grpc::Status::OK;
}

}  // namespace lite::agent
