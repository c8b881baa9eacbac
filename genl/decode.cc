// The codec's decoders: the attribute policy and what lite.ko's replies,
// dump entries, upcalls, events and errors carry. Encoders are in encode.cc.
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/status/macros.h"
#include "genl/codec.h"
#include "genl/codec_internal.h"
#include "genl/errors.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {
namespace {

constexpr uint32_t kAccessMask = LITE_ACCESS_READ | LITE_ACCESS_WRITE;

// Attribute types and sizes as lite.ko sends them. Unknown (newer) types
// are ignored by nla_parse, so this also reads a newer module's messages.
const nla_policy* Policy() {
  static const nla_policy* policy = [] {
    static nla_policy p[LITE_ATTR_MAX + 1] = {};
    p[LITE_ATTR_NODE_ID].type = NLA_U32;
    p[LITE_ATTR_INCARNATION].type = NLA_U64;
    p[LITE_ATTR_IPV4_ADDR].type = NLA_U32;
    p[LITE_ATTR_CM_PORT].type = NLA_U16;
    p[LITE_ATTR_QPS_PER_PEER].type = NLA_U32;
    p[LITE_ATTR_NUM_PEERS].type = NLA_U32;
    p[LITE_ATTR_AGENT_PORTID].type = NLA_U32;
    p[LITE_ATTR_PEER_STATE].type = NLA_U32;
    p[LITE_ATTR_PEER_ROLE].type = NLA_U32;
    p[LITE_ATTR_QPS_CONNECTED].type = NLA_U32;
    p[LITE_ATTR_QP_INDEX].type = NLA_U32;
    p[LITE_ATTR_REASON].type = NLA_U32;
    p[LITE_ATTR_LMR_ID].type = NLA_U64;
    p[LITE_ATTR_NEW_LMR_ID].type = NLA_U64;
    p[LITE_ATTR_NAME].type = NLA_STRING;
    p[LITE_ATTR_NAME].maxlen = LITE_NAME_BUF;
    p[LITE_ATTR_SIZE].type = NLA_U64;
    p[LITE_ATTR_UID].type = NLA_U32;
    p[LITE_ATTR_GID].type = NLA_U32;
    p[LITE_ATTR_PID].type = NLA_U32;
    p[LITE_ATTR_MODE].type = NLA_U32;
    p[LITE_ATTR_EPOCH].type = NLA_U64;
    p[LITE_ATTR_MEMORY_KEY].type = NLA_U32;
    p[LITE_ATTR_CHUNKS].type = NLA_NESTED;
    p[LITE_ATTR_UPCALL_ID].type = NLA_U64;
    p[LITE_ATTR_UPCALL_KIND].type = NLA_U32;
    p[LITE_ATTR_ACCESS].type = NLA_U32;
    p[LITE_ATTR_GRANT_ID].type = NLA_U64;
    p[LITE_ATTR_ERRNO].type = NLA_U32;
    p[LITE_ATTR_MESSAGE].type = NLA_STRING;
    p[LITE_ATTR_MESSAGE].maxlen = LITE_MESSAGE_BUF;
    p[LITE_ATTR_GRANTED_AT_MS].type = NLA_U64;
    p[LITE_ATTR_REVOKED].type = NLA_FLAG;
    p[LITE_ATTR_NODE_NAME].type = NLA_STRING;
    p[LITE_ATTR_NODE_NAME].maxlen = LITE_NODE_NAME_BUF;
    p[LITE_ATTR_PEER_LAST_REFUSAL].type = NLA_U32;
    p[LITE_ATTR_PEER_REFUSED_BY].type = NLA_U32;
    p[LITE_ATTR_PEER_REFUSALS].type = NLA_U32;
    p[LITE_ATTR_RELEASING].type = NLA_FLAG;
    // LITE_ATTR_GROUPS: binary, checked by GetGroups.
    p[LITE_ATTR_GROUPS_TRUNCATED].type = NLA_FLAG;
    p[LITE_ATTR_SERVICE_ID].type = NLA_U64;
    p[LITE_ATTR_RPC_PORT].type = NLA_U32;
    p[LITE_ATTR_RPC_MAX_REQUEST].type = NLA_U32;
    p[LITE_ATTR_RPC_MAX_REPLY].type = NLA_U32;
    p[LITE_ATTR_RPC_DEPTH].type = NLA_U32;
    p[LITE_ATTR_RPC_MAX_CLIENTS].type = NLA_U32;
    p[LITE_ATTR_RPC_ADDR].type = NLA_U64;
    p[LITE_ATTR_RPC_SLOT_BYTES].type = NLA_U32;
    p[LITE_ATTR_RPC_CLIENTS].type = NLA_U32;
    p[LITE_ATTR_RPC_QUEUED].type = NLA_U64;
    p[LITE_ATTR_RPC_SERVED].type = NLA_U64;
    p[LITE_ATTR_RPC_CLOSING].type = NLA_FLAG;
    p[LITE_ATTR_READ_KEY].type = NLA_U32;
    p[LITE_ATTR_PROBE_NS].type = NLA_U64;
    return p;
  }();
  return policy;
}

// The command of a generic netlink message, or an error if the header is
// truncated.
absl::StatusOr<uint8_t> CommandOf(const nlmsghdr* msg) {
  auto* hdr = const_cast<nlmsghdr*>(msg);
  if (!genlmsg_valid_hdr(hdr, 0)) {
    return ErrnoStatus(EBADMSG, "truncated generic netlink message");
  }
  return static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
}

}  // namespace

