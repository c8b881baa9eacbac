// The command-line layer in-process: grammar, help at every level, the one
// duplicate-flag rule, usage errors (exit 2) against failures (exit 1).
#include "common/cli/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/cli/json.h"
#include "common/cli/table.h"

namespace lite::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// What the last command saw.
struct Seen {
  std::string command;
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> flags;
  Output output = Output::kTable;
};

class CliTest : public ::testing::Test {
 protected:
  CliTest() {
    auto record = [this](absl::Status result) {
      return [this, result](const Args& a) {
        seen_.command = a.command();
        seen_.positional = a.positional();
        seen_.flags.clear();
        for (const char* f : {"id", "undo", "home", "attr", "manager"}) {
          if (a.Has(f)) seen_.flags.emplace_back(f, a.Get(f));
        }
        seen_.output = a.output();
        a.out() << "ran " << a.command() << "\n";
        return result;
      };
    };
    tool_.root = {
        .name = "tool",
        .usage = "tool [--manager ADDR] COMMAND [flags] [args]",
        .summary = "A tool for tests",
        .flags = {{.name = "manager", .value = "ADDR", .help = "where"},
                  {.name = "attr",
                   .value = "K=V",
                   .help = "repeatable",
                   .repeatable = true}},
        .commands =
            {
                {.name = "drain",
                 .usage = "drain [NODE] [--id N] [--undo]",
                 .summary = "Drain a node",
                 .flags = {{.name = "id", .value = "N", .help = "by id"},
                           {.name = "undo", .help = "undo it"}},
                 .max_args = 1,
                 .run = record(absl::OkStatus())},
                {.name = "alloc",
                 .usage = "alloc NAME SIZE [--home NODE]",
                 .summary = "Allocate",
                 .flags = {{.name = "home", .value = "NODE", .help = "where"}},
                 .min_args = 2,
                 .max_args = 2,
                 .run = record(absl::OkStatus())},
                {.name = "lmr",
                 .usage = "lmr (list | free)",
                 .summary = "LMRs",
                 .commands = {{.name = "list",
                               .usage = "lmr list",
                               .summary = "List them",
                               .run = record(absl::OkStatus())},
                              {.name = "free",
                               .usage = "lmr free NAME",
                               .summary = "Free one",
                               .min_args = 1,
                               .max_args = 1,
                               .run = record(absl::OkStatus())}}},
                {.name = "fail",
                 .usage = "fail",
                 .summary = "Fails as a call",
                 .run = record(absl::InvalidArgumentError("server says no"))},
                {.name = "misuse",
                 .usage = "misuse",
                 .summary = "Fails as usage",
                 .run = record(UsageError("--x: 'y' is bad"))},
            },
    };
    tool_.footer = "Exit status: 0, 1 or 2.\n";
  }

  int Run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    seen_ = {};
    return cli::Run(tool_, args, out_, err_);
  }

  Tool tool_;
  Seen seen_;
  std::ostringstream out_, err_;
};

TEST_F(CliTest, FlagsBothFormsSwitchesAndPositionals) {
  // litectl's ArgsTest, through the layer.
  ASSERT_EQ(Run({"drain", "n1", "-o", "json", "--id=3", "--undo", "--", "--x"}),
            2)  // two positionals where drain takes one
      << err_.str();
  ASSERT_EQ(Run({"drain", "-o", "json", "--id=3", "--undo", "--", "--x"}), 0)
      << err_.str();
  EXPECT_EQ(seen_.output, Output::kJson);
  EXPECT_THAT(seen_.flags,
              ElementsAre(std::pair<std::string, std::string>("id", "3"),
                          std::pair<std::string, std::string>("undo", "true")));
  EXPECT_THAT(seen_.positional, ElementsAre("--x"));
  ASSERT_EQ(Run({"drain", "-ojson", "--id", "4"}), 0) << err_.str();
  EXPECT_EQ(seen_.output, Output::kJson);
  ASSERT_EQ(Run({"drain", "-o=json"}), 0) << err_.str();
  EXPECT_EQ(seen_.output, Output::kJson);
  ASSERT_EQ(Run({"drain", "--output=json"}), 0) << err_.str();
  EXPECT_EQ(seen_.output, Output::kJson);
  ASSERT_EQ(Run({"alloc", "a", "b", "--home="}), 0) << err_.str();
  EXPECT_THAT(seen_.flags,
              ElementsAre(std::pair<std::string, std::string>("home", "")));
  ASSERT_EQ(Run({"alloc", "a", "b", "--home", ""}), 0) << err_.str();
  EXPECT_THAT(seen_.flags,
              ElementsAre(std::pair<std::string, std::string>("home", "")));
  ASSERT_EQ(Run({"drain", "--undo=false"}), 0) << err_.str();
  EXPECT_TRUE(seen_.flags.empty());
  EXPECT_EQ(Run({"drain", "--undo=maybe"}), 2);
  EXPECT_EQ(err_.str(),
            "tool: --undo takes no value (got 'maybe') (see 'tool drain "
            "--help')\n");
}

