#include "agent/netlink_module.h"

#include <arpa/inet.h>
#include <dirent.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "agent/counters.h"
#include "agent/netlink_rpc.h"
#include "common/log/log.h"
#include "common/status/macros.h"
#include "kmod/include/uapi/lite.h"

namespace lite::agent {
namespace {

// How long Receive() waits per round; Close() interrupts it at once.
constexpr absl::Duration kReceiveRound = absl::Hours(1);
// Most UNMAP upcall ids remembered while the agent handles them.
constexpr size_t kMaxUnmapUpcalls = 65536;

// lite.ko's error as the Module's: the code by ErrnoToModuleCode, "what:
// <kernel's message>".
absl::Status ModuleStatus(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  int err = genl::ErrnoOf(s);
  absl::StatusCode code = err ? ErrnoToModuleCode(err) : s.code();
  return absl::Status(code, absl::StrCat(what, ": ", s.message()));
}

std::string FormatAddress(in_addr addr, uint16_t port) {
  return absl::StrCat(genl::FormatIPv4(addr), ":", port);
}

std::vector<lite::v1::LmrChunk> ToProtoChunks(
    const std::vector<genl::Chunk>& chunks) {
  std::vector<lite::v1::LmrChunk> out;
  out.reserve(chunks.size());
  for (const genl::Chunk& c : chunks) {
    lite::v1::LmrChunk chunk;
    chunk.set_address(c.addr);
    chunk.set_length_bytes(c.length);
    out.push_back(std::move(chunk));
  }
  return out;
}

}  // namespace

absl::Status ParseRdmaAddress(absl::string_view text, in_addr* addr,
                              uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos || text.empty() || text[0] == '[') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RDMA address '%s' is not IPv4:port (lite.ko speaks IPv4 only)", text));
  }
  absl::StatusOr<in_addr> ip = genl::ParseIPv4(text.substr(0, colon));
  uint32_t p = 0;
  if (!ip.ok() || !absl::SimpleAtoi(text.substr(colon + 1), &p) || p == 0 ||
      p > 65535) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RDMA address '%s' is not IPv4:port (lite.ko speaks IPv4 only)", text));
  }
  *addr = *ip;
  *port = static_cast<uint16_t>(p);
  return absl::OkStatus();
}

// ---- Conversions ----

absl::StatusOr<Upcall> UpcallFromGenl(const genl::UpcallRequest& r) {
  Upcall u;
  u.upcall_id = r.upcall_id;
  u.credentials.set_uid(r.uid);
  u.credentials.set_gid(r.gid);
  u.credentials.set_pid(r.pid);
  // Copied to every request made for the application (MapLmr's group class).
  for (uint32_t g : r.groups) u.credentials.add_groups(g);
  u.credentials.set_groups_truncated(r.groups_truncated);
  switch (r.kind) {
    case genl::UpcallKind::kAlloc:
      u.request = AllocUpcall{.name = r.name,
                              .size_bytes = r.size,
                              .mode = r.mode,
                              .home_node_id = r.home_node_id};
      break;
    case genl::UpcallKind::kMap:
      u.request = MapUpcall{.name = r.name,
                            .read = (r.access & LITE_ACCESS_READ) != 0,
                            .write = (r.access & LITE_ACCESS_WRITE) != 0};
      break;
    case genl::UpcallKind::kUnmap:
      u.request = UnmapUpcall{.grant_id = r.grant_id};
      break;
    case genl::UpcallKind::kFree:
      u.request = FreeUpcall{.name = r.name};
      break;
    default:
      LITE_RETURN_IF_ERROR(RpcRequestFromGenl(r, &u));
  }
  return u;
}