// The helpers decode_rpc.cc shares (codec_internal.h).
absl::StatusOr<Attrs> Parse(const nlmsghdr* msg) {
  Attrs attrs;
  LITE_ASSIGN_OR_RETURN(attrs.cmd, CommandOf(msg));
  attrs.hdr = msg;
  int err = genlmsg_parse(const_cast<nlmsghdr*>(msg), 0, attrs.tb,
                          LITE_ATTR_MAX, const_cast<nla_policy*>(Policy()));
  if (err < 0) return LibnlStatus(err, "malformed message from lite.ko");
  return attrs;
}

absl::Status Missing(const char* what) {
  return ErrnoStatus(EBADMSG, absl::StrCat("lite.ko's message lacks ", what));
}

absl::Status CheckCmd(const Attrs& a, uint8_t cmd, const char* name) {
  if (a.cmd != cmd) {
    return ErrnoStatus(
        EBADMSG, absl::StrFormat("not a %s message (command %u)", name, a.cmd));
  }
  return absl::OkStatus();
}

// Every one of @types is there.
absl::Status Require(const Attrs& a,
                     std::initializer_list<std::pair<int, const char*>> types) {
  for (auto [type, what] : types) {
    if (!a.tb[type]) return Missing(what);
  }
  return absl::OkStatus();
}

namespace {

in_addr AddrOf(const nlattr* attr) {
  in_addr addr;
  addr.s_addr = nla_get_u32(const_cast<nlattr*>(attr));  // network order
  return addr;
}

// The fields a peer dump entry and every event share.
absl::Status DecodePeerFields(const Attrs& a, uint32_t* node_id,
                              uint64_t* incarnation, in_addr* addr,
                              uint32_t* state, uint32_t* qps_connected) {
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"},
                  {LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION"},
                  {LITE_ATTR_IPV4_ADDR, "LITE_ATTR_IPV4_ADDR"},
                  {LITE_ATTR_PEER_STATE, "LITE_ATTR_PEER_STATE"},
                  {LITE_ATTR_QPS_CONNECTED, "LITE_ATTR_QPS_CONNECTED"}}));
  *node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
  *incarnation = nla_get_u64(a.tb[LITE_ATTR_INCARNATION]);
  *addr = AddrOf(a.tb[LITE_ATTR_IPV4_ADDR]);
  *state = nla_get_u32(a.tb[LITE_ATTR_PEER_STATE]);
  *qps_connected = nla_get_u32(a.tb[LITE_ATTR_QPS_CONNECTED]);
  return absl::OkStatus();
}

}  // namespace

// A string attribute: NUL-terminated within its payload, 1..max_len bytes
// before the NUL (0..max_len when empty_ok).
absl::StatusOr<std::string> GetString(const nlattr* attr, const char* what,
                                      size_t max_len, bool empty_ok = false) {
  auto* a = const_cast<nlattr*>(attr);
  const char* data = static_cast<const char*>(nla_data(a));
  int len = nla_len(a);
  const void* nul = len > 0 ? std::memchr(data, '\0', len) : nullptr;
  if (nul == nullptr) {
    return BadMessage(absl::StrCat(what, " is not NUL-terminated"));
  }
  size_t n = static_cast<const char*>(nul) - data;
  if ((n == 0 && !empty_ok) || n > max_len) {
    return BadMessage(absl::StrFormat("%s has %u bytes (valid: %u..%u)", what,
                                      n, empty_ok ? 0 : 1, max_len));
  }
  return std::string(data, n);
}

