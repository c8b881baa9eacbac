// litectl's subcommands: each has its usage, help, flags and a function that
// runs it, on the tools' command-line layer (common/cli). RunLitectl is the
// whole tool minus process setup (signals, environment), so that tests can
// run it in-process.
#ifndef LITE_TOOLS_LITECTL_COMMANDS_H_
#define LITE_TOOLS_LITECTL_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cmd/litectl/context.h"
#include "common/cli/cli.h"

namespace lite::litectl {

inline constexpr char kDefaultManager[] = "127.0.0.1:7420";
inline constexpr char kDefaultAgent[] = "127.0.0.1:7421";

struct Command {
  std::string name;
  // After "litectl ": e.g. "drain NODE [--undo]".
  std::string usage;
  std::string summary;
  std::string details = "";
  std::vector<cli::Flag> flags = {};
  size_t min_args = 0;
  size_t max_args = 0;
  absl::Status (*run)(const Context& ctx, const cli::Args& args) = nullptr;
};

// Manager subcommands (manager_commands.cc).
absl::Status RunNodes(const Context& ctx, const cli::Args& args);
absl::Status RunLmrs(const Context& ctx, const cli::Args& args);
absl::Status RunServices(const Context& ctx, const cli::Args& args);
absl::Status RunGrants(const Context& ctx, const cli::Args& args);
absl::Status RunDrain(const Context& ctx, const cli::Args& args);
absl::Status RunEvict(const Context& ctx, const cli::Args& args);
absl::Status RunWatch(const Context& ctx, const cli::Args& args);
// Agent and health subcommands (agent_commands.cc).
absl::Status RunAgent(const Context& ctx, const cli::Args& args);
absl::Status RunHealth(const Context& ctx, const cli::Args& args);

const std::vector<Command>& Commands();

struct Environment {
  std::string lite_manager = "";         // $LITE_MANAGER
  std::string lite_agent = "";           // $LITE_AGENT
  std::string lite_tls_cert = "";        // $LITE_TLS_CERT
  std::string lite_tls_key = "";         // $LITE_TLS_KEY
  std::string lite_tls_ca = "";          // $LITE_TLS_CA
  std::string lite_agent_tls_name = "";  // $LITE_AGENT_TLS_NAME
  std::string lite_insecure = "";        // $LITE_INSECURE ("1": plaintext)
};

// Runs litectl with args (without the program name). Returns the exit
// status: 0 success, 1 the call failed, 2 bad usage. Errors are one line on
// `err`: "litectl: <CODE>: <message>".
int RunLitectl(const std::vector<std::string>& args, const Environment& env,
               std::ostream& out, std::ostream& err, Interrupt* interrupt);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_COMMANDS_H_
