// lite.v1.NodeAgent: what the agent tells operators about its node. Read-only,
// and only for callers with the operator role (a node's peers, counters and
// grants' counts are for the cluster's operators, not for any other node or
// local user); the health service beside it stays open.
#ifndef LITE_AGENT_NODE_AGENT_SERVICE_H_
#define LITE_AGENT_NODE_AGENT_SERVICE_H_

#include "agent/agent.h"
#include "common/tls/authz.h"
#include "lite/v1/agent.grpc.pb.h"

namespace lite::agent {

class NodeAgentService final : public lite::v1::NodeAgent::Service {
 public:
  // `agent` and `authz` must outlive the service; tls::Authz::Insecure()
  // (--insecure) lets every caller in.
  NodeAgentService(const Agent* agent, const tls::Authz* authz)
      : agent_(agent), authz_(authz) {}

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
  // OK for an operator; otherwise the status to answer with.
  grpc::Status RequireOperator(grpc::ServerContext* ctx) const;

  const Agent* const agent_;
  const tls::Authz* const authz_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_NODE_AGENT_SERVICE_H_
