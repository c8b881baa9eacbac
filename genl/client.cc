#include "genl/client.h"

#include <arpa/inet.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {
namespace {

constexpr char kErrnoPayload[] = "type.lite/errno";

// "<strerror> (<ENAME>)[: detail]", with the errno attached as a payload.
absl::Status ErrnoStatus(int err, absl::string_view detail = {}) {
  const char* name = strerrorname_np(err);
  std::string message =
      absl::StrFormat("%s (%s)", std::strerror(err), name ? name : "?");
  if (!detail.empty()) absl::StrAppend(&message, ": ", detail);
  absl::Status status(absl::ErrnoToStatusCode(err), message);
  status.SetPayload(kErrnoPayload, absl::Cord(std::to_string(err)));
  return status;
}

// libnl reports its own error codes (negative NLE_*).
absl::Status LibnlStatus(int nl_err, absl::string_view what) {
  int err = EIO;
  switch (-nl_err) {
    case NLE_AGAIN:
      err = ETIMEDOUT;
      break;
    case NLE_PERM:
      err = EPERM;
      break;
    case NLE_NOMEM:
      err = ENOBUFS;
      break;
    case NLE_OBJ_NOTFOUND:
      err = ENOENT;
      break;
    case NLE_INTR:
      err = EINTR;
      break;
    default:
      break;
  }
  return ErrnoStatus(err, absl::StrCat(what, " (", nl_geterror(nl_err), ")"));
}

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
    return p;
  }();
  return policy;
}

struct Attrs {
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
  uint8_t cmd = 0;
  const nlmsghdr* hdr = nullptr;  // for attributes that may repeat
};

absl::StatusOr<Attrs> Parse(const nlmsghdr* msg) {
  Attrs attrs;
  auto* hdr = const_cast<nlmsghdr*>(msg);
  if (!genlmsg_valid_hdr(hdr, 0)) {
    return ErrnoStatus(EBADMSG, "truncated generic netlink message");
  }
  attrs.cmd = static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
  attrs.hdr = msg;
  int err = genlmsg_parse(hdr, 0, attrs.tb, LITE_ATTR_MAX,
                          const_cast<nla_policy*>(Policy()));
  if (err < 0) return LibnlStatus(err, "malformed message from lite.ko");
  return attrs;
}

absl::Status Missing(const char* what) {
  return ErrnoStatus(EBADMSG, absl::StrCat("lite.ko's message lacks ", what));
}

in_addr AddrOf(const nlattr* attr) {
  in_addr addr;
  addr.s_addr = nla_get_u32(const_cast<nlattr*>(attr));  // network order
  return addr;
}

// The fields a peer dump entry and every event share.
absl::Status DecodePeerFields(const Attrs& a, uint32_t* node_id,
                              uint64_t* incarnation, in_addr* addr,
                              uint32_t* state, uint32_t* qps_connected) {
  if (!a.tb[LITE_ATTR_NODE_ID]) return Missing("LITE_ATTR_NODE_ID");
  if (!a.tb[LITE_ATTR_INCARNATION]) return Missing("LITE_ATTR_INCARNATION");
  if (!a.tb[LITE_ATTR_IPV4_ADDR]) return Missing("LITE_ATTR_IPV4_ADDR");
  if (!a.tb[LITE_ATTR_PEER_STATE]) return Missing("LITE_ATTR_PEER_STATE");
  if (!a.tb[LITE_ATTR_QPS_CONNECTED]) return Missing("LITE_ATTR_QPS_CONNECTED");
  *node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
  *incarnation = nla_get_u64(a.tb[LITE_ATTR_INCARNATION]);
  *addr = AddrOf(a.tb[LITE_ATTR_IPV4_ADDR]);
  *state = nla_get_u32(a.tb[LITE_ATTR_PEER_STATE]);
  *qps_connected = nla_get_u32(a.tb[LITE_ATTR_QPS_CONNECTED]);
  return absl::OkStatus();
}

}  // namespace

int ErrnoOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrnoPayload);
  if (!payload) return 0;
  int err = 0;
  std::string text(*payload);
  std::from_chars(text.data(), text.data() + text.size(), err);
  return err;
}

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

absl::StatusOr<PeerInfo> DecodePeer(const nlmsghdr* msg) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  if (attrs->cmd != LITE_CMD_PEER_GET) {
    return ErrnoStatus(EBADMSG, "not a LITE_CMD_PEER_GET message");
  }
  PeerInfo peer;
  absl::Status s =
      DecodePeerFields(*attrs, &peer.node_id, &peer.incarnation, &peer.addr,
                       &peer.state, &peer.qps_connected);
  if (!s.ok()) return s;
  if (!attrs->tb[LITE_ATTR_PEER_ROLE]) return Missing("LITE_ATTR_PEER_ROLE");
  peer.role = nla_get_u32(attrs->tb[LITE_ATTR_PEER_ROLE]);
  return peer;
}

absl::StatusOr<NodeInfo> DecodeNode(const nlmsghdr* msg) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  auto& tb = attrs->tb;
  if (attrs->cmd != LITE_CMD_NODE_GET) {
    return ErrnoStatus(EBADMSG, "not a LITE_CMD_NODE_GET message");
  }
  if (!tb[LITE_ATTR_CM_PORT]) return Missing("LITE_ATTR_CM_PORT");
  if (!tb[LITE_ATTR_QPS_PER_PEER]) return Missing("LITE_ATTR_QPS_PER_PEER");
  if (!tb[LITE_ATTR_NUM_PEERS]) return Missing("LITE_ATTR_NUM_PEERS");
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
  return node;
}

absl::StatusOr<Event> DecodeEvent(const nlmsghdr* msg) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  Event event;
  switch (attrs->cmd) {
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
      return ErrnoStatus(
          EBADMSG, absl::StrFormat("unknown event command %u", attrs->cmd));
  }
  absl::Status s =
      DecodePeerFields(*attrs, &event.node_id, &event.incarnation, &event.addr,
                       &event.state, &event.qps_connected);
  if (!s.ok()) return s;
  if (attrs->tb[LITE_ATTR_QP_INDEX]) {
    event.qp_index = nla_get_u32(attrs->tb[LITE_ATTR_QP_INDEX]);
  }
  if (attrs->tb[LITE_ATTR_REASON]) {
    event.reason = nla_get_u32(attrs->tb[LITE_ATTR_REASON]);
  }
  return event;
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

// ---- LMRs, grants, upcalls ----