absl::StatusOr<genl::UpcallCompletion> CompletionFromReply(
    const UpcallReply& reply) {
  genl::UpcallCompletion c;
  c.upcall_id = reply.upcall_id;
  c.error = static_cast<uint32_t>(StatusToErrno(reply.status));
  if (!reply.status.ok() && reply.error_errno > 0) {
    c.error = static_cast<uint32_t>(reply.error_errno);
  }
  if (!reply.status.ok()) {
    c.message = std::string(reply.status.message());
    return c;
  }
  if (reply.lmr.has_value()) {
    if (reply.lmr->lmr_id() == 0) {
      return absl::InvalidArgumentError("the reply's LMR has no id");
    }
    c.lmr_id = reply.lmr->lmr_id();
  }
  if (reply.grant.has_value()) {
    const lite::v1::Grant& g = *reply.grant;
    genl::GrantInfo info;
    info.grant_id = g.grant_id();
    info.lmr_id = g.lmr_id();
    info.name = g.lmr_name();
    info.home_node_id = g.home_node_id();
    info.access = (g.access().read() ? LITE_ACCESS_READ : 0) |
                  (g.access().write() ? LITE_ACCESS_WRITE : 0);
    info.epoch = g.epoch();
    info.size = g.size_bytes();
    info.memory_key = g.memory_key();
    info.holder_incarnation = g.holder_incarnation();
    info.granted_at_ms = g.granted_at_unix_ms();
    for (const auto& chunk : g.chunks()) {
      info.chunks.push_back({chunk.address(), chunk.length_bytes()});
    }
    c.grant = std::move(info);
  }
  LITE_RETURN_IF_ERROR(AddRpcAnswer(reply, &c));
  return c;
}

lite::v1::Lmr LmrFromGenl(const genl::LmrInfo& info, uint32_t home_node_id) {
  lite::v1::Lmr lmr;
  lmr.set_lmr_id(info.lmr_id);
  lmr.set_name(info.name);
  lmr.set_home_node_id(home_node_id);
  lmr.set_size_bytes(info.size);
  lmr.set_owner_uid(info.uid);
  lmr.set_owner_gid(info.gid);
  lmr.set_mode(info.mode);
  lmr.set_epoch(info.epoch);
  for (auto& chunk : ToProtoChunks(info.chunks)) {
    *lmr.add_chunks() = std::move(chunk);
  }
  lmr.set_memory_key(info.memory_key);
  lmr.set_read_key(info.read_key);
  if (info.releasing) lmr.set_state(lite::v1::LMR_STATE_RELEASING);
  // lite.ko hosts only memory it allocated (there is no register upcall).
  lmr.set_origin(lite::v1::LMR_ORIGIN_ALLOCATED);
  return lmr;
}

lite::v1::Grant GrantFromGenl(const genl::GrantInfo& info,
                              uint32_t holder_node_id) {
  lite::v1::Grant g;
  g.set_grant_id(info.grant_id);
  g.set_lmr_id(info.lmr_id);
  g.set_lmr_name(info.name);
  g.set_home_node_id(info.home_node_id);
  g.set_holder_node_id(holder_node_id);
  g.set_holder_incarnation(info.holder_incarnation);
  g.mutable_requester()->set_uid(info.uid);
  g.mutable_requester()->set_gid(info.gid);
  g.mutable_requester()->set_pid(info.pid);
  g.mutable_access()->set_read((info.access & LITE_ACCESS_READ) != 0);
  g.mutable_access()->set_write((info.access & LITE_ACCESS_WRITE) != 0);
  g.set_epoch(info.epoch);
  g.set_size_bytes(info.size);
  for (auto& chunk : ToProtoChunks(info.chunks)) {
    *g.add_chunks() = std::move(chunk);
  }
  g.set_memory_key(info.memory_key);
  g.set_granted_at_unix_ms(info.granted_at_ms);
  return g;
}

PeerConnectionFailed FailureFromGenl(const genl::Event& e) {
  PeerConnectionFailed f;
  f.node_id = e.node_id;
  f.incarnation = e.incarnation;
  if (e.reason) f.reason_errno = static_cast<int>(*e.reason);
  std::string reason = "connection lost";
  if (e.reason) {
    const char* name = strerrorname_np(static_cast<int>(*e.reason));
    reason =
        absl::StrFormat("%s (%s)", std::strerror(*e.reason), name ? name : "?");
    // Peer authentication's reasons, in the words an operator needs.
    if (*e.reason == EHOSTDOWN) {
      absl::StrAppend(&reason,
                      ": the peer stopped answering within peer_timeout_ms");
    } else if (*e.reason == EKEYREJECTED) {
      absl::StrAppend(&reason,
                      ": authentication failed (pair secret mismatch or "
                      "stale incarnation)");
    } else if (*e.reason == ENOKEY) {
      absl::StrAppend(&reason, ": one side has no pair secret for the other");
    }
  }
  f.reason =
      absl::StrFormat("%s on QP %s to %s; %u QPs still connected", reason,
                      e.qp_index ? absl::StrCat(*e.qp_index) : "?",
                      genl::FormatIPv4(e.addr), e.qps_connected);
  return f;
}