absl::StatusOr<std::string> GetName(const Attrs& a) {
  if (!a.tb[LITE_ATTR_NAME]) return Missing("LITE_ATTR_NAME");
  return GetString(a.tb[LITE_ATTR_NAME], "LITE_ATTR_NAME", LITE_NAME_MAX);
}

// LITE_ATTR_NODE_NAME if the message has one, else "".
absl::StatusOr<std::string> GetNodeName(const Attrs& a) {
  if (!a.tb[LITE_ATTR_NODE_NAME]) return std::string();
  return GetString(a.tb[LITE_ATTR_NODE_NAME], "LITE_ATTR_NODE_NAME",
                   LITE_NODE_NAME_MAX);
}

// A u64 attribute that must be there and not 0.
absl::StatusOr<uint64_t> GetId64(const Attrs& a, int type, const char* what) {
  if (!a.tb[type]) return Missing(what);
  uint64_t v = nla_get_u64(a.tb[type]);
  if (v == 0) return BadMessage(absl::StrCat(what, " is 0"));
  return v;
}

namespace {

absl::Status CheckSize(uint64_t size) {
  if (size == 0 || size > LITE_LMR_SIZE_MAX) {
    return BadMessage(
        absl::StrFormat("LITE_ATTR_SIZE %u is out of range", size));
  }
  return absl::OkStatus();
}

absl::Status CheckMode(uint32_t mode) {
  if (mode & ~0666u) return BadMessage(absl::StrFormat("mode %#o", mode));
  return absl::OkStatus();
}

absl::Status CheckAccess(uint32_t access) {
  if (access == 0 || (access & ~kAccessMask)) {
    return BadMessage(absl::StrFormat("access %#x", access));
  }
  return absl::OkStatus();
}

// One LITE_ATTR_CHUNK nest: an address and a length > 0.
absl::StatusOr<Chunk> GetChunk(nlattr* nest, size_t index) {
  static nla_policy* const policy = [] {
    static nla_policy p[LITE_CHUNK_ATTR_MAX + 1] = {};
    p[LITE_CHUNK_ATTR_ADDR].type = NLA_U64;
    p[LITE_CHUNK_ATTR_LENGTH].type = NLA_U64;
    return p;
  }();
  nlattr* tb[LITE_CHUNK_ATTR_MAX + 1] = {};
  if (int err = nla_parse_nested(tb, LITE_CHUNK_ATTR_MAX, nest, policy);
      err < 0) {
    return LibnlStatus(err, "malformed LITE_ATTR_CHUNK from lite.ko");
  }
  if (!tb[LITE_CHUNK_ATTR_ADDR] || !tb[LITE_CHUNK_ATTR_LENGTH]) {
    return BadMessage(
        absl::StrFormat("chunk %u lacks its address or length", index));
  }
  Chunk c{nla_get_u64(tb[LITE_CHUNK_ATTR_ADDR]),
          nla_get_u64(tb[LITE_CHUNK_ATTR_LENGTH])};
  if (c.length == 0) {
    return BadMessage(absl::StrFormat("chunk %u has length 0", index));
  }
  return c;
}

// The chunks of a message: every LITE_ATTR_CHUNKS attribute in order (a
// list too long for one attribute's 64 KiB comes in several), each holding
// nested LITE_ATTR_CHUNK; 1 to LITE_CHUNKS_MAX in all. The lengths add up
// to @size, or to at most @size when @partial (one message of a dump that
// splits an LMR's chunks).
absl::StatusOr<std::vector<Chunk>> GetChunks(const Attrs& a, uint64_t size,
                                             bool partial) {
  if (!a.tb[LITE_ATTR_CHUNKS]) return Missing("LITE_ATTR_CHUNKS");
  std::vector<Chunk> out;
  uint64_t total = 0;
  auto* hdr = const_cast<nlmsghdr*>(a.hdr);
  nlattr* top;
  int top_rem;
  nla_for_each_attr(top, genlmsg_attrdata(genlmsg_hdr(hdr), 0),
                    genlmsg_attrlen(genlmsg_hdr(hdr), 0), top_rem) {
    if (nla_type(top) != LITE_ATTR_CHUNKS) continue;
    nlattr* pos;
    int rem;
    nla_for_each_nested(pos, top, rem) {
      int type = nla_type(pos);
      if (type == LITE_ATTR_PAD) continue;
      if (type != LITE_ATTR_CHUNK) {
        return BadMessage(
            absl::StrFormat("attribute %d inside LITE_ATTR_CHUNKS", type));
      }
      if (out.size() == LITE_CHUNKS_MAX) {
        return BadMessage(
            absl::StrFormat("more than %d chunks", LITE_CHUNKS_MAX));
      }
      LITE_ASSIGN_OR_RETURN(Chunk c, GetChunk(pos, out.size()));
      if (c.length > size - total) {
        return BadMessage(absl::StrFormat(
            "the chunks add up to more than the size, %u bytes", size));
      }
      total += c.length;
      out.push_back(c);
    }
    if (rem != 0) return BadMessage("trailing bytes in LITE_ATTR_CHUNKS");
  }
  if (out.empty()) return BadMessage("LITE_ATTR_CHUNKS is empty");
  if (!partial && total != size) {
    return BadMessage(absl::StrFormat(
        "the chunks add up to %u bytes, the size is %u", total, size));
  }
  return out;
}

uint64_t Total(const std::vector<Chunk>& chunks) {
  uint64_t total = 0;
  for (const Chunk& c : chunks) total += c.length;
  return total;
}

// Appends a dump message's entry to @out: a new entry, or the next chunks
// of the last one if it is the same (by @key) and not complete yet. lite.ko
// splits an entry whose chunks do not fit in one message that way.
template <typename T, typename Key>
absl::Status MergeParts(std::vector<T>* out, T part, Key key) {
  if (!out->empty() && key(out->back()) == key(part) &&
      Total(out->back().chunks) < out->back().size) {
    T& last = out->back();
    if (part.size != last.size || part.name != last.name) {
      return BadMessage("a continued dump entry changed its size or name");
    }
    if (last.chunks.size() + part.chunks.size() > LITE_CHUNKS_MAX) {
      return BadMessage(
          absl::StrFormat("more than %d chunks", LITE_CHUNKS_MAX));
    }
    if (Total(part.chunks) > last.size - Total(last.chunks)) {
      return BadMessage("the chunks add up to more than the size");
    }
    last.chunks.insert(last.chunks.end(), part.chunks.begin(),
                       part.chunks.end());
    return absl::OkStatus();
  }
  if (!out->empty() && Total(out->back().chunks) != out->back().size) {
    return BadMessage("a dump entry ended before all its chunks came");
  }
  out->push_back(std::move(part));
  return absl::OkStatus();
}

template <typename T>
absl::Status CheckLastComplete(const std::vector<T>& entries) {
  if (!entries.empty() && Total(entries.back().chunks) != entries.back().size) {
    return BadMessage(
        "the dump ended before all chunks of its last entry came");
  }
  return absl::OkStatus();
}

// The attributes of a MAP answer, which GRANT_GET entries also have.
absl::Status DecodeGrantFields(const Attrs& a, GrantInfo* g, bool partial) {
  LITE_ASSIGN_OR_RETURN(g->grant_id,
                        GetId64(a, LITE_ATTR_GRANT_ID, "LITE_ATTR_GRANT_ID"));
  LITE_ASSIGN_OR_RETURN(g->lmr_id,
                        GetId64(a, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID"));
  LITE_ASSIGN_OR_RETURN(g->name, GetName(a));
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"},
                  {LITE_ATTR_ACCESS, "LITE_ATTR_ACCESS"},
                  {LITE_ATTR_EPOCH, "LITE_ATTR_EPOCH"},
                  {LITE_ATTR_SIZE, "LITE_ATTR_SIZE"},
                  {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"},
                  {LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION"},
                  {LITE_ATTR_GRANTED_AT_MS, "LITE_ATTR_GRANTED_AT_MS"}}));
  g->home_node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
  if (g->home_node_id == 0) return BadMessage("the grant's home node id is 0");
  g->access = nla_get_u32(a.tb[LITE_ATTR_ACCESS]);
  LITE_RETURN_IF_ERROR(CheckAccess(g->access));
  g->epoch = nla_get_u64(a.tb[LITE_ATTR_EPOCH]);
  g->size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
  LITE_RETURN_IF_ERROR(CheckSize(g->size));
  g->memory_key = nla_get_u32(a.tb[LITE_ATTR_MEMORY_KEY]);
  g->holder_incarnation = nla_get_u64(a.tb[LITE_ATTR_INCARNATION]);
  g->granted_at_ms =
      static_cast<int64_t>(nla_get_u64(a.tb[LITE_ATTR_GRANTED_AT_MS]));
  LITE_ASSIGN_OR_RETURN(g->chunks, GetChunks(a, g->size, partial));
  return absl::OkStatus();
}

// The kind-specific attributes of an upcall.
absl::Status DecodeUpcallKind(const Attrs& a, uint32_t kind, UpcallRequest* u) {
  switch (kind) {
    case LITE_UPCALL_ALLOC: {
      u->kind = UpcallKind::kAlloc;
      LITE_ASSIGN_OR_RETURN(u->name, GetName(a));
      LITE_RETURN_IF_ERROR(
          Require(a, {{LITE_ATTR_SIZE, "LITE_ATTR_SIZE"},
                      {LITE_ATTR_MODE, "LITE_ATTR_MODE"},
                      {LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"}}));
      u->size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
      LITE_RETURN_IF_ERROR(CheckSize(u->size));
      u->mode = nla_get_u32(a.tb[LITE_ATTR_MODE]);
      LITE_RETURN_IF_ERROR(CheckMode(u->mode));
      u->home_node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
      return absl::OkStatus();
    }
    case LITE_UPCALL_MAP: {
      u->kind = UpcallKind::kMap;
      LITE_ASSIGN_OR_RETURN(u->name, GetName(a));
      if (!a.tb[LITE_ATTR_ACCESS]) return Missing("LITE_ATTR_ACCESS");
      u->access = nla_get_u32(a.tb[LITE_ATTR_ACCESS]);
      return CheckAccess(u->access);
    }
    case LITE_UPCALL_UNMAP: {
      u->kind = UpcallKind::kUnmap;
      LITE_ASSIGN_OR_RETURN(
          u->grant_id, GetId64(a, LITE_ATTR_GRANT_ID, "LITE_ATTR_GRANT_ID"));
      return absl::OkStatus();
    }
    case LITE_UPCALL_FREE: {
      u->kind = UpcallKind::kFree;
      LITE_ASSIGN_OR_RETURN(u->name, GetName(a));
      return absl::OkStatus();
    }
    case LITE_UPCALL_RPC_REGISTER:
    case LITE_UPCALL_RPC_UNREGISTER:
    case LITE_UPCALL_RPC_OPEN:
    case LITE_UPCALL_RPC_BIND:
      return DecodeRpcUpcallKind(a, kind, u);
    default:
      return BadMessage(absl::StrFormat("unknown upcall kind %u", kind));
  }
}

}  // namespace

absl::StatusOr<PeerInfo> DecodePeer(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  if (a.cmd != LITE_CMD_PEER_GET) {
    return ErrnoStatus(EBADMSG, "not a LITE_CMD_PEER_GET message");
  }
  PeerInfo peer;
  LITE_RETURN_IF_ERROR(DecodePeerFields(a, &peer.node_id, &peer.incarnation,
                                        &peer.addr, &peer.state,
                                        &peer.qps_connected));
  if (!a.tb[LITE_ATTR_PEER_ROLE]) return Missing("LITE_ATTR_PEER_ROLE");
  peer.role = nla_get_u32(a.tb[LITE_ATTR_PEER_ROLE]);
  LITE_ASSIGN_OR_RETURN(peer.name, GetNodeName(a));
  // Optional: a lite.ko without peer authentication has none of them. The
  // values are not range-checked: a newer lite.ko may name more reasons,
  // which RefusalName() calls unknown.
  if (a.tb[LITE_ATTR_PEER_REFUSALS]) {
    peer.refusals = nla_get_u32(a.tb[LITE_ATTR_PEER_REFUSALS]);
  }
  if (a.tb[LITE_ATTR_PEER_LAST_REFUSAL]) {
    peer.last_refusal = nla_get_u32(a.tb[LITE_ATTR_PEER_LAST_REFUSAL]);
    if (*peer.last_refusal == 0) {
      return BadMessage("LITE_ATTR_PEER_LAST_REFUSAL is 0");
    }
  }
  if (a.tb[LITE_ATTR_PEER_REFUSED_BY]) {
    if (!peer.last_refusal) {
      return BadMessage(
          "LITE_ATTR_PEER_REFUSED_BY without LITE_ATTR_PEER_LAST_REFUSAL");
    }
    peer.refused_by = nla_get_u32(a.tb[LITE_ATTR_PEER_REFUSED_BY]);
  }
  return peer;
}

absl::StatusOr<NodeInfo> DecodeNode(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  auto& tb = a.tb;
  if (a.cmd != LITE_CMD_NODE_GET) {
    return ErrnoStatus(EBADMSG, "not a LITE_CMD_NODE_GET message");
  }
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_CM_PORT, "LITE_ATTR_CM_PORT"},
                  {LITE_ATTR_QPS_PER_PEER, "LITE_ATTR_QPS_PER_PEER"},
                  {LITE_ATTR_NUM_PEERS, "LITE_ATTR_NUM_PEERS"}}));
  NodeInfo node;
  node.cm_port = nla_get_u16(tb[LITE_ATTR_CM_PORT]);
  node.qps_per_peer = nla_get_u32(tb[LITE_ATTR_QPS_PER_PEER]);
  node.num_peers = nla_get_u32(tb[LITE_ATTR_NUM_PEERS]);
  if (tb[LITE_ATTR_NODE_ID]) {
    if (!tb[LITE_ATTR_INCARNATION] || !tb[LITE_ATTR_IPV4_ADDR]) {
      return Missing("the incarnation or address of the node");
    }
    node.node_id = nla_get_u32(tb[LITE_ATTR_NODE_ID]);
    node.incarnation = nla_get_u64(tb[LITE_ATTR_INCARNATION]);
    node.addr = AddrOf(tb[LITE_ATTR_IPV4_ADDR]);
  }
  if (tb[LITE_ATTR_AGENT_PORTID]) {
    node.agent_portid = nla_get_u32(tb[LITE_ATTR_AGENT_PORTID]);
  }
  LITE_ASSIGN_OR_RETURN(node.name, GetNodeName(a));
  return node;
}

absl::StatusOr<ProbeResult> DecodeProbe(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  if (a.cmd != LITE_CMD_PEER_PROBE) {
    return ErrnoStatus(EBADMSG, "not a LITE_CMD_PEER_PROBE message");
  }
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"},
                  {LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION"},
                  {LITE_ATTR_PROBE_NS, "LITE_ATTR_PROBE_NS"}}));
  ProbeResult probe;
  probe.node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
  probe.incarnation = nla_get_u64(a.tb[LITE_ATTR_INCARNATION]);
  probe.round_trip_ns = nla_get_u64(a.tb[LITE_ATTR_PROBE_NS]);
  return probe;
}

