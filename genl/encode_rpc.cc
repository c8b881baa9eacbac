// The encoders of RPC messages (issue #11): LITE_CMD_RPC_BIND's request and
// the RPC answers of LITE_CMD_UPCALL_COMPLETE, checked against the uapi's
// ranges before anything is sent (lite.ko checks again).
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/status/macros.h"
#include "genl/codec.h"
#include "genl/codec_internal.h"
#include "genl/errors.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::genl {
namespace {

absl::Status Put(int err) {
  if (err < 0) return ErrnoStatus(EMSGSIZE, "the request does not fit");
  return absl::OkStatus();
}

absl::Status CheckRange(const char* what, uint64_t v, uint64_t lo,
                        uint64_t hi) {
  if (v < lo || v > hi) {
    return InvalidRequest(
        absl::StrFormat("%s %u (valid: %u..%u)", what, v, lo, hi));
  }
  return absl::OkStatus();
}

absl::Status CheckSlotBytes(uint32_t v) {
  LITE_RETURN_IF_ERROR(
      CheckRange("slot bytes", v, LITE_RPC_SLOT_ALIGN, LITE_RPC_MSG_MAX));
  if (v % LITE_RPC_SLOT_ALIGN != 0) {
    return InvalidRequest(absl::StrFormat(
        "slot bytes %u is not a multiple of %u", v, LITE_RPC_SLOT_ALIGN));
  }
  return absl::OkStatus();
}

absl::Status EncodeService(nl_msg* msg, const RpcServiceAddress& s) {
  if (s.service_id == 0) return InvalidRequest("service id 0");
  if (s.node_id == 0) return InvalidRequest("the service's node id is 0");
  LITE_RETURN_IF_ERROR(CheckRange("port", s.port, 1, LITE_RPC_PORT_MAX));
  LITE_RETURN_IF_ERROR(
      CheckRange("max request bytes", s.max_request, 0, LITE_RPC_MSG_MAX));
  LITE_RETURN_IF_ERROR(
      CheckRange("max reply bytes", s.max_reply, 0, LITE_RPC_MSG_MAX));
  LITE_RETURN_IF_ERROR(CheckRange("depth", s.depth, 1, LITE_RPC_DEPTH_MAX));
  int err = nla_put_u64(msg, LITE_ATTR_SERVICE_ID, s.service_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_NODE_ID, s.node_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_PORT, s.port);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_MAX_REQUEST, s.max_request);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_MAX_REPLY, s.max_reply);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_DEPTH, s.depth);
  return Put(err);
}

absl::Status EncodeRing(nl_msg* msg, const RpcRing& r) {
  LITE_RETURN_IF_ERROR(CheckRange("depth", r.depth, 1, LITE_RPC_DEPTH_MAX));
  LITE_RETURN_IF_ERROR(CheckSlotBytes(r.slot_bytes));
  int err = nla_put_u64(msg, LITE_ATTR_RPC_ADDR, r.addr);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, r.memory_key);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_DEPTH, r.depth);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_SLOT_BYTES, r.slot_bytes);
  return Put(err);
}

}  // namespace

absl::Status EncodeRpcCompletion(nl_msg* msg, const UpcallCompletion& c) {
  if (c.service_id) {
    if (*c.service_id == 0) return InvalidRequest("service id 0");
    return Put(nla_put_u64(msg, LITE_ATTR_SERVICE_ID, *c.service_id));
  }
  if (c.service) return EncodeService(msg, *c.service);
  if (c.ring) return EncodeRing(msg, *c.ring);
  return absl::OkStatus();
}

absl::Status EncodeRpcBind(nl_msg* msg, const RpcBindRequest& r) {
  if (r.service_id == 0) return InvalidRequest("service id 0");
  if (r.client_node_id == 0) return InvalidRequest("client node id 0");
  if (r.client_incarnation == 0) {
    return InvalidRequest("client incarnation 0");
  }
  LITE_RETURN_IF_ERROR(CheckRange("port", r.port, 1, LITE_RPC_PORT_MAX));
  LITE_RETURN_IF_ERROR(CheckSlotBytes(r.reply_slot_bytes));
  int err = nla_put_u64(msg, LITE_ATTR_SERVICE_ID, r.service_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_RPC_PORT, r.port);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_NODE_ID, r.client_node_id);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_INCARNATION, r.client_incarnation);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_RPC_ADDR, r.reply_addr);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, r.reply_key);
  if (!err) {
    err = nla_put_u32(msg, LITE_ATTR_RPC_SLOT_BYTES, r.reply_slot_bytes);
  }
  return Put(err);
}

}  // namespace lite::genl