namespace {

static_assert(static_cast<uint32_t>(UpcallKind::kAlloc) == LITE_UPCALL_ALLOC);
static_assert(static_cast<uint32_t>(UpcallKind::kMap) == LITE_UPCALL_MAP);
static_assert(static_cast<uint32_t>(UpcallKind::kUnmap) == LITE_UPCALL_UNMAP);
static_assert(static_cast<uint32_t>(UpcallKind::kFree) == LITE_UPCALL_FREE);

constexpr uint32_t kAccessMask = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
// The largest errno LITE_ATTR_ERRNO carries, plus one.
constexpr uint32_t kErrnoLimit = 4096;

absl::Status Bad(absl::string_view what) {
  return ErrnoStatus(EBADMSG, absl::StrCat("lite.ko's message: ", what));
}

absl::Status Invalid(absl::string_view what) {
  return ErrnoStatus(EINVAL, what);
}

// A string attribute: NUL-terminated within its payload, 1..max_len bytes
// before the NUL (0..max_len when empty_ok).
absl::StatusOr<std::string> GetString(const nlattr* attr, const char* what,
                                      size_t max_len, bool empty_ok = false) {
  auto* a = const_cast<nlattr*>(attr);
  const char* data = static_cast<const char*>(nla_data(a));
  int len = nla_len(a);
  const void* nul = len > 0 ? std::memchr(data, '\0', len) : nullptr;
  if (nul == nullptr) {
    return Bad(absl::StrCat(what, " is not NUL-terminated"));
  }
  size_t n = static_cast<const char*>(nul) - data;
  if ((n == 0 && !empty_ok) || n > max_len) {
    return Bad(absl::StrFormat("%s has %u bytes (valid: %u..%u)", what, n,
                               empty_ok ? 0 : 1, max_len));
  }
  return std::string(data, n);
}

absl::StatusOr<std::string> GetName(const Attrs& a) {
  if (!a.tb[LITE_ATTR_NAME]) return Missing("LITE_ATTR_NAME");
  return GetString(a.tb[LITE_ATTR_NAME], "LITE_ATTR_NAME", LITE_NAME_MAX);
}

// A u64 attribute that must be there and not 0.
absl::StatusOr<uint64_t> GetId64(const Attrs& a, int type, const char* what) {
  if (!a.tb[type]) return Missing(what);
  uint64_t v = nla_get_u64(a.tb[type]);
  if (v == 0) return Bad(absl::StrCat(what, " is 0"));
  return v;
}

// How many chunks one LITE_ATTR_CHUNKS nest holds at most when this library
// encodes: an attribute's length is 16 bits and a chunk takes 28 bytes here
// (no padding), so 2048 (56 KiB) fit; a longer list goes in several nests.
constexpr size_t kChunksPerNest = 2048;

// The chunks of a message: every LITE_ATTR_CHUNKS attribute in order (a
// list too long for one attribute's 64 KiB comes in several), each holding
// nested LITE_ATTR_CHUNK, each with an address and a length > 0; 1 to
// LITE_CHUNKS_MAX in all. The lengths add up to @size, or to at most @size
// when @partial (one message of a dump that splits an LMR's chunks).
absl::StatusOr<std::vector<Chunk>> GetChunks(const Attrs& a, uint64_t size,
                                             bool partial) {
  if (!a.tb[LITE_ATTR_CHUNKS]) return Missing("LITE_ATTR_CHUNKS");
  static nla_policy* const policy = [] {
    static nla_policy p[LITE_CHUNK_ATTR_MAX + 1] = {};
    p[LITE_CHUNK_ATTR_ADDR].type = NLA_U64;
    p[LITE_CHUNK_ATTR_LENGTH].type = NLA_U64;
    return p;
  }();

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
        return Bad(
            absl::StrFormat("attribute %d inside LITE_ATTR_CHUNKS", type));
      }
      if (out.size() == LITE_CHUNKS_MAX) {
        return Bad(absl::StrFormat("more than %d chunks", LITE_CHUNKS_MAX));
      }
      nlattr* tb[LITE_CHUNK_ATTR_MAX + 1] = {};
      if (int err = nla_parse_nested(tb, LITE_CHUNK_ATTR_MAX, pos, policy);
          err < 0) {
        return LibnlStatus(err, "malformed LITE_ATTR_CHUNK from lite.ko");
      }
      if (!tb[LITE_CHUNK_ATTR_ADDR] || !tb[LITE_CHUNK_ATTR_LENGTH]) {
        return Bad(absl::StrFormat("chunk %u lacks its address or length",
                                   out.size()));
      }
      Chunk c{nla_get_u64(tb[LITE_CHUNK_ATTR_ADDR]),
              nla_get_u64(tb[LITE_CHUNK_ATTR_LENGTH])};
      if (c.length == 0) {
        return Bad(absl::StrFormat("chunk %u has length 0", out.size()));
      }
      if (c.length > size - total) {
        return Bad(absl::StrFormat(
            "the chunks add up to more than the size, %u bytes", size));
      }
      total += c.length;
      out.push_back(c);
    }
    if (rem != 0) return Bad("trailing bytes in LITE_ATTR_CHUNKS");
  }
  if (out.empty()) return Bad("LITE_ATTR_CHUNKS is empty");
  if (!partial && total != size) {
    return Bad(absl::StrFormat("the chunks add up to %u bytes, the size is %u",
                               total, size));
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
      return Bad("a continued dump entry changed its size or name");
    }
    if (last.chunks.size() + part.chunks.size() > LITE_CHUNKS_MAX) {
      return Bad(absl::StrFormat("more than %d chunks", LITE_CHUNKS_MAX));
    }
    if (Total(part.chunks) > last.size - Total(last.chunks)) {
      return Bad("the chunks add up to more than the size");
    }
    last.chunks.insert(last.chunks.end(), part.chunks.begin(),
                       part.chunks.end());
    return absl::OkStatus();
  }
  if (!out->empty() && Total(out->back().chunks) != out->back().size) {
    return Bad("a dump entry ended before all its chunks came");
  }
  out->push_back(std::move(part));
  return absl::OkStatus();
}

template <typename T>
absl::Status CheckLastComplete(const std::vector<T>& entries) {
  if (!entries.empty() && Total(entries.back().chunks) != entries.back().size) {
    return Bad("the dump ended before all chunks of its last entry came");
  }
  return absl::OkStatus();
}

absl::Status CheckCmd(const Attrs& a, uint8_t cmd, const char* name) {
  if (a.cmd != cmd) {
    return ErrnoStatus(
        EBADMSG, absl::StrFormat("not a %s message (command %u)", name, a.cmd));
  }
  return absl::OkStatus();
}

absl::Status CheckSize(uint64_t size) {
  if (size == 0 || size > LITE_LMR_SIZE_MAX) {
    return Bad(absl::StrFormat("LITE_ATTR_SIZE %u is out of range", size));
  }
  return absl::OkStatus();
}