absl::StatusOr<Event> DecodeEvent(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  Event event;
  switch (a.cmd) {
    case LITE_CMD_EVENT_PEER_CONNECTED:
      event.type = EventType::kPeerConnected;
      break;
    case LITE_CMD_EVENT_PEER_FAILED:
      event.type = EventType::kPeerFailed;
      break;
    case LITE_CMD_EVENT_PEER_REMOVED:
      event.type = EventType::kPeerRemoved;
      break;
    default:
      return ErrnoStatus(EBADMSG,
                         absl::StrFormat("unknown event command %u", a.cmd));
  }
  LITE_RETURN_IF_ERROR(DecodePeerFields(a, &event.node_id, &event.incarnation,
                                        &event.addr, &event.state,
                                        &event.qps_connected));
  if (a.tb[LITE_ATTR_QP_INDEX]) {
    event.qp_index = nla_get_u32(a.tb[LITE_ATTR_QP_INDEX]);
  }
  if (a.tb[LITE_ATTR_REASON]) {
    event.reason = nla_get_u32(a.tb[LITE_ATTR_REASON]);
  }
  return event;
}

absl::StatusOr<LmrLostEvent> DecodeLmrLost(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  if (a.cmd != LITE_CMD_EVENT_LMR_LOST) {
    return ErrnoStatus(EBADMSG,
                       absl::StrFormat("command %u is not LMR_LOST", a.cmd));
  }
  if (!a.tb[LITE_ATTR_LMR_ID]) return Missing("LITE_ATTR_LMR_ID");
  if (!a.tb[LITE_ATTR_REASON]) return Missing("LITE_ATTR_REASON");
  LmrLostEvent lost;
  lost.lmr_id = nla_get_u64(a.tb[LITE_ATTR_LMR_ID]);
  lost.reason = nla_get_u32(a.tb[LITE_ATTR_REASON]);
  if (lost.lmr_id == 0) return BadMessage("LMR_LOST for LMR id 0");
  if (lost.reason == 0 || lost.reason >= 4096) {
    return BadMessage(
        absl::StrFormat("LMR_LOST with reason %u, not an errno", lost.reason));
  }
  return lost;
}

