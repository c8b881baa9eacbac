// litenl node (set, show), peer (add, remove) and peers.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cmd/litenl/litenl.h"
#include "common/cli/json.h"
#include "common/status/macros.h"
#include "kmod/include/uapi/lite.h"

namespace lite::litenl {
namespace {

using cli::Json;

struct Identity {
  uint32_t id = 0;
  uint64_t incarnation = 0;
  in_addr addr{};
  std::string name;  // --name; empty for none
};

// --id, --incarnation, --addr, --name: form only (the kernel checks the
// values; 0 is sent, and refused there).
absl::StatusOr<Identity> ReadIdentity(const cli::Args& a) {
  for (const char* name : {"id", "incarnation", "addr"}) {
    if (!a.Has(name)) {
      return cli::UsageError(absl::StrFormat("--%s is required", name));
    }
  }
  Identity out;
  LITE_ASSIGN_OR_RETURN(uint64_t id,
                        cli::Number("--id", a.Get("id"), UINT32_MAX));
  out.id = static_cast<uint32_t>(id);
  LITE_ASSIGN_OR_RETURN(out.incarnation,
                        cli::Number("--incarnation", a.Get("incarnation")));
  absl::StatusOr<in_addr> addr = genl::ParseIPv4(a.Get("addr"));
  if (!addr.ok()) {
    return cli::UsageError(absl::StrFormat(
        "--addr must be an IPv4 address (A.B.C.D), not '%s'", a.Get("addr")));
  }
  out.addr = *addr;
  if (a.Has("name")) {
    out.name = a.Get("name");
    if (out.name.empty()) {
      return cli::UsageError("--name is empty (leave it out for no name)");
    }
  }
  return out;
}

absl::Status NodeSet(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(Identity ident, ReadIdentity(a));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("node set", client.status());
  return Failed("node set", (*client)->SetNode(ident.id, ident.incarnation,
                                               ident.addr, ident.name));
}

absl::Status NodeShow(const cli::Args& a) {
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("node show", client.status());
  absl::StatusOr<genl::NodeInfo> node = (*client)->GetNode();
  if (!node.ok()) return Failed("node show", node.status());
  std::ostream& out = a.out();
  if (a.output() == cli::Output::kJson) {
    // "name" first in the identity: scripts match the identity up to its
    // closing "addr".
    Json identity = nullptr;
    if (node->node_id) {
      identity = {{"name", node->name},
                  {"node_id", *node->node_id},
                  {"incarnation", *node->incarnation},
                  {"addr", genl::FormatIPv4(*node->addr)}};
    }
    Json agent = nullptr;
    if (node->agent_portid) agent = *node->agent_portid;
    out << cli::JsonLine({{"identity", std::move(identity)},
                          {"cm_port", node->cm_port},
                          {"qps_per_peer", node->qps_per_peer},
                          {"num_peers", node->num_peers},
                          {"agent_portid", std::move(agent)}})
        << "\n";
    return absl::OkStatus();
  }
  if (node->node_id) {
    out << absl::StrFormat("node %s, incarnation %u, address %s\n",
                           cli::NodeLabel(node->name, *node->node_id),
                           *node->incarnation, genl::FormatIPv4(*node->addr));
  } else {
    out << "node identity not set\n";
  }
  out << absl::StrFormat("rdma_cm port %u, %u QPs per peer, %u peer(s)\n",
                         node->cm_port, node->qps_per_peer, node->num_peers);
  if (node->agent_portid) {
    out << absl::StrFormat("agent attached: netlink port %u\n",
                           *node->agent_portid);
  } else {
    out << "no agent attached\n";
  }
  return absl::OkStatus();
}

// --secret: the pair secret as 2 x LITE_PEER_SECRET_LEN hex digits. Form
// only (lite.ko refuses one of zeros); a bad value is never echoed back.
absl::StatusOr<std::string> ReadSecret(const cli::Args& a) {
  if (!a.Has("secret")) return std::string();
  const std::string& hex = a.Get("secret");
  if (hex.size() != 2 * LITE_PEER_SECRET_LEN ||
      !std::all_of(hex.begin(), hex.end(), absl::ascii_isxdigit)) {
    return cli::UsageError(absl::StrFormat(
        "--secret must be %d hex digits (the %d-byte pair secret); got %u "
        "characters%s",
        2 * LITE_PEER_SECRET_LEN, LITE_PEER_SECRET_LEN, hex.size(),
        hex.size() == 2 * LITE_PEER_SECRET_LEN ? ", not all hex digits" : ""));
  }
  return absl::HexStringToBytes(hex);
}

absl::Status PeerAdd(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(Identity ident, ReadIdentity(a));
  LITE_ASSIGN_OR_RETURN(std::string secret, ReadSecret(a));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("peer add", client.status());
  return Failed("peer add", (*client)->AddPeer(ident.id, ident.incarnation,
                                               ident.addr, ident.name, secret));
}

// A peer's last refusal in words ("refused by the peer: authentication
// failed (...)"), or "-".
std::string RefusalText(const genl::PeerInfo& p) {
  if (!p.last_refusal) return "-";
  if (!p.refused_by) {
    return absl::StrCat("refused: ", genl::RefusalName(*p.last_refusal));
  }
  return absl::StrCat("refused by ", genl::RefusedByName(*p.refused_by), ": ",
                      genl::RefusalName(*p.last_refusal));
}

// NODE (a name or, all digits, an id) or --id N, not both.
absl::StatusOr<cli::NodeRef> PeerRef(const cli::Args& a) {
  const bool positional = !a.positional().empty();
  if (positional == a.Has("id")) {
    return cli::UsageError(
        absl::StrFormat("give a peer (name or id) or --id N, not %s",
                        positional ? "both" : "neither"));
  }
  if (positional) return cli::ParseNode("NODE", a.positional()[0]);
  cli::NodeRef peer;
  LITE_ASSIGN_OR_RETURN(uint64_t id,
                        cli::Number("--id", a.Get("id"), UINT32_MAX));
  peer.id = static_cast<uint32_t>(id);
  return peer;
}

// The peer's id: a name is looked up in lite.ko's peers.
absl::StatusOr<uint32_t> PeerIdOf(genl::Client& client,
                                  const cli::NodeRef& peer) {
  if (peer.name.empty()) return peer.id;
  return PeerId(client, peer.name);
}

absl::Status PeerRemove(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(cli::NodeRef peer, PeerRef(a));
  std::optional<uint64_t> incarnation;
  if (a.Has("incarnation")) {
    LITE_ASSIGN_OR_RETURN(incarnation,
                          cli::Number("--incarnation", a.Get("incarnation")));
  }
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("peer remove", client.status());
  absl::StatusOr<uint32_t> id = PeerIdOf(**client, peer);
  if (!id.ok()) return Failed("peer remove", id.status());
  return Failed("peer remove", (*client)->RemovePeer(*id, incarnation));
}

absl::Status PeerProbe(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(cli::NodeRef peer, PeerRef(a));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("peer probe", client.status());
  absl::StatusOr<uint32_t> id = PeerIdOf(**client, peer);
  if (!id.ok()) return Failed("peer probe", id.status());
  absl::StatusOr<genl::ProbeResult> probe = (*client)->ProbePeer(*id);
  if (!probe.ok()) return Failed("peer probe", probe.status());
  a.out() << absl::StrFormat(
      "peer %u (incarnation %u) acknowledged in %.1f us\n", probe->node_id,
      probe->incarnation, static_cast<double>(probe->round_trip_ns) / 1e3);
  return absl::OkStatus();
}

absl::Status Peers(const cli::Args& a) {
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("peers", client.status());
  absl::StatusOr<genl::NodeInfo> node = (*client)->GetNode();
  if (!node.ok()) return Failed("peers", node.status());
  absl::StatusOr<std::vector<genl::PeerInfo>> peers = (*client)->ListPeers();
  if (!peers.ok()) return Failed("peers", peers.status());
  std::ostream& out = a.out();
  if (a.output() == cli::Output::kJson) {
    // "name" last: scripts match a peer by its leading {"node_id": N, .
    // Flat, no nested objects: scripts take a peer up to its first '}' and
    // count peers by '{'.
    Json list = Json::array();
    for (const genl::PeerInfo& p : *peers) {
      Json last = nullptr;
      Json by = nullptr;
      if (p.last_refusal) last = genl::RefusalName(*p.last_refusal);
      if (p.refused_by) by = genl::RefusedByName(*p.refused_by);
      list.push_back({{"node_id", p.node_id},
                      {"incarnation", p.incarnation},
                      {"addr", genl::FormatIPv4(p.addr)},
                      {"state", genl::PeerStateName(p.state)},
                      {"role", genl::PeerRoleName(p.role)},
                      {"qps_connected", p.qps_connected},
                      {"refusals", p.refusals},
                      {"last_refusal", std::move(last)},
                      {"refused_by", std::move(by)},
                      {"name", p.name}});
    }
    out << cli::JsonLine({{"qps_per_peer", node->qps_per_peer},
                          {"peers", std::move(list)}})
        << "\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat("%-16s %-10s %-20s %-15s %-10s %-9s %-5s %s\n", "NAME",
                         "NODE", "INCARNATION", "ADDRESS", "STATE", "ROLE",
                         "QPS", "LAST REFUSAL");
  for (const genl::PeerInfo& p : *peers) {
    out << absl::StrFormat(
        "%-16s %-10u %-20u %-15s %-10s %-9s %-5s %s\n",
        p.name.empty() ? "-" : p.name, p.node_id, p.incarnation,
        genl::FormatIPv4(p.addr), genl::PeerStateName(p.state),
        genl::PeerRoleName(p.role),
        absl::StrFormat("%u/%u", p.qps_connected, node->qps_per_peer),
        RefusalText(p));
  }
  return absl::OkStatus();
}

const cli::Flag kId{.name = "id", .value = "N", .help = "node id, 1..2^32-1"};
const cli::Flag kIncarnation{
    .name = "incarnation", .value = "I", .help = "incarnation, 1..2^64-1"};
const cli::Flag kAddr{.name = "addr",
                      .value = "A.B.C.D",
                      .help = "an IPv4 address of the node's RDMA netdev"};
const cli::Flag kSecret{
    .name = "secret",
    .value = "HEX",
    .help =
        "the pair secret, 64 hex digits (for tests: liteagent gives "
        "lite.ko the manager's; other users see it in the process list)"};
const cli::Flag kName{.name = "name",
                      .value = "NAME",
                      .help =
                          "the node's name, the cluster manager's (1..64 "
                          "of [A-Za-z0-9._-]); without it, none"};

}  // namespace

std::vector<cli::Command> NodeCommands() {
  return {
      {.name = "node",
       .usage = "node (set | show)",
       .summary = "This node's identity",
       .commands =
           {
               {.name = "set",
                .usage = "node set --id N --incarnation I --addr A.B.C.D "
                         "[--name NAME]",
                .summary = "Set this node's identity, name and RDMA address",
                .details = "lite.ko listens there with rdma_cm. The same "
                           "identity again changes nothing but the name.",
                .flags = {kId, kIncarnation, kAddr, kName},
                .run = NodeSet},
               {.name = "show",
                .usage = "node show [-o table|json]",
                .summary = "The node's name and identity, rdma_cm port, QPs "
                           "per peer, peer count and attached agent",
                .details = kJsonNote,
                .run = NodeShow},
           }},
      {.name = "peer",
       .usage = "peer (add | remove | probe)",
       .summary = "Connect to a peer, forget one, or probe one",
       .commands =
           {
               {.name = "add",
                .usage = "peer add --id N --incarnation I --addr A.B.C.D "
                         "[--name NAME] [--secret HEX]",
                .summary = "Connect to a peer (a larger incarnation "
                           "replaces it)",
                .details = "The node with the smaller id connects "
                           "qps_per_peer RC QPs; the other accepts them. "
                           "With --name, lite.ko knows the peer by that name "
                           "too (LITE_IOC_NODE_LOOKUP, log lines). With "
                           "--secret, lite.ko (peer_auth=1) authenticates "
                           "the connections with the peer by that pair "
                           "secret; the same peer again with another secret "
                           "replaces only the secret (its QPs stay). lite.ko "
                           "never shows a secret back.",
                .flags = {kId, kIncarnation, kAddr, kName, kSecret},
                .run = PeerAdd},
               {.name = "remove",
                .usage = "peer remove (NODE | --id N) [--incarnation I]",
                .summary = "Forget a peer and tear its QPs down",
                .details = "NODE is the peer's name, or (all digits) its id. "
                           "With --incarnation, only if it has that "
                           "incarnation.",
                .flags = {kId, kIncarnation},
                .max_args = 1,
                .run = PeerRemove},
               {.name = "probe",
                .usage = "peer probe (NODE | --id N)",
                .summary = "Is the peer's kernel alive? (a zero-byte RDMA "
                           "WRITE it must acknowledge)",
                .details = "NODE is the peer's name, or (all digits) its id. "
                           "The peer's RDMA device acknowledges whatever its "
                           "user space does (a stopped liteagent still "
                           "answers); a peer that is gone does not, within "
                           "peer_timeout_ms, and that connection is failed "
                           "as for any operation. Exit status 0 and the "
                           "round trip when acknowledged.",
                .flags = {kId},
                .max_args = 1,
                .run = PeerProbe},
           }},
      {.name = "peers",
       .usage = "peers [-o table|json]",
       .summary = "List peers with state and connected QPs",
       .details = "Name (- for none), node id, incarnation, address, state "
                  "(connecting or connected), role (initiator or acceptor), "
                  "connected QPs, and why a connection with the peer was "
                  "last refused since it was last connected, by whom (e.g. "
                  "'refused by the peer: authentication failed (pair secret "
                  "mismatch or stale incarnation)'; - for none). In JSON: "
                  "\"refusals\" (since the peer was added), "
                  "\"last_refusal\" and \"refused_by\" (null for none), "
                  "and a peer's \"name\" is its last field, \"\" for none.",
       .run = Peers},
  };
}

}  // namespace lite::litenl
