// The codec's encoders: the attributes of each request, checked against the
// uapi's ranges before anything is sent. Decoders are in decode.cc.
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "genl/codec.h"
#include "genl/codec_internal.h"
#include "genl/errors.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {
namespace {

constexpr uint32_t kAccessMask = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
// The largest errno LITE_ATTR_ERRNO carries, plus one.
constexpr uint32_t kErrnoLimit = 4096;

// How many chunks one LITE_ATTR_CHUNKS nest holds at most when this library
// encodes: an attribute's length is 16 bits and a chunk takes 28 bytes here
// (no padding), so 2048 (56 KiB) fit; a longer list goes in several nests.
constexpr size_t kChunksPerNest = 2048;

// Checks what the uapi allows before anything is sent.
absl::Status CheckName(absl::string_view name) {
  if (name.empty() || name.size() > LITE_NAME_MAX ||
      name.find('\0') != absl::string_view::npos) {
    return InvalidRequest(absl::StrFormat(
        "an LMR name has 1..%d characters and no NUL (got %u bytes)",
        LITE_NAME_MAX, name.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckRequestSize(uint64_t size) {
  if (size == 0 || size > LITE_LMR_SIZE_MAX) {
    return InvalidRequest(
        absl::StrFormat("size %u (valid: 1..%u)", size, LITE_LMR_SIZE_MAX));
  }
  return absl::OkStatus();
}

absl::Status CheckChunks(const std::vector<Chunk>& chunks, uint64_t size) {
  if (chunks.empty() || chunks.size() > LITE_CHUNKS_MAX) {
    return InvalidRequest(absl::StrFormat("%u chunks (valid: 1..%d)",
                                          chunks.size(), LITE_CHUNKS_MAX));
  }
  uint64_t total = 0;
  for (const Chunk& c : chunks) {
    if (c.length == 0) return InvalidRequest("a chunk of length 0");
    if (c.length > std::numeric_limits<uint64_t>::max() - total) {
      return InvalidRequest("the chunk lengths overflow");
    }
    total += c.length;
  }
  if (total != size) {
    return InvalidRequest(
        absl::StrFormat("the chunks add up to %u bytes, not %u", total, size));
  }
  return absl::OkStatus();
}

// libnl's nla_put_* return a negative code when the message is full.
absl::Status Put(int err) {
  if (err < 0) return ErrnoStatus(EMSGSIZE, "the request does not fit");
  return absl::OkStatus();
}

// libnl does not set NLA_F_NESTED, which the kernel's strict validation
// requires on nested attributes.
nlattr* NestStart(nl_msg* msg, int type) {
  return nla_nest_start(msg, type | NLA_F_NESTED);
}

// One LITE_ATTR_CHUNKS nest of [begin, end).
absl::Status PutChunkNest(nl_msg* msg, const Chunk* begin, const Chunk* end) {
  nlattr* all = NestStart(msg, LITE_ATTR_CHUNKS);
  if (!all) return Put(-1);
  for (const Chunk* c = begin; c != end; ++c) {
    nlattr* one = NestStart(msg, LITE_ATTR_CHUNK);
    if (!one) return Put(-1);
    LITE_RETURN_IF_ERROR(Put(nla_put_u64(msg, LITE_CHUNK_ATTR_ADDR, c->addr)));
    LITE_RETURN_IF_ERROR(
        Put(nla_put_u64(msg, LITE_CHUNK_ATTR_LENGTH, c->length)));
    nla_nest_end(msg, one);
  }
  nla_nest_end(msg, all);
  return absl::OkStatus();
}

absl::Status PutChunks(nl_msg* msg, const std::vector<Chunk>& chunks) {
  for (size_t i = 0; i < chunks.size(); i += kChunksPerNest) {
    size_t end = std::min(chunks.size(), i + kChunksPerNest);
    LITE_RETURN_IF_ERROR(PutChunkNest(msg, &chunks[i], &chunks[0] + end));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EncodeIdentity(nl_msg* msg, uint32_t node_id, uint64_t incarnation,
                            in_addr addr, absl::string_view name) {
  if (!name.empty()) {
    // The rule lite.ko applies too; the message names the value.
    if (absl::Status s = names::ValidateNodeName("node name", name); !s.ok()) {
      return InvalidRequest(s.message());
    }
  }
  int err = nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_INCARNATION, incarnation);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_IPV4_ADDR, addr.s_addr);
  if (!err && !name.empty()) {
    err = nla_put_string(msg, LITE_ATTR_NODE_NAME, std::string(name).c_str());
  }
  return Put(err);
}

absl::Status EncodePeerSecret(nl_msg* msg, absl::string_view secret) {
  // lite.ko's rule; the message never shows the bytes.
  if (secret.size() != LITE_PEER_SECRET_LEN ||
      std::all_of(secret.begin(), secret.end(),
                  [](char c) { return c == 0; })) {
    return InvalidRequest(absl::StrFormat(
        "a pair secret is %d bytes, not all zero (got %u bytes%s)",
        LITE_PEER_SECRET_LEN, secret.size(),
        secret.size() == LITE_PEER_SECRET_LEN ? ", all zero" : ""));
  }
  return Put(nla_put(msg, LITE_ATTR_PEER_SECRET,
                     static_cast<int>(secret.size()), secret.data()));
}

absl::Status EncodePeerRemove(nl_msg* msg, uint32_t node_id,
                              std::optional<uint64_t> incarnation) {
  int err = nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id);
  if (!err && incarnation) {
    err = nla_put_u64(msg, LITE_ATTR_INCARNATION, *incarnation);
  }
  return Put(err);
}

absl::Status EncodePeerProbe(nl_msg* msg, uint32_t node_id) {
  if (node_id == 0) return InvalidRequest("node id 0");
  return Put(nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id));
}

absl::Status EncodeLmrAlloc(nl_msg* msg, const LmrAllocRequest& r) {
  if (r.lmr_id == 0) return InvalidRequest("LMR id 0");
  LITE_RETURN_IF_ERROR(CheckName(r.name));
  LITE_RETURN_IF_ERROR(CheckRequestSize(r.size));
  if (r.mode & ~0666u) {
    return InvalidRequest(
        absl::StrFormat("mode %#o is not a subset of 0666", r.mode));
  }
  if (r.uid == static_cast<uint32_t>(-1) ||
      r.gid == static_cast<uint32_t>(-1)) {
    return InvalidRequest("uid or gid is (uid_t)-1");
  }
  int err = nla_put_u64(msg, LITE_ATTR_LMR_ID, r.lmr_id);
  if (!err) err = nla_put_string(msg, LITE_ATTR_NAME, r.name.c_str());
  if (!err) err = nla_put_u64(msg, LITE_ATTR_SIZE, r.size);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_UID, r.uid);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_GID, r.gid);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_MODE, r.mode);
  return Put(err);
}