// ---- NetlinkModule ----

absl::StatusOr<std::unique_ptr<NetlinkModule>> NetlinkModule::Open(
    const NetlinkModuleOptions& options) {
  in_addr addr;
  uint16_t port;
  LITE_RETURN_IF_ERROR(ParseRdmaAddress(options.rdma_address, &addr, &port));
  genl::Client::Options client_options;
  client_options.timeout = options.request_timeout;
  client_options.events = true;
  absl::StatusOr<std::unique_ptr<genl::Client>> client =
      genl::Client::Open(client_options);
  if (!client.ok()) {
    if (genl::ErrnoOf(client.status()) == ENOENT) {
      return absl::NotFoundError(
          "lite.ko is not loaded (no generic netlink family \"lite\"); load "
          "it first (insmod lite.ko), or for tests without it run "
          "liteagent_fake --module=fake");
    }
    if (genl::ErrnoOf(client.status()) == EPERM) {
      return absl::PermissionDeniedError(
          absl::StrCat("liteagent needs CAP_NET_ADMIN to drive lite.ko: ",
                       client.status().message()));
    }
    return ModuleStatus(client.status(), "opening lite.ko's netlink family");
  }
  absl::StatusOr<genl::NodeInfo> node = (*client)->GetNode();
  if (!node.ok()) return ModuleStatus(node.status(), "reading lite.ko's node");
  if (port != node->cm_port) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--rdma_address %s: the port must be lite.ko's cm_port %u (lite.ko "
        "accepts rdma_cm connections on that port only; load lite.ko with "
        "cm_port=%u or pass %s:%u)",
        options.rdma_address, node->cm_port, port, genl::FormatIPv4(addr),
        node->cm_port));
  }
  if (absl::Status s = (*client)->AttachAgent(); !s.ok()) {
    if (genl::ErrnoOf(s) == EBUSY) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "another agent is attached to lite.ko (netlink port %s): is a "
          "liteagent already running on this node?",
          node->agent_portid ? absl::StrCat(*node->agent_portid) : "?"));
    }
    if (genl::ErrnoOf(s) == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(
          "liteagent needs CAP_NET_ADMIN to attach to lite.ko: ", s.message()));
    }
    return ModuleStatus(s, "attaching to lite.ko");
  }
  LITE_LOG_INFO(
      "attached to lite.ko as its agent (netlink port %u); cm_port %u, %u QPs "
      "per peer, %u peers%s",
      (*client)->portid(), node->cm_port, node->qps_per_peer, node->num_peers,
      node->node_id ? absl::StrFormat(", identity node %u incarnation %u",
                                      *node->node_id, *node->incarnation)
                    : "");
  return std::unique_ptr<NetlinkModule>(
      new NetlinkModule(options, *std::move(client), addr, port));
}

NetlinkModule::NetlinkModule(NetlinkModuleOptions options,
                             std::unique_ptr<genl::Client> client, in_addr addr,
                             uint16_t cm_port)
    : options_(std::move(options)),
      client_(std::move(client)),
      addr_(addr),
      cm_port_(cm_port) {}

NetlinkModule::~NetlinkModule() {
  client_->InterruptNotifications();
  if (absl::Status s = client_->DetachAgent(); !s.ok()) {
    LITE_LOG_WARNING("detaching from lite.ko: %s", s.ToString());
  }
}

absl::StatusOr<uint32_t> NetlinkModule::NodeId() {
  absl::StatusOr<genl::NodeInfo> node = client_->GetNode();
  if (!node.ok()) return ModuleStatus(node.status(), "reading lite.ko's node");
  return node->node_id.value_or(0);
}

