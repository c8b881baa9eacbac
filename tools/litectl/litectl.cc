#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "tools/litectl/commands.h"
#include "tools/litectl/format.h"

namespace lite::litectl {
namespace {

const std::vector<FlagSpec>& GlobalFlags() {
  static const auto* flags = new std::vector<FlagSpec>{
      {.name = "manager",
       .value_name = "HOST:PORT",
       .help = absl::StrCat("the cluster manager (default: $LITE_MANAGER, "
                            "else ",
                            kDefaultManager, ")")},
      {.name = "output",
       .short_name = 'o',
       .value_name = "FORMAT",
       .help = "table (default) or json"},
      {.name = "timeout",
       .value_name = "DURATION",
       .help = "deadline of each call, e.g. 500ms, 5s (default 5s)"},
  };
  return *flags;
}

// The global flags plus -h/--help, for help texts.
std::vector<FlagSpec> GlobalFlagsWithHelp() {
  std::vector<FlagSpec> flags = GlobalFlags();
  flags.push_back({.name = "help",
                   .short_name = 'h',
                   .takes_value = false,
                   .help = "show help (also 'litectl help COMMAND')"});
  return flags;
}

std::string ToolHelp() {
  std::string out =
      "litectl: operate a LITE cluster through its cluster manager "
      "(litemgr) and node agents (liteagent).\n\n"
      "Usage: litectl [global flags] COMMAND [flags] [args]\n\n"
      "Commands:\n";
  size_t width = 0;
  for (const Command& c : Commands()) width = std::max(width, c.name.size());
  for (const Command& c : Commands()) {
    absl::StrAppend(&out, "  ", c.name,
                    std::string(width - c.name.size() + 3, ' '), c.summary,
                    "\n");
  }
  absl::StrAppend(
      &out, "\nGlobal flags (anywhere on the command line):\n",
      FlagHelp(GlobalFlagsWithHelp()),
      "\nRun 'litectl COMMAND --help' for a command's own flags.\n\n"
      "Environment:\n"
      "  LITE_MANAGER   the manager's address when --manager is "
      "not given\n"
      "  LITE_AGENT     the agent's address when --agent is not "
      "given (litectl agent)\n\n"
      "Exit status: 0 success; 1 the call failed (one line on "
      "stderr: 'litectl: CODE: message'); 2 bad usage.\n");
  return out;
}

std::string CommandHelp(const Command& c) {
  std::string out =
      absl::StrCat("Usage: litectl ", c.usage, "\n\n", c.summary, ".\n");
  if (!c.details.empty()) absl::StrAppend(&out, "\n", c.details, "\n");
  if (!c.flags.empty()) {
    absl::StrAppend(&out, "\nFlags:\n", FlagHelp(c.flags));
  }
  absl::StrAppend(&out, "\nGlobal flags:\n", FlagHelp(GlobalFlagsWithHelp()));
  return out;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int UsageError(std::ostream& err, const std::string& message) {
  err << "litectl: INVALID_ARGUMENT: " << OneLine(message) << "\n";
  return 2;
}

}  // namespace

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {.name = "nodes",
       .usage = "nodes",
       .summary = "List every node the manager knows, in any state",
       .details =
           "Columns: node id, name, state (ALIVE, LEFT, FAILED), incarnation "
           "(bumped on every rejoin), RDMA address, whether an operator is "
           "draining it, whether its session is open, how long its lease "
           "still runs, and how long ago this incarnation joined.",
       .run = RunNodes},
      {.name = "lmrs",
       .usage = "lmrs [--home NODE_ID]",
       .summary = "List the registered LMRs (named remote memory regions)",
       .details = "Ids are hex: the high 32 bits are the home node's id.",
       .flags = {{.name = "home",
                  .value_name = "NODE_ID",
                  .help = "only LMRs whose memory is on this node"}},
       .run = RunLmrs},
      {.name = "grants",
       .usage = "grants [--lmr LMR_ID] [--holder NODE_ID]",
       .summary = "List the map grants (who may use which LMR)",
       .flags = {{.name = "lmr",
                  .value_name = "LMR_ID",
                  .help = "only grants into this LMR (decimal or 0x-hex)"},
                 {.name = "holder",
                  .value_name = "NODE_ID",
                  .help = "only grants held on this node"}},
       .run = RunGrants},
      {.name = "drain",
       .usage = "drain (NODE_NAME | --id NODE_ID) [--undo]",
       .summary = "Stop placing new LMRs on a node (or, with --undo, resume)",
       .details = "A draining node keeps running and keeps its LMRs and "
                  "grants; the flag survives the node's rejoins until undone.",
       .flags = {{.name = "id",
                  .value_name = "NODE_ID",
                  .help = "name the node by id instead of by name"},
                 {.name = "undo",
                  .takes_value = false,
                  .help = "put the node back in service"}},
       .max_args = 1,
       .run = RunDrain},
      {.name = "evict",
       .usage = "evict (NODE_NAME | --id NODE_ID) [--reason TEXT]",
       .summary = "Declare a live node failed now, with everything a "
                  "failure implies",
       .details = "Its LMRs and every grant into them are revoked; peers "
                  "drop it. Its agent normally joins again with a new "
                  "incarnation: stop the agent to keep the node out.",
       .flags = {{.name = "id",
                  .value_name = "NODE_ID",
                  .help = "name the node by id instead of by name"},
                 {.name = "reason",
                  .value_name = "TEXT",
                  .help = "why, up to 256 characters (goes into the "
                          "MemberFailed event)"}},
       .max_args = 1,
       .run = RunEvict},
      {.name = "watch",
       .usage = "watch [--count N]",
       .summary = "Stream cluster events as they happen, until Ctrl-C",
       .details = "One line per event, in the order every agent sees them. "
                  "With -o json, one JSON object per line.",
       .flags = {{.name = "count",
                  .value_name = "N",
                  .help = "stop after N events"}},
       .run = RunWatch},
      {.name = "agent",
       .usage = "agent (status | peers | counters) [--agent HOST:PORT]",
       .summary = "Ask a node agent about its node: status, peers or counters",
       .details = absl::StrCat(
           "status: identity and the link to the manager; peers: the peers "
           "programmed into lite.ko; counters: the agent's and the module's "
           "counters. The agent's address is --agent, else $LITE_AGENT, "
           "else ",
           kDefaultAgent, "."),
       .flags = {{.name = "agent",
                  .value_name = "HOST:PORT",
                  .help = "the node agent to ask"}},
       .min_args = 1,
       .max_args = 1,
       .run = RunAgent},
      {.name = "health",
       .usage = "health [--agent HOST:PORT] [--service NAME]",
       .summary = "Probe the gRPC health service of the manager (or an agent)",
       .details = "Prints SERVING and exits 0, or exits 1 when the server "
                  "is not serving or cannot be reached.",
       .flags = {{.name = "agent",
                  .value_name = "HOST:PORT",
                  .help = "probe this agent instead of the manager"},
                 {.name = "service",
                  .value_name = "NAME",
                  .help = "the service to ask about (default: the server "
                          "as a whole)"}},
       .run = RunHealth},
  };
  return *commands;
}

