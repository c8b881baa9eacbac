// The decoders of RPC messages (issue #11): the RPC upcalls'
// attributes, LITE_CMD_RPC_BIND's reply and LITE_CMD_RPC_SERVICE_GET's
// entries. Every range the uapi states is checked here, so the agent never
// forwards a value lite.ko was not allowed to send.
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "common/status/macros.h"
#include "genl/codec.h"
#include "genl/codec_internal.h"
#include "genl/errors.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::genl {
namespace {

uint32_t U32(const Attrs& a, int type) { return nla_get_u32(a.tb[type]); }
uint64_t U64(const Attrs& a, int type) { return nla_get_u64(a.tb[type]); }

// A u32 that must be there and within lo..hi.
absl::StatusOr<uint32_t> GetRange(const Attrs& a, int type, const char* what,
                                  uint32_t lo, uint32_t hi) {
  if (!a.tb[type]) return Missing(what);
  const uint32_t v = U32(a, type);
  if (v < lo || v > hi) {
    return BadMessage(
        absl::StrFormat("%s %u is out of range (%u..%u)", what, v, lo, hi));
  }
  return v;
}

absl::StatusOr<uint32_t> GetPort(const Attrs& a) {
  return GetRange(a, LITE_ATTR_RPC_PORT, "LITE_ATTR_RPC_PORT", 1,
                  LITE_RPC_PORT_MAX);
}

absl::StatusOr<uint32_t> GetDepth(const Attrs& a) {
  return GetRange(a, LITE_ATTR_RPC_DEPTH, "LITE_ATTR_RPC_DEPTH", 1,
                  LITE_RPC_DEPTH_MAX);
}

absl::StatusOr<uint32_t> GetSlotBytes(const Attrs& a) {
  LITE_ASSIGN_OR_RETURN(
      const uint32_t v,
      GetRange(a, LITE_ATTR_RPC_SLOT_BYTES, "LITE_ATTR_RPC_SLOT_BYTES",
               LITE_RPC_SLOT_ALIGN, LITE_RPC_MSG_MAX));
  if (v % LITE_RPC_SLOT_ALIGN != 0) {
    return BadMessage(
        absl::StrFormat("LITE_ATTR_RPC_SLOT_BYTES %u is not a multiple of %u",
                        v, LITE_RPC_SLOT_ALIGN));
  }
  return v;
}

absl::StatusOr<uint32_t> GetRpcMode(const Attrs& a) {
  if (!a.tb[LITE_ATTR_MODE]) return Missing("LITE_ATTR_MODE");
  const uint32_t mode = U32(a, LITE_ATTR_MODE);
  if (mode & ~0777u) {
    return BadMessage(absl::StrFormat("service mode %#o", mode));
  }
  return mode;
}

// The service's shape: sizes, depth and client count.
absl::Status GetShape(const Attrs& a, uint32_t* max_request,
                      uint32_t* max_reply, uint32_t* depth,
                      uint32_t* max_clients) {
  LITE_ASSIGN_OR_RETURN(
      *max_request, GetRange(a, LITE_ATTR_RPC_MAX_REQUEST,
                             "LITE_ATTR_RPC_MAX_REQUEST", 0, LITE_RPC_MSG_MAX));
  LITE_ASSIGN_OR_RETURN(
      *max_reply, GetRange(a, LITE_ATTR_RPC_MAX_REPLY,
                           "LITE_ATTR_RPC_MAX_REPLY", 0, LITE_RPC_MSG_MAX));
  LITE_ASSIGN_OR_RETURN(*depth, GetDepth(a));
  LITE_ASSIGN_OR_RETURN(*max_clients, GetRange(a, LITE_ATTR_RPC_MAX_CLIENTS,
                                               "LITE_ATTR_RPC_MAX_CLIENTS", 1,
                                               LITE_RPC_CLIENTS_MAX));
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeRpcUpcallKind(const Attrs& a, uint32_t kind,
                                 UpcallRequest* u) {
  switch (kind) {
    case LITE_UPCALL_RPC_REGISTER: {
      u->kind = UpcallKind::kRpcRegister;
      LITE_ASSIGN_OR_RETURN(u->name, GetName(a));
      LITE_ASSIGN_OR_RETURN(u->mode, GetRpcMode(a));
      LITE_ASSIGN_OR_RETURN(u->port, GetPort(a));
      return GetShape(a, &u->max_request, &u->max_reply, &u->depth,
                      &u->max_clients);
    }
    case LITE_UPCALL_RPC_UNREGISTER: {
      u->kind = UpcallKind::kRpcUnregister;
      LITE_ASSIGN_OR_RETURN(u->service_id, GetId64(a, LITE_ATTR_SERVICE_ID,
                                                   "LITE_ATTR_SERVICE_ID"));
      return absl::OkStatus();
    }
    case LITE_UPCALL_RPC_OPEN: {
      u->kind = UpcallKind::kRpcOpen;
      LITE_ASSIGN_OR_RETURN(u->name, GetName(a));
      return absl::OkStatus();
    }
    case LITE_UPCALL_RPC_BIND: {
      u->kind = UpcallKind::kRpcBind;
      LITE_ASSIGN_OR_RETURN(u->service_id, GetId64(a, LITE_ATTR_SERVICE_ID,
                                                   "LITE_ATTR_SERVICE_ID"));
      LITE_RETURN_IF_ERROR(
          Require(a, {{LITE_ATTR_RPC_ADDR, "LITE_ATTR_RPC_ADDR"},
                      {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"}}));
      u->rpc_addr = U64(a, LITE_ATTR_RPC_ADDR);
      u->memory_key = U32(a, LITE_ATTR_MEMORY_KEY);
      LITE_ASSIGN_OR_RETURN(u->slot_bytes, GetSlotBytes(a));
      return absl::OkStatus();
    }
    default:
      return BadMessage(absl::StrFormat("unknown RPC upcall kind %u", kind));
  }
}

absl::StatusOr<RpcRing> DecodeRpcRing(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(CheckCmd(a, LITE_CMD_RPC_BIND, "LITE_CMD_RPC_BIND"));
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_RPC_ADDR, "LITE_ATTR_RPC_ADDR"},
                  {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"}}));
  RpcRing ring;
  ring.addr = U64(a, LITE_ATTR_RPC_ADDR);
  ring.memory_key = U32(a, LITE_ATTR_MEMORY_KEY);
  LITE_ASSIGN_OR_RETURN(ring.depth, GetDepth(a));
  LITE_ASSIGN_OR_RETURN(ring.slot_bytes, GetSlotBytes(a));
  if (static_cast<uint64_t>(ring.depth) * ring.slot_bytes > LITE_RPC_RING_MAX) {
    return BadMessage(
        absl::StrFormat("a ring of %u slots of %u bytes is over %u bytes",
                        ring.depth, ring.slot_bytes, LITE_RPC_RING_MAX));
  }
  return ring;
}

absl::StatusOr<ServiceInfo> DecodeService(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(
      CheckCmd(a, LITE_CMD_RPC_SERVICE_GET, "LITE_CMD_RPC_SERVICE_GET"));
  ServiceInfo s;
  LITE_ASSIGN_OR_RETURN(
      s.service_id, GetId64(a, LITE_ATTR_SERVICE_ID, "LITE_ATTR_SERVICE_ID"));
  LITE_ASSIGN_OR_RETURN(s.name, GetName(a));
  LITE_ASSIGN_OR_RETURN(s.port, GetPort(a));
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_UID, "LITE_ATTR_UID"},
                  {LITE_ATTR_GID, "LITE_ATTR_GID"},
                  {LITE_ATTR_PID, "LITE_ATTR_PID"},
                  {LITE_ATTR_RPC_CLIENTS, "LITE_ATTR_RPC_CLIENTS"},
                  {LITE_ATTR_RPC_QUEUED, "LITE_ATTR_RPC_QUEUED"},
                  {LITE_ATTR_RPC_SERVED, "LITE_ATTR_RPC_SERVED"}}));
  s.uid = U32(a, LITE_ATTR_UID);
  s.gid = U32(a, LITE_ATTR_GID);
  s.pid = U32(a, LITE_ATTR_PID);
  LITE_ASSIGN_OR_RETURN(s.mode, GetRpcMode(a));
  LITE_RETURN_IF_ERROR(
      GetShape(a, &s.max_request, &s.max_reply, &s.depth, &s.max_clients));
  s.clients = U32(a, LITE_ATTR_RPC_CLIENTS);
  if (s.clients > s.max_clients) {
    return BadMessage(
        absl::StrFormat("%u clients of at most %u", s.clients, s.max_clients));
  }
  s.queued = U64(a, LITE_ATTR_RPC_QUEUED);
  s.served = U64(a, LITE_ATTR_RPC_SERVED);
  s.closing = a.tb[LITE_ATTR_RPC_CLOSING] != nullptr;
  return s;
}

}  // namespace lite::genl