absl::StatusOr<std::optional<lite::v1::NodeIdentity>>
NetlinkModule::GetIdentity() {
  absl::StatusOr<genl::NodeInfo> node = client_->GetNode();
  if (!node.ok()) return ModuleStatus(node.status(), "reading lite.ko's node");
  if (!node->node_id || !node->incarnation) {
    return std::optional<lite::v1::NodeIdentity>();
  }
  lite::v1::NodeIdentity identity;
  identity.set_node_id(*node->node_id);
  identity.set_incarnation(*node->incarnation);
  return std::optional<lite::v1::NodeIdentity>(identity);
}

absl::Status NetlinkModule::SetIdentity(
    const lite::v1::NodeIdentity& identity) {
  if (identity.node_id() == 0 || identity.incarnation() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node identity must be nonzero, got id %u "
                        "incarnation %u",
                        identity.node_id(), identity.incarnation()));
  }
  absl::Status s = client_->SetNode(identity.node_id(), identity.incarnation(),
                                    addr_, options_.node_name);
  if (s.ok() || genl::ErrnoOf(s) != EBUSY) {
    return ModuleStatus(s, "setting the node identity");
  }
  // EBUSY: lite.ko has peers and another identity. The Module keeps its
  // peers across an identity change, so take them down, set the identity
  // and connect them again (as the new identity). They come back without a
  // pair secret: the old ones were for the old identity, and the new ones
  // come from the manager with the Join that gave this identity (AddPeer
  // then gives each its secret).
  absl::StatusOr<std::vector<genl::PeerInfo>> peers = client_->ListPeers();
  if (!peers.ok()) return ModuleStatus(peers.status(), "listing peers");
  for (const genl::PeerInfo& p : *peers) {
    absl::Status r = client_->RemovePeer(p.node_id, p.incarnation);
    if (!r.ok() && genl::ErrnoOf(r) != ENOENT) {
      return ModuleStatus(r, absl::StrFormat("removing peer %u to change the "
                                             "node identity",
                                             p.node_id));
    }
  }
  s = client_->SetNode(identity.node_id(), identity.incarnation(), addr_,
                       options_.node_name);
  if (!s.ok()) return ModuleStatus(s, "setting the node identity");
  LITE_LOG_INFO("node identity is now %u incarnation %u; reconnecting %u peers",
                identity.node_id(), identity.incarnation(), peers->size());
  absl::Status first;
  for (const genl::PeerInfo& p : *peers) {
    if (p.node_id == identity.node_id()) continue;  // now this node itself
    absl::Status a = client_->AddPeer(p.node_id, p.incarnation, p.addr, p.name);
    if (!a.ok() && first.ok()) {
      first = ModuleStatus(
          a, absl::StrFormat("adding peer %u back after the identity change",
                             p.node_id));
    }
  }
  return first;
}

absl::StatusOr<in_addr> NetlinkModule::PeerAddress(const Peer& peer) const {
  in_addr addr;
  uint16_t port;
  LITE_RETURN_IF_ERROR(ParseRdmaAddress(peer.rdma_address, &addr, &port));
  if (port != cm_port_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peer %u's RDMA address %s: lite.ko connects to cm_port %u only; "
        "every node must load lite.ko with the same cm_port",
        peer.node_id, peer.rdma_address, cm_port_));
  }
  return addr;
}

