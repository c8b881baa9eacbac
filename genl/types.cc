#include "genl/types.h"

#include <arpa/inet.h>

#include <cerrno>
#include <string>

#include "absl/strings/str_format.h"
#include "genl/errors.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {

static_assert(static_cast<uint32_t>(UpcallKind::kAlloc) == LITE_UPCALL_ALLOC);
static_assert(static_cast<uint32_t>(UpcallKind::kMap) == LITE_UPCALL_MAP);
static_assert(static_cast<uint32_t>(UpcallKind::kUnmap) == LITE_UPCALL_UNMAP);
static_assert(static_cast<uint32_t>(UpcallKind::kFree) == LITE_UPCALL_FREE);
static_assert(static_cast<uint32_t>(UpcallKind::kRpcRegister) ==
              LITE_UPCALL_RPC_REGISTER);
static_assert(static_cast<uint32_t>(UpcallKind::kRpcUnregister) ==
              LITE_UPCALL_RPC_UNREGISTER);
static_assert(static_cast<uint32_t>(UpcallKind::kRpcOpen) ==
              LITE_UPCALL_RPC_OPEN);
static_assert(static_cast<uint32_t>(UpcallKind::kRpcBind) ==
              LITE_UPCALL_RPC_BIND);

absl::StatusOr<in_addr> ParseIPv4(absl::string_view text) {
  in_addr addr;
  std::string s(text);
  if (inet_pton(AF_INET, s.c_str(), &addr) != 1) {
    return ErrnoStatus(EINVAL,
                       absl::StrFormat("'%s' is not an IPv4 address", text));
  }
  return addr;
}

std::string FormatIPv4(in_addr addr) {
  char buf[INET_ADDRSTRLEN];
  return inet_ntop(AF_INET, &addr, buf, sizeof(buf)) ? buf : "?";
}

const char* PeerStateName(uint32_t state) {
  switch (state) {
    case LITE_PEER_CONNECTING:
      return "connecting";
    case LITE_PEER_CONNECTED:
      return "connected";
    default:
      return "unknown";
  }
}

const char* PeerRoleName(uint32_t role) {
  switch (role) {
    case LITE_PEER_ROLE_INITIATOR:
      return "initiator";
    case LITE_PEER_ROLE_ACCEPTOR:
      return "acceptor";
    default:
      return "unknown";
  }
}

const char* RefusalName(uint32_t refusal) {
  switch (refusal) {
    case LITE_REFUSAL_BAD_REQUEST:
      return "malformed request or another wire version (is peer_auth the "
             "same on both nodes?)";
    case LITE_REFUSAL_WRONG_NODE:
      return "the request was meant for another node";
    case LITE_REFUSAL_STALE:
      return "stale incarnation";
    case LITE_REFUSAL_PARAMS:
      return "qps_per_peer differs between the nodes";
    case LITE_REFUSAL_ROLE:
      return "wrong initiator (the node with the smaller id connects)";
    case LITE_REFUSAL_ADDRESS:
      return "the request came from another address than the peer's";
    case LITE_REFUSAL_AUTH:
      return "authentication failed (pair secret mismatch or stale "
             "incarnation)";
    case LITE_REFUSAL_PORT:
      return "unprivileged source port (not lite.ko)";
    case LITE_REFUSAL_NO_KEY:
      return "no pair secret for the peer (the agent gave none)";
    case LITE_REFUSAL_REPLY_AUTH:
      return "the acceptor's reply failed authentication (pair secret "
             "mismatch?)";
    default:
      return "unknown reason";
  }
}

const char* RefusedByName(uint32_t refused_by) {
  switch (refused_by) {
    case LITE_REFUSED_BY_PEER:
      return "the peer";
    case LITE_REFUSED_BY_NODE:
      return "this node";
    default:
      return "unknown";
  }
}

const char* EventTypeName(EventType type) {
  switch (type) {
    case EventType::kPeerConnected:
      return "connected";
    case EventType::kPeerFailed:
      return "failed";
    case EventType::kPeerRemoved:
      return "removed";
  }
  return "unknown";
}

const char* UpcallKindName(UpcallKind kind) {
  switch (kind) {
    case UpcallKind::kAlloc:
      return "alloc";
    case UpcallKind::kMap:
      return "map";
    case UpcallKind::kUnmap:
      return "unmap";
    case UpcallKind::kFree:
      return "free";
    case UpcallKind::kRpcRegister:
      return "rpc_register";
    case UpcallKind::kRpcUnregister:
      return "rpc_unregister";
    case UpcallKind::kRpcOpen:
      return "rpc_open";
    case UpcallKind::kRpcBind:
      return "rpc_bind";
  }
  return "unknown";
}

}  // namespace lite::genl
