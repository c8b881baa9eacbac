// litenl: talks to lite.ko over its generic-netlink family — sets the node
// identity, adds and removes peers, lists them, follows module events, and
// can stand in for the agent (attach/detach). The operator's and the tests'
// tool; liteagent uses the same lite_genl library.
//
// Exit status: 0 success, 1 the operation failed (one line on stderr with
// the kernel's errno and message), 2 bad usage.
#include <fcntl.h>
#include <linux/netlink.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "genl/client.h"
#include "kmod/include/uapi/lite.h"

namespace {

using lite::genl::Client;
using lite::genl::Event;
using lite::genl::EventStream;
using lite::genl::EventType;

constexpr char kUsage[] =
    "usage: litenl [--attr-u32 TYPE=VALUE]... COMMAND [ARGS]\n"
    "\n"
    "Talks to lite.ko's generic netlink family \"" LITE_GENL_NAME "\".\n"
    "\n"
    "Commands:\n"
    "  node set --id N --incarnation I --addr A.B.C.D\n"
    "                      set this node's identity and RDMA address\n"
    "  node show [-o table|json]\n"
    "                      the node's identity, rdma_cm port, QPs per peer,\n"
    "                      peer count and attached agent\n"
    "  peer add --id N --incarnation I --addr A.B.C.D\n"
    "                      connect to a peer (a larger incarnation replaces it)\n"
    "  peer remove --id N [--incarnation I]\n"
    "                      forget a peer and tear its QPs down\n"
    "  peers [-o table|json]\n"
    "                      list peers with state and connected QPs\n"
    "  events [--timeout SECS] [--count N] [--type TYPE] [--peer ID]\n"
    "         [--ready-file PATH] [-o text|json]\n"
    "                      print module events as they come\n"
    "  agent [--timeout SECS] [--ready-file PATH] [--exit-without-detach]\n"
    "                      attach as the node's agent and hold until SIGTERM,\n"
    "                      SIGINT or the timeout, then detach\n"
    "  lmr alloc --id N --name NAME --size BYTES[K|M|G] [--uid U] [--gid G]\n"
    "            [--mode OCTAL] [-o table|json]\n"
    "                      host memory for an LMR on this node\n"
    "  lmr free --id N     free a hosted LMR (grants into it are revoked)\n"
    "  lmr update --id N [--new-id M] [--epoch E]\n"
    "                      change a hosted LMR's id or epoch\n"
    "  lmr list [-o table|json] [--chunks]\n"
    "                      the LMRs this node hosts\n"
    "  grant list [-o table|json] [--chunks]\n"
    "                      the grants applications on this node hold\n"
    "  grant revoke --id N handles behind the grant fail with ESTALE\n"
    "\n"
    "Every command takes --help. Changing commands need CAP_NET_ADMIN.\n"
    "--attr-u32 TYPE=VALUE appends a raw u32 attribute to every request\n"
    "(for testing lite.ko's validation).\n";

constexpr char kNodeUsage[] =
    "usage: litenl node set --id N --incarnation I --addr A.B.C.D\n"
    "       litenl node show [-o table|json]\n"
    "\n"
    "set:  N is 1..4294967295, I is 1..2^64-1, A.B.C.D an address of this\n"
    "      node's RDMA netdev. lite.ko listens there with rdma_cm.\n"
    "show: what lite.ko knows about this node.\n";

constexpr char kPeerUsage[] =
    "usage: litenl peer add --id N --incarnation I --addr A.B.C.D\n"
    "       litenl peer remove --id N [--incarnation I]\n"
    "\n"
    "add:    the node with the smaller id connects qps_per_peer RC QPs;\n"
    "        the other accepts them. A larger incarnation replaces the peer.\n"
    "remove: tear the peer's QPs down; with --incarnation, only if it has\n"
    "        that incarnation.\n";

constexpr char kPeersUsage[] =
    "usage: litenl peers [-o table|json]\n"
    "\n"
    "Lists the peers: node id, incarnation, address, state (connecting or\n"
    "connected), role (initiator or acceptor) and connected QPs.\n";

constexpr char kEventsUsage[] =
    "usage: litenl events [--timeout SECS] [--count N] [--type TYPE]\n"
    "                     [--peer ID] [--ready-file PATH] [-o text|json]\n"
    "\n"
    "Prints lite.ko's events, one per line, as they come.\n"
    "  --timeout SECS    stop after SECS seconds (default: never)\n"
    "  --count N         stop after N matching events; fail if the timeout\n"
    "                    comes first\n"
    "  --type TYPE       only connected, failed or removed events\n"
    "  --peer ID         only events about that peer\n"
    "  --ready-file PATH create PATH once subscribed (for scripts)\n"
    "  -o text|json      output format (default: text)\n";

constexpr char kAgentUsage[] =
    "usage: litenl agent [--timeout SECS] [--ready-file PATH]\n"
    "                    [--exit-without-detach]\n"
    "\n"
    "Attaches this process's netlink socket as the node's agent: while it is\n"
    "attached, only it may change the node. Holds until SIGTERM, SIGINT or\n"
    "the timeout, then detaches. With --exit-without-detach it just exits\n"
    "and lite.ko detaches it when the socket closes.\n";

constexpr char kLmrUsage[] =
    "usage: litenl lmr alloc --id N --name NAME --size BYTES[K|M|G]\n"
    "                        [--uid U] [--gid G] [--mode OCTAL] [-o table|json]\n"
    "       litenl lmr free --id N\n"
    "       litenl lmr update --id N [--new-id M] [--epoch E]\n"
    "       litenl lmr list [-o table|json] [--chunks]\n"
    "\n"
    "alloc:  zeroed, DMA-mapped memory for LMR N on this node (what the agent\n"
    "        does when the manager asks); prints the memory key and chunks.\n"
    "        --uid/--gid default to the caller's, --mode to 0600.\n"
    "free:   grants on this node into the LMR are revoked; the memory goes\n"
    "        once no operation uses it.\n"
    "update: a new id and/or epoch for a hosted LMR.\n"
    "list:   hosted LMRs; --chunks also prints every chunk (table output).\n";

constexpr char kGrantUsage[] =
    "usage: litenl grant list [-o table|json] [--chunks]\n"
    "       litenl grant revoke --id N\n"
    "\n"
    "list:   grants applications on this node hold (until unmapped).\n"
    "revoke: operations on handles behind the grant fail with ESTALE.\n";

int Usage(const char* text, const std::string& problem) {
  absl::FPrintF(stderr, "litenl: %s\n\n%s", problem, text);
  return 2;
}

int Fail(absl::string_view what, const absl::Status& status) {
  absl::FPrintF(stderr, "litenl: %s: %s\n", what, status.message());
  return 1;
}

template <typename T>
bool ParseUnsigned(absl::string_view text, T* out) {
  if (text.empty()) return false;
  T value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                   value, 10);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}