absl::Status NetlinkModule::AddPeer(const Peer& peer) {
  if (peer.node_id == 0 || peer.incarnation == 0 || peer.rdma_address.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peer needs a node id, an incarnation and an address, got %u/%u/'%s'",
        peer.node_id, peer.incarnation, peer.rdma_address));
  }
  LITE_ASSIGN_OR_RETURN(const in_addr addr, PeerAddress(peer));
  const std::string what =
      absl::StrFormat("adding peer %u incarnation %u at %s", peer.node_id,
                      peer.incarnation, peer.rdma_address);
  // With a secret, lite.ko replaces the secret of the same peer (id,
  // incarnation, address, name) in place and keeps its connections.
  absl::Status s = client_->AddPeer(peer.node_id, peer.incarnation, addr,
                                    peer.name, peer.secret);
  const int err = genl::ErrnoOf(s);
  if (s.ok() || (err != EEXIST && err != ESTALE)) {
    return ModuleStatus(s, what);
  }
  // lite.ko takes only a larger incarnation as a replacement; the Module
  // replaces whatever the peer with this id was. Look at what it has.
  absl::StatusOr<std::vector<genl::PeerInfo>> peers = client_->ListPeers();
  if (!peers.ok()) return ModuleStatus(peers.status(), "listing peers");
  const genl::PeerInfo* known = nullptr;
  const genl::PeerInfo* same_address = nullptr;
  const genl::PeerInfo* same_name = nullptr;
  for (const genl::PeerInfo& p : *peers) {
    if (p.node_id == peer.node_id) {
      known = &p;
    } else if (p.addr.s_addr == addr.s_addr) {
      same_address = &p;
    } else if (!peer.name.empty() && p.name == peer.name) {
      same_name = &p;
    }
  }
  if (known == nullptr) {
    // Another node id at this address, or with this name (lite.ko keeps
    // names unique): the node came back under a new id and the manager's
    // news that the old one is gone has not come yet. The member list is
    // the authority: the old peer goes.
    known = same_address != nullptr ? same_address : same_name;
    if (known == nullptr) return ModuleStatus(s, what);
    LITE_LOG_INFO(
        "peer %u incarnation %u at %s replaces peer %u with the "
        "same %s",
        peer.node_id, peer.incarnation, peer.rdma_address, known->node_id,
        known == same_address ? "address" : "name");
  }
  // Already there, as asked. A name lite.ko lacks (a peer an agent without
  // names added) is not worth tearing down live connections for; a secret
  // it lacks is: lite.ko replaces a secret in place only for the peer with
  // the same name, and without the secret the peer never authenticates.
  if (known->incarnation == peer.incarnation &&
      known->addr.s_addr == addr.s_addr) {
    if (peer.secret.empty()) return absl::OkStatus();
    LITE_LOG_INFO(
        "peer %u incarnation %u is in lite.ko as '%s', not '%s': adding it "
        "again to give it its pair secret (its connections are made again)",
        peer.node_id, peer.incarnation, known->name, peer.name);
  }
  absl::Status r = client_->RemovePeer(known->node_id, known->incarnation);
  if (!r.ok() && genl::ErrnoOf(r) != ENOENT) {
    return ModuleStatus(r, absl::StrCat(what, ": removing the old one"));
  }
  return ModuleStatus(client_->AddPeer(peer.node_id, peer.incarnation, addr,
                                       peer.name, peer.secret),
                      what);
}

absl::Status NetlinkModule::RemovePeer(uint32_t node_id, uint64_t incarnation) {
  if (node_id == 0 || incarnation == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RemovePeer needs a node id and an incarnation, got %u/%u", node_id,
        incarnation));
  }
  absl::Status s = client_->RemovePeer(node_id, incarnation);
  if (genl::ErrnoOf(s) == ESTALE) {
    // Known with another incarnation: no such peer, as the Module sees it.
    return absl::NotFoundError(
        absl::StrFormat("no peer %u with incarnation %u: %s", node_id,
                        incarnation, s.message()));
  }
  return ModuleStatus(s, absl::StrFormat("removing peer %u incarnation %u",
                                         node_id, incarnation));
}

absl::StatusOr<std::vector<Peer>> NetlinkModule::ListPeers() {
  absl::StatusOr<std::vector<genl::PeerInfo>> peers = client_->ListPeers();
  if (!peers.ok()) return ModuleStatus(peers.status(), "listing peers");
  std::vector<Peer> out;
  out.reserve(peers->size());
  for (const genl::PeerInfo& p : *peers) {
    out.push_back(Peer{.node_id = p.node_id,
                       .incarnation = p.incarnation,
                       .rdma_address = FormatAddress(p.addr, cm_port_),
                       .name = p.name});
  }
  return out;
}

