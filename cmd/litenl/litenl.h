// litenl: talks to lite.ko over its generic-netlink family — sets the node
// identity, adds and removes peers, lists them, hosts LMR memory, lists
// grants and RPC services, follows module events, and can stand in for the
// agent (attach/detach). The operator's and the tests' tool; liteagent uses the
// same //genl library.
//
// One file per group of objects, as iproute2's rdma/ has dev.c and link.c:
// node_commands.cc (node, peer, peers), lmr_commands.cc (lmr, grant),
// event_commands.cc (events, agent), service_commands.cc (services);
// litenl.cc holds the table.
#ifndef LITE_TOOLS_LITENL_LITENL_H_
#define LITE_TOOLS_LITENL_LITENL_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/cli/cli.h"
#include "genl/client.h"

namespace lite::litenl {

// Runs litenl with args (without the program name); returns the exit
// status: 0 success, 1 the operation failed (one line on stderr with the
// kernel's errno and message), 2 bad usage.
int RunLitenl(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err);

// The command groups (litenl.cc puts them in one table).
std::vector<cli::Command> NodeCommands();     // node, peer, peers
std::vector<cli::Command> LmrCommands();      // lmr, grant
std::vector<cli::Command> EventCommands();    // events, agent
std::vector<cli::Command> ServiceCommands();  // services

// A client of the family with the --attr-u32 attributes appended to every
// request.
absl::StatusOr<std::unique_ptr<genl::Client>> OpenClient(const cli::Args& a);

// The id of the peer named `name` (lite.ko's PEER_GET dump; names are
// unique among a node's peers). NotFound if no peer has it.
absl::StatusOr<uint32_t> PeerId(genl::Client& client, const std::string& name);

// A failed operation as litenl reports it: "<what>: <message>", the code
// kept.
absl::Status Failed(absl::string_view what, const absl::Status& status);

// -o json: one JSON line per result (common/cli/json.h). 64-bit values
// (incarnations, LMR and grant ids) are JSON numbers, not strings as in
// litectl.
constexpr char kJsonNote[] =
    "With -o json each result is one JSON line; 64-bit values (incarnations, "
    "LMR and grant ids) are JSON numbers, not strings as in litectl.";

}  // namespace lite::litenl

#endif  // LITE_TOOLS_LITENL_LITENL_H_