absl::Status DecodeError(const nlmsghdr* msg) {
  if (msg->nlmsg_type != NLMSG_ERROR ||
      msg->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
    return ErrnoStatus(EBADMSG, "not a netlink error message");
  }
  const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(msg));
  if (e->error == 0) return absl::OkStatus();
  int err = -e->error;
  std::string detail;
  // Extended ack: TLVs after the error and the (possibly capped) request.
  if (msg->nlmsg_flags & NLM_F_ACK_TLVS) {
    size_t offset = NLMSG_LENGTH(sizeof(nlmsgerr));
    if (!(msg->nlmsg_flags & NLM_F_CAPPED)) {
      offset += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
    }
    if (offset < msg->nlmsg_len) {
      auto* head = reinterpret_cast<nlattr*>(
          const_cast<char*>(reinterpret_cast<const char*>(msg)) + offset);
      nlattr* tb[NLMSGERR_ATTR_MAX + 1] = {};
      if (nla_parse(tb, NLMSGERR_ATTR_MAX, head, msg->nlmsg_len - offset,
                    nullptr) == 0) {
        if (tb[NLMSGERR_ATTR_MSG]) {
          detail = nla_get_string(tb[NLMSGERR_ATTR_MSG]);
        }
        if (tb[NLMSGERR_ATTR_MISS_TYPE] && detail.empty()) {
          detail = absl::StrFormat("missing attribute %u",
                                   nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
        }
      }
    }
  }
  return ErrnoStatus(err, detail);
}

