#include "common/cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <memory>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/units/units.h"

namespace lite::cli {
namespace {

constexpr char kUsagePayload[] = "type.googleapis.com/lite.cli.UsageError";

constexpr size_t kWidth = 79;

// Words of `text` on lines of at most kWidth columns, the first starting at
// column `first`, the others indented by `indent` (already in `out`).
// Text with a line break of its own is kept as written.
void AppendWrapped(absl::string_view text, size_t first, size_t indent,
                   std::string* out) {
  if (absl::StrContains(text, '\n')) {
    out->append(text.data(), text.size());
    return;
  }
  size_t column = first;
  bool line_start = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line_start && column + 1 + word.size() > kWidth) {
      absl::StrAppend(out, "\n", std::string(indent, ' '));
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out->push_back(' ');
      ++column;
    }
    absl::StrAppend(out, word);
    column += word.size();
    line_start = false;
  }
}

std::string Paragraph(absl::string_view text) {
  std::string out;
  AppendWrapped(text, 0, 0, &out);
  if (!absl::EndsWith(out, "\n")) out.push_back('\n');
  return out;
}

const Flag& OutputFlag() {
  static const auto* flag = new Flag{.name = "output",
                                     .short_name = 'o',
                                     .value = "FORMAT",
                                     .help = "table (default) or json"};
  return *flag;
}

const Flag& HelpFlag(bool has_commands) {
  static const auto* with = new Flag{
      .name = "help", .short_name = 'h', .help = "show help (also 'help ...')"};
  static const auto* without =
      new Flag{.name = "help", .short_name = 'h', .help = "show this help"};
  return has_commands ? *with : *without;
}

// The flags a command's help lists as global: the tool's, -o, -h.
std::vector<Flag> GlobalFlags(const Tool& tool) {
  std::vector<Flag> flags = tool.root.flags;
  flags.push_back(OutputFlag());
  Flag help = HelpFlag(!tool.root.commands.empty());
  if (!tool.root.commands.empty()) {
    help.help =
        absl::StrCat("show help (also '", tool.root.name, " help COMMAND')");
  }
  flags.push_back(help);
  return flags;
}

std::string FlagLines(const std::vector<Flag>& flags) {
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const Flag& f : flags) {
    std::string left = f.short_name != 0
                           ? absl::StrFormat("-%c, --%s", f.short_name, f.name)
                           : absl::StrCat("    --", f.name);
    if (!f.value.empty()) absl::StrAppend(&left, " ", f.value);
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), f.help);
  }
  std::string out;
  for (const auto& [left, help] : rows) {
    absl::StrAppend(&out, "  ", left,
                    std::string(width - left.size() + 3, ' '));
    AppendWrapped(help, width + 5, width + 5, &out);
    out.push_back('\n');
  }
  return out;
}

std::string CommandLines(const std::vector<Command>& commands) {
  size_t width = 0;
  for (const Command& c : commands) width = std::max(width, c.name.size());
  std::string out;
  for (const Command& c : commands) {
    absl::StrAppend(&out, "  ", c.name,
                    std::string(width - c.name.size() + 3, ' '));
    AppendWrapped(c.summary, width + 5, width + 5, &out);
    out.push_back('\n');
  }
  return out;
}

std::string Sentence(absl::string_view text) {
  if (text.empty() || absl::EndsWith(text, ".") || absl::EndsWith(text, "\n")) {
    return std::string(text);
  }
  return absl::StrCat(text, ".");
}

constexpr char kGrammar[] =
    "--flag=value and --flag value are the same. A flag that takes a value "
    "is given at most once: a second one is a usage error (exit 2). '--' "
    "ends the flags.";

