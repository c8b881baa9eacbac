// litenl lmr (alloc, free, update, list) and grant (list, revoke).
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "cmd/litenl/litenl.h"
#include "common/cli/json.h"
#include "common/status/macros.h"
#include "kmod/include/uapi/lite.h"

namespace lite::litenl {
namespace {

using cli::Json;

// Chunks by offset and length only. No memory key or chunk address is ever
// printed (issue #10, docs/security.md: they stay in kernels); a test that
// needs them reads them as root with tests/vm/keymode.py lmr-keys.
Json ChunksJson(const std::vector<genl::Chunk>& chunks) {
  Json list = Json::array();
  for (const genl::Chunk& c : chunks) list.push_back({{"length", c.length}});
  return list;
}

// A chunk whose RDMA device was removed has address 0 (uapi LMR_GET): that
// much is said, as "unreachable", without printing any address.
void PrintChunks(std::ostream& out, const std::vector<genl::Chunk>& chunks) {
  uint64_t offset = 0;
  size_t i = 0;
  for (const genl::Chunk& c : chunks) {
    out << absl::StrFormat("    chunk %u at offset %u: %u bytes%s\n", i++,
                           offset, c.length,
                           c.addr == 0 ? ", unreachable (device removed)" : "");
    offset += c.length;
  }
}

// A required --flag holding a number (0 included: the kernel refuses it).
absl::StatusOr<uint64_t> Required(const cli::Args& a, absl::string_view flag) {
  if (!a.Has(flag)) {
    return cli::UsageError(absl::StrFormat("--%s is required", flag));
  }
  return cli::Number(absl::StrCat("--", flag), a.Get(flag));
}

absl::StatusOr<std::optional<uint64_t>> Optional(const cli::Args& a,
                                                 absl::string_view flag,
                                                 uint64_t max = UINT64_MAX) {
  if (!a.Has(flag)) return std::nullopt;
  LITE_ASSIGN_OR_RETURN(
      uint64_t v, cli::Number(absl::StrCat("--", flag), a.Get(flag), max));
  return v;
}

absl::Status LmrAlloc(const cli::Args& a) {
  genl::LmrAllocRequest r;
  LITE_ASSIGN_OR_RETURN(r.lmr_id, Required(a, "id"));
  if (!a.Has("name")) return cli::UsageError("--name is required");
  r.name = a.Get("name");
  if (!a.Has("size")) return cli::UsageError("--size is required");
  LITE_ASSIGN_OR_RETURN(r.size, cli::Size("--size", a.Get("size")));
  LITE_ASSIGN_OR_RETURN(std::optional<uint64_t> uid,
                        Optional(a, "uid", UINT32_MAX));
  LITE_ASSIGN_OR_RETURN(std::optional<uint64_t> gid,
                        Optional(a, "gid", UINT32_MAX));
  r.uid = uid ? static_cast<uint32_t>(*uid) : getuid();
  r.gid = gid ? static_cast<uint32_t>(*gid) : getgid();
  LITE_ASSIGN_OR_RETURN(r.mode,
                        cli::Mode("--mode", a.Get("mode", "0600"), 07777));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("lmr alloc", client.status());
  absl::StatusOr<genl::LmrMemory> mem = (*client)->AllocLmr(r);
  if (!mem.ok()) return Failed("lmr alloc", mem.status());
  if (a.output() == cli::Output::kJson) {
    a.out() << cli::JsonLine(
                   {{"lmr_id", r.lmr_id}, {"chunks", ChunksJson(mem->chunks)}})
            << "\n";
    return absl::OkStatus();
  }
  a.out() << absl::StrFormat("lmr %u: %u bytes, %u chunk(s)\n", r.lmr_id,
                             r.size, mem->chunks.size());
  PrintChunks(a.out(), mem->chunks);
  return absl::OkStatus();
}

absl::Status LmrFree(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(uint64_t id, Required(a, "id"));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("lmr free", client.status());
  return Failed("lmr free", (*client)->FreeLmr(id));
}

absl::Status LmrUpdate(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(uint64_t id, Required(a, "id"));
  LITE_ASSIGN_OR_RETURN(std::optional<uint64_t> new_id, Optional(a, "new-id"));
  LITE_ASSIGN_OR_RETURN(std::optional<uint64_t> epoch, Optional(a, "epoch"));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("lmr update", client.status());
  return Failed("lmr update",
                (*client)->UpdateLmr(id, new_id, epoch, a.Has("releasing")));
}

constexpr char kListNote[] =
    "lite.ko lists LMRs and grants (with memory keys, chunk addresses and "
    "other users' ids) to CAP_NET_ADMIN only (EPERM otherwise); litenl "
    "prints neither keys nor addresses, only sizes and chunk lengths. "
    "With -o json each result is one JSON line; 64-bit values "
    "(incarnations, LMR and grant ids) are JSON numbers, not strings as in "
    "litectl.";

// A listing lite.ko refused: EPERM means the caller lacks CAP_NET_ADMIN
// (lite.ko shows memory keys, chunk addresses and other
// users' ids to administrators only); say so rather than only the errno.
absl::Status ListFailed(absl::string_view what, const absl::Status& status) {
  if (genl::ErrnoOf(status) != EPERM) return Failed(what, status);
  return absl::Status(
      status.code(),
      absl::StrCat(what,
                   ": LMR and grant listings need CAP_NET_ADMIN (run as "
                   "root): ",
                   status.message()));
}

absl::Status LmrList(const cli::Args& a) {
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("lmr list", client.status());
  absl::StatusOr<std::vector<genl::LmrInfo>> lmrs = (*client)->ListLmrs();
  if (!lmrs.ok()) return ListFailed("lmr list", lmrs.status());
  std::ostream& out = a.out();
  if (a.output() == cli::Output::kJson) {
    Json list = Json::array();
    for (const genl::LmrInfo& l : *lmrs) {
      list.push_back({{"lmr_id", l.lmr_id},
                      {"name", l.name},
                      {"size", l.size},
                      {"uid", l.uid},
                      {"gid", l.gid},
                      {"mode", l.mode},
                      {"epoch", l.epoch},
                      {"releasing", l.releasing},
                      {"chunks", ChunksJson(l.chunks)}});
    }
    out << cli::JsonLine({{"lmrs", std::move(list)}}) << "\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat("%-20s %-24s %-12s %-6s %-6s %-5s %-8s %-6s %s\n",
                         "LMR", "NAME", "SIZE", "UID", "GID", "MODE", "EPOCH",
                         "CHUNKS", "STATE");
  for (const genl::LmrInfo& l : *lmrs) {
    out << absl::StrFormat("%-20u %-24s %-12u %-6u %-6u %04o  %-8u %-6u %s\n",
                           l.lmr_id, l.name, l.size, l.uid, l.gid, l.mode,
                           l.epoch, l.chunks.size(),
                           l.releasing ? "releasing" : "live");
    if (a.Has("chunks")) PrintChunks(out, l.chunks);
  }
  return absl::OkStatus();
}

const char* AccessName(uint32_t access) {
  switch (access) {
    case LITE_ACCESS_READ:
      return "r";
    case LITE_ACCESS_WRITE:
      return "w";
    case LITE_ACCESS_READ | LITE_ACCESS_WRITE:
      return "rw";
    default:
      return "?";
  }
}

absl::Status GrantRevoke(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(uint64_t id, Required(a, "id"));
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("grant revoke", client.status());
  return Failed("grant revoke", (*client)->RevokeGrant(id));
}

absl::Status GrantList(const cli::Args& a) {
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("grant list", client.status());
  absl::StatusOr<std::vector<genl::GrantInfo>> grants = (*client)->ListGrants();
  if (!grants.ok()) return ListFailed("grant list", grants.status());
  std::ostream& out = a.out();
  if (a.output() == cli::Output::kJson) {
    Json list = Json::array();
    for (const genl::GrantInfo& g : *grants) {
      list.push_back({{"grant_id", g.grant_id},
                      {"lmr_id", g.lmr_id},
                      {"name", g.name},
                      {"home_node_id", g.home_node_id},
                      {"access", g.access},
                      {"epoch", g.epoch},
                      {"size", g.size},
                      {"incarnation", g.holder_incarnation},
                      {"granted_at_ms", g.granted_at_ms},
                      {"uid", g.uid},
                      {"gid", g.gid},
                      {"pid", g.pid},
                      {"revoked", g.revoked},
                      {"chunks", ChunksJson(g.chunks)}});
    }
    out << cli::JsonLine({{"grants", std::move(list)}}) << "\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat(
      "%-20s %-20s %-24s %-6s %-6s %-12s %-6s %-6s %-8s %s\n", "GRANT", "LMR",
      "NAME", "HOME", "ACCESS", "SIZE", "UID", "GID", "PID", "STATE");
  for (const genl::GrantInfo& g : *grants) {
    out << absl::StrFormat(
        "%-20u %-20u %-24s %-6u %-6s %-12u %-6u %-6u %-8u %s\n", g.grant_id,
        g.lmr_id, g.name, g.home_node_id, AccessName(g.access), g.size, g.uid,
        g.gid, g.pid, g.revoked ? "revoked" : "valid");
    if (a.Has("chunks")) PrintChunks(out, g.chunks);
  }
  return absl::OkStatus();
}

const cli::Flag kChunks{.name = "chunks",
                        .help = "also print every chunk (table output)"};

}  // namespace

std::vector<cli::Command> LmrCommands() {
  return {
      {.name = "lmr",
       .usage = "lmr (alloc | free | update | list)",
       .summary = "LMR memory this node hosts",
       .commands =
           {
               {.name = "alloc",
                .usage = "lmr alloc --id N --name NAME --size BYTES[K|M|G] "
                         "[--uid U] [--gid G] [--mode OCTAL] [-o table|json]",
                .summary = "Host memory for an LMR on this node",
                .details =
                    "Zeroed, DMA-mapped memory for LMR N on this node (what "
                    "the agent does when the manager asks); prints its "
                    "chunks' count (and, with -o json, their lengths), "
                    "never the memory key or chunk addresses.",
                .flags = {{.name = "id", .value = "N", .help = "the LMR's id"},
                          {.name = "name",
                           .value = "NAME",
                           .help = "the LMR's name"},
                          {.name = "size",
                           .value = "BYTES",
                           .help = "its size, with K, M, G or T"},
                          {.name = "uid",
                           .value = "U",
                           .help = "owner (default: the caller's uid)"},
                          {.name = "gid",
                           .value = "G",
                           .help = "group (default: the caller's gid)"},
                          {.name = "mode",
                           .value = "OCTAL",
                           .help = "Unix mode bits (default 0600)"}},
                .run = LmrAlloc},
               {.name = "free",
                .usage = "lmr free --id N",
                .summary = "Free a hosted LMR (grants into it are revoked)",
                .details = "The memory goes once no operation uses it.",
                .flags = {{.name = "id", .value = "N", .help = "the LMR's id"}},
                .run = LmrFree},
               {.name = "update",
                .usage = "lmr update --id N [--new-id M] [--epoch E] "
                         "[--releasing]",
                .summary = "Change a hosted LMR's id or epoch, or mark it "
                           "releasing",
                .flags =
                    {{.name = "id", .value = "N", .help = "the LMR's id"},
                     {.name = "new-id", .value = "M", .help = "its new id"},
                     {.name = "epoch", .value = "E", .help = "its new epoch"},
                     {.name = "releasing",
                      .help = "the manager freed it (LITE_ATTR_RELEASING; "
                              "cannot be undone)"}},
                .run = LmrUpdate},
               {.name = "list",
                .usage = "lmr list [-o table|json] [--chunks]",
                .summary = "The LMRs this node hosts",
                .details = kListNote,
                .flags = {kChunks},
                .run = LmrList},
           }},
      {.name = "grant",
       .usage = "grant (list | revoke)",
       .summary = "Grants applications on this node hold",
       .commands =
           {
               {.name = "list",
                .usage = "grant list [-o table|json] [--chunks]",
                .summary = "The grants applications on this node hold (until "
                           "unmapped)",
                .details = kListNote,
                .flags = {kChunks},
                .run = GrantList},
               {.name = "revoke",
                .usage = "grant revoke --id N",
                .summary = "Revoke a grant: handles behind it fail with "
                           "ESTALE",
                .flags =
                    {{.name = "id", .value = "N", .help = "the grant's id"}},
                .run = GrantRevoke},
           }},
  };
}

}  // namespace lite::litenl
