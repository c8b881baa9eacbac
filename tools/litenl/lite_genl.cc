#include "tools/litenl/lite_genl.h"

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
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
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
    return p;
  }();
  return policy;
}

struct Attrs {
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
  uint8_t cmd = 0;
};

absl::StatusOr<Attrs> Parse(const nlmsghdr* msg) {
  Attrs attrs;
  auto* hdr = const_cast<nlmsghdr*>(msg);
  if (!genlmsg_valid_hdr(hdr, 0)) {
    return ErrnoStatus(EBADMSG, "truncated generic netlink message");
  }
  attrs.cmd = static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd;
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
  absl::Status s = DecodePeerFields(*attrs, &peer.node_id, &peer.incarnation,
                                    &peer.addr, &peer.state,
                                    &peer.qps_connected);
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
      return ErrnoStatus(EBADMSG, absl::StrFormat("unknown event command %u",
                                                  attrs->cmd));
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

// ---- Client ----

struct Client::Request {
  uint8_t cmd = 0;
  bool dump = false;
  // Adds the attributes; a negative libnl error if they did not fit.
  std::function<int(nl_msg*)> build;
  // Called for each reply message.
  std::function<absl::Status(const nlmsghdr*)> on_reply;
};

namespace {

struct Exchange {
  std::function<absl::Status(const nlmsghdr*)>* on_reply = nullptr;
  absl::Status status;
  bool done = false;
};

int OnValid(nl_msg* msg, void* arg) {
  auto* x = static_cast<Exchange*>(arg);
  if (x->on_reply && *x->on_reply) {
    absl::Status s = (*x->on_reply)(nlmsg_hdr(msg));
    if (!s.ok() && x->status.ok()) x->status = s;
  }
  return NL_OK;
}

int OnAck(nl_msg*, void* arg) {
  static_cast<Exchange*>(arg)->done = true;
  return NL_STOP;
}

// The end of a dump; its payload is the dump's error, if any.
int OnFinish(nl_msg* msg, void* arg) {
  auto* x = static_cast<Exchange*>(arg);
  x->done = true;
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (nlmsg_datalen(hdr) >= static_cast<int>(sizeof(int))) {
    int err = *static_cast<int*>(nlmsg_data(hdr));
    if (err < 0 && x->status.ok()) x->status = ErrnoStatus(-err);
  }
  return NL_STOP;
}

int OnError(sockaddr_nl*, nlmsgerr* e, void* arg) {
  auto* x = static_cast<Exchange*>(arg);
  // libnl hands over the error payload; its header sits right before it.
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(
      reinterpret_cast<const char*>(e) - NLMSG_HDRLEN);
  x->status = DecodeError(hdr);
  x->done = true;
  return NL_STOP;
}

struct SockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};

}  // namespace

Client::Client(nl_sock* sock, int family) : sock_(sock), family_(family) {}

Client::~Client() { nl_socket_free(sock_); }

absl::StatusOr<std::unique_ptr<Client>> Client::Open(absl::Duration timeout) {
  std::unique_ptr<nl_sock, SockDeleter> sock(nl_socket_alloc());
  if (!sock) return ErrnoStatus(ENOMEM, "cannot allocate a netlink socket");
  int err = genl_connect(sock.get());
  if (err < 0) return LibnlStatus(err, "cannot open a generic netlink socket");

  // Bounded waits: a module that does not answer is an error, not a hang.
  timeval tv = absl::ToTimeval(timeout);
  int fd = nl_socket_get_fd(sock.get());
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
    return ErrnoStatus(errno, "SO_RCVTIMEO");
  }
  int family = genl_ctrl_resolve(sock.get(), LITE_GENL_NAME);
  if (family < 0) {
    if (family == -NLE_OBJ_NOTFOUND) {
      return ErrnoStatus(ENOENT, "generic netlink family \"" LITE_GENL_NAME
                                 "\" not found (is lite.ko loaded?)");
    }
    return LibnlStatus(family, "cannot resolve the lite family");
  }
  // The kernel's error messages, without the request echoed back.
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  // We ask for ACKs explicitly (not on dumps, which end with NLMSG_DONE).
  nl_socket_disable_auto_ack(sock.get());
  return std::unique_ptr<Client>(new Client(sock.release(), family));
}

uint32_t Client::portid() const { return nl_socket_get_local_port(sock_); }

absl::Status Client::Transact(Request& request) {
  std::unique_ptr<nl_msg, decltype(&nlmsg_free)> msg(nlmsg_alloc(),
                                                     &nlmsg_free);
  if (!msg) return ErrnoStatus(ENOMEM);
  int flags = request.dump ? NLM_F_DUMP : NLM_F_ACK;
  if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, flags,
                   request.cmd, LITE_GENL_VERSION)) {
    return ErrnoStatus(EMSGSIZE);
  }
  if (request.build && request.build(msg.get()) < 0) {
    return ErrnoStatus(EMSGSIZE);
  }
  for (const RawAttr& a : extra_attrs_) {
    if (nla_put_u32(msg.get(), a.type, a.value) < 0) {
      return ErrnoStatus(EMSGSIZE);
    }
  }
  int err = nl_send_auto(sock_, msg.get());
  if (err < 0) return LibnlStatus(err, "cannot send to lite.ko");

  std::unique_ptr<nl_cb, decltype(&nl_cb_put)> cb(nl_cb_alloc(NL_CB_DEFAULT),
                                                  &nl_cb_put);
  if (!cb) return ErrnoStatus(ENOMEM);
  Exchange x;
  x.on_reply = &request.on_reply;
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &x);
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, OnAck, &x);
  nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, OnFinish, &x);
  nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &x);
  while (!x.done) {
    err = nl_recvmsgs(sock_, cb.get());
    if (x.done) break;
    if (err < 0) return LibnlStatus(err, "no answer from lite.ko");
  }
  return x.status;
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

int PutIdentity(nl_msg* msg, uint32_t node_id, uint64_t incarnation,
                in_addr addr) {
  int err = nla_put_u32(msg, LITE_ATTR_NODE_ID, node_id);
  if (!err) err = nla_put_u64(msg, LITE_ATTR_INCARNATION, incarnation);
  if (!err) err = nla_put_u32(msg, LITE_ATTR_IPV4_ADDR, addr.s_addr);
  return err;
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
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    auto decoded = DecodeNode(msg);
    if (!decoded.ok()) return decoded.status();
    node = *decoded;
    return absl::OkStatus();
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
    return err;
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
  int group = genl_ctrl_resolve_grp(sock.get(), LITE_GENL_NAME,
                                    LITE_GENL_MCGRP_EVENTS);
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
