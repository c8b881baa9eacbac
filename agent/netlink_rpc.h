// NetlinkModule's RPC side (issue #11): the RPC upcalls and their answers
// converted between lite_genl's and the agent's types, and lite.ko's
// LITE_CMD_RPC_BIND and LITE_CMD_RPC_SERVICE_GET (netlink_rpc.cc). Kept out
// of netlink_module.cc, which holds the LMR side.
#ifndef LITE_AGENT_NETLINK_RPC_H_
#define LITE_AGENT_NETLINK_RPC_H_

#include <cstdint>

#include "absl/status/status.h"
#include "agent/module.h"
#include "genl/types.h"
#include "lite/v1/manager.pb.h"
#include "lite/v1/types.pb.h"

namespace lite::agent {

// The request of an RPC upcall (kinds kRpc*); INVALID_ARGUMENT for another
// kind. lite_genl has checked the uapi's ranges already.
absl::Status RpcRequestFromGenl(const genl::UpcallRequest& r, Upcall* upcall);
// The RPC answer of a successful reply (service id for a register, the
// service for an open, the ring for a bind) into the completion.
// INVALID_ARGUMENT if the reply carries more than one of them.
absl::Status AddRpcAnswer(const UpcallReply& reply,
                          genl::UpcallCompletion* completion);
// LITE_CMD_RPC_BIND's request and reply.
genl::RpcBindRequest RpcBindFromProto(const lite::v1::BindServiceRing& r);
lite::v1::BoundServiceRing RingFromGenl(const genl::RpcRing& ring);
// One RPC_SERVICE_GET entry of node `node_id`.
ServedService ServiceFromGenl(const genl::ServiceInfo& info, uint32_t node_id);

}  // namespace lite::agent

#endif  // LITE_AGENT_NETLINK_RPC_H_
