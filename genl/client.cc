#include "genl/client.h"

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

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/status/macros.h"
#include "genl/codec.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {

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

// Frees a request after wiping what it held: a PEER_ADD carries a pair
// secret, which must not linger in freed memory.
void FreeWiped(nl_msg* msg) {
  if (msg == nullptr) return;
  nlmsghdr* hdr = nlmsg_hdr(msg);
  explicit_bzero(hdr, hdr->nlmsg_len);
  nlmsg_free(msg);
}

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
  if (IsNotification(hdr)) {
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
  std::unique_ptr<nl_msg, decltype(&FreeWiped)> msg(
      request.size ? nlmsg_alloc_size(request.size) : nlmsg_alloc(),
      &FreeWiped);
  if (!msg) return ErrnoStatus(ENOMEM);
  // The whole request is built (and so checked) before it takes a sequence
  // number: a request the codec refuses never reaches the waiter table.
  int flags = request.dump ? NLM_F_DUMP : NLM_F_ACK;
  if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, flags,
                   request.cmd, LITE_GENL_VERSION)) {
    return ErrnoStatus(EMSGSIZE);
  }
  if (request.build) LITE_RETURN_IF_ERROR(request.build(msg.get()));
  LITE_RETURN_IF_ERROR(EncodeRawAttrs(msg.get(), extra_attrs_));

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
  nlmsg_hdr(msg.get())->nlmsg_seq = seq;
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
  if (!request.on_reply) return absl::OkStatus();
  for (const std::string& r : replies) {
    LITE_RETURN_IF_ERROR(
        request.on_reply(reinterpret_cast<const nlmsghdr*>(r.data())));
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

// A request whose one reply message @decode turns into *out.
template <typename T, typename Decode>
absl::Status ExpectOne(std::optional<T>* out, Decode decode,
                       const nlmsghdr* msg) {
  if (out->has_value()) return BadMessage("more than one reply");
  LITE_ASSIGN_OR_RETURN(*out, decode(msg));
  return absl::OkStatus();
}

}  // namespace