absl::StatusOr<LmrMemory> DecodeLmrMemory(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(CheckCmd(a, LITE_CMD_LMR_ALLOC, "LITE_CMD_LMR_ALLOC"));
  if (!a.tb[LITE_ATTR_MEMORY_KEY]) return Missing("LITE_ATTR_MEMORY_KEY");
  LmrMemory m;
  m.memory_key = nla_get_u32(a.tb[LITE_ATTR_MEMORY_KEY]);
  if (a.tb[LITE_ATTR_READ_KEY]) {
    m.read_key = nla_get_u32(a.tb[LITE_ATTR_READ_KEY]);
  }
  LITE_ASSIGN_OR_RETURN(m.chunks,
                        GetChunks(a, LITE_LMR_SIZE_MAX, /*partial=*/true));
  return m;
}

absl::StatusOr<LmrInfo> DecodeLmr(const nlmsghdr* msg, bool partial) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(CheckCmd(a, LITE_CMD_LMR_GET, "LITE_CMD_LMR_GET"));
  LmrInfo l;
  LITE_ASSIGN_OR_RETURN(l.lmr_id,
                        GetId64(a, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID"));
  LITE_ASSIGN_OR_RETURN(l.name, GetName(a));
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_SIZE, "LITE_ATTR_SIZE"},
                  {LITE_ATTR_UID, "LITE_ATTR_UID"},
                  {LITE_ATTR_GID, "LITE_ATTR_GID"},
                  {LITE_ATTR_MODE, "LITE_ATTR_MODE"},
                  {LITE_ATTR_EPOCH, "LITE_ATTR_EPOCH"},
                  {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"}}));
  l.size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
  LITE_RETURN_IF_ERROR(CheckSize(l.size));
  l.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  l.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  l.mode = nla_get_u32(a.tb[LITE_ATTR_MODE]);
  LITE_RETURN_IF_ERROR(CheckMode(l.mode));
  l.epoch = nla_get_u64(a.tb[LITE_ATTR_EPOCH]);
  l.memory_key = nla_get_u32(a.tb[LITE_ATTR_MEMORY_KEY]);
  if (a.tb[LITE_ATTR_READ_KEY]) {
    l.read_key = nla_get_u32(a.tb[LITE_ATTR_READ_KEY]);
  }
  LITE_ASSIGN_OR_RETURN(l.chunks, GetChunks(a, l.size, partial));
  l.releasing = a.tb[LITE_ATTR_RELEASING] != nullptr;
  return l;
}

absl::StatusOr<GrantInfo> DecodeGrant(const nlmsghdr* msg, bool partial) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(CheckCmd(a, LITE_CMD_GRANT_GET, "LITE_CMD_GRANT_GET"));
  GrantInfo g;
  LITE_RETURN_IF_ERROR(DecodeGrantFields(a, &g, partial));
  LITE_RETURN_IF_ERROR(Require(a, {{LITE_ATTR_UID, "LITE_ATTR_UID"},
                                   {LITE_ATTR_GID, "LITE_ATTR_GID"},
                                   {LITE_ATTR_PID, "LITE_ATTR_PID"}}));
  g.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  g.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  g.pid = nla_get_u32(a.tb[LITE_ATTR_PID]);
  g.revoked = a.tb[LITE_ATTR_REVOKED] != nullptr;
  return g;
}