// --flag VALUE arguments of one command; everything else is an error.
class Args {
 public:
  // Returns an error message, or "" when the arguments were read.
  std::string Read(int argc, char** argv, int first,
                   const std::vector<absl::string_view>& with_value,
                   const std::vector<absl::string_view>& switches) {
    for (int i = first; i < argc; ++i) {
      absl::string_view arg = argv[i];
      if (arg == "-h" || arg == "--help") {
        help_ = true;
        continue;
      }
      bool known = false;
      for (auto name : switches) {
        if (arg == name) {
          values_[std::string(name)] = "";
          known = true;
        }
      }
      for (auto name : with_value) {
        if (arg == name) {
          if (i + 1 >= argc) return absl::StrFormat("%s needs a value", arg);
          values_[std::string(name)] = argv[++i];
          known = true;
        }
      }
      if (!known) return absl::StrFormat("unknown argument '%s'", arg);
    }
    return "";
  }
  bool help() const { return help_; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  const std::string& get(const std::string& name) const {
    return values_.at(name);
  }

 private:
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

struct Identity {
  uint32_t id = 0;
  uint64_t incarnation = 0;
  in_addr addr{};
};

// Format only: the kernel checks the values (0 is sent, and refused there).
std::string ReadIdentity(const Args& a, Identity* out) {
  for (const char* name : {"--id", "--incarnation", "--addr"}) {
    if (!a.has(name)) return absl::StrFormat("%s is required", name);
  }
  if (!ParseUnsigned(a.get("--id"), &out->id)) {
    return absl::StrFormat("--id must be a number 0..%u, not '%s'",
                           std::numeric_limits<uint32_t>::max(), a.get("--id"));
  }
  if (!ParseUnsigned(a.get("--incarnation"), &out->incarnation)) {
    return absl::StrFormat("--incarnation must be a number 0..2^64-1, not '%s'",
                           a.get("--incarnation"));
  }
  auto addr = lite::genl::ParseIPv4(a.get("--addr"));
  if (!addr.ok()) {
    return absl::StrFormat("--addr must be an IPv4 address, not '%s'",
                           a.get("--addr"));
  }
  out->addr = *addr;
  return "";
}

std::string ReadFormat(const Args& a, absl::string_view alt, std::string* out) {
  *out = a.has("-o") ? a.get("-o") : std::string(alt);
  if (*out != "json" && *out != alt) {
    return absl::StrFormat("-o must be %s or json, not '%s'", alt, *out);
  }
  return "";
}

absl::StatusOr<std::unique_ptr<Client>> OpenClient(
    const std::vector<lite::genl::RawAttr>& extra) {
  auto client = Client::Open();
  if (client.ok()) (*client)->set_extra_attrs(extra);
  return client;
}

std::string ErrnoName(uint32_t err) {
  const char* name = strerrorname_np(static_cast<int>(err));
  return name ? name : absl::StrFormat("errno %u", err);
}

int NodeCommand(int argc, char** argv, int first,
                const std::vector<lite::genl::RawAttr>& extra) {
  if (first >= argc) return Usage(kNodeUsage, "node: set or show?");
  absl::string_view sub = argv[first];
  if (sub == "-h" || sub == "--help") {
    std::fputs(kNodeUsage, stdout);
    return 0;
  }
  Args a;
  if (sub == "set") {
    std::string err = a.Read(argc, argv, first + 1,
                             {"--id", "--incarnation", "--addr"}, {});
    if (a.help()) return std::fputs(kNodeUsage, stdout), 0;
    Identity ident;
    if (err.empty()) err = ReadIdentity(a, &ident);
    if (!err.empty()) return Usage(kNodeUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("node set", client.status());
    absl::Status s =
        (*client)->SetNode(ident.id, ident.incarnation, ident.addr);
    if (!s.ok()) return Fail("node set", s);
    return 0;
  }
  if (sub == "show") {
    std::string err = a.Read(argc, argv, first + 1, {"-o"}, {});
    if (a.help()) return std::fputs(kNodeUsage, stdout), 0;
    std::string format;
    if (err.empty()) err = ReadFormat(a, "table", &format);
    if (!err.empty()) return Usage(kNodeUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("node show", client.status());
    auto node = (*client)->GetNode();
    if (!node.ok()) return Fail("node show", node.status());
    if (format == "json") {
      std::string ident = "null";
      if (node->node_id) {
        ident = absl::StrFormat(
            "{\"node_id\": %u, \"incarnation\": %u, \"addr\": \"%s\"}",
            *node->node_id, *node->incarnation,
            lite::genl::FormatIPv4(*node->addr));
      }
      absl::PrintF(
          "{\"identity\": %s, \"cm_port\": %u, \"qps_per_peer\": %u, "
          "\"num_peers\": %u, \"agent_portid\": %s}\n",
          ident, node->cm_port, node->qps_per_peer, node->num_peers,
          node->agent_portid ? absl::StrFormat("%u", *node->agent_portid)
                             : "null");
    } else {
      if (node->node_id) {
        absl::PrintF("node %u, incarnation %u, address %s\n", *node->node_id,
                     *node->incarnation, lite::genl::FormatIPv4(*node->addr));
      } else {
        absl::PrintF("node identity not set\n");
      }
      absl::PrintF("rdma_cm port %u, %u QPs per peer, %u peer(s)\n",
                   node->cm_port, node->qps_per_peer, node->num_peers);
      if (node->agent_portid) {
        absl::PrintF("agent attached: netlink port %u\n", *node->agent_portid);
      } else {
        absl::PrintF("no agent attached\n");
      }
    }
    return 0;
  }
  return Usage(kNodeUsage, absl::StrFormat("node: unknown command '%s'", sub));
}

int PeerCommand(int argc, char** argv, int first,
                const std::vector<lite::genl::RawAttr>& extra) {
  if (first >= argc) return Usage(kPeerUsage, "peer: add or remove?");
  absl::string_view sub = argv[first];
  if (sub == "-h" || sub == "--help") {
    std::fputs(kPeerUsage, stdout);
    return 0;
  }
  Args a;
  if (sub == "add") {
    std::string err = a.Read(argc, argv, first + 1,
                             {"--id", "--incarnation", "--addr"}, {});
    if (a.help()) return std::fputs(kPeerUsage, stdout), 0;
    Identity ident;
    if (err.empty()) err = ReadIdentity(a, &ident);
    if (!err.empty()) return Usage(kPeerUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("peer add", client.status());
    absl::Status s =
        (*client)->AddPeer(ident.id, ident.incarnation, ident.addr);
    if (!s.ok()) return Fail("peer add", s);
    return 0;
  }
  if (sub == "remove") {
    std::string err =
        a.Read(argc, argv, first + 1, {"--id", "--incarnation"}, {});
    if (a.help()) return std::fputs(kPeerUsage, stdout), 0;
    uint32_t id = 0;
    std::optional<uint64_t> incarnation;
    if (err.empty() && !a.has("--id")) err = "--id is required";
    if (err.empty() && !ParseUnsigned(a.get("--id"), &id)) {
      err = absl::StrFormat("--id must be a number, not '%s'", a.get("--id"));
    }
    if (err.empty() && a.has("--incarnation")) {
      uint64_t value = 0;
      if (!ParseUnsigned(a.get("--incarnation"), &value)) {
        err = absl::StrFormat("--incarnation must be a number, not '%s'",
                              a.get("--incarnation"));
      }
      incarnation = value;
    }
    if (!err.empty()) return Usage(kPeerUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("peer remove", client.status());
    absl::Status s = (*client)->RemovePeer(id, incarnation);
    if (!s.ok()) return Fail("peer remove", s);
    return 0;
  }
  return Usage(kPeerUsage, absl::StrFormat("peer: unknown command '%s'", sub));
}

// BYTES with an optional binary suffix K, M or G.
bool ParseSize(absl::string_view text, uint64_t* out) {
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': scale = 1ull << 10; break;
      case 'M': scale = 1ull << 20; break;
      case 'G': scale = 1ull << 30; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  if (!ParseUnsigned(text, &value)) return false;
  if (value > std::numeric_limits<uint64_t>::max() / scale) return false;
  *out = value * scale;
  return true;
}

// A required or optional unsigned --flag; returns an error message or "".
template <typename T>
std::string ReadNumber(const Args& a, const std::string& name, bool required,
                       std::optional<T>* out) {
  if (!a.has(name)) {
    return required ? absl::StrFormat("%s is required", name) : "";
  }
  T value = 0;
  if (!ParseUnsigned(a.get(name), &value)) {
    return absl::StrFormat("%s must be a number, not '%s'", name, a.get(name));
  }
  *out = value;
  return "";
}

std::string ChunksJson(const std::vector<lite::genl::Chunk>& chunks) {
  std::string out = "[";
  for (size_t i = 0; i < chunks.size(); ++i) {
    absl::StrAppendFormat(&out, "%s{\"addr\": %u, \"length\": %u}",
                          i ? ", " : "", chunks[i].addr, chunks[i].length);
  }
  return out + "]";
}

void PrintChunks(const std::vector<lite::genl::Chunk>& chunks) {
  uint64_t offset = 0;
  for (const auto& c : chunks) {
    absl::PrintF("    chunk at %u: addr 0x%x, %u bytes\n", offset, c.addr,
                 c.length);
    offset += c.length;
  }
}

int LmrCommand(int argc, char** argv, int first,
               const std::vector<lite::genl::RawAttr>& extra) {
  if (first >= argc) {
    return Usage(kLmrUsage, "lmr: alloc, free, update or list?");
  }
  absl::string_view sub = argv[first];
  if (sub == "-h" || sub == "--help") {
    std::fputs(kLmrUsage, stdout);
    return 0;
  }
  Args a;
  if (sub == "alloc") {
    std::string err = a.Read(
        argc, argv, first + 1,
        {"--id", "--name", "--size", "--uid", "--gid", "--mode", "-o"}, {});
    if (a.help()) return std::fputs(kLmrUsage, stdout), 0;
    std::optional<uint64_t> id;
    std::optional<uint32_t> uid, gid;
    lite::genl::LmrAllocRequest r;
    r.uid = getuid();
    r.gid = getgid();
    r.mode = 0600;
    std::string format;
    if (err.empty()) err = ReadNumber(a, "--id", true, &id);
    if (err.empty()) err = ReadNumber(a, "--uid", false, &uid);
    if (err.empty()) err = ReadNumber(a, "--gid", false, &gid);
    if (err.empty() && !a.has("--name")) err = "--name is required";
    if (err.empty() && !a.has("--size")) err = "--size is required";
    if (err.empty() && !ParseSize(a.get("--size"), &r.size)) {
      err = absl::StrFormat("--size must be BYTES[K|M|G], not '%s'",
                            a.get("--size"));
    }
    if (err.empty() && a.has("--mode")) {
      char* end = nullptr;
      const std::string& m = a.get("--mode");
      unsigned long mode = std::strtoul(m.c_str(), &end, 8);
      if (m.empty() || *end || mode > 07777) {
        err = absl::StrFormat("--mode must be octal, not '%s'", m);
      }
      r.mode = static_cast<uint32_t>(mode);
    }
    if (err.empty()) err = ReadFormat(a, "table", &format);
    if (!err.empty()) return Usage(kLmrUsage, err);
    r.lmr_id = *id;
    r.name = a.get("--name");
    if (uid) r.uid = *uid;
    if (gid) r.gid = *gid;
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("lmr alloc", client.status());
    auto mem = (*client)->AllocLmr(r);
    if (!mem.ok()) return Fail("lmr alloc", mem.status());
    if (format == "json") {
      absl::PrintF("{\"lmr_id\": %u, \"memory_key\": %u, \"chunks\": %s}\n",
                   r.lmr_id, mem->memory_key, ChunksJson(mem->chunks));
    } else {
      absl::PrintF("lmr %u: %u bytes, memory key 0x%x, %u chunk(s)\n",
                   r.lmr_id, r.size, mem->memory_key, mem->chunks.size());
      PrintChunks(mem->chunks);
    }
    return 0;
  }
  if (sub == "free") {
    std::string err = a.Read(argc, argv, first + 1, {"--id"}, {});
    if (a.help()) return std::fputs(kLmrUsage, stdout), 0;
    std::optional<uint64_t> id;
    if (err.empty()) err = ReadNumber(a, "--id", true, &id);
    if (!err.empty()) return Usage(kLmrUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("lmr free", client.status());
    absl::Status s = (*client)->FreeLmr(*id);
    if (!s.ok()) return Fail("lmr free", s);
    return 0;
  }
  if (sub == "update") {
    std::string err =
        a.Read(argc, argv, first + 1, {"--id", "--new-id", "--epoch"}, {});
    if (a.help()) return std::fputs(kLmrUsage, stdout), 0;
    std::optional<uint64_t> id, new_id, epoch;
    if (err.empty()) err = ReadNumber(a, "--id", true, &id);
    if (err.empty()) err = ReadNumber(a, "--new-id", false, &new_id);
    if (err.empty()) err = ReadNumber(a, "--epoch", false, &epoch);
    if (!err.empty()) return Usage(kLmrUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("lmr update", client.status());
    absl::Status s = (*client)->UpdateLmr(*id, new_id, epoch);
    if (!s.ok()) return Fail("lmr update", s);
    return 0;
  }
  if (sub == "list") {
    std::string err = a.Read(argc, argv, first + 1, {"-o"}, {"--chunks"});
    if (a.help()) return std::fputs(kLmrUsage, stdout), 0;
    std::string format;
    if (err.empty()) err = ReadFormat(a, "table", &format);
    if (!err.empty()) return Usage(kLmrUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("lmr list", client.status());
    auto lmrs = (*client)->ListLmrs();
    if (!lmrs.ok()) return Fail("lmr list", lmrs.status());
    if (format == "json") {
      absl::PrintF("{\"lmrs\": [");
      for (size_t i = 0; i < lmrs->size(); ++i) {
        const auto& l = (*lmrs)[i];
        absl::PrintF(
            "%s{\"lmr_id\": %u, \"name\": \"%s\", \"size\": %u, "
            "\"uid\": %u, \"gid\": %u, \"mode\": %u, \"epoch\": %u, "
            "\"memory_key\": %u, \"chunks\": %s}",
            i ? ", " : "", l.lmr_id, l.name, l.size, l.uid, l.gid, l.mode,
            l.epoch, l.memory_key, ChunksJson(l.chunks));
      }
      absl::PrintF("]}\n");
      return 0;
    }
    absl::PrintF("%-20s %-24s %-12s %-6s %-6s %-5s %-8s %-10s %s\n", "LMR",
                 "NAME", "SIZE", "UID", "GID", "MODE", "EPOCH", "KEY",
                 "CHUNKS");
    for (const auto& l : *lmrs) {
      absl::PrintF("%-20u %-24s %-12u %-6u %-6u %04o  %-8u 0x%-8x %u\n",
                   l.lmr_id, l.name, l.size, l.uid, l.gid, l.mode, l.epoch,
                   l.memory_key, l.chunks.size());
      if (a.has("--chunks")) PrintChunks(l.chunks);
    }
    return 0;
  }
  return Usage(kLmrUsage, absl::StrFormat("lmr: unknown command '%s'", sub));
}

const char* AccessName(uint32_t access) {
  switch (access) {
    case LITE_ACCESS_READ: return "r";
    case LITE_ACCESS_WRITE: return "w";
    case LITE_ACCESS_READ | LITE_ACCESS_WRITE: return "rw";
    default: return "?";
  }
}

int GrantCommand(int argc, char** argv, int first,
                 const std::vector<lite::genl::RawAttr>& extra) {
  if (first >= argc) return Usage(kGrantUsage, "grant: list or revoke?");
  absl::string_view sub = argv[first];
  if (sub == "-h" || sub == "--help") {
    std::fputs(kGrantUsage, stdout);
    return 0;
  }
  Args a;
  if (sub == "revoke") {
    std::string err = a.Read(argc, argv, first + 1, {"--id"}, {});
    if (a.help()) return std::fputs(kGrantUsage, stdout), 0;
    std::optional<uint64_t> id;
    if (err.empty()) err = ReadNumber(a, "--id", true, &id);
    if (!err.empty()) return Usage(kGrantUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("grant revoke", client.status());
    absl::Status s = (*client)->RevokeGrant(*id);
    if (!s.ok()) return Fail("grant revoke", s);
    return 0;
  }
  if (sub == "list") {
    std::string err = a.Read(argc, argv, first + 1, {"-o"}, {"--chunks"});
    if (a.help()) return std::fputs(kGrantUsage, stdout), 0;
    std::string format;
    if (err.empty()) err = ReadFormat(a, "table", &format);
    if (!err.empty()) return Usage(kGrantUsage, err);
    auto client = OpenClient(extra);
    if (!client.ok()) return Fail("grant list", client.status());
    auto grants = (*client)->ListGrants();
    if (!grants.ok()) return Fail("grant list", grants.status());
    if (format == "json") {
      absl::PrintF("{\"grants\": [");
      for (size_t i = 0; i < grants->size(); ++i) {
        const auto& g = (*grants)[i];
        absl::PrintF(
            "%s{\"grant_id\": %u, \"lmr_id\": %u, \"name\": \"%s\", "
            "\"home_node_id\": %u, \"access\": %u, \"epoch\": %u, "
            "\"size\": %u, \"memory_key\": %u, \"incarnation\": %u, "
            "\"granted_at_ms\": %d, \"uid\": %u, \"gid\": %u, \"pid\": %u, "
            "\"revoked\": %s, \"chunks\": %s}",
            i ? ", " : "", g.grant_id, g.lmr_id, g.name, g.home_node_id,
            g.access, g.epoch, g.size, g.memory_key, g.holder_incarnation,
            g.granted_at_ms, g.uid, g.gid, g.pid,
            g.revoked ? "true" : "false", ChunksJson(g.chunks));
      }
      absl::PrintF("]}\n");
      return 0;
    }
    absl::PrintF("%-20s %-20s %-24s %-6s %-6s %-12s %-6s %-6s %-8s %s\n",
                 "GRANT", "LMR", "NAME", "HOME", "ACCESS", "SIZE", "UID",
                 "GID", "PID", "STATE");
    for (const auto& g : *grants) {
      absl::PrintF("%-20u %-20u %-24s %-6u %-6s %-12u %-6u %-6u %-8u %s\n",
                   g.grant_id, g.lmr_id, g.name, g.home_node_id,
                   AccessName(g.access), g.size, g.uid, g.gid, g.pid,
                   g.revoked ? "revoked" : "valid");
      if (a.has("--chunks")) PrintChunks(g.chunks);
    }
    return 0;
  }
  return Usage(kGrantUsage,
               absl::StrFormat("grant: unknown command '%s'", sub));
}

int PeersCommand(int argc, char** argv, int first,
                 const std::vector<lite::genl::RawAttr>& extra) {
  Args a;
  std::string err = a.Read(argc, argv, first, {"-o"}, {});
  if (a.help()) return std::fputs(kPeersUsage, stdout), 0;
  std::string format;
  if (err.empty()) err = ReadFormat(a, "table", &format);
  if (!err.empty()) return Usage(kPeersUsage, err);
  auto client = OpenClient(extra);
  if (!client.ok()) return Fail("peers", client.status());
  auto node = (*client)->GetNode();
  if (!node.ok()) return Fail("peers", node.status());
  auto peers = (*client)->ListPeers();
  if (!peers.ok()) return Fail("peers", peers.status());

  if (format == "json") {
    absl::PrintF("{\"qps_per_peer\": %u, \"peers\": [", node->qps_per_peer);
    for (size_t i = 0; i < peers->size(); ++i) {
      const auto& p = (*peers)[i];
      absl::PrintF(
          "%s{\"node_id\": %u, \"incarnation\": %u, \"addr\": \"%s\", "
          "\"state\": \"%s\", \"role\": \"%s\", \"qps_connected\": %u}",
          i ? ", " : "", p.node_id, p.incarnation,
          lite::genl::FormatIPv4(p.addr), lite::genl::PeerStateName(p.state),
          lite::genl::PeerRoleName(p.role), p.qps_connected);
    }
    absl::PrintF("]}\n");
    return 0;
  }
  absl::PrintF("%-10s %-20s %-15s %-10s %-9s %s\n", "NODE", "INCARNATION",
               "ADDRESS", "STATE", "ROLE", "QPS");
  for (const auto& p : *peers) {
    absl::PrintF("%-10u %-20u %-15s %-10s %-9s %u/%u\n", p.node_id,
                 p.incarnation, lite::genl::FormatIPv4(p.addr),
                 lite::genl::PeerStateName(p.state),
                 lite::genl::PeerRoleName(p.role), p.qps_connected,
                 node->qps_per_peer);
  }
  return 0;
}

void PrintEvent(const Event& e, bool json) {
  const char* type = lite::genl::EventTypeName(e.type);
  std::string addr = lite::genl::FormatIPv4(e.addr);
  if (json) {
    std::string extra;
    if (e.qp_index) extra += absl::StrFormat(", \"qp_index\": %u", *e.qp_index);
    if (e.reason) {
      extra += absl::StrFormat(", \"reason\": \"%s\", \"errno\": %u",
                               ErrnoName(*e.reason), *e.reason);
    }
    absl::PrintF(
        "{\"event\": \"%s\", \"node_id\": %u, \"incarnation\": %u, "
        "\"addr\": \"%s\", \"state\": \"%s\", \"qps_connected\": %u%s}\n",
        type, e.node_id, e.incarnation, addr,
        lite::genl::PeerStateName(e.state), e.qps_connected, extra);
  } else {
    std::string extra;
    if (e.qp_index) extra += absl::StrFormat(" qp %u", *e.qp_index);
    if (e.reason) {
      extra += absl::StrFormat(" reason %s (%s)", ErrnoName(*e.reason),
                               std::strerror(static_cast<int>(*e.reason)));
    }
    absl::PrintF("%s node %u incarnation %u addr %s qps_connected %u%s\n",
                 type, e.node_id, e.incarnation, addr, e.qps_connected, extra);
  }
  std::fflush(stdout);
}

bool TouchFile(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  close(fd);
  return true;
}

bool ReadTimeout(const Args& a, std::optional<absl::Duration>* out,
                 std::string* err) {
  if (!a.has("--timeout")) return true;
  uint32_t secs = 0;
  if (!ParseUnsigned(a.get("--timeout"), &secs) || secs == 0) {
    *err = absl::StrFormat("--timeout must be a positive number of seconds, not '%s'",
                           a.get("--timeout"));
    return false;
  }
  *out = absl::Seconds(secs);
  return true;
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

// SIGTERM/SIGINT end waits cleanly (poll returns EINTR, the loop stops).
void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

int EventsCommand(int argc, char** argv, int first) {
  Args a;
  std::string err = a.Read(
      argc, argv, first,
      {"--timeout", "--count", "--type", "--peer", "--ready-file", "-o"}, {});
  if (a.help()) return std::fputs(kEventsUsage, stdout), 0;
  std::optional<absl::Duration> timeout;
  uint32_t count = 0, peer = 0;
  std::optional<EventType> type;
  std::string format;
  if (err.empty()) ReadTimeout(a, &timeout, &err);
  if (err.empty() && a.has("--count") &&
      (!ParseUnsigned(a.get("--count"), &count) || count == 0)) {
    err = absl::StrFormat("--count must be a positive number, not '%s'",
                          a.get("--count"));
  }
  if (err.empty() && a.has("--peer") &&
      (!ParseUnsigned(a.get("--peer"), &peer) || peer == 0)) {
    err = absl::StrFormat("--peer must be a node id, not '%s'", a.get("--peer"));
  }
  if (err.empty() && a.has("--type")) {
    const std::string& t = a.get("--type");
    if (t == "connected") {
      type = EventType::kPeerConnected;
    } else if (t == "failed") {
      type = EventType::kPeerFailed;
    } else if (t == "removed") {
      type = EventType::kPeerRemoved;
    } else {
      err = absl::StrFormat(
          "--type must be connected, failed or removed, not '%s'", t);
    }
  }
  if (err.empty()) err = ReadFormat(a, "text", &format);
  if (!err.empty()) return Usage(kEventsUsage, err);

  CatchStopSignals();
  auto stream = EventStream::Open();
  if (!stream.ok()) return Fail("events", stream.status());
  if (a.has("--ready-file") && !TouchFile(a.get("--ready-file"))) {
    return Fail("events", absl::InternalError(absl::StrFormat(
                              "cannot create %s: %s", a.get("--ready-file"),
                              std::strerror(errno))));
  }
  absl::Time deadline =
      timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  uint32_t seen = 0;
  while (!g_stop && (!count || seen < count)) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    auto event = (*stream)->Next(std::min(left, absl::Seconds(1)));
    if (!event.ok()) {
      if (lite::genl::ErrnoOf(event.status()) == EINTR) break;
      return Fail("events", event.status());
    }
    if (!event->has_value()) continue;
    const Event& e = **event;
    if (type && e.type != *type) continue;
    if (peer && e.node_id != peer) continue;
    PrintEvent(e, format == "json");
    ++seen;
  }
  if (count && seen < count) {
    absl::FPrintF(stderr, "litenl: events: got %u of %u event(s) before %s\n",
                  seen, count, g_stop ? "a signal" : "the timeout");
    return 1;
  }
  return 0;
}

int AgentCommand(int argc, char** argv, int first,
                 const std::vector<lite::genl::RawAttr>& extra) {
  Args a;
  std::string err = a.Read(argc, argv, first, {"--timeout", "--ready-file"},
                           {"--exit-without-detach"});
  if (a.help()) return std::fputs(kAgentUsage, stdout), 0;
  std::optional<absl::Duration> timeout;
  if (err.empty()) ReadTimeout(a, &timeout, &err);
  if (!err.empty()) return Usage(kAgentUsage, err);

  CatchStopSignals();
  auto client = OpenClient(extra);
  if (!client.ok()) return Fail("agent", client.status());
  absl::Status s = (*client)->AttachAgent();
  if (!s.ok()) return Fail("agent attach", s);
  absl::PrintF("attached as the agent (netlink port %u)\n",
               (*client)->portid());
  std::fflush(stdout);
  if (a.has("--ready-file") && !TouchFile(a.get("--ready-file"))) {
    return Fail("agent", absl::InternalError(absl::StrFormat(
                             "cannot create %s: %s", a.get("--ready-file"),
                             std::strerror(errno))));
  }
  absl::Time deadline =
      timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  while (!g_stop && absl::Now() < deadline) {
    absl::SleepFor(std::min(deadline - absl::Now(), absl::Milliseconds(100)));
  }
  if (a.has("--exit-without-detach")) return 0;
  s = (*client)->DetachAgent();
  if (!s.ok()) return Fail("agent detach", s);
  absl::PrintF("detached\n");
  return 0;
}

}  // namespace

// nla_type is 16 bits, of which the top two are flags.
constexpr uint16_t kMaxAttrType = NLA_TYPE_MASK & 0xffff;

int main(int argc, char** argv) {
  std::vector<lite::genl::RawAttr> extra;
  int i = 1;
  while (i < argc) {
    absl::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg != "--attr-u32") break;
    if (i + 1 >= argc) return Usage(kUsage, "--attr-u32 needs TYPE=VALUE");
    std::vector<absl::string_view> kv = absl::StrSplit(argv[i + 1], '=');
    lite::genl::RawAttr raw;
    if (kv.size() != 2 || !ParseUnsigned(kv[0], &raw.type) ||
        !ParseUnsigned(kv[1], &raw.value) || raw.type == 0 ||
        raw.type > kMaxAttrType) {
      return Usage(kUsage,
                   absl::StrFormat("--attr-u32 wants TYPE=VALUE (TYPE 1..%u), "
                                   "not '%s'",
                                   kMaxAttrType, argv[i + 1]));
    }
    extra.push_back(raw);
    i += 2;
  }
  if (i >= argc) return Usage(kUsage, "no command given");
  absl::string_view cmd = argv[i];
  if (cmd == "node") return NodeCommand(argc, argv, i + 1, extra);
  if (cmd == "peer") return PeerCommand(argc, argv, i + 1, extra);
  if (cmd == "peers") return PeersCommand(argc, argv, i + 1, extra);
  if (cmd == "events") return EventsCommand(argc, argv, i + 1);
  if (cmd == "agent") return AgentCommand(argc, argv, i + 1, extra);
  if (cmd == "lmr") return LmrCommand(argc, argv, i + 1, extra);
  if (cmd == "grant") return GrantCommand(argc, argv, i + 1, extra);
  return Usage(kUsage, absl::StrFormat("unknown command '%s'", cmd));
}