// The attributes of a MAP answer, which GRANT_GET entries also have.
absl::Status DecodeGrantFields(const Attrs& a, GrantInfo* g, bool partial) {
  auto grant_id = GetId64(a, LITE_ATTR_GRANT_ID, "LITE_ATTR_GRANT_ID");
  if (!grant_id.ok()) return grant_id.status();
  auto lmr_id = GetId64(a, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID");
  if (!lmr_id.ok()) return lmr_id.status();
  auto name = GetName(a);
  if (!name.ok()) return name.status();
  for (auto [type, what] :
       {std::pair{LITE_ATTR_NODE_ID, "LITE_ATTR_NODE_ID"},
        {LITE_ATTR_ACCESS, "LITE_ATTR_ACCESS"},
        {LITE_ATTR_EPOCH, "LITE_ATTR_EPOCH"},
        {LITE_ATTR_SIZE, "LITE_ATTR_SIZE"},
        {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"},
        {LITE_ATTR_INCARNATION, "LITE_ATTR_INCARNATION"},
        {LITE_ATTR_GRANTED_AT_MS, "LITE_ATTR_GRANTED_AT_MS"}}) {
    if (!a.tb[type]) return Missing(what);
  }
  g->grant_id = *grant_id;
  g->lmr_id = *lmr_id;
  g->name = *std::move(name);
  g->home_node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
  if (g->home_node_id == 0) return Bad("the grant's home node id is 0");
  g->access = nla_get_u32(a.tb[LITE_ATTR_ACCESS]);
  if (g->access == 0 || (g->access & ~kAccessMask)) {
    return Bad(absl::StrFormat("access %#x", g->access));
  }
  g->epoch = nla_get_u64(a.tb[LITE_ATTR_EPOCH]);
  g->size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
  if (absl::Status s = CheckSize(g->size); !s.ok()) return s;
  g->memory_key = nla_get_u32(a.tb[LITE_ATTR_MEMORY_KEY]);
  g->holder_incarnation = nla_get_u64(a.tb[LITE_ATTR_INCARNATION]);
  g->granted_at_ms =
      static_cast<int64_t>(nla_get_u64(a.tb[LITE_ATTR_GRANTED_AT_MS]));
  auto chunks = GetChunks(a, g->size, partial);
  if (!chunks.ok()) return chunks.status();
  g->chunks = *std::move(chunks);
  return absl::OkStatus();
}

// Checks what the uapi allows before anything is sent.
absl::Status CheckName(absl::string_view name) {
  if (name.empty() || name.size() > LITE_NAME_MAX ||
      name.find('\0') != absl::string_view::npos) {
    return Invalid(absl::StrFormat(
        "an LMR name has 1..%d characters and no NUL (got %u bytes)",
        LITE_NAME_MAX, name.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckChunks(const std::vector<Chunk>& chunks, uint64_t size) {
  if (chunks.empty() || chunks.size() > LITE_CHUNKS_MAX) {
    return Invalid(absl::StrFormat("%u chunks (valid: 1..%d)", chunks.size(),
                                   LITE_CHUNKS_MAX));
  }
  uint64_t total = 0;
  for (const Chunk& c : chunks) {
    if (c.length == 0) return Invalid("a chunk of length 0");
    if (c.length > std::numeric_limits<uint64_t>::max() - total) {
      return Invalid("the chunk lengths overflow");
    }
    total += c.length;
  }
  if (total != size) {
    return Invalid(
        absl::StrFormat("the chunks add up to %u bytes, not %u", total, size));
  }
  return absl::OkStatus();
}

absl::Status Put(int err) {
  if (err < 0) return ErrnoStatus(EMSGSIZE, "the request does not fit");
  return absl::OkStatus();
}

// One LITE_ATTR_CHUNKS nest of [begin, end).
absl::Status PutChunkNest(nl_msg* msg, const Chunk* begin, const Chunk* end);

// libnl does not set NLA_F_NESTED, which the kernel's strict validation
// requires on nested attributes.
nlattr* NestStart(nl_msg* msg, int type) {
  return nla_nest_start(msg, type | NLA_F_NESTED);
}

absl::Status PutChunks(nl_msg* msg, const std::vector<Chunk>& chunks) {
  for (size_t i = 0; i < chunks.size(); i += kChunksPerNest) {
    size_t end = std::min(chunks.size(), i + kChunksPerNest);
    absl::Status s = PutChunkNest(msg, &chunks[i], &chunks[0] + end);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status PutChunkNest(nl_msg* msg, const Chunk* begin, const Chunk* end) {
  nlattr* all = NestStart(msg, LITE_ATTR_CHUNKS);
  if (!all) return Put(-1);
  for (const Chunk* c = begin; c != end; ++c) {
    nlattr* one = NestStart(msg, LITE_ATTR_CHUNK);
    if (!one) return Put(-1);
    if (absl::Status s = Put(nla_put_u64(msg, LITE_CHUNK_ATTR_ADDR, c->addr));
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            Put(nla_put_u64(msg, LITE_CHUNK_ATTR_LENGTH, c->length));
        !s.ok()) {
      return s;
    }
    nla_nest_end(msg, one);
  }
  nla_nest_end(msg, all);
  return absl::OkStatus();
}

}  // namespace

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

absl::StatusOr<LmrMemory> DecodeLmrMemory(const nlmsghdr* msg) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  if (absl::Status s =
          CheckCmd(*attrs, LITE_CMD_LMR_ALLOC, "LITE_CMD_LMR_ALLOC");
      !s.ok()) {
    return s;
  }
  if (!attrs->tb[LITE_ATTR_MEMORY_KEY]) return Missing("LITE_ATTR_MEMORY_KEY");
  LmrMemory m;
  m.memory_key = nla_get_u32(attrs->tb[LITE_ATTR_MEMORY_KEY]);
  auto chunks = GetChunks(*attrs, LITE_LMR_SIZE_MAX, /*partial=*/true);
  if (!chunks.ok()) return chunks.status();
  m.chunks = *std::move(chunks);
  return m;
}

absl::StatusOr<LmrInfo> DecodeLmr(const nlmsghdr* msg, bool partial) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  const Attrs& a = *attrs;
  if (absl::Status s = CheckCmd(a, LITE_CMD_LMR_GET, "LITE_CMD_LMR_GET");
      !s.ok()) {
    return s;
  }
  auto lmr_id = GetId64(a, LITE_ATTR_LMR_ID, "LITE_ATTR_LMR_ID");
  if (!lmr_id.ok()) return lmr_id.status();
  auto name = GetName(a);
  if (!name.ok()) return name.status();
  for (auto [type, what] : {std::pair{LITE_ATTR_SIZE, "LITE_ATTR_SIZE"},
                            {LITE_ATTR_UID, "LITE_ATTR_UID"},
                            {LITE_ATTR_GID, "LITE_ATTR_GID"},
                            {LITE_ATTR_MODE, "LITE_ATTR_MODE"},
                            {LITE_ATTR_EPOCH, "LITE_ATTR_EPOCH"},
                            {LITE_ATTR_MEMORY_KEY, "LITE_ATTR_MEMORY_KEY"}}) {
    if (!a.tb[type]) return Missing(what);
  }
  LmrInfo l;
  l.lmr_id = *lmr_id;
  l.name = *std::move(name);
  l.size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
  if (absl::Status s = CheckSize(l.size); !s.ok()) return s;
  l.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  l.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  l.mode = nla_get_u32(a.tb[LITE_ATTR_MODE]);
  if (l.mode & ~0666u) return Bad(absl::StrFormat("mode %#o", l.mode));
  l.epoch = nla_get_u64(a.tb[LITE_ATTR_EPOCH]);
  l.memory_key = nla_get_u32(a.tb[LITE_ATTR_MEMORY_KEY]);
  auto chunks = GetChunks(a, l.size, partial);
  if (!chunks.ok()) return chunks.status();
  l.chunks = *std::move(chunks);
  return l;
}

absl::StatusOr<GrantInfo> DecodeGrant(const nlmsghdr* msg, bool partial) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  const Attrs& a = *attrs;
  if (absl::Status s = CheckCmd(a, LITE_CMD_GRANT_GET, "LITE_CMD_GRANT_GET");
      !s.ok()) {
    return s;
  }
  GrantInfo g;
  if (absl::Status s = DecodeGrantFields(a, &g, partial); !s.ok()) return s;
  if (!a.tb[LITE_ATTR_UID]) return Missing("LITE_ATTR_UID");
  if (!a.tb[LITE_ATTR_GID]) return Missing("LITE_ATTR_GID");
  if (!a.tb[LITE_ATTR_PID]) return Missing("LITE_ATTR_PID");
  g.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  g.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  g.pid = nla_get_u32(a.tb[LITE_ATTR_PID]);
  g.revoked = a.tb[LITE_ATTR_REVOKED] != nullptr;
  return g;
}

absl::StatusOr<UpcallRequest> DecodeUpcall(const nlmsghdr* msg) {
  auto attrs = Parse(msg);
  if (!attrs.ok()) return attrs.status();
  const Attrs& a = *attrs;
  if (absl::Status s = CheckCmd(a, LITE_CMD_UPCALL, "LITE_CMD_UPCALL");
      !s.ok()) {
    return s;
  }
  UpcallRequest u;
  auto id = GetId64(a, LITE_ATTR_UPCALL_ID, "LITE_ATTR_UPCALL_ID");
  if (!id.ok()) return id.status();
  u.upcall_id = *id;
  if (!a.tb[LITE_ATTR_UPCALL_KIND]) return Missing("LITE_ATTR_UPCALL_KIND");
  if (!a.tb[LITE_ATTR_UID]) return Missing("LITE_ATTR_UID");
  if (!a.tb[LITE_ATTR_GID]) return Missing("LITE_ATTR_GID");
  if (!a.tb[LITE_ATTR_PID]) return Missing("LITE_ATTR_PID");
  uint32_t kind = nla_get_u32(a.tb[LITE_ATTR_UPCALL_KIND]);
  u.uid = nla_get_u32(a.tb[LITE_ATTR_UID]);
  u.gid = nla_get_u32(a.tb[LITE_ATTR_GID]);
  u.pid = nla_get_u32(a.tb[LITE_ATTR_PID]);
  switch (kind) {
    case LITE_UPCALL_ALLOC: {
      u.kind = UpcallKind::kAlloc;
      auto name = GetName(a);
      if (!name.ok()) return name.status();
      u.name = *std::move(name);
      if (!a.tb[LITE_ATTR_SIZE]) return Missing("LITE_ATTR_SIZE");
      if (!a.tb[LITE_ATTR_MODE]) return Missing("LITE_ATTR_MODE");
      if (!a.tb[LITE_ATTR_NODE_ID]) return Missing("LITE_ATTR_NODE_ID");
      u.size = nla_get_u64(a.tb[LITE_ATTR_SIZE]);
      if (absl::Status s = CheckSize(u.size); !s.ok()) return s;
      u.mode = nla_get_u32(a.tb[LITE_ATTR_MODE]);
      if (u.mode & ~0666u) return Bad(absl::StrFormat("mode %#o", u.mode));
      u.home_node_id = nla_get_u32(a.tb[LITE_ATTR_NODE_ID]);
      break;
    }
    case LITE_UPCALL_MAP: {
      u.kind = UpcallKind::kMap;
      auto name = GetName(a);
      if (!name.ok()) return name.status();
      u.name = *std::move(name);
      if (!a.tb[LITE_ATTR_ACCESS]) return Missing("LITE_ATTR_ACCESS");
      u.access = nla_get_u32(a.tb[LITE_ATTR_ACCESS]);
      if (u.access == 0 || (u.access & ~kAccessMask)) {
        return Bad(absl::StrFormat("access %#x", u.access));
      }
      break;
    }
    case LITE_UPCALL_UNMAP: {
      u.kind = UpcallKind::kUnmap;
      auto grant = GetId64(a, LITE_ATTR_GRANT_ID, "LITE_ATTR_GRANT_ID");
      if (!grant.ok()) return grant.status();
      u.grant_id = *grant;
      break;
    }
    case LITE_UPCALL_FREE: {
      u.kind = UpcallKind::kFree;
      auto name = GetName(a);
      if (!name.ok()) return name.status();
      u.name = *std::move(name);
      break;
    }
    default:
      return Bad(absl::StrFormat("unknown upcall kind %u", kind));
  }
  return u;
}

absl::StatusOr<Notification> DecodeNotification(const nlmsghdr* msg) {
  auto* hdr = const_cast<nlmsghdr*>(msg);
  if (!genlmsg_valid_hdr(hdr, 0)) {
    return ErrnoStatus(EBADMSG, "truncated generic netlink message");
  }
  uint8_t cmd = static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
  if (cmd == LITE_CMD_UPCALL) {
    auto upcall = DecodeUpcall(msg);
    if (!upcall.ok()) return upcall.status();
    return Notification(*std::move(upcall));
  }
  auto event = DecodeEvent(msg);
  if (!event.ok()) return event.status();
  return Notification(*event);
}

absl::Status MergeLmrPart(std::vector<LmrInfo>* lmrs, LmrInfo part) {
  return MergeParts(lmrs, std::move(part),
                    [](const LmrInfo& l) { return l.lmr_id; });
}

absl::Status MergeGrantPart(std::vector<GrantInfo>* grants, GrantInfo part) {
  return MergeParts(grants, std::move(part),
                    [](const GrantInfo& g) { return g.grant_id; });
}

absl::Status EncodeLmrAlloc(nl_msg* msg, const LmrAllocRequest& r) {
  if (r.lmr_id == 0) return Invalid("LMR id 0");
  if (absl::Status s = CheckName(r.name); !s.ok()) return s;
  if (r.size == 0 || r.size > LITE_LMR_SIZE_MAX) {
    return Invalid(
        absl::StrFormat("size %u (valid: 1..%u)", r.size, LITE_LMR_SIZE_MAX));
  }
  if (r.mode & ~0666u) {
    return Invalid(absl::StrFormat("mode %#o is not a subset of 0666", r.mode));
  }
  if (r.uid == static_cast<uint32_t>(-1) ||
      r.gid == static_cast<uint32_t>(-1)) {
    return Invalid("uid or gid is (uid_t)-1");
  }
  int err = nla_put_u64(msg, LITE_ATTR_LMR_ID, r.lmr_id);
  if (!err) err = nla_put_string(msg, LITE_ATTR_NAME, r.name.c_str());
  if (!err) err = nla_put_u64(msg, LITE_ATTR_SIZE, r.size);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_UID, r.uid);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_GID, r.gid);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_MODE, r.mode);
  return Put(err);
}

absl::Status EncodeGrant(nl_msg* msg, const GrantInfo& g) {
  if (g.grant_id == 0) return Invalid("grant id 0");
  if (g.lmr_id == 0) return Invalid("LMR id 0");
  if (absl::Status s = CheckName(g.name); !s.ok()) return s;
  if (g.home_node_id == 0) return Invalid("home node id 0");
  if (g.access == 0 || (g.access & ~kAccessMask)) {
    return Invalid(absl::StrFormat("access %#x", g.access));
  }
  if (g.size == 0 || g.size > LITE_LMR_SIZE_MAX) {
    return Invalid(
        absl::StrFormat("size %u (valid: 1..%u)", g.size, LITE_LMR_SIZE_MAX));
  }
  if (g.holder_incarnation == 0) return Invalid("holder incarnation 0");
  if (absl::Status s = CheckChunks(g.chunks, g.size); !s.ok()) return s;
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
  if (absl::Status s = Put(err); !s.ok()) return s;
  return PutChunks(msg, g.chunks);
}

size_t UpcallCompletionSize(const UpcallCompletion& c) {
  // Headers, the fixed attributes, the name and message, 3 attribute
  // headers and 2 u64 per chunk.
  size_t chunks = c.grant ? c.grant->chunks.size() : 0;
  return 1024 + LITE_NAME_BUF + LITE_MESSAGE_BUF + chunks * 32;
}

absl::Status EncodeUpcallCompletion(nl_msg* msg, const UpcallCompletion& c) {
  if (c.upcall_id == 0) return Invalid("upcall id 0");
  if (c.error >= kErrnoLimit) {
    return Invalid(
        absl::StrFormat("errno %u (valid: 0..%u)", c.error, kErrnoLimit - 1));
  }
  if (c.error != 0 && (c.lmr_id || c.grant)) {
    return Invalid("a failed upcall carries no LMR id or grant");
  }
  if (c.lmr_id && c.grant) return Invalid("both an LMR id and a grant");
  if (c.lmr_id && *c.lmr_id == 0) return Invalid("LMR id 0");
  int err = nla_put_u64(msg, LITE_ATTR_UPCALL_ID, c.upcall_id);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_ERRNO, c.error);
  if (!err && !c.message.empty()) {
    // At most LITE_MESSAGE_BUF - 1 bytes, cut before a NUL if it has one.
    std::string text = c.message.substr(0, c.message.find('\0'));
    if (text.size() >= LITE_MESSAGE_BUF) text.resize(LITE_MESSAGE_BUF - 1);
    err = nla_put_string(msg, LITE_ATTR_MESSAGE, text.c_str());
  }
  if (!err && c.lmr_id) err = nla_put_u64(msg, LITE_ATTR_LMR_ID, *c.lmr_id);
  if (absl::Status s = Put(err); !s.ok()) return s;
  if (c.grant) return EncodeGrant(msg, *c.grant);
  return absl::OkStatus();
}

