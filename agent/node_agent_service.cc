#include "agent/node_agent_service.h"

namespace lite::agent {

grpc::Status NodeAgentService::GetStatus(grpc::ServerContext*,
                                         const lite::v1::GetStatusRequest*,
                                         lite::v1::GetStatusResponse* resp) {
  *resp = agent_->Status();
  return grpc::Status::OK;
}

grpc::Status NodeAgentService::ListPeers(grpc::ServerContext*,
                                         const lite::v1::ListPeersRequest*,
                                         lite::v1::ListPeersResponse* resp) {
  for (const lite::v1::Member& m : agent_->Peers()) *resp->add_peers() = m;
  return grpc::Status::OK;
}

grpc::Status NodeAgentService::GetCounters(
    grpc::ServerContext*, const lite::v1::GetCountersRequest*,
    lite::v1::GetCountersResponse* resp) {
  for (const lite::v1::Counter& c : agent_->CounterSnapshot()) {
    *resp->add_counters() = c;
  }
  return grpc::Status::OK;
}

}  // namespace lite::agent