// `path` is the commands from the root (excluded) down to the one to
// describe; empty for the tool itself.
std::string HelpText(const Tool& tool,
                     const std::vector<const Command*>& path) {
  const Command& c = path.empty() ? tool.root : *path.back();
  std::string out;
  if (path.empty()) {
    absl::StrAppend(&out, "usage: ", c.usage, "\n\n",
                    Paragraph(Sentence(c.summary)));
  } else {
    absl::StrAppend(&out, "Usage: ", tool.root.name, " ", c.usage, "\n\n",
                    Paragraph(Sentence(c.summary)));
  }
  if (!c.details.empty()) absl::StrAppend(&out, "\n", Paragraph(c.details));
  if (!c.commands.empty()) {
    absl::StrAppend(&out, "\nCommands:\n", CommandLines(c.commands));
  }
  const std::vector<Flag> global = GlobalFlags(tool);
  if (path.empty()) {
    absl::StrAppend(&out,
                    c.commands.empty()
                        ? "\nFlags:\n"
                        : "\nGlobal flags (anywhere on the command line):\n",
                    FlagLines(global), "\n", Paragraph(kGrammar));
    if (!tool.footer.empty()) absl::StrAppend(&out, "\n", tool.footer);
    if (!absl::EndsWith(out, "\n")) out.push_back('\n');
    if (!c.commands.empty()) {
      absl::StrAppend(&out, "\nRun '", c.name,
                      " COMMAND --help' for a command's own flags.\n");
    }
    return out;
  }
  if (!c.flags.empty()) absl::StrAppend(&out, "\nFlags:\n", FlagLines(c.flags));
  absl::StrAppend(&out, "\nGlobal flags:\n", FlagLines(global));
  return out;
}

std::string CommandPath(const std::vector<const Command*>& path) {
  std::vector<std::string> names;
  for (const Command* c : path) names.push_back(c->name);
  return absl::StrJoin(names, " ");
}

// The CLI11 side of one command.
struct Level {
  const Command* command = nullptr;
  CLI::App* app = nullptr;
  CLI::Option* help = nullptr;
  CLI::Option* positional = nullptr;  // commands without subcommands
  std::vector<std::string> positional_values;
  std::vector<std::pair<const Flag*, CLI::Option*>> flags;
  std::vector<std::unique_ptr<Level>> children;
};

void AddFlags(Level& level, const std::vector<Flag>& flags) {
  for (const Flag& f : flags) {
    std::string names = absl::StrCat("--", f.name);
    if (f.short_name != 0)
      names = absl::StrCat("-", std::string(1, f.short_name), ",", names);
    CLI::Option* opt;
    if (f.value.empty()) {
      opt = level.app->add_flag(names);
    } else {
      opt = level.app->add_option(names)->expected(1)->multi_option_policy(
          CLI::MultiOptionPolicy::TakeAll);
    }
    level.flags.emplace_back(&f, opt);
  }
}

void Build(Level& level, const Command& command) {
  level.command = &command;
  level.app->set_help_flag();
  level.app->allow_extras();
  level.help = level.app->add_flag("-h,--help");
  AddFlags(level, command.flags);
  if (command.commands.empty()) {
    level.positional = level.app->add_option("ARGS", level.positional_values)
                           ->expected(0, INT_MAX);
    return;
  }
  level.app->require_subcommand(0, 1);
  for (const Command& sub : command.commands) {
    auto child = std::make_unique<Level>();
    child->app = level.app->add_subcommand(sub.name);
    child->app->fallthrough();
    Build(*child, sub);
    level.children.push_back(std::move(child));
  }
}

// Every flag of the tool, for messages about flags used in the wrong
// place.
void CollectFlags(const Command& c, std::vector<const Flag*>* out) {
  for (const Flag& f : c.flags) out->push_back(&f);
  for (const Command& sub : c.commands) CollectFlags(sub, out);
}

bool LooksLikeFlag(absl::string_view arg) {
  return arg.size() > 1 && arg[0] == '-' &&
         !(arg.size() > 1 && arg[1] >= '0' && arg[1] <= '9');
}