// ---- Client ----

struct Client::Request {
  uint8_t cmd = 0;
  bool dump = false;
  // Size of the message to allocate; 0 for libnl's default (a page).
  size_t size = 0;
  // Adds the attributes.
  std::function<absl::Status(nl_msg*)> build;
  // Called for each reply message, in the requesting thread.
  std::function<absl::Status(const nlmsghdr*)> on_reply;
};

// A request in flight: what the receiver thread collected for it.
struct Client::Waiter {
  bool done = false;
  absl::Status status;
  // Copies of the reply messages (a dump has many).
  std::vector<std::string> replies;
};

namespace {

struct SockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};

// Receive and send buffers, big enough for bursts of upcalls and events and
// for an LMR or grant of LITE_CHUNKS_MAX chunks in one message. Privileged
// (the agent) gets them with the *FORCE options past the sysctl limits.
constexpr int kSocketBuffer = 4 << 20;

void SetBuffer(int fd, int force_opt, int opt) {
  int size = kSocketBuffer;
  if (setsockopt(fd, SOL_SOCKET, force_opt, &size, sizeof(size)) != 0) {
    setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
  }
}

absl::Status NotLoaded() {
  return ErrnoStatus(ENOENT, "generic netlink family \"" LITE_GENL_NAME
                             "\" not found (is lite.ko loaded?)");
}

}  // namespace