absl::StatusOr<lite::v1::AllocatedLmrMemory> NetlinkModule::AllocateLmrMemory(
    const lite::v1::AllocateLmrMemory& request) {
  if (request.lmr_id() == 0 || request.size_bytes() == 0) {
    return absl::InvalidArgumentError(
        "AllocateLmrMemory needs a nonzero lmr_id and size_bytes");
  }
  genl::LmrAllocRequest r{.lmr_id = request.lmr_id(),
                          .name = request.name(),
                          .size = request.size_bytes(),
                          .uid = request.owner_uid(),
                          .gid = request.owner_gid(),
                          .mode = request.mode()};
  absl::StatusOr<genl::LmrMemory> memory = client_->AllocLmr(r);
  if (!memory.ok()) {
    return ModuleStatus(
        memory.status(),
        absl::StrFormat("allocating %u bytes for LMR %#x ('%s')",
                        request.size_bytes(), request.lmr_id(),
                        request.name()));
  }
  lite::v1::AllocatedLmrMemory out;
  for (auto& chunk : ToProtoChunks(memory->chunks)) {
    *out.add_chunks() = std::move(chunk);
  }
  out.set_memory_key(memory->memory_key);
  out.set_read_key(memory->read_key);
  return out;
}

absl::Status NetlinkModule::FreeLmrMemory(uint64_t lmr_id, bool quarantine) {
  return ModuleStatus(
      client_->FreeLmr(lmr_id, quarantine),
      absl::StrFormat("%s LMR %#x", quarantine ? "quarantining" : "freeing",
                      lmr_id));
}

absl::Status NetlinkModule::UpdateHostedLmr(uint64_t lmr_id,
                                            const lite::v1::Lmr& lmr) {
  if (lmr.lmr_id() == 0) {
    return absl::InvalidArgumentError("the new LMR record has no lmr_id");
  }
  std::optional<uint64_t> new_id;
  if (lmr.lmr_id() != lmr_id) new_id = lmr.lmr_id();
  const bool releasing = lmr.state() == lite::v1::LMR_STATE_RELEASING;
  return ModuleStatus(
      client_->UpdateLmr(lmr_id, new_id, lmr.epoch(), releasing),
      absl::StrFormat("updating LMR %#x (now %#x, epoch %u%s)", lmr_id,
                      lmr.lmr_id(), lmr.epoch(),
                      releasing ? ", releasing" : ""));
}

absl::Status NetlinkModule::MarkLmrReleasing(uint64_t lmr_id) {
  if (lmr_id == 0) return absl::InvalidArgumentError("LMR id 0");
  return ModuleStatus(client_->UpdateLmr(lmr_id, std::nullopt, std::nullopt,
                                         /*releasing=*/true),
                      absl::StrFormat("marking LMR %#x releasing", lmr_id));
}

absl::StatusOr<std::vector<lite::v1::Lmr>> NetlinkModule::ListHostedLmrs() {
  LITE_ASSIGN_OR_RETURN(const uint32_t self, NodeId());
  absl::StatusOr<std::vector<genl::LmrInfo>> lmrs = client_->ListLmrs();
  if (!lmrs.ok()) return ModuleStatus(lmrs.status(), "listing hosted LMRs");
  std::vector<lite::v1::Lmr> out;
  out.reserve(lmrs->size());
  for (const genl::LmrInfo& l : *lmrs) out.push_back(LmrFromGenl(l, self));
  return out;
}

absl::Status NetlinkModule::RevokeGrant(uint64_t grant_id) {
  return ModuleStatus(client_->RevokeGrant(grant_id),
                      absl::StrFormat("revoking grant %#x", grant_id));
}

absl::StatusOr<std::vector<lite::v1::Grant>> NetlinkModule::ListGrants() {
  return GrantsListed(/*revoked=*/false);
}

absl::StatusOr<std::vector<lite::v1::Grant>>
NetlinkModule::ListRevokedGrants() {
  return GrantsListed(/*revoked=*/true);
}