// "--home=2" -> "--home"; "-ojson" -> "-o".
std::string FlagName(absl::string_view arg) {
  if (absl::StartsWith(arg, "--")) {
    return std::string(arg.substr(0, arg.find('=')));
  }
  return std::string(arg.substr(0, 2));
}

}  // namespace

// Parses one command line against one tool.
class Parser {
 public:
  Parser(const Tool& tool, std::ostream& out, std::ostream& err)
      : tool_(tool), out_(out), err_(err) {
    CollectFlags(tool.root, &all_flags_);
    all_flags_.push_back(&OutputFlag());
  }

  int Run(const std::vector<std::string>& args) {
    absl::Status s = Parse(args);
    if (s.ok() && help_) {
      out_ << HelpText(tool_, path_);
      return 0;
    }
    if (s.ok())
      s = path_.empty() ? tool_.root.run(args_) : path_.back()->run(args_);
    if (s.ok()) return 0;
    std::string message = OneLine(s.message());
    if (IsUsageError(s) && !absl::StrContains(message, "--help")) {
      absl::StrAppend(&message, " (see '", tool_.root.name,
                      path_.empty() ? "" : " ", CommandPath(path_),
                      " --help')");
    }
    const absl::Status shown(s.code(), message);
    err_ << (tool_.error_line ? tool_.error_line(shown)
                              : absl::StrCat(tool_.root.name, ": ", message))
         << "\n";
    return IsUsageError(s) ? 2 : 1;
  }

 private:
  const Flag* FindFlag(absl::string_view arg) const {
    const std::string name = FlagName(arg);
    for (const Flag* f : all_flags_) {
      if (name == absl::StrCat("--", f->name) ||
          (f->short_name != 0 &&
           name == absl::StrFormat("-%c", f->short_name))) {
        return f;
      }
    }
    return nullptr;
  }

  // Whether `arg` is a flag that takes a value and has none inline.
  bool WantsValue(absl::string_view arg) const {
    const Flag* f = FindFlag(arg);
    if (f == nullptr || f->value.empty()) return false;
    return absl::StartsWith(arg, "--") ? !absl::StrContains(arg, "=")
                                       : arg.size() == 2;
  }

  absl::Status Parse(const std::vector<std::string>& args) {
    // "--" ends the flags (unless it is a flag's value); "-o=json" is
    // "-o json"; "--name=" is "--name ''" (CLI11 would call the value
    // missing).
    std::vector<std::string> before, after;
    bool ended = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      const Flag* flag = LooksLikeFlag(a) ? FindFlag(a) : nullptr;
      const bool takes_value = flag != nullptr && !flag->value.empty();
      if (ended) {
        after.push_back(a);
      } else if (a == "--" && (before.empty() || !WantsValue(before.back()))) {
        ended = true;
      } else if (a.size() >= 3 && a[1] != '-' && a[2] == '=' && takes_value) {
        before.push_back(a.substr(0, 2));
        before.push_back(a.substr(3));
      } else if (absl::StartsWith(a, "--") && absl::EndsWith(a, "=") &&
                 takes_value) {
        before.push_back(a.substr(0, a.size() - 1));
        before.emplace_back();
      } else {
        before.push_back(a);
      }
    }

    CLI::App app(tool_.root.summary, tool_.root.name);
    Level root;
    root.app = &app;
    Build(root, tool_.root);
    static const auto* builtin = new std::vector<Flag>{OutputFlag()};
    AddFlags(root, *builtin);
    CLI::App* help_app = nullptr;
    std::vector<std::string> help_args;
    if (!tool_.root.commands.empty()) {
      help_app = app.add_subcommand("help");
      help_app->set_help_flag();
      help_app->fallthrough();
      help_app->add_option("COMMAND", help_args)->expected(0, INT_MAX);
    }