Client::Client(nl_sock* sock, int family, int wake_fd, const Options& options)
    : sock_(sock), family_(family), wake_fd_(wake_fd), options_(options) {
  // Sequence numbers start somewhere else on every socket, never 0 (what
  // lite.ko's unsolicited messages carry).
  next_seq_ = static_cast<uint32_t>(absl::ToUnixNanos(absl::Now())) | 1;
  receiver_ = std::thread([this] { ReceiveLoop(); });
}

Client::~Client() {
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) != sizeof(one)) {
    // An eventfd write fails only on counter overflow; the loop also stops
    // on a broken socket, and a hang here would be a bug worth seeing.
  }
  receiver_.join();
  close(wake_fd_);
  nl_socket_free(sock_);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Open(absl::Duration timeout) {
  Options options;
  options.timeout = timeout;
  return Open(options);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Open(const Options& options) {
  if (options.timeout <= absl::ZeroDuration() ||
      options.timeout == absl::InfiniteDuration()) {
    return ErrnoStatus(EINVAL, "the timeout must be positive and finite");
  }
  std::unique_ptr<nl_sock, SockDeleter> sock(nl_socket_alloc());
  if (!sock) return ErrnoStatus(ENOMEM, "cannot allocate a netlink socket");
  int err = genl_connect(sock.get());
  if (err < 0) return LibnlStatus(err, "cannot open a generic netlink socket");
  int fd = nl_socket_get_fd(sock.get());
  // Resolving talks to the kernel synchronously: bound it.
  timeval tv = absl::ToTimeval(options.timeout);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
    return ErrnoStatus(errno, "SO_RCVTIMEO");
  }
  int family = genl_ctrl_resolve(sock.get(), LITE_GENL_NAME);
  if (family < 0) {
    if (family == -NLE_OBJ_NOTFOUND) return NotLoaded();
    return LibnlStatus(family, "cannot resolve the lite family");
  }
  if (options.events) {
    int group = genl_ctrl_resolve_grp(sock.get(), LITE_GENL_NAME,
                                      LITE_GENL_MCGRP_EVENTS);
    if (group < 0) {
      if (group == -NLE_OBJ_NOTFOUND) return NotLoaded();
      return LibnlStatus(group, "cannot resolve the events group");
    }
    err = nl_socket_add_membership(sock.get(), group);
    if (err < 0) return LibnlStatus(err, "cannot join the events group");
  }
  // The kernel's error messages, without the request echoed back.
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  SetBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF);
  SetBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF);
  // nl_recv() peeks at each message's size first and grows its buffer: a
  // message of LITE_CHUNKS_MAX chunks (~130 KB) arrives whole.
  nl_socket_enable_msg_peek(sock.get());
  err = nl_socket_set_nonblocking(sock.get());
  if (err < 0) return LibnlStatus(err, "cannot make the socket non-blocking");

  int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) return ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<Client>(
      new Client(sock.release(), family, wake_fd, options));
}