absl::Status EncodeLmrFree(nl_msg* msg, uint64_t lmr_id, bool quarantine) {
  if (lmr_id == 0) return InvalidRequest("LMR id 0");
  int err = nla_put_u64(msg, LITE_ATTR_LMR_ID, lmr_id);
  if (!err && quarantine) err = nla_put_flag(msg, LITE_ATTR_QUARANTINE);
  return Put(err);
}

absl::Status EncodeLmrUpdate(nl_msg* msg, uint64_t lmr_id,
                             std::optional<uint64_t> new_lmr_id,
                             std::optional<uint64_t> epoch, bool releasing) {
  if (lmr_id == 0) return InvalidRequest("LMR id 0");
  if (new_lmr_id && *new_lmr_id == 0) return InvalidRequest("new LMR id 0");
  int err = nla_put_u64(msg, LITE_ATTR_LMR_ID, lmr_id);
  if (!err && new_lmr_id) {
    err = nla_put_u64(msg, LITE_ATTR_NEW_LMR_ID, *new_lmr_id);
  }
  if (!err && epoch) err = nla_put_u64(msg, LITE_ATTR_EPOCH, *epoch);
  if (!err && releasing) err = nla_put_flag(msg, LITE_ATTR_RELEASING);
  return Put(err);
}