namespace {

// LITE_ATTR_GROUPS: whole u32s, at most LITE_GROUPS_MAX, none (gid_t)-1.
absl::Status GetGroups(const Attrs& a, std::vector<uint32_t>* groups) {
  auto* attr = const_cast<nlattr*>(a.tb[LITE_ATTR_GROUPS]);
  const int len = nla_len(attr);
  if (len % sizeof(uint32_t) != 0 ||
      len / sizeof(uint32_t) > static_cast<size_t>(LITE_GROUPS_MAX)) {
    return BadMessage(absl::StrFormat(
        "LITE_ATTR_GROUPS has %d bytes (valid: a multiple of 4, at most %d)",
        len, LITE_GROUPS_MAX * 4));
  }
  groups->resize(len / sizeof(uint32_t));
  if (len > 0) std::memcpy(groups->data(), nla_data(attr), len);
  for (uint32_t g : *groups) {
    if (g == UINT32_MAX) {
      return BadMessage("LITE_ATTR_GROUPS holds gid 4294967295");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UpcallRequest> DecodeUpcall(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(Attrs a, Parse(msg));
  LITE_RETURN_IF_ERROR(CheckCmd(a, LITE_CMD_UPCALL, "LITE_CMD_UPCALL"));
  UpcallRequest u;
  LITE_ASSIGN_OR_RETURN(u.upcall_id,
                        GetId64(a, LITE_ATTR_UPCALL_ID, "LITE_ATTR_UPCALL_ID"));
  LITE_RETURN_IF_ERROR(
      Require(a, {{LITE_ATTR_UPCALL_KIND, "LITE_ATTR_UPCALL_KIND"},
                  {LITE_ATTR_UID, "LITE_ATTR_UID"},
                  {LITE_ATTR_GID, "LITE_ATTR_GID"},
                  {LITE_ATTR_PID, "LITE_ATTR_PID"},
                  {LITE_ATTR_GROUPS, "LITE_ATTR_GROUPS"}}));
  u.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  u.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  u.pid = nla_get_u32(a.tb[LITE_ATTR_PID]);
  LITE_RETURN_IF_ERROR(GetGroups(a, &u.groups));
  u.groups_truncated = a.tb[LITE_ATTR_GROUPS_TRUNCATED] != nullptr;
  LITE_RETURN_IF_ERROR(
      DecodeUpcallKind(a, nla_get_u32(a.tb[LITE_ATTR_UPCALL_KIND]), &u));
  return u;
}

bool IsNotification(const nlmsghdr* msg) {
  absl::StatusOr<uint8_t> cmd = CommandOf(msg);
  if (!cmd.ok()) return false;
  return *cmd == LITE_CMD_UPCALL || *cmd == LITE_CMD_EVENT_PEER_CONNECTED ||
         *cmd == LITE_CMD_EVENT_PEER_FAILED ||
         *cmd == LITE_CMD_EVENT_PEER_REMOVED || *cmd == LITE_CMD_EVENT_LMR_LOST;
}

absl::StatusOr<Notification> DecodeNotification(const nlmsghdr* msg) {
  LITE_ASSIGN_OR_RETURN(uint8_t cmd, CommandOf(msg));
  if (cmd == LITE_CMD_UPCALL) {
    LITE_ASSIGN_OR_RETURN(UpcallRequest upcall, DecodeUpcall(msg));
    return Notification(std::move(upcall));
  }
  if (cmd == LITE_CMD_EVENT_LMR_LOST) {
    LITE_ASSIGN_OR_RETURN(LmrLostEvent lost, DecodeLmrLost(msg));
    return Notification(lost);
  }
  LITE_ASSIGN_OR_RETURN(Event event, DecodeEvent(msg));
  return Notification(event);
}

absl::Status MergeLmrPart(std::vector<LmrInfo>* lmrs, LmrInfo part) {
  const bool releasing = part.releasing;
  LITE_RETURN_IF_ERROR(MergeParts(lmrs, std::move(part),
                                  [](const LmrInfo& l) { return l.lmr_id; }));
  // lite.ko drops its lock between dump messages and the mark is sticky:
  // a continuation may be the first part to carry it.
  if (releasing) lmrs->back().releasing = true;
  return absl::OkStatus();
}

absl::Status MergeGrantPart(std::vector<GrantInfo>* grants, GrantInfo part) {
  return MergeParts(grants, std::move(part),
                    [](const GrantInfo& g) { return g.grant_id; });
}

absl::Status CheckDumpComplete(const std::vector<LmrInfo>& lmrs) {
  return CheckLastComplete(lmrs);
}

absl::Status CheckDumpComplete(const std::vector<GrantInfo>& grants) {
  return CheckLastComplete(grants);
}

}  // namespace lite::genl