int RunLitectl(const std::vector<std::string>& args, const Environment& env,
               std::ostream& out, std::ostream& err, Interrupt* interrupt) {
  std::vector<std::string> rest(args);
  int index = FirstPositional(rest, GlobalFlags());
  std::string name = index < 0 ? "" : rest[index];
  if (index >= 0) rest.erase(rest.begin() + index);
  if (name == "help") {
    // "litectl help [COMMAND]"
    index = FirstPositional(rest, GlobalFlags());
    if (index < 0) {
      out << ToolHelp();
      return 0;
    }
    const Command* c = FindCommand(rest[index]);
    if (c == nullptr) {
      return UsageError(
          err, absl::StrFormat("unknown command '%s' (see litectl --help)",
                               rest[index]));
    }
    out << CommandHelp(*c);
    return 0;
  }
  if (name.empty()) {
    absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, GlobalFlags());
    if (parsed.ok() && parsed->help) {
      out << ToolHelp();
      return 0;
    }
    if (!parsed.ok()) {
      return UsageError(err, absl::StrCat(parsed.status().message(),
                                          " (see litectl --help)"));
    }
    return UsageError(err, "no command given (see litectl --help)");
  }
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    return UsageError(
        err,
        absl::StrFormat("unknown command '%s' (see litectl --help)", name));
  }
  std::vector<FlagSpec> specs = GlobalFlags();
  specs.insert(specs.end(), command->flags.begin(), command->flags.end());
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(rest, specs);
  if (!parsed.ok()) {
    return UsageError(err, absl::StrFormat("%s (see litectl %s --help)",
                                           parsed.status().message(), name));
  }
  if (parsed->help) {
    out << CommandHelp(*command);
    return 0;
  }
  if (parsed->positional.size() < command->min_args ||
      parsed->positional.size() > command->max_args) {
    return UsageError(
        err, absl::StrFormat("wrong number of arguments; usage: litectl %s",
                             command->usage));
  }

  Context ctx;
  ctx.out = &out;
  ctx.interrupt = interrupt;
  ctx.agent_env = env.lite_agent;
  ctx.manager = parsed->Get("manager", env.lite_manager.empty()
                                           ? std::string(kDefaultManager)
                                           : env.lite_manager);
  if (ctx.manager.empty()) return UsageError(err, "--manager is empty");
  const std::string output = parsed->Get("output", "table");
  if (output == "table") {
    ctx.output = Output::kTable;
  } else if (output == "json") {
    ctx.output = Output::kJson;
  } else {
    return UsageError(
        err, absl::StrFormat("--output '%s' is not table or json", output));
  }
  if (parsed->Has("timeout")) {
    absl::Duration d;
    if (!absl::ParseDuration(parsed->Get("timeout"), &d) ||
        d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return UsageError(
          err, absl::StrFormat("--timeout '%s' is not a positive duration "
                               "(e.g. 500ms, 5s)",
                               parsed->Get("timeout")));
    }
    ctx.timeout = d;
  }
  absl::Status s = command->run(ctx, *parsed);
  if (s.ok()) return 0;
  err << "litectl: " << absl::StatusCodeToString(s.code()) << ": "
      << OneLine(s.message()) << "\n";
  return s.code() == absl::StatusCode::kInvalidArgument &&
                 absl::StartsWith(s.message(), "usage: ")
             ? 2
             : 1;
}

}  // namespace lite::litectl
