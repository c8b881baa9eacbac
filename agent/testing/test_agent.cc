#include "agent/testing/test_agent.h"

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::agent::testing {

AgentOptions TestAgentOptions(const std::string& manager_address) {
  AgentOptions o;
  o.node_name = "n1";
  o.rdma_address = "127.0.0.1:7471";
  o.manager_address = manager_address;
  o.rpc_timeout = absl::Seconds(2);
  o.backoff_initial = absl::Milliseconds(10);
  o.backoff_max = absl::Milliseconds(50);
  o.leave_grace = absl::Seconds(1);
  o.upcalls.upcall_timeout = absl::Seconds(5);
  return o;
}

std::unique_ptr<Agent> MakeTestAgent(const AgentOptions& options,
                                     FakeModule* module) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 10);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 10);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 50);
  return std::make_unique<Agent>(
      options, module,
      lite::v1::ClusterManager::NewStub(grpc::CreateCustomChannel(
          options.manager_address, grpc::InsecureChannelCredentials(), args)));
}

}  // namespace lite::agent::testing