absl::Status EncodeGrantRevoke(nl_msg* msg, uint64_t grant_id) {
  if (grant_id == 0) return InvalidRequest("grant id 0");
  return Put(nla_put_u64(msg, LITE_ATTR_GRANT_ID, grant_id));
}

absl::Status EncodeGrant(nl_msg* msg, const GrantInfo& g) {
  if (g.grant_id == 0) return InvalidRequest("grant id 0");
  if (g.lmr_id == 0) return InvalidRequest("LMR id 0");
  LITE_RETURN_IF_ERROR(CheckName(g.name));
  if (g.home_node_id == 0) return InvalidRequest("home node id 0");
  if (g.access == 0 || (g.access & ~kAccessMask)) {
    return InvalidRequest(absl::StrFormat("access %#x", g.access));
  }
  LITE_RETURN_IF_ERROR(CheckRequestSize(g.size));
  if (g.holder_incarnation == 0) return InvalidRequest("holder incarnation 0");
  LITE_RETURN_IF_ERROR(CheckChunks(g.chunks, g.size));
  int err = nla_put_u64(msg, LITE_ATTR_GRANT_ID, g.grant_id);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_LMR_ID, g.lmr_id);
  if (!err) err = nla_put_string(msg, LITE_ATTR_NAME, g.name.c_str());
  if (!err) err = nla_put_u32(msg, LITE_ATTR_NODE_ID, g.home_node_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_ACCESS, g.access);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_EPOCH, g.epoch);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_SIZE, g.size);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, g.memory_key);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_INCARNATION, g.holder_incarnation);
  if (!err) {
    err = nla_put_u64(msg, LITE_ATTR_GRANTED_AT_MS,
                      static_cast<uint64_t>(g.granted_at_ms));
  }
  LITE_RETURN_IF_ERROR(Put(err));
  return PutChunks(msg, g.chunks);
}

size_t UpcallCompletionSize(const UpcallCompletion& c) {
  // Headers, the fixed attributes, the name and message, 3 attribute
  // headers and 2 u64 per chunk.
  size_t chunks = c.grant ? c.grant->chunks.size() : 0;
  return 1024 + LITE_NAME_BUF + LITE_MESSAGE_BUF + chunks * 32;
}

absl::Status EncodeUpcallCompletion(nl_msg* msg, const UpcallCompletion& c) {
  if (c.upcall_id == 0) return InvalidRequest("upcall id 0");
  if (c.error >= kErrnoLimit) {
    return InvalidRequest(
        absl::StrFormat("errno %u (valid: 0..%u)", c.error, kErrnoLimit - 1));
  }
  const int payloads =
      !!c.lmr_id + !!c.grant + !!c.service_id + !!c.service + !!c.ring;
  if (c.error != 0 && payloads != 0) {
    return InvalidRequest("a failed upcall carries no answer");
  }
  if (payloads > 1) {
    return InvalidRequest(
        "more than one answer (LMR id, grant, service, ring)");
  }
  if (c.lmr_id && *c.lmr_id == 0) return InvalidRequest("LMR id 0");
  int err = nla_put_u64(msg, LITE_ATTR_UPCALL_ID, c.upcall_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_ERRNO, c.error);
  if (!err && !c.message.empty()) {
    // At most LITE_MESSAGE_BUF - 1 bytes, cut before a NUL if it has one.
    std::string text = c.message.substr(0, c.message.find('\0'));
    if (text.size() >= LITE_MESSAGE_BUF) text.resize(LITE_MESSAGE_BUF - 1);
    err = nla_put_string(msg, LITE_ATTR_MESSAGE, text.c_str());
  }
  if (!err && c.lmr_id) err = nla_put_u64(msg, LITE_ATTR_LMR_ID, *c.lmr_id);
  LITE_RETURN_IF_ERROR(Put(err));
  if (c.grant) return EncodeGrant(msg, *c.grant);
  return EncodeRpcCompletion(msg, c);
}

absl::Status EncodeRawAttrs(nl_msg* msg, const std::vector<RawAttr>& attrs) {
  for (const RawAttr& a : attrs) {
    LITE_RETURN_IF_ERROR(Put(nla_put_u32(msg, a.type, a.value)));
  }
  return absl::OkStatus();
}

}  // namespace lite::genl
