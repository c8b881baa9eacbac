#include "tools/litectl/args.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lite::litectl {
namespace {

const FlagSpec* FindLong(const std::vector<FlagSpec>& specs,
                         absl::string_view name) {
  for (const FlagSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const FlagSpec* FindShort(const std::vector<FlagSpec>& specs, char c) {
  for (const FlagSpec& s : specs) {
    if (s.short_name != 0 && s.short_name == c) return &s;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<FlagSpec>& specs) {
  ParsedArgs out;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      out.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::string shown;
    std::string inline_value;
    bool has_inline = false;
    if (absl::StartsWith(arg, "--")) {
      std::string body = arg.substr(2);
      if (size_t eq = body.find('='); eq != std::string::npos) {
        inline_value = body.substr(eq + 1);
        body = body.substr(0, eq);
        has_inline = true;
      }
      shown = absl::StrCat("--", body);
      spec = FindLong(specs, body);
    } else {
      // -o json, -ojson, -o=json
      if (arg.size() >= 2) spec = FindShort(specs, arg[1]);
      shown = arg.substr(0, 2);
      if (arg.size() > 2) {
        inline_value = arg.substr(arg[2] == '=' ? 3 : 2);
        has_inline = true;
      }
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag '%s'", shown));
    }
    if (!spec->takes_value) {
      if (has_inline && inline_value != "true" && inline_value != "false") {
        return absl::InvalidArgumentError(absl::StrFormat(
            "flag '%s' takes no value (got '%s')", shown, inline_value));
      }
      if (!has_inline || inline_value == "true") {
        out.flags[spec->name] = "true";
      } else {
        out.flags.erase(spec->name);
      }
      continue;
    }
    if (!has_inline) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "flag '%s' needs a value (%s)", shown, spec->value_name));
      }
      inline_value = args[++i];
    }
    out.flags[spec->name] = inline_value;
  }
  return out;
}

int FirstPositional(const std::vector<std::string>& args,
                    const std::vector<FlagSpec>& specs) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return i + 1 < args.size() ? static_cast<int>(i + 1) : -1;
    if (arg == "-" || !absl::StartsWith(arg, "-")) return static_cast<int>(i);
    if (arg.find('=') != std::string::npos) continue;
    const FlagSpec* spec = nullptr;
    if (absl::StartsWith(arg, "--")) {
      spec = FindLong(specs, arg.substr(2));
    } else if (arg.size() == 2) {
      spec = FindShort(specs, arg[1]);
    }
    if (spec != nullptr && spec->takes_value) ++i;
  }
  return -1;
}

std::string FlagHelp(const std::vector<FlagSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    std::string left = s.short_name != 0
                           ? absl::StrFormat("-%c, --%s", s.short_name, s.name)
                           : absl::StrCat("    --", s.name);
    if (s.takes_value) absl::StrAppend(&left, " ", s.value_name);
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), s.help);
  }
  std::string out;
  for (const auto& [left, help] : rows) {
    absl::StrAppend(&out, "  ", left, std::string(width - left.size() + 3, ' '),
                    help, "\n");
  }
  return out;
}

}  // namespace lite::litectl