uint32_t Client::portid() const { return nl_socket_get_local_port(sock_); }

void Client::FailAll(const absl::Status& status) {
  for (auto& [seq, waiter] : waiters_) {
    if (!waiter->done) {
      waiter->status = status;
      waiter->done = true;
    }
  }
}

void Client::Dispatch(const nlmsghdr* hdr) {
  auto waiter_of = [&]() -> Waiter* {
    auto it = waiters_.find(hdr->nlmsg_seq);
    if (it == waiters_.end() || it->second->done) return nullptr;
    return it->second.get();
  };
  switch (hdr->nlmsg_type) {
    case NLMSG_NOOP:
      return;
    case NLMSG_OVERRUN:
      if (notification_error_.ok()) {
        notification_error_ = ErrnoStatus(ENOBUFS, "netlink overrun");
      }
      return;
    case NLMSG_ERROR: {
      // An ACK (error 0) or the request's error; late ones are dropped.
      if (Waiter* w = waiter_of()) {
        absl::Status s = DecodeError(hdr);
        if (w->status.ok()) w->status = s;
        w->done = true;
      }
      return;
    }
    case NLMSG_DONE: {
      if (Waiter* w = waiter_of()) {
        if (nlmsg_datalen(hdr) >= static_cast<int>(sizeof(int))) {
          int err;
          std::memcpy(&err, nlmsg_data(hdr), sizeof(err));
          if (err < 0 && w->status.ok()) w->status = ErrnoStatus(-err);
        }
        w->done = true;
      }
      return;
    }
    default:
      break;
  }
  if (hdr->nlmsg_type != family_) return;  // not ours
  auto* mutable_hdr = const_cast<nlmsghdr*>(hdr);
  if (!genlmsg_valid_hdr(mutable_hdr, 0)) return;
  uint8_t cmd = static_cast<genlmsghdr*>(nlmsg_data(mutable_hdr))->cmd;
  if (cmd == LITE_CMD_UPCALL || cmd == LITE_CMD_EVENT_PEER_CONNECTED ||
      cmd == LITE_CMD_EVENT_PEER_FAILED || cmd == LITE_CMD_EVENT_PEER_REMOVED) {
    if (interrupted_) return;
    auto n = DecodeNotification(hdr);
    if (!n.ok()) {
      if (notification_error_.ok()) notification_error_ = n.status();
      return;
    }
    if (queue_.size() >= options_.max_queued) {
      if (notification_error_.ok()) {
        notification_error_ = ErrnoStatus(
            ENOBUFS, absl::StrFormat("more than %u notifications queued",
                                     options_.max_queued));
      }
      return;
    }
    queue_.push_back(*std::move(n));
    return;
  }
  if (Waiter* w = waiter_of()) {
    w->replies.emplace_back(reinterpret_cast<const char*>(hdr), hdr->nlmsg_len);
  }
}

void Client::ReceiveLoop() {
  const int fd = nl_socket_get_fd(sock_);
  while (true) {
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int n = poll(p, 2, -1);  // woken by the destructor's eventfd write
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::MutexLock lock(&mu_);
      broken_ = ErrnoStatus(errno, "poll on the netlink socket");
      FailAll(broken_);
      return;
    }
    if (p[1].revents) return;
    if (!(p[0].revents & (POLLIN | POLLERR))) continue;

    sockaddr_nl from = {};
    unsigned char* buf = nullptr;
    int len = nl_recv(sock_, &from, &buf, nullptr);
    std::unique_ptr<unsigned char, decltype(&free)> owned(buf, &free);
    absl::MutexLock lock(&mu_);
    if (len == 0) continue;  // nothing after all (non-blocking)
    if (len < 0) {
      if (len == -NLE_NOMEM) {
        // ENOBUFS: the kernel dropped messages for this socket. A request
        // whose reply was among them times out; report the loss to the
        // notification reader, who may have lost an upcall or event.
        notification_error_ = ErrnoStatus(
            ENOBUFS, "messages from lite.ko were lost (socket buffer overrun)");
        continue;
      }
      if (len == -NLE_INTR || len == -NLE_AGAIN) continue;
      broken_ = LibnlStatus(len, "cannot receive from lite.ko");
      FailAll(broken_);
      return;
    }
    // Only the kernel may speak for lite.ko.
    if (from.nl_pid != 0) continue;
    auto* hdr = reinterpret_cast<nlmsghdr*>(buf);
    int remaining = len;
    while (nlmsg_ok(hdr, remaining)) {
      Dispatch(hdr);
      hdr = nlmsg_next(hdr, &remaining);
    }
  }
}