    std::vector<std::string> reversed(before.rbegin(), before.rend());
    std::optional<std::string> parse_error;
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      parse_error = e.what();
    }

    // The commands given, root to leaf.
    std::vector<Level*> levels = {&root};
    bool help_command = help_app != nullptr && help_app->parsed();
    while (!help_command) {
      Level* next = nullptr;
      for (auto& child : levels.back()->children) {
        if (child->app->parsed()) next = child.get();
      }
      if (next == nullptr) break;
      levels.push_back(next);
      path_.push_back(next->command);
    }
    if (parse_error) {
      if (!before.empty() && WantsValue(before.back())) {
        return UsageError(absl::StrFormat("%s needs a value (%s)",
                                          FlagName(before.back()),
                                          FindFlag(before.back())->value));
      }
      return UsageError(*parse_error);
    }

    // Arguments nobody took: unknown flags and commands.
    for (const std::string& extra : app.remaining(true)) {
      if (LooksLikeFlag(extra)) {
        const Flag* known = FindFlag(extra);
        if (known != nullptr && !path_.empty()) {
          return UsageError(absl::StrFormat("%s does not apply to '%s'",
                                            FlagName(extra),
                                            CommandPath(path_)));
        }
        return UsageError(
            absl::StrFormat("unknown option '%s'", FlagName(extra)));
      }
      if (path_.empty()) {
        return UsageError(absl::StrFormat("unknown command '%s'", extra));
      }
      return UsageError(absl::StrFormat("%s: unknown command '%s'",
                                        CommandPath(path_), extra));
    }

    // Flags: once each unless repeatable; switches take true or false.
    args_.out_ = &out_;
    args_.err_ = &err_;
    for (Level* level : levels) {
      if (level->help->count() > 0) help_ = true;
      for (const auto& [flag, opt] : level->flags) {
        const std::vector<std::string>& results = opt->results();
        const std::string shown = absl::StrCat("--", flag->name);
        if (flag->value.empty()) {
          for (const std::string& r : results) {
            if (r != "true" && r != "false") {
              return UsageError(
                  absl::StrFormat("%s takes no value (got '%s')", shown, r));
            }
          }
          if (!results.empty() && results.back() == "true") {
            args_.values_.emplace_back(flag->name, "true");
          }
          continue;
        }
        if (results.size() > 1 && !flag->repeatable) {
          return UsageError(absl::StrFormat(
              "%s given %s", shown,
              results.size() == 2 ? "twice"
                                  : absl::StrCat(results.size(), " times")));
        }
        for (const std::string& r : results) {
          args_.values_.emplace_back(flag->name, r);
        }
      }
    }

    if (help_command) {
      // "TOOL help [COMMAND...]"
      const Command* at = &tool_.root;
      for (const std::string& name : help_args) {
        const Command* found = nullptr;
        for (const Command& sub : at->commands) {
          if (sub.name == name) found = &sub;
        }
        if (found == nullptr) {
          return UsageError(absl::StrFormat("unknown command '%s'",
                                            absl::StrJoin(help_args, " ")));
        }
        path_.push_back(found);
        at = found;
      }
      help_ = true;
      return absl::OkStatus();
    }
    if (help_) return absl::OkStatus();

    const Command& command = path_.empty() ? tool_.root : *path_.back();
    args_.command_ = CommandPath(path_);
    if (!command.commands.empty()) {
      if (!after.empty()) {
        return UsageError(
            absl::StrFormat("unknown command '%s'", after.front()));
      }
      if (path_.empty()) return UsageError("no command given");
      std::vector<std::string> names;
      for (const Command& sub : command.commands) names.push_back(sub.name);
      return UsageError(absl::StrFormat("'%s' needs a command: %s",
                                        args_.command_,
                                        absl::StrJoin(names, ", ")));
    }
    args_.positional_ = levels.back()->positional_values;
    args_.positional_.insert(args_.positional_.end(), after.begin(),
                             after.end());
    const size_t n = args_.positional_.size();
    if (n < command.min_args || n > command.max_args) {
      const std::string who = path_.empty() ? tool_.root.name : args_.command_;
      std::string takes;
      if (command.min_args == command.max_args) {
        takes = absl::StrCat(command.min_args);
      } else if (n > command.max_args) {
        takes = absl::StrCat("at most ", command.max_args);
      } else {
        takes = absl::StrCat("at least ", command.min_args);
      }
      return UsageError(
          absl::StrFormat("'%s' takes %s argument(s), got %d", who, takes, n));
    }

    const std::string output = args_.Get("output", "table");
    if (output == "table" || output == "text") {
      args_.output_ = Output::kTable;
    } else if (output == "json") {
      args_.output_ = Output::kJson;
    } else {
      return UsageError(absl::StrFormat("-o: table or json, not '%s'", output));
    }
    if (!command.run) {
      return absl::InternalError(
          absl::StrFormat("'%s' has no implementation", args_.command_));
    }
    return absl::OkStatus();
  }

  const Tool& tool_;
  std::ostream& out_;
  std::ostream& err_;
  std::vector<const Flag*> all_flags_;
  std::vector<const Command*> path_;
  bool help_ = false;
  Args args_;
};