absl::Status Client::SetNode(uint32_t node_id, uint64_t incarnation,
                             in_addr addr, absl::string_view name) {
  Request r;
  r.cmd = LITE_CMD_NODE_SET;
  r.build = [&](nl_msg* msg) {
    return EncodeIdentity(msg, node_id, incarnation, addr, name);
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
  LITE_RETURN_IF_ERROR(Transact(r));
  if (!node) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  return *node;
}

absl::Status Client::AddPeer(uint32_t node_id, uint64_t incarnation,
                             in_addr addr, absl::string_view name,
                             absl::string_view secret) {
  Request r;
  r.cmd = LITE_CMD_PEER_ADD;
  r.build = [&](nl_msg* msg) {
    LITE_RETURN_IF_ERROR(EncodeIdentity(msg, node_id, incarnation, addr, name));
    if (secret.empty()) return absl::OkStatus();
    return EncodePeerSecret(msg, secret);
  };
  return Transact(r);
}

absl::Status Client::RemovePeer(uint32_t node_id,
                                std::optional<uint64_t> incarnation) {
  Request r;
  r.cmd = LITE_CMD_PEER_REMOVE;
  r.build = [&](nl_msg* msg) {
    return EncodePeerRemove(msg, node_id, incarnation);
  };
  return Transact(r);
}

absl::StatusOr<std::vector<PeerInfo>> Client::ListPeers() {
  std::vector<PeerInfo> peers;
  Request r;
  r.cmd = LITE_CMD_PEER_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    LITE_ASSIGN_OR_RETURN(PeerInfo peer, DecodePeer(msg));
    peers.push_back(peer);
    return absl::OkStatus();
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  return peers;
}

absl::StatusOr<ProbeResult> Client::ProbePeer(uint32_t node_id) {
  std::optional<ProbeResult> probe;
  Request r;
  r.cmd = LITE_CMD_PEER_PROBE;
  r.build = [&](nl_msg* msg) { return EncodePeerProbe(msg, node_id); };
  r.on_reply = [&](const nlmsghdr* msg) {
    return ExpectOne(&probe, DecodeProbe, msg);
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  if (!probe) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  return *probe;
}

absl::StatusOr<LmrMemory> Client::AllocLmr(const LmrAllocRequest& request) {
  std::optional<LmrMemory> memory;
  Request r;
  r.cmd = LITE_CMD_LMR_ALLOC;
  r.build = [&](nl_msg* msg) { return EncodeLmrAlloc(msg, request); };
  r.on_reply = [&](const nlmsghdr* msg) {
    return ExpectOne(&memory, DecodeLmrMemory, msg);
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  if (!memory) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  uint64_t total = 0;
  for (const Chunk& c : memory->chunks) total += c.length;  // no overflow:
  if (total != request.size) {                              // checked by decode
    return BadMessage(absl::StrFormat(
        "the chunks add up to %u bytes, %u were asked", total, request.size));
  }
  return *std::move(memory);
}

absl::Status Client::FreeLmr(uint64_t lmr_id, bool quarantine) {
  Request r;
  r.cmd = LITE_CMD_LMR_FREE;
  r.build = [&](nl_msg* msg) { return EncodeLmrFree(msg, lmr_id, quarantine); };
  return Transact(r);
}

absl::Status Client::UpdateLmr(uint64_t lmr_id,
                               std::optional<uint64_t> new_lmr_id,
                               std::optional<uint64_t> epoch, bool releasing) {
  Request r;
  r.cmd = LITE_CMD_LMR_UPDATE;
  r.build = [&](nl_msg* msg) {
    return EncodeLmrUpdate(msg, lmr_id, new_lmr_id, epoch, releasing);
  };
  return Transact(r);
}

absl::StatusOr<std::vector<LmrInfo>> Client::ListLmrs() {
  std::vector<LmrInfo> lmrs;
  Request r;
  r.cmd = LITE_CMD_LMR_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    LITE_ASSIGN_OR_RETURN(LmrInfo lmr, DecodeLmr(msg, /*partial=*/true));
    return MergeLmrPart(&lmrs, std::move(lmr));
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  LITE_RETURN_IF_ERROR(CheckDumpComplete(lmrs));
  return lmrs;
}

absl::Status Client::RevokeGrant(uint64_t grant_id) {
  Request r;
  r.cmd = LITE_CMD_GRANT_REVOKE;
  r.build = [&](nl_msg* msg) { return EncodeGrantRevoke(msg, grant_id); };
  return Transact(r);
}

absl::StatusOr<std::vector<GrantInfo>> Client::ListGrants() {
  std::vector<GrantInfo> grants;
  Request r;
  r.cmd = LITE_CMD_GRANT_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    LITE_ASSIGN_OR_RETURN(GrantInfo grant, DecodeGrant(msg, /*partial=*/true));
    return MergeGrantPart(&grants, std::move(grant));
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  LITE_RETURN_IF_ERROR(CheckDumpComplete(grants));
  return grants;
}

absl::StatusOr<RpcRing> Client::RpcBind(const RpcBindRequest& request) {
  std::optional<RpcRing> ring;
  Request r;
  r.cmd = LITE_CMD_RPC_BIND;
  r.build = [&](nl_msg* msg) { return EncodeRpcBind(msg, request); };
  r.on_reply = [&](const nlmsghdr* msg) {
    return ExpectOne(&ring, DecodeRpcRing, msg);
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  if (!ring) return ErrnoStatus(EBADMSG, "lite.ko sent no reply");
  return *ring;
}

absl::StatusOr<std::vector<ServiceInfo>> Client::ListServices() {
  std::vector<ServiceInfo> services;
  Request r;
  r.cmd = LITE_CMD_RPC_SERVICE_GET;
  r.dump = true;
  r.on_reply = [&](const nlmsghdr* msg) -> absl::Status {
    LITE_ASSIGN_OR_RETURN(ServiceInfo service, DecodeService(msg));
    services.push_back(std::move(service));
    return absl::OkStatus();
  };
  LITE_RETURN_IF_ERROR(Transact(r));
  return services;
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
  // The stream carries peer events; an LMR_LOST is the agent's business.
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (genlmsg_valid_hdr(hdr, 0) &&
      static_cast<genlmsghdr*>(nlmsg_data(hdr))->cmd ==
          LITE_CMD_EVENT_LMR_LOST) {
    return NL_OK;
  }
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