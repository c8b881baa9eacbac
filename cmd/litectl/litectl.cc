// litectl's command table and RunLitectl, on common/cli.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cmd/litectl/commands.h"
#include "cmd/litectl/format.h"
#include "common/cli/cli.h"

namespace lite::litectl {
namespace {

std::vector<cli::Flag> GlobalFlags() {
  return {
      {.name = "manager",
       .value = "HOST:PORT",
       .help = absl::StrCat("the cluster manager (default: $LITE_MANAGER, "
                            "else ",
                            kDefaultManager, ")")},
      {.name = "timeout",
       .value = "DURATION",
       .help = "deadline of each call, e.g. 500ms, 5s (default 5s)"},
      {.name = "tls_cert",
       .value = "FILE",
       .help = "your operator certificate (default: $LITE_TLS_CERT)"},
      {.name = "tls_key",
       .value = "FILE",
       .help = "its private key (default: $LITE_TLS_KEY)"},
      {.name = "tls_ca",
       .value = "FILE",
       .help = "the cluster CA (default: $LITE_TLS_CA)"},
      {.name = "manager_tls_name",
       .value = "NAME",
       .help = "the name the manager's certificate must carry (default "
               "litemgr)"},
      {.name = "agent_tls_name",
       .value = "NAME",
       .help = "the node name an agent's certificate must carry, for "
               "--agent (default: $LITE_AGENT_TLS_NAME)"},
      {.name = "insecure",
       .help = "plaintext, no certificates (default: $LITE_INSECURE=1); "
               "only against daemons started with --insecure"},
  };
}

constexpr char kFooter[] =
    "Environment:\n"
    "  LITE_MANAGER   the manager's address when --manager is not given\n"
    "  LITE_AGENT     the agent's address when --agent is not given "
    "(litectl agent)\n"
    "  LITE_TLS_CERT, LITE_TLS_KEY, LITE_TLS_CA   mutual TLS files when "
    "--tls_* are not given\n"
    "  LITE_AGENT_TLS_NAME   the agent's certificate name when "
    "--agent_tls_name is not given\n"
    "  LITE_INSECURE  1: plaintext, as --insecure, with a warning; refused "
    "when LITE_TLS_* are set\n\n"
    "JSON (-o json) is protobuf's mapping of the lite.v1 messages: proto "
    "field names,\n64-bit integers (incarnations, LMR and grant ids, times) "
    "as strings.\n\n"
    "Exit status: 0 success; 1 the call failed (one line on stderr:\n"
    "'litectl: CODE: message'); 2 bad usage.\n";

// The Context a command runs with: the global flags and the environment.
// `talks_to_agent`: the command dials a node agent (agent, health --agent).
absl::StatusOr<Context> MakeContext(const cli::Args& args,
                                    const Environment& env,
                                    Interrupt* interrupt, bool talks_to_agent) {
  Context ctx;
  ctx.out = &args.out();
  ctx.interrupt = interrupt;
  ctx.agent_env = env.lite_agent;
  ctx.manager = args.Get("manager", env.lite_manager.empty()
                                        ? std::string(kDefaultManager)
                                        : env.lite_manager);
  if (ctx.manager.empty()) return cli::UsageError("--manager is empty");
  ctx.output =
      args.output() == cli::Output::kJson ? Output::kJson : Output::kTable;
  if (args.Has("timeout")) {
    absl::Duration d;
    if (!absl::ParseDuration(args.Get("timeout"), &d) ||
        d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return cli::UsageError(
          absl::StrFormat("--timeout '%s' is not a positive duration "
                          "(e.g. 500ms, 5s)",
                          args.Get("timeout")));
    }
    ctx.timeout = d;
  }
  // $LITE_INSECURE=1 does not downgrade a shell set up for TLS: with any
  // $LITE_TLS_* set it is refused (a leftover from a demo would otherwise
  // talk plaintext to whoever answers at $LITE_MANAGER, review
  // cp-2026-11-28 L5), and plaintext it chose is said on stderr. The
  // --insecure flag is typed for this one call: it ignores $LITE_TLS_*;
  // --tls_* flags with it are an error.
  const bool env_insecure = env.lite_insecure == "1" && !args.Has("insecure");
  if (env_insecure && (!env.lite_tls_cert.empty() ||
                       !env.lite_tls_key.empty() || !env.lite_tls_ca.empty())) {
    return cli::UsageError(
        "LITE_INSECURE=1 and LITE_TLS_CERT/LITE_TLS_KEY/LITE_TLS_CA exclude "
        "each other: unset LITE_INSECURE for mutual TLS, or unset the "
        "LITE_TLS_* variables (or pass --insecure) for plaintext");
  }
  ctx.insecure = args.Has("insecure") || env_insecure;
  if (env_insecure) {
    args.err() << "litectl: warning: plaintext (LITE_INSECURE=1): the "
                  "manager is not authenticated and nothing is encrypted\n";
  }
  ctx.tls = ctx.insecure
                ? tls::TlsFiles{.cert = args.Get("tls_cert"),
                                .key = args.Get("tls_key"),
                                .ca = args.Get("tls_ca")}
                : tls::TlsFiles{.cert = args.Get("tls_cert", env.lite_tls_cert),
                                .key = args.Get("tls_key", env.lite_tls_key),
                                .ca = args.Get("tls_ca", env.lite_tls_ca)};
  if (absl::Status s = tls::CheckTlsFlags(ctx.tls, ctx.insecure, "litectl");
      !s.ok()) {
    return cli::UsageError(std::string(s.message()));
  }
  ctx.manager_tls_name = args.Get("manager_tls_name", "litemgr");
  ctx.agent_tls_name = args.Get("agent_tls_name", env.lite_agent_tls_name);
  if (!ctx.insecure && ctx.manager_tls_name.empty()) {
    return cli::UsageError("--manager_tls_name is empty");
  }
  if (!ctx.insecure && talks_to_agent && ctx.agent_tls_name.empty()) {
    return cli::UsageError(
        "--agent_tls_name NAME (or $LITE_AGENT_TLS_NAME) is needed with TLS: "
        "the node name the agent's certificate must carry");
  }
  // A bad file is not bad usage: the call fails (exit status 1).
  if (absl::Status s = ctx.MakeCredentials(); !s.ok()) return s;
  return ctx;
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
       .usage = "lmrs [--home NODE]",
       .summary = "List the registered LMRs (named remote memory regions)",
       .details = "Ids are hex: the high 32 bits are the home node's id. "
                  "NODE is a node name, or (all digits) a node id.",
       .flags = {{.name = "home",
                  .value = "NODE",
                  .help = "only LMRs whose memory is on this node (name or "
                          "id)"}},
       .run = RunLmrs},
      {.name = "services",
       .usage = "services [--node NODE]",
       .summary = "List the RPC services (named, called from any node)",
       .details = "Ids are hex: the high 32 bits are the serving node's id. "
                  "MODE's x bits say who may call (owner, group, other). "
                  "CLIENTS is client nodes holding a ring of the service, of "
                  "its maximum; QUEUED and SERVED come from the serving "
                  "node's heartbeats (requests waiting, requests answered). "
                  "NODE is a node name, or (all digits) a node id.",
       .flags = {{.name = "node",
                  .value = "NODE",
                  .help = "only services served by this node (name or id)"}},
       .run = RunServices},
      {.name = "grants",
       .usage = "grants [--lmr LMR_ID] [--holder NODE]",
       .summary = "List the map grants (who may use which LMR)",
       .details = "NODE is a node name, or (all digits) a node id.",
       .flags = {{.name = "lmr",
                  .value = "LMR_ID",
                  .help = "only grants into this LMR (decimal or 0x-hex)"},
                 {.name = "holder",
                  .value = "NODE",
                  .help = "only grants held on this node (name or id)"}},
       .run = RunGrants},
      {.name = "drain",
       .usage = "drain (NODE | --id NODE_ID) [--undo]",
       .summary = "Stop placing new LMRs on a node (or, with --undo, resume)",
       .details = "NODE is a node name, or (all digits) a node id. A "
                  "draining node keeps running and keeps its LMRs and "
                  "grants; the flag survives the node's rejoins until undone.",
       .flags = {{.name = "id",
                  .value = "NODE_ID",
                  .help = "the node's id (decimal or 0x hex)"},
                 {.name = "undo", .help = "put the node back in service"}},
       .max_args = 1,
       .run = RunDrain},
      {.name = "evict",
       .usage = "evict (NODE | --id NODE_ID) [--reason TEXT]",
       .summary = "Declare a live node failed now, with everything a "
                  "failure implies",
       .details = "NODE is a node name, or (all digits) a node id. Its "
                  "LMRs and every grant into them are revoked; peers "
                  "drop it. Its agent normally joins again with a new "
                  "incarnation: stop the agent to keep the node out.",
       .flags = {{.name = "id",
                  .value = "NODE_ID",
                  .help = "the node's id (decimal or 0x hex)"},
                 {.name = "reason",
                  .value = "TEXT",
                  .help = "why, up to 256 characters (goes into the "
                          "MemberFailed event)"}},
       .max_args = 1,
       .run = RunEvict},
      {.name = "watch",
       .usage = "watch [--since REVISION] [--count N]",
       .summary = "Stream cluster events as they happen, until Ctrl-C",
       .details =
           "One line per event, in the order every agent sees them; the "
           "first column is the event's revision. With -o json, one JSON "
           "object per line (its \"sequence\"). To see every change after "
           "a listing, watch --since the listing's revision (-o json: "
           "\"revision\", or \"event_sequence\" for nodes); to resume a "
           "watch, --since the last revision it printed.",
       .flags = {{.name = "since",
                  .value = "REVISION",
                  .help = "every event after this revision, then new ones "
                          "(default: from now on)"},
                 {.name = "count",
                  .value = "N",
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
                  .value = "HOST:PORT",
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
                  .value = "HOST:PORT",
                  .help = "probe this agent instead of the manager"},
                 {.name = "service",
                  .value = "NAME",
                  .help = "the service to ask about (default: the server "
                          "as a whole)"}},
       .run = RunHealth},
  };
  return *commands;
}

