// One command-line layer for LITE's tools (litectl, liteop, litenl,
// lite-bench), on CLI11. A tool is a table of commands, each with its
// usage, help, flags, argument count and a function; Run() parses, prints
// help at every level, and turns the outcome into the exit status:
//
//   0  the command succeeded;
//   1  the command failed (one line on the error stream, see
//      Tool::error_line);
//   2  bad usage (one line: the tool's name, what was wrong, and where to
//      look: "liteop: --threads: 1..256, not 0 (see 'liteop faa --help')").
//
// Grammar, the same in every tool:
//   - `--flag=value` and `--flag value`; `-o json`, `-ojson`, `-o=json`;
//   - a flag that takes a value may be given once: a second one is a usage
//     error (unless the flag is `repeatable`); a switch may be repeated and
//     takes no value (`--undo`, or `--undo=true|false`);
//   - the tool's own flags (Tool::root.flags, e.g. --manager, --device)
//     and -o/--output and -h/--help stand anywhere after the tool's name;
//     a command's flags anywhere after the command;
//   - `--` ends the flags: what follows is positional;
//   - `-h`/`--help` at any level prints that level's help on the output
//     stream and exits 0; so does `TOOL help [COMMAND...]`.
//   - -o/--output table|json (every tool; "text" is another name for
//     table): how the command prints. The command reads it from Args.
//
// Numbers are bound as strings and converted by the command with the
// helpers below (common/units underneath): CLI11's own integer parsing
// reads "010" as 8 and wraps "-1".
//
// Run() is the whole tool minus process setup, so tests call it in-process.
#ifndef LITE_COMMON_CLI_CLI_H_
#define LITE_COMMON_CLI_CLI_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::cli {

enum class Output { kTable, kJson };

struct Flag {
  std::string name;        // "home" for --home
  char short_name = 0;     // 'o' for -o; 0 for none
  std::string value = "";  // "NODE" for --home NODE; "" for a switch
  std::string help = "";
  bool repeatable = false;  // may be given more than once (Args::GetAll)
};

class Args;

struct Command {
  std::string name;
  // After "TOOL ": e.g. "drain (NODE_NAME | --id NODE_ID) [--undo]". For
  // the root command, after "usage: ".
  std::string usage;
  // One line, no final period.
  std::string summary;
  std::string details = "";
  std::vector<Flag> flags = {};
  // Positional arguments (a command with `commands` takes none).
  size_t min_args = 0;
  size_t max_args = 0;
  // Subcommands ("lmr" has alloc, free, ...). A command has either
  // commands or a run function.
  std::vector<Command> commands = {};
  std::function<absl::Status(const Args&)> run = nullptr;
};

struct Tool {
  // root.name is the tool's name ("litectl"); root.flags its own flags;
  // root.usage the synopsis; root.summary and root.details the help's
  // first paragraphs. A tool with commands lists them in root.commands; a
  // tool without (lite-bench) has root.run.
  Command root;
  // The end of the tool's help (environment, exit status, ...).
  std::string footer = "";
  // The error line for a failed command and for a usage error (exit 1 or
  // 2), without the newline. Default: "TOOL: message". The message is
  // made one line first.
  std::function<std::string(const absl::Status&)> error_line = nullptr;
};

// What a command's function gets: the parsed command line and where to
// write.
class Args {
 public:
  // The command as typed after the tool's name: "lmr alloc".
  const std::string& command() const { return command_; }
  const std::vector<std::string>& positional() const { return positional_; }
  // A flag of the command or of the tool, by name ("home" for --home): for
  // a switch, whether it is on.
  bool Has(absl::string_view flag) const;
  std::string Get(absl::string_view flag,
                  absl::string_view fallback = "") const;
  // Every value of a repeatable flag, in order.
  std::vector<std::string> GetAll(absl::string_view flag) const;
  Output output() const { return output_; }
  std::ostream& out() const { return *out_; }
  std::ostream& err() const { return *err_; }

 private:
  friend class Parser;
  std::string command_;
  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::string>> values_;
  Output output_ = Output::kTable;
  std::ostream* out_ = nullptr;
  std::ostream* err_ = nullptr;
};

// Runs the tool with `args` (without the program name). Returns the exit
// status (0, 1 or 2, see above).
int Run(const Tool& tool, const std::vector<std::string>& args,
        std::ostream& out, std::ostream& err);

// A usage error: INVALID_ARGUMENT, marked so that Run() exits 2 (an
// INVALID_ARGUMENT from a call, e.g. EINVAL from the kernel or a server's
// refusal, exits 1).
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// Converters for flag values and positional arguments: `what` names the
// flag or argument ("--length", "SIZE"); a bad value is a UsageError
// "WHAT: <why>" (the parsers in common/units).
absl::StatusOr<uint64_t> Size(absl::string_view what, absl::string_view text);
absl::StatusOr<uint64_t> Number(absl::string_view what, absl::string_view text,
                                uint64_t max = UINT64_MAX);
absl::StatusOr<uint64_t> Id(absl::string_view what, absl::string_view text,
                            uint64_t max);
absl::StatusOr<uint32_t> Mode(absl::string_view what, absl::string_view text,
                              uint32_t max = 0777);

// A node as a person names it on the command line: a token of digits only
// is a node id ("3"), anything else a node name ("node2"). Names are the
// cluster manager's; the tool resolves them (lite.ko, or the manager).
struct NodeRef {
  uint32_t id = 0;   // when name is empty
  std::string name;  // a name to resolve; empty for an id
};
// `what` names the flag or argument. A usage error for an empty token or
// an id past 2^32-1; id 0 is returned (callers that refuse it say so).
absl::StatusOr<NodeRef> ParseNode(absl::string_view what,
                                  absl::string_view text);

// How the tools show a node: "node2 (3)" when it has a name, "3" when not
// (lite.ko's log lines read the same).
std::string NodeLabel(absl::string_view name, uint32_t id);

// Newlines and tabs become spaces, so an error stays one line.
std::string OneLine(absl::string_view text);

}  // namespace lite::cli

#endif  // LITE_COMMON_CLI_CLI_H_
