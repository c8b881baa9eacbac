// HTTP/2 keepalives on LITE's gRPC connections (docs/deploy.md, "Keepalives
// and timeouts"): each side pings a connection that has streams open every
// kKeepaliveTime and closes it when a ping is not answered within
// kKeepaliveTimeout, so a peer that vanished without closing (a power cut,
// a frozen process, a dropped route) is noticed in 15 s, not when TCP gives
// up hours later. Without it a manager kept a watch slot, and an agent a
// session, for a client long gone.
#ifndef LITE_COMMON_GRPC_KEEPALIVE_H_
#define LITE_COMMON_GRPC_KEEPALIVE_H_

#include <grpcpp/grpcpp.h>

namespace lite {

inline constexpr int kKeepaliveTimeMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 5000;

// A server's side: pings its clients, and accepts theirs (no more often
// than every second while idle).
void ServerKeepalive(grpc::ServerBuilder* builder);

// A client's side (a channel's arguments).
void ClientKeepalive(grpc::ChannelArguments* args);

}  // namespace lite

#endif  // LITE_COMMON_GRPC_KEEPALIVE_H_