bool Args::Has(absl::string_view flag) const {
  for (const auto& [name, value] : values_) {
    if (name == flag) return true;
  }
  return false;
}

std::string Args::Get(absl::string_view flag,
                      absl::string_view fallback) const {
  for (const auto& [name, value] : values_) {
    if (name == flag) return value;
  }
  return std::string(fallback);
}

std::vector<std::string> Args::GetAll(absl::string_view flag) const {
  std::vector<std::string> all;
  for (const auto& [name, value] : values_) {
    if (name == flag) all.push_back(value);
  }
  return all;
}

int Run(const Tool& tool, const std::vector<std::string>& args,
        std::ostream& out, std::ostream& err) {
  return Parser(tool, out, err).Run(args);
}

absl::Status UsageError(absl::string_view message) {
  absl::Status s = absl::InvalidArgumentError(message);
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

bool IsUsageError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument &&
         status.GetPayload(kUsagePayload).has_value();
}

namespace {

template <typename T>
absl::StatusOr<T> Prefixed(absl::string_view what, absl::StatusOr<T> v) {
  if (v.ok()) return v;
  return UsageError(absl::StrCat(what, ": ", v.status().message()));
}

}  // namespace

absl::StatusOr<uint64_t> Size(absl::string_view what, absl::string_view text) {
  return Prefixed(what, units::ParseSize(text));
}

absl::StatusOr<uint64_t> Number(absl::string_view what, absl::string_view text,
                                uint64_t max) {
  return Prefixed(what, units::ParseNumber(text, max));
}

absl::StatusOr<uint64_t> Id(absl::string_view what, absl::string_view text,
                            uint64_t max) {
  absl::StatusOr<uint64_t> v = units::ParseId(what, text, max);
  if (v.ok()) return v;
  return UsageError(v.status().message());
}

absl::StatusOr<uint32_t> Mode(absl::string_view what, absl::string_view text,
                              uint32_t max) {
  return Prefixed(what, units::ParseMode(text, max));
}

absl::StatusOr<NodeRef> ParseNode(absl::string_view what,
                                  absl::string_view text) {
  if (text.empty()) {
    return UsageError(absl::StrCat(what, ": empty (a node name or id)"));
  }
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    absl::StatusOr<uint64_t> id = units::ParseNumber(text, UINT32_MAX);
    if (!id.ok()) {
      return UsageError(absl::StrFormat("%s: node id '%s' is more than %u",
                                        what, text, UINT32_MAX));
    }
    return NodeRef{.id = static_cast<uint32_t>(*id), .name = ""};
  }
  return NodeRef{.id = 0, .name = std::string(text)};
}

std::string NodeLabel(absl::string_view name, uint32_t id) {
  return name.empty() ? absl::StrCat(id) : absl::StrCat(name, " (", id, ")");
}

std::string OneLine(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

}  // namespace lite::cli