absl::StatusOr<std::vector<lite::v1::Grant>> NetlinkModule::GrantsListed(
    bool revoked) {
  LITE_ASSIGN_OR_RETURN(const uint32_t self, NodeId());
  absl::StatusOr<std::vector<genl::GrantInfo>> grants = client_->ListGrants();
  if (!grants.ok()) return ModuleStatus(grants.status(), "listing grants");
  std::vector<lite::v1::Grant> out;
  for (const genl::GrantInfo& g : *grants) {
    // A revoked grant stays in lite.ko until its handle is unmapped; it is
    // not one to restore, but one to acknowledge once drained.
    if (g.revoked != revoked) continue;
    out.push_back(GrantFromGenl(g, self));
  }
  return out;
}

absl::StatusOr<ModuleMessage> NetlinkModule::Receive() {
  while (true) {
    absl::StatusOr<std::optional<genl::Notification>> n =
        client_->NextNotification(kReceiveRound);
    if (!n.ok()) {
      if (absl::IsCancelled(n.status())) {
        return absl::CancelledError("the module was closed");
      }
      if (absl::IsDataLoss(n.status())) {
        // Upcalls lost this way time out in lite.ko (the application gets
        // ETIMEDOUT); keep going.
        ++notifications_lost_;
        LITE_LOG_ERROR("lost messages from lite.ko: %s", n.status().ToString());
        continue;
      }
      if (genl::ErrnoOf(n.status()) == EBADMSG) {
        ++upcalls_malformed_;
        LITE_LOG_ERROR("malformed message from lite.ko ignored: %s",
                       n.status().ToString());
        continue;
      }
      return ModuleStatus(n.status(), "receiving from lite.ko");
    }
    if (!n->has_value()) continue;
    if (const auto* up = std::get_if<genl::UpcallRequest>(&**n)) {
      absl::StatusOr<Upcall> upcall = UpcallFromGenl(*up);
      if (!upcall.ok()) {
        ++upcalls_malformed_;
        LITE_LOG_ERROR("upcall %u ignored: %s", up->upcall_id,
                       upcall.status().ToString());
        continue;
      }
      ++upcalls_received_;
      if (up->kind == genl::UpcallKind::kUnmap) {
        absl::MutexLock lock(&unmap_mu_);
        // Bounded: forgetting ids only means their answers get sent (and
        // lite.ko says ENOENT).
        if (unmap_upcalls_.size() >= kMaxUnmapUpcalls) unmap_upcalls_.clear();
        unmap_upcalls_.insert(up->upcall_id);
      }
      return ModuleMessage(*std::move(upcall));
    }
    if (const auto* lost = std::get_if<genl::LmrLostEvent>(&**n)) {
      ++lmr_lost_events_;
      return ModuleMessage(
          LmrLost{lost->lmr_id, static_cast<int>(lost->reason)});
    }
    const genl::Event& e = std::get<genl::Event>(**n);
    if (e.type == genl::EventType::kPeerFailed) {
      ++peer_failed_events_;
      return ModuleMessage(FailureFromGenl(e));
    }
    LITE_LOG_DEBUG("lite.ko: peer %u incarnation %u %s (%u QPs connected)",
                   e.node_id, e.incarnation, genl::EventTypeName(e.type),
                   e.qps_connected);
  }
}

absl::Status NetlinkModule::CompleteUpcall(const UpcallReply& reply) {
  if (reply.upcall_id == 0) {
    return absl::InvalidArgumentError("upcall id 0");
  }
  {
    absl::MutexLock lock(&unmap_mu_);
    if (unmap_upcalls_.erase(reply.upcall_id) > 0) {
      // lite.ko keeps nothing pending for an UNMAP: the handle is gone
      // already and the answer would only come back ENOENT.
      if (reply.status.ok()) {
        ++upcalls_completed_;
      } else {
        ++upcalls_failed_;
      }
      return absl::OkStatus();
    }
  }
  LITE_ASSIGN_OR_RETURN(const genl::UpcallCompletion c,
                        CompletionFromReply(reply));
  absl::Status s = client_->CompleteUpcall(c);
  if (s.ok()) {
    if (reply.status.ok()) {
      ++upcalls_completed_;
    } else {
      ++upcalls_failed_;
    }
    return s;
  }
  if (genl::ErrnoOf(s) == ENOENT) {
    return absl::NotFoundError(absl::StrFormat(
        "upcall %u is not pending in lite.ko (answered already, or the "
        "application gave up): %s",
        reply.upcall_id, s.message()));
  }
  if (genl::ErrnoOf(s) == ECANCELED) {
    return absl::CancelledError(absl::StrFormat(
        "upcall %u: its caller was gone when the answer arrived: %s",
        reply.upcall_id, s.message()));
  }
  return ModuleStatus(s,
                      absl::StrFormat("answering upcall %u", reply.upcall_id));
}