TEST_F(CliTest, GlobalFlagsAnywhere) {
  ASSERT_EQ(Run({"--manager", "m1", "drain", "x"}), 0) << err_.str();
  EXPECT_EQ(seen_.command, "drain");
  EXPECT_THAT(seen_.positional, ElementsAre("x"));
  EXPECT_THAT(seen_.flags, ElementsAre(std::pair<std::string, std::string>(
                               "manager", "m1")));
  ASSERT_EQ(Run({"drain", "x", "--manager=m2", "-o", "json"}), 0) << err_.str();
  EXPECT_THAT(seen_.flags, ElementsAre(std::pair<std::string, std::string>(
                               "manager", "m2")));
  ASSERT_EQ(Run({"lmr", "--manager", "m3", "free", "a"}), 0) << err_.str();
  EXPECT_EQ(seen_.command, "lmr free");
}

TEST_F(CliTest, ARepeatedFlagIsAUsageError) {
  EXPECT_EQ(Run({"alloc", "a", "1", "--home", "1", "--home=2"}), 2);
  EXPECT_EQ(err_.str(), "tool: --home given twice (see 'tool alloc --help')\n");
  EXPECT_EQ(Run({"--manager", "a", "drain", "--manager", "b"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--manager given twice"));
  // Switches may repeat; repeatable flags keep every value.
  EXPECT_EQ(Run({"drain", "--undo", "--undo"}), 0) << err_.str();
  EXPECT_EQ(Run({"--attr", "1=2", "drain", "--attr", "3=4"}), 0) << err_.str();
}

TEST_F(CliTest, ValuesMayLookLikeCommandsOrFlags) {
  // An LMR named like a command, a value that starts with '-', "--" as a
  // value, a negative-looking positional.
  ASSERT_EQ(Run({"lmr", "free", "drain"}), 0) << err_.str();
  EXPECT_THAT(seen_.positional, ElementsAre("drain"));
  ASSERT_EQ(Run({"alloc", "alloc", "-1", "--home", "-x"}), 0) << err_.str();
  EXPECT_THAT(seen_.positional, ElementsAre("alloc", "-1"));
  EXPECT_THAT(seen_.flags,
              ElementsAre(std::pair<std::string, std::string>("home", "-x")));
  ASSERT_EQ(Run({"alloc", "a", "b", "--home", "--"}), 0) << err_.str();
  EXPECT_THAT(seen_.flags,
              ElementsAre(std::pair<std::string, std::string>("home", "--")));
}

TEST_F(CliTest, UsageErrorsExitTwoWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "tool: no command given (see 'tool --help')\n"},
      {{"frob"}, "tool: unknown command 'frob' (see 'tool --help')\n"},
      {{"drain", "--nope"},
       "tool: unknown option '--nope' (see 'tool drain --help')\n"},
      {{"drain", "--home", "1"},
       "tool: --home does not apply to 'drain' (see 'tool drain --help')\n"},
      {{"drain", "--id"},
       "tool: --id needs a value (N) (see 'tool drain --help')\n"},
      {{"alloc", "kv"},
       "tool: 'alloc' takes 2 argument(s), got 1 (see 'tool alloc "
       "--help')\n"},
      {{"drain", "a", "b"},
       "tool: 'drain' takes at most 1 argument(s), got 2 (see 'tool drain "
       "--help')\n"},
      {{"lmr"},
       "tool: 'lmr' needs a command: list, free (see 'tool lmr --help')\n"},
      {{"lmr", "frob"},
       "tool: lmr: unknown command 'frob' (see 'tool lmr --help')\n"},
      {{"drain", "-o", "xml"},
       "tool: -o: table or json, not 'xml' (see 'tool drain --help')\n"},
      {{"misuse"}, "tool: --x: 'y' is bad (see 'tool misuse --help')\n"},
      {{"help", "nope"}, "tool: unknown command 'nope' (see 'tool --help')\n"},
  };
  for (const auto& [args, want] : cases) {
    EXPECT_EQ(Run(args), 2) << absl::StrJoin(args, " ");
    EXPECT_EQ(err_.str(), want) << absl::StrJoin(args, " ");
    if (args != std::vector<std::string>{"misuse"}) {
      EXPECT_EQ(out_.str(), "") << absl::StrJoin(args, " ");
    }
  }
}

TEST_F(CliTest, AFailedCallExitsOneEvenWithInvalidArgument) {
  EXPECT_EQ(Run({"fail"}), 1);
  EXPECT_EQ(err_.str(), "tool: server says no\n");
  tool_.error_line = [](const absl::Status& s) {
    return absl::StrCat("tool: ", absl::StatusCodeToString(s.code()), ": ",
                        s.message());
  };
  EXPECT_EQ(Run({"fail"}), 1);
  EXPECT_EQ(err_.str(), "tool: INVALID_ARGUMENT: server says no\n");
  EXPECT_EQ(Run({"frob"}), 2);
  EXPECT_EQ(err_.str(),
            "tool: INVALID_ARGUMENT: unknown command 'frob' (see 'tool "
            "--help')\n");
}

TEST_F(CliTest, HelpAtEveryLevel) {
  ASSERT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(out_.str(), StartsWith("usage: tool [--manager ADDR] COMMAND"));
  EXPECT_THAT(out_.str(), HasSubstr("Commands:\n  drain    Drain a node\n"));
  EXPECT_THAT(out_.str(), HasSubstr("-o, --output FORMAT"));
  EXPECT_THAT(out_.str(), HasSubstr("a second one is a usage error"));
  EXPECT_THAT(out_.str(), HasSubstr("Exit status: 0, 1 or 2.\n"));
  for (const Command& c : tool_.root.commands) {
    ASSERT_EQ(Run({c.name, "--help"}), 0) << c.name;
    EXPECT_THAT(out_.str(), StartsWith("Usage: tool " + c.usage)) << c.name;
    EXPECT_THAT(out_.str(), HasSubstr("Global flags:\n")) << c.name;
    const std::string help = out_.str();
    ASSERT_EQ(Run({"help", c.name}), 0) << c.name;
    EXPECT_EQ(out_.str(), help);
    ASSERT_EQ(Run({c.name, "-h", "-o", "json"}), 0) << c.name;
    EXPECT_EQ(out_.str(), help);
  }
  ASSERT_EQ(Run({"lmr", "free", "--help"}), 0);
  EXPECT_THAT(out_.str(),
              StartsWith("Usage: tool lmr free NAME\n\nFree one.\n"));
  ASSERT_EQ(Run({"help", "lmr", "free"}), 0);
  EXPECT_THAT(out_.str(), StartsWith("Usage: tool lmr free NAME\n"));
  ASSERT_EQ(Run({"lmr", "--help"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("Commands:\n  list   List them\n"));
  ASSERT_EQ(Run({"help"}), 0);
  EXPECT_THAT(out_.str(), StartsWith("usage: tool"));
  // Help wins over missing arguments, but not over unknown flags.
  EXPECT_EQ(Run({"alloc", "--help"}), 0);
  EXPECT_EQ(Run({"alloc", "--help", "--bogus"}), 2);
}

TEST_F(CliTest, AToolWithoutCommands) {
  Tool bench;
  bench.root = {.name = "bench",
                .usage = "bench (--lmr NAME) [flags]",
                .summary = "Measures",
                .flags = {{.name = "lmr", .value = "NAME", .help = "which"},
                          {.name = "bw_threads", .value = "N", .help = "n"}},
                .run = [](const Args& a) {
                  a.out() << a.Get("lmr") << " " << a.Get("bw_threads", "4")
                          << (a.output() == Output::kJson ? " json" : "")
                          << "\n";
                  return absl::OkStatus();
                }};
  std::ostringstream out, err;
  EXPECT_EQ(
      cli::Run(bench, {"--lmr", "a", "--bw_threads=8", "-o", "json"}, out, err),
      0);
  EXPECT_EQ(out.str(), "a 8 json\n");
  EXPECT_EQ(cli::Run(bench, {"--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: bench (--lmr NAME) [flags]"));
  EXPECT_THAT(out.str(), HasSubstr("\nFlags:\n"));
  EXPECT_THAT(out.str(), HasSubstr("--bw_threads N"));
  EXPECT_EQ(cli::Run(bench, {"stray"}, out, err), 2);
  EXPECT_EQ(cli::Run(bench, {"-o", "yaml"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("bench: -o: table or json, not 'yaml' "
                                   "(see 'bench --help')\n"));
}

TEST(ConvertersTest, NameTheFlagAndAreUsageErrors) {
  absl::StatusOr<uint64_t> size = Size("SIZE", "12Q");
  ASSERT_FALSE(size.ok());
  EXPECT_TRUE(IsUsageError(size.status()));
  EXPECT_THAT(std::string(size.status().message()),
              StartsWith("SIZE: '12Q' is not a size"));
  EXPECT_EQ(*Size("--length", "4K"), 4096u);
  EXPECT_EQ(*Number("--threads", "010"), 10u);
  EXPECT_EQ(Number("VALUE", "256", 255).status().message(),
            "VALUE: '256' is more than 255");
  EXPECT_EQ(Id("--id", "0", 7).status().message(),
            "--id '0' is not an id (a number 1..7, decimal or 0x-hex)");
  EXPECT_TRUE(IsUsageError(Mode("--mode", "0800").status()));
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("x")));
  EXPECT_EQ(OneLine("a\nb\tc"), "a b c");
}

TEST(NodeTest, DigitsAreAnIdAnythingElseAName) {
  absl::StatusOr<NodeRef> id = ParseNode("--home", "3");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->id, 3u);
  EXPECT_EQ(id->name, "");
  EXPECT_EQ(ParseNode("--home", "0")->id, 0u);
  EXPECT_EQ(ParseNode("--home", "007")->id, 7u);
  EXPECT_EQ(ParseNode("--home", "node2")->name, "node2");
  EXPECT_EQ(ParseNode("--home", "0x3")->name, "0x3");
  EXPECT_EQ(ParseNode("--home", "3a")->name, "3a");
  absl::StatusOr<NodeRef> big = ParseNode("--home", "4294967296");
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(IsUsageError(big.status()));
  EXPECT_EQ(big.status().message(),
            "--home: node id '4294967296' is more than 4294967295");
  EXPECT_EQ(ParseNode("NODE", "").status().message(),
            "NODE: empty (a node name or id)");
  EXPECT_EQ(NodeLabel("node2", 3), "node2 (3)");
  EXPECT_EQ(NodeLabel("", 3), "3");
}

TEST(JsonTest, OneLineLikePython) {
  Json j;
  j["node_id"] = 2;
  j["addr"] = "10.0.0.2";
  j["name"] = "a \"quoted\"\\ name\n";
  j["big"] = uint64_t{18446744073709551615u};
  j["none"] = nullptr;
  j["ok"] = true;
  j["list"] = Json::array({1, 2});
  j["empty"] = Json::array();
  j["obj"] = Json::object();
  j["p50_us"] = 12.5;
  EXPECT_EQ(JsonLine(j),
            "{\"node_id\": 2, \"addr\": \"10.0.0.2\", \"name\": \"a "
            "\\\"quoted\\\"\\\\ name\\n\", \"big\": 18446744073709551615, "
            "\"none\": null, \"ok\": true, \"list\": [1, 2], \"empty\": [], "
            "\"obj\": {}, \"p50_us\": 12.5}");
  EXPECT_EQ(JsonLine(Json("bad \xff byte")), "\"bad \xef\xbf\xbd byte\"");
}

TEST(TableTest, AlignsColumnsWithoutTrailingBlanks) {
  Table t({"ID", "NAME", "X"});
  t.AddRow({"1", "alpha", ""});
  t.AddRow({"10", "b"});
  EXPECT_EQ(t.Render(),
            "ID  NAME   X\n"
            "1   alpha\n"
            "10  b\n");
}

}  // namespace
}  // namespace lite::cli
