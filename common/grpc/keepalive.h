// HTTP/2 keepalives on LITE's gRPC connections (docs/deploy.md, "Keepalives
// and timeouts"): each side pings a connection that has streams open every
// kKeepaliveTime and closes it when a ping is not answered within
// kKeepaliveTimeout, so a peer that vanished without closing (a power cut,
// a frozen process, a dropped route) is noticed in 30 s, not when TCP gives
// up hours later. Without it a manager kept a watch slot, and an agent a
// session, for a client long gone. The answer may take 20 s: longer than
// any lease (a busy node's agent can miss a few seconds of CPU, and its
// lease, not a ping, decides when the node has failed).
#ifndef LITE_COMMON_GRPC_KEEPALIVE_H_
#define LITE_COMMON_GRPC_KEEPALIVE_H_

#include <grpcpp/grpcpp.h>

namespace lite {

inline constexpr int kKeepaliveTimeMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 20000;

// A server's side: pings its clients, and accepts theirs (no more often
// than every second while idle).
void ServerKeepalive(grpc::ServerBuilder* builder);

// A client's side (a channel's arguments).
void ClientKeepalive(grpc::ChannelArguments* args);

}  // namespace lite

#endif  // LITE_COMMON_GRPC_KEEPALIVE_H_
