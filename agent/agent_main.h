// The body of a liteagent binary, shared by the production agent
// (liteagent_main.cc: lite.ko over netlink only) and the one for tests and
// laptops (liteagent_fake_main.cc: also the in-process fake of lite.ko).
// AgentMain parses the flags every build has, opens the module the
// --module flag names among those the binary offers, joins the manager,
// serves lite.v1.NodeAgent and the health service, and leaves on SIGTERM.
#ifndef LITE_AGENT_AGENT_MAIN_H_
#define LITE_AGENT_AGENT_MAIN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/module.h"
#include "common/tls/credentials.h"

namespace lite::agent {

// What the common flags say, checked.
struct AgentMainConfig {
  AgentOptions agent;
  std::string listen;
  std::string port_file;
  // Prometheus metrics (empty: none), and where to write their port.
  std::string metrics_listen;
  std::string metrics_port_file;
  std::string event_log;
  std::string module;  // --module, one of the binary's
  absl::Duration module_timeout;
  // Mutual TLS (--tls_cert, --tls_key, --tls_ca), empty with --insecure.
  tls::TlsFiles tls;
  bool insecure = false;
  std::string authz;             // --authz
  std::string manager_tls_name;  // --manager_tls_name
  absl::Duration tls_reload_interval;
};

// One module a binary can drive (a --module value).
struct ModuleChoice {
  std::string name;
  // What it is, in a few words, for the unknown --module message.
  std::string summary;
  // Opens the module. An error ends the agent with exit status 1.
  std::function<absl::StatusOr<std::unique_ptr<Module>>(
      const AgentMainConfig& config)>
      open;
  // Optional: runs on a thread of its own once the agent has started, and
  // must return once the agent has shut down (the fake's applications).
  std::function<void(Module* module, const AgentMainConfig& config)> beside;
};

struct AgentMainOptions {
  // The binary's name, for messages ("liteagent").
  std::string program;
  // Its --help text.
  std::string usage;
  // What --module may name; the first is the default's implementation.
  std::vector<ModuleChoice> modules;
  // Added to the error for a --module this binary does not offer, e.g. where
  // the test-only module lives.
  std::string other_modules;
  // Optional: checks the binary's own flags once parsed, with the chosen
  // --module. An error is a usage error (exit status 2).
  std::function<absl::Status(absl::string_view module)> check_flags;
};

// The whole agent process; returns its exit status: 0 after a clean
// shutdown, 1 if it could not start, 2 for bad flags or arguments.
int AgentMain(int argc, char** argv, const AgentMainOptions& options);

// lite.ko over its generic netlink family: every binary offers it.
ModuleChoice NetlinkModuleChoice();

}  // namespace lite::agent

#endif  // LITE_AGENT_AGENT_MAIN_H_
