// What one client can make a daemon's gRPC server hold (review cp-2026-11-28
// L6). With the client certificate required at the handshake
// (common/tls/credentials.h), only holders of a certificate of the cluster
// CA get past TLS; these bound the rest:
//  - a TCP connection must finish its TLS handshake within
//    kHandshakeTimeoutMs or is closed (gRPC's default is 120 s, so a client
//    could hold many half-open connections for two minutes each);
//  - at most max_streams_per_connection calls (HTTP/2 streams) at once per
//    connection: health Watch streams included; further calls wait in the
//    client for a slot rather than fail;
//  - gRPC's own memory (buffers, messages being read) within memory_bytes,
//    and the threads of a synchronous server within max_threads.
#ifndef LITE_COMMON_GRPC_SERVER_LIMITS_H_
#define LITE_COMMON_GRPC_SERVER_LIMITS_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>

namespace lite {

inline constexpr int kHandshakeTimeoutMs = 10000;

struct ServerLimits {
  int max_streams_per_connection;
  size_t memory_bytes;
  int max_threads;
  int handshake_timeout_ms = kHandshakeTimeoutMs;
};

// litemgr: each agent keeps one connection with its Session and every call
// it makes for its node's users (allocations wait for the home node), so
// the stream limit is generous; 1 GiB holds 256 messages of the 4 MiB
// --max_message_bytes at once.
inline constexpr ServerLimits kManagerServerLimits{
    .max_streams_per_connection = 4096,
    .memory_bytes = size_t{1} << 30,
    .max_threads = 256,
};

// liteagent: NodeAgent (operators' status, peers, counters) and health.
inline constexpr ServerLimits kAgentServerLimits{
    .max_streams_per_connection = 64,
    .memory_bytes = size_t{64} << 20,
    .max_threads = 32,
};

void ApplyConnectionLimits(grpc::ServerBuilder* builder,
                           const ServerLimits& limits);

}  // namespace lite

#endif  // LITE_COMMON_GRPC_SERVER_LIMITS_H_
