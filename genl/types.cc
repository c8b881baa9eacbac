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
  }
  return "unknown";
}

}  // namespace lite::genl