void NetlinkModule::Close() { client_->InterruptNotifications(); }

namespace {

// Adds every file of `dir` holding one number as a counter named
// `prefix` + its name, and, `depth` folders deep, those of its folders.
// False if `dir` cannot be read.
bool AddDebugfsCounters(const std::string& dir, const std::string& prefix,
                        int depth, std::vector<lite::v1::Counter>& out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    std::string path = absl::StrCat(dir, "/", name);
    if (entry->d_type == DT_DIR) {
      if (depth > 0) {
        AddDebugfsCounters(path, absl::StrCat(prefix, name, "."), depth - 1,
                           out);
      }
      continue;
    }
    std::ifstream in(path);
    std::string text;
    uint64_t value = 0;
    if (!std::getline(in, text) ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) {
      continue;  // not a number: not a counter
    }
    std::string full = absl::StrCat(prefix, name);
    bool taken = false;
    for (const lite::v1::Counter& c : out) taken |= c.name() == full;
    if (!taken) {
      out.push_back(
          MakeCounter(std::move(full), value, "lite.ko's counter (debugfs)"));
    }
  }
  closedir(d);
  return true;
}

}  // namespace

absl::StatusOr<std::vector<lite::v1::Counter>> NetlinkModule::GetCounters() {
  absl::StatusOr<genl::NodeInfo> node = client_->GetNode();
  if (!node.ok()) return ModuleStatus(node.status(), "reading lite.ko's node");
  std::vector<lite::v1::Counter> out = {
      MakeCounter("module.peers", node->num_peers, "peers lite.ko has"),
      MakeCounter("module.qps_per_peer", node->qps_per_peer,
                  "RC QPs lite.ko keeps per peer (module parameter)"),
      MakeCounter("module.cm_port", node->cm_port,
                  "lite.ko's rdma_cm port (module parameter)"),
      MakeCounter("module.netlink.upcalls_received", upcalls_received_,
                  "upcalls lite.ko sent to this agent"),
      MakeCounter("module.netlink.upcalls_completed", upcalls_completed_,
                  "upcalls answered with success"),
      MakeCounter("module.netlink.upcalls_failed", upcalls_failed_,
                  "upcalls answered with an error"),
      MakeCounter("module.netlink.upcalls_malformed", upcalls_malformed_,
                  "messages from lite.ko that could not be decoded"),
      MakeCounter("module.netlink.notifications_lost", notifications_lost_,
                  "times messages from lite.ko were lost (buffer overrun)"),
      MakeCounter("module.netlink.peer_failed_events", peer_failed_events_,
                  "PEER_FAILED events from lite.ko"),
      MakeCounter("module.netlink.lmr_lost_events", lmr_lost_events_,
                  "LMR_LOST events from lite.ko (a hosted LMR's device was "
                  "removed)"),
  };
  // lite.ko's own counters, one debugfs file each, when debugfs is there:
  // the top level as module.NAME, its folders (ops/, rpc/, qos/) as
  // module.FOLDER.NAME.
  if (!options_.debugfs_dir.empty()) {
    // Said outright, so that a scrape can tell "no operations" from "not
    // readable here" (debugfs not mounted, or outside the agent's sandbox).
    const bool read =
        AddDebugfsCounters(options_.debugfs_dir, "module.", /*depth=*/1, out);
    out.push_back(MakeCounter(
        "module.debugfs_available", read ? 1 : 0,
        absl::StrCat("1 if lite.ko's counters in ", options_.debugfs_dir,
                     " could be read, 0 if not (debugfs not mounted, or not "
                     "visible to the agent)")));
  }
  return out;
}

}  // namespace lite::agent
