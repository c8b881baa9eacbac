#include "common/grpc/server_limits.h"

#include <grpcpp/resource_quota.h>

namespace lite {

void ApplyConnectionLimits(grpc::ServerBuilder* builder,
                           const ServerLimits& limits) {
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                              limits.max_streams_per_connection);
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                              limits.handshake_timeout_ms);
  grpc::ResourceQuota quota("lite-server");
  quota.Resize(limits.memory_bytes);
  quota.SetMaxThreads(limits.max_threads);
  builder->SetResourceQuota(quota);
}

}  // namespace lite
