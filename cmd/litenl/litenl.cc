#include "cmd/litenl/litenl.h"

#include <linux/netlink.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status/macros.h"
#include "common/units/units.h"
#include "kmod/include/uapi/lite.h"

namespace lite::litenl {
namespace {

// nla_type is 16 bits, of which the top two are flags.
constexpr uint16_t kMaxAttrType = NLA_TYPE_MASK & 0xffff;

absl::StatusOr<std::vector<genl::RawAttr>> ExtraAttrs(const cli::Args& a) {
  std::vector<genl::RawAttr> extra;
  for (const std::string& text : a.GetAll("attr-u32")) {
    std::vector<absl::string_view> kv = absl::StrSplit(text, '=');
    absl::StatusOr<uint64_t> type =
        kv.size() == 2 ? units::ParseNumber(kv[0], kMaxAttrType)
                       : absl::InvalidArgumentError("");
    absl::StatusOr<uint64_t> value = kv.size() == 2
                                         ? units::ParseNumber(kv[1], UINT32_MAX)
                                         : absl::InvalidArgumentError("");
    if (!type.ok() || *type == 0 || !value.ok()) {
      return cli::UsageError(absl::StrFormat(
          "--attr-u32 wants TYPE=VALUE (TYPE 1..%u, VALUE 0..%u), not '%s'",
          kMaxAttrType, UINT32_MAX, text));
    }
    extra.push_back({.type = static_cast<uint16_t>(*type),
                     .value = static_cast<uint32_t>(*value)});
  }
  return extra;
}

constexpr char kDetails[] =
    "Changing commands need CAP_NET_ADMIN. --attr-u32 TYPE=VALUE appends a "
    "raw u32 attribute to every request (for testing lite.ko's "
    "validation); it may be given many times.";

constexpr char kFooter[] =
    "Numbers are decimal or 0x hex; sizes take K, M, G, T (powers of 1024).\n"
    "litenl checks their form only: lite.ko checks their values (an id of 0\n"
    "is sent, and refused there).\n"
    "\n"
    "-o json: one JSON line per result; 64-bit values (incarnations, LMR and\n"
    "grant ids) are JSON numbers, not strings as in litectl.\n"
    "\n"
    "Exit status: 0 success; 1 the operation failed (one line on stderr with\n"
    "the kernel's errno and message); 2 bad usage.\n";

}  // namespace

absl::StatusOr<std::unique_ptr<genl::Client>> OpenClient(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(std::vector<genl::RawAttr> extra, ExtraAttrs(a));
  LITE_ASSIGN_OR_RETURN(std::unique_ptr<genl::Client> client,
                        genl::Client::Open());
  client->set_extra_attrs(std::move(extra));
  return client;
}

absl::StatusOr<uint32_t> PeerId(genl::Client& client, const std::string& name) {
  LITE_ASSIGN_OR_RETURN(std::vector<genl::PeerInfo> peers, client.ListPeers());
  for (const genl::PeerInfo& p : peers) {
    if (p.name == name) return p.node_id;
  }
  return absl::NotFoundError(absl::StrFormat(
      "no peer is named '%s' (litenl peers lists them; all digits is an id)",
      name));
}

absl::Status Failed(absl::string_view what, const absl::Status& status) {
  if (status.ok() || cli::IsUsageError(status)) return status;
  return absl::Status(status.code(),
                      absl::StrCat(what, ": ", status.message()));
}

int RunLitenl(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err) {
  cli::Tool tool;
  tool.footer = kFooter;
  tool.root = {
      .name = "litenl",
      .usage = "litenl [--attr-u32 TYPE=VALUE]... COMMAND [ARGS]",
      .summary =
          "Talks to lite.ko's generic netlink family \"" LITE_GENL_NAME "\"",
      .details = kDetails,
      .flags = {{.name = "attr-u32",
                 .value = "TYPE=VALUE",
                 .help = "append a raw u32 attribute to every request (for "
                         "testing lite.ko's validation)",
                 .repeatable = true}},
  };
  for (auto group :
       {NodeCommands, LmrCommands, EventCommands, ServiceCommands}) {
    for (cli::Command& c : group()) {
      tool.root.commands.push_back(std::move(c));
    }
  }
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::litenl