absl::Status Client::Transact(Request& request) {
  std::unique_ptr<nl_msg, decltype(&nlmsg_free)> msg(
      request.size ? nlmsg_alloc_size(request.size) : nlmsg_alloc(),
      &nlmsg_free);
  if (!msg) return ErrnoStatus(ENOMEM);

  std::optional<absl::MutexLock> dump_lock;
  if (request.dump) dump_lock.emplace(&dump_mu_);

  auto waiter = std::make_shared<Waiter>();
  uint32_t seq;
  {
    absl::MutexLock lock(&mu_);
    if (!broken_.ok()) return broken_;
    do {
      seq = next_seq_++;
    } while (seq == 0 || waiters_.contains(seq));
    waiters_[seq] = waiter;
  }
  auto forget = [&] {
    absl::MutexLock lock(&mu_);
    waiters_.erase(seq);
  };

  int flags = request.dump ? NLM_F_DUMP : NLM_F_ACK;
  if (!genlmsg_put(msg.get(), NL_AUTO_PORT, seq, family_, 0, flags, request.cmd,
                   LITE_GENL_VERSION)) {
    forget();
    return ErrnoStatus(EMSGSIZE);
  }
  absl::Status built =
      request.build ? request.build(msg.get()) : absl::OkStatus();
  for (const RawAttr& a : extra_attrs_) {
    if (!built.ok()) break;
    built = Put(nla_put_u32(msg.get(), a.type, a.value));
  }
  if (!built.ok()) {
    forget();
    return built;
  }
  {
    absl::MutexLock lock(&send_mu_);
    int err = nl_send_auto(sock_, msg.get());
    if (err < 0) {
      forget();
      return LibnlStatus(err, "cannot send to lite.ko");
    }
  }

  absl::Time deadline = absl::Now() + options_.timeout;
  std::vector<std::string> replies;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(&waiter->done), deadline);
    waiters_.erase(seq);
    if (!waiter->done) {
      return ErrnoStatus(
          ETIMEDOUT, absl::StrFormat("no answer from lite.ko within %s",
                                     absl::FormatDuration(options_.timeout)));
    }
    replies = std::move(waiter->replies);
    status = waiter->status;
  }
  if (!status.ok()) return status;
  for (const std::string& r : replies) {
    const auto* hdr = reinterpret_cast<const nlmsghdr*>(r.data());
    if (!request.on_reply) continue;
    absl::Status s = request.on_reply(hdr);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Notification>> Client::NextNotification(
    absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return interrupted_ || !queue_.empty() || !notification_error_.ok() ||
           !broken_.ok();
  };
  mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  if (interrupted_) {
    return absl::CancelledError("notifications were interrupted");
  }
  if (!notification_error_.ok()) {
    absl::Status s = notification_error_;
    notification_error_ = absl::OkStatus();
    if (ErrnoOf(s) == ENOBUFS) return absl::DataLossError(s.message());
    return s;
  }
  if (!queue_.empty()) {
    Notification n = std::move(queue_.front());
    queue_.pop_front();
    return n;
  }
  if (!broken_.ok()) return broken_;
  return std::nullopt;
}

void Client::InterruptNotifications() {
  absl::MutexLock lock(&mu_);
  interrupted_ = true;
  queue_.clear();
}

absl::Status Client::AttachAgent() {
  Request r;
  r.cmd = LITE_CMD_AGENT_ATTACH;
  return Transact(r);
}

absl::Status Client::DetachAgent() {
  Request r;
  r.cmd = LITE_CMD_AGENT_DETACH;
  return Transact(r);
}

namespace {

absl::Status PutIdentity(nl_msg* msg, uint32_t node_id, uint64_t incarnation,
                         in_addr addr) {
  int err = nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_INCARNATION, incarnation);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_IPV4_ADDR, addr.s_addr);
  return Put(err);
}

// A request whose one reply message @decode turns into *out.
template <typename T, typename Decode>
absl::Status ExpectOne(std::optional<T>* out, Decode decode,
                       const nlmsghdr* msg) {
  if (out->has_value()) return Bad("more than one reply");
  auto decoded = decode(msg);
  if (!decoded.ok()) return decoded.status();
  *out = *std::move(decoded);
  return absl::OkStatus();
}

}  // namespace

absl::Status Client::SetNode(uint32_t node_id, uint64_t incarnation,
                             in_addr addr) {
  Request r;
  r.cmd = LITE_CMD_NODE_SET;
  r.build = [&](nl_msg* msg) {
    return PutIdentity(msg, node_id, incarnation, addr);
  };
  return Transact(r);
}

absl::StatusOr<NodeInfo> Client::GetNode() {
  std::optional<NodeInfo> node;
  Request r;
  r.cmd = LITE_CMD_NODE_GET;
  r.on_reply = [&](const nlmsghdr* msg) {
    return ExpectOne(&node, DecodeNode, msg);
  };
  absl::Status s = Transact(r);
  if (!s.ok()) return s;
  if (!node) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  return *node;
}

absl::Status Client::AddPeer(uint32_t node_id, uint64_t incarnation,
                             in_addr addr) {
  Request r;
  r.cmd = LITE_CMD_PEER_ADD;
  r.build = [&](nl_msg* msg) {
    return PutIdentity(msg, node_id, incarnation, addr);
  };
  return Transact(r);
}

absl::Status Client::RemovePeer(uint32_t node_id,
                                std::optional<uint64_t> incarnation) {
  Request r;
  r.cmd = LITE_CMD_PEER_REMOVE;
  r.build = [&](nl_msg* msg) {
    int err = nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id);
    if (!err && incarnation) {
      err = nla_put_u64(msg, LITE_ATTR_INCARNATION, *incarnation);
    }
    return Put(err);
  };
  return Transact(r);
}

absl::StatusOr<std::vector<PeerInfo>> Client::ListPeers() {
  std::vector<PeerInfo> peers;
  Request r;
  r.cmd = LITE_CMD_PEER_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    auto peer = DecodePeer(msg);
    if (!peer.ok()) return peer.status();
    peers.push_back(*peer);
    return absl::OkStatus();
  };
  absl::Status s = Transact(r);
  if (!s.ok()) return s;
  return peers;
}

absl::StatusOr<LmrMemory> Client::AllocLmr(const LmrAllocRequest& request) {
  std::optional<LmrMemory> memory;
  Request r;
  r.cmd = LITE_CMD_LMR_ALLOC;
  r.build = [&](nl_msg* msg) { return EncodeLmrAlloc(msg, request); };
  r.on_reply = [&](const nlmsghdr* msg) {
    return ExpectOne(&memory, DecodeLmrMemory, msg);
  };
  absl::Status s = Transact(r);
  if (!s.ok()) return s;
  if (!memory) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  uint64_t total = 0;
  for (const Chunk& c : memory->chunks) total += c.length;  // no overflow:
  if (total != request.size) {                              // checked by decode
    return Bad(absl::StrFormat("the chunks add up to %u bytes, %u were asked",
                               total, request.size));
  }
  return *std::move(memory);
}

