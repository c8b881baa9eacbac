// litectl's command-line parsing: GNU-style long flags (--name=value or
// --name value), a few short ones (-o json, -h), boolean flags, positional
// arguments, and "--" to end flags. Small on purpose: litectl needs
// per-subcommand flags and per-subcommand --help, which absl flags (global,
// one help text per binary) does not give.
#ifndef LITE_TOOLS_LITECTL_ARGS_H_
#define LITE_TOOLS_LITECTL_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::litectl {

struct FlagSpec {
  std::string name;             // "output" for --output
  char short_name = 0;          // 'o' for -o, 0 for none
  bool takes_value = true;      // false: a boolean switch
  std::string value_name = "";  // "FORMAT", for help
  std::string help = "";
};

struct ParsedArgs {
  // Flag name -> value ("true" for switches). The last occurrence wins.
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
  bool help = false;

  bool Has(absl::string_view name) const {
    return flags.find(std::string(name)) != flags.end();
  }
  std::string Get(absl::string_view name, std::string fallback = "") const {
    auto it = flags.find(std::string(name));
    return it == flags.end() ? fallback : it->second;
  }
};

// Parses args against specs. -h/--help set `help` (no spec needed). Errors
// (INVALID_ARGUMENT) name the offending argument.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<FlagSpec>& specs);

// The index of the first positional argument, skipping flags and the values
// of the flags in `specs` that take one; -1 if there is none. Used to find
// the subcommand before its own flags are known.
int FirstPositional(const std::vector<std::string>& args,
                    const std::vector<FlagSpec>& specs);

// "  -o, --output FORMAT   help..." lines, aligned.
std::string FlagHelp(const std::vector<FlagSpec>& specs);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_ARGS_H_
