// lite.v1.NodeAgent: what the agent tells operators about its node. Read-only.
#ifndef LITE_AGENT_NODE_AGENT_SERVICE_H_
#define LITE_AGENT_NODE_AGENT_SERVICE_H_

#include "agent/agent.h"
#include "lite/v1/agent.grpc.pb.h"

namespace lite::agent {

class NodeAgentService final : public lite::v1::NodeAgent::Service {
 public:
  // `agent` must outlive the service.
  explicit NodeAgentService(const Agent* agent) : agent_(agent) {}

  grpc::Status GetStatus(grpc::ServerContext* ctx,
                         const lite::v1::GetStatusRequest* req,
                         lite::v1::GetStatusResponse* resp) override;
  grpc::Status ListPeers(grpc::ServerContext* ctx,
                         const lite::v1::ListPeersRequest* req,
                         lite::v1::ListPeersResponse* resp) override;
  grpc::Status GetCounters(grpc::ServerContext* ctx,
                           const lite::v1::GetCountersRequest* req,
                           lite::v1::GetCountersResponse* resp) override;

 private:
  const Agent* const agent_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_NODE_AGENT_SERVICE_H_