absl::Status Client::FreeLmr(uint64_t lmr_id) {
  if (lmr_id == 0) return Invalid("LMR id 0");
  Request r;
  r.cmd = LITE_CMD_LMR_FREE;
  r.build = [&](nl_msg* msg) {
    return Put(nla_put_u64(msg, LITE_ATTR_LMR_ID, lmr_id));
  };
  return Transact(r);
}

absl::Status Client::UpdateLmr(uint64_t lmr_id,
                               std::optional<uint64_t> new_lmr_id,
                               std::optional<uint64_t> epoch) {
  if (lmr_id == 0) return Invalid("LMR id 0");
  if (new_lmr_id && *new_lmr_id == 0) return Invalid("new LMR id 0");
  Request r;
  r.cmd = LITE_CMD_LMR_UPDATE;
  r.build = [&](nl_msg* msg) {
    int err = nla_put_u64(msg, LITE_ATTR_LMR_ID, lmr_id);
    if (!err && new_lmr_id) {
      err = nla_put_u64(msg, LITE_ATTR_NEW_LMR_ID, *new_lmr_id);
    }
    if (!err && epoch) err = nla_put_u64(msg, LITE_ATTR_EPOCH, *epoch);
    return Put(err);
  };
  return Transact(r);
}

absl::StatusOr<std::vector<LmrInfo>> Client::ListLmrs() {
  std::vector<LmrInfo> lmrs;
  Request r;
  r.cmd = LITE_CMD_LMR_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    auto lmr = DecodeLmr(msg, /*partial=*/true);
    if (!lmr.ok()) return lmr.status();
    return MergeLmrPart(&lmrs, *std::move(lmr));
  };
  absl::Status s = Transact(r);
  if (s.ok()) s = CheckLastComplete(lmrs);
  if (!s.ok()) return s;
  return lmrs;
}

absl::Status Client::RevokeGrant(uint64_t grant_id) {
  if (grant_id == 0) return Invalid("grant id 0");
  Request r;
  r.cmd = LITE_CMD_GRANT_REVOKE;
  r.build = [&](nl_msg* msg) {
    return Put(nla_put_u64(msg, LITE_ATTR_GRANT_ID, grant_id));
  };
  return Transact(r);
}

absl::StatusOr<std::vector<GrantInfo>> Client::ListGrants() {
  std::vector<GrantInfo> grants;
  Request r;
  r.cmd = LITE_CMD_GRANT_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    auto grant = DecodeGrant(msg, /*partial=*/true);
    if (!grant.ok()) return grant.status();
    return MergeGrantPart(&grants, *std::move(grant));
  };
  absl::Status s = Transact(r);
  if (s.ok()) s = CheckLastComplete(grants);
  if (!s.ok()) return s;
  return grants;
}

absl::Status Client::CompleteUpcall(const UpcallCompletion& completion) {
  Request r;
  r.cmd = LITE_CMD_UPCALL_COMPLETE;
  r.size = UpcallCompletionSize(completion);
  r.build = [&](nl_msg* msg) {
    return EncodeUpcallCompletion(msg, completion);
  };
  return Transact(r);
}

// ---- EventStream ----

EventStream::EventStream(nl_sock* sock) : sock_(sock) {}

EventStream::~EventStream() { nl_socket_free(sock_); }

absl::StatusOr<std::unique_ptr<EventStream>> EventStream::Open() {
  std::unique_ptr<nl_sock, SockDeleter> sock(nl_socket_alloc());
  if (!sock) return ErrnoStatus(ENOMEM, "cannot allocate a netlink socket");
  int err = genl_connect(sock.get());
  if (err < 0) return LibnlStatus(err, "cannot open a generic netlink socket");
  timeval tv = absl::ToTimeval(absl::Seconds(10));
  setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &tv,
             sizeof(tv));
  int group =
      genl_ctrl_resolve_grp(sock.get(), LITE_GENL_NAME, LITE_GENL_MCGRP_EVENTS);
  if (group < 0) {
    if (group == -NLE_OBJ_NOTFOUND) {
      return ErrnoStatus(ENOENT, "generic netlink family \"" LITE_GENL_NAME
                                 "\" not found (is lite.ko loaded?)");
    }
    return LibnlStatus(group, "cannot resolve the events group");
  }
  err = nl_socket_add_membership(sock.get(), group);
  if (err < 0) return LibnlStatus(err, "cannot join the events group");
  err = nl_socket_set_nonblocking(sock.get());
  if (err < 0) return LibnlStatus(err, "cannot make the socket non-blocking");
  return std::unique_ptr<EventStream>(new EventStream(sock.release()));
}

namespace {

int AcceptAnySeq(nl_msg*, void*) { return NL_OK; }

int OnEvent(nl_msg* msg, void* arg) {
  auto* sink = static_cast<std::pair<std::deque<Event>*, absl::Status*>*>(arg);
  auto event = DecodeEvent(nlmsg_hdr(msg));
  if (event.ok()) {
    sink->first->push_back(*event);
  } else if (sink->second->ok()) {
    *sink->second = event.status();
  }
  return NL_OK;
}

}  // namespace

absl::StatusOr<std::optional<Event>> EventStream::Next(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (pending_.empty()) {
    if (!decode_error_.ok()) {
      absl::Status s = decode_error_;
      decode_error_ = absl::OkStatus();
      return s;
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return std::nullopt;
    pollfd p = {nl_socket_get_fd(sock_), POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (n < 0) return ErrnoStatus(errno, "poll");
    if (n == 0) continue;

    std::unique_ptr<nl_cb, decltype(&nl_cb_put)> cb(nl_cb_alloc(NL_CB_DEFAULT),
                                                    &nl_cb_put);
    if (!cb) return ErrnoStatus(ENOMEM);
    std::pair<std::deque<Event>*, absl::Status*> sink(&pending_,
                                                      &decode_error_);
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnEvent, &sink);
    // Multicast messages carry no sequence numbers of ours.
    nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, AcceptAnySeq, nullptr);
    int err = nl_recvmsgs(sock_, cb.get());
    if (err < 0 && err != -NLE_AGAIN) {
      if (err == -NLE_NOMEM) {
        return ErrnoStatus(ENOBUFS, "events were lost (socket buffer overrun)");
      }
      return LibnlStatus(err, "cannot receive events");
    }
  }
  Event event = pending_.front();
  pending_.pop_front();
  return event;
}

}  // namespace lite::genl