int RunLitectl(const std::vector<std::string>& args, const Environment& env,
               std::ostream& out, std::ostream& err, Interrupt* interrupt) {
  cli::Tool tool;
  tool.root = {
      .name = "litectl",
      .usage = "litectl [global flags] COMMAND [flags] [args]",
      .summary =
          "Operate a LITE cluster through its cluster manager "
          "(litemgr) and node agents (liteagent)",
      .flags = GlobalFlags(),
  };
  tool.footer = kFooter;
  // Messages carry servers' text (a refusal may quote a name or reason):
  // made Inert like everything else litectl prints.
  tool.error_line = [](const absl::Status& s) {
    return absl::StrCat("litectl: ", absl::StatusCodeToString(s.code()), ": ",
                        Inert(s.message()));
  };
  for (const Command& c : Commands()) {
    tool.root.commands.push_back(
        {.name = c.name,
         .usage = c.usage,
         .summary = c.summary,
         .details = c.details,
         .flags = c.flags,
         .min_args = c.min_args,
         .max_args = c.max_args,
         .run = [&c, &env, interrupt](const cli::Args& a) -> absl::Status {
           absl::StatusOr<Context> ctx = MakeContext(
               a, env, interrupt, c.name == "agent" || a.Has("agent"));
           if (!ctx.ok()) return ctx.status();
           return c.run(*ctx, a);
         }});
  }
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::litectl
