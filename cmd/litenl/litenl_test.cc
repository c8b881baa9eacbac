// litenl in-process, on any host: help at every level and usage errors,
// which come before any netlink socket is opened (tests/vm/peers.sh and
// lmr.sh drive it against lite.ko).
#include "cmd/litenl/litenl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "absl/strings/str_join.h"

namespace lite::litenl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class LitenlTest : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    return RunLitenl(args, out_, err_);
  }
  std::ostringstream out_, err_;
};

TEST_F(LitenlTest, HelpAtEveryLevel) {
  ASSERT_EQ(Run({"--help"}), 0);
  EXPECT_THAT(out_.str(), StartsWith("usage: litenl [--attr-u32 TYPE=VALUE]"));
  for (const char* group : {"node", "peer", "lmr", "grant"}) {
    ASSERT_EQ(Run({group, "--help"}), 0) << group;
    EXPECT_THAT(out_.str(), StartsWith(absl::StrCat("Usage: litenl ", group)));
  }
  for (std::vector<std::string> path :
       std::vector<std::vector<std::string>>{{"node", "set"},
                                             {"node", "show"},
                                             {"peer", "add"},
                                             {"peer", "remove"},
                                             {"peers"},
                                             {"events"},
                                             {"agent"},
                                             {"lmr", "alloc"},
                                             {"lmr", "free"},
                                             {"lmr", "update"},
                                             {"lmr", "list"},
                                             {"grant", "list"},
                                             {"grant", "revoke"},
                                             {"services"}}) {
    std::vector<std::string> args = path;
    args.push_back("-h");
    ASSERT_EQ(Run(args), 0) << absl::StrJoin(path, " ");
    EXPECT_THAT(out_.str(), StartsWith(absl::StrCat("Usage: litenl ",
                                                    absl::StrJoin(path, " "))));
  }
}

TEST_F(LitenlTest, PeerAddTakesAPairSecret) {
  ASSERT_EQ(Run({"peer", "add", "--help"}), 0);
  EXPECT_THAT(out_.str(), HasSubstr("--secret HEX"));
  EXPECT_THAT(out_.str(), HasSubstr("64 hex digits"));
}

TEST_F(LitenlTest, UsageErrorsAreOneLineAndExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "litenl: no command given (see 'litenl --help')\n"},
      {{"node"},
       "litenl: 'node' needs a command: set, show (see 'litenl node "
       "--help')\n"},
      {{"node", "set", "--id", "1", "--incarnation", "1"},
       "litenl: --addr is required (see 'litenl node set --help')\n"},
      {{"node", "set", "--id", "x", "--incarnation", "1", "--addr", "1.2.3.4"},
       "litenl: --id: 'x' is not a non-negative number (decimal or 0x hex) "
       "(see 'litenl node set --help')\n"},
      {{"peer", "add", "--id", "2", "--incarnation", "1", "--addr", "1.2.3"},
       "litenl: --addr must be an IPv4 address (A.B.C.D), not '1.2.3' (see "
       "'litenl peer add --help')\n"},
      {{"lmr", "alloc", "--id", "1", "--name", "a", "--size", "4X"},
       "litenl: --size: '4X' is not a size (a number with an optional K, M, "
       "G or T, e.g. 4096, 64K, 1GiB; or 0x hex) (see 'litenl lmr alloc "
       "--help')\n"},
      {{"lmr", "alloc", "--id", "1", "--name", "a", "--size", "4K", "--mode",
        "9"},
       "litenl: --mode: '9' is not an octal mode like 0640 (0..7777) (see "
       "'litenl lmr alloc --help')\n"},
      {{"peer", "remove"},
       "litenl: give a peer (name or id) or --id N, not neither (see 'litenl "
       "peer remove --help')\n"},
      {{"peer", "remove", "node2", "--id", "2"},
       "litenl: give a peer (name or id) or --id N, not both (see 'litenl "
       "peer remove --help')\n"},
      {{"node", "set", "--id", "1", "--incarnation", "1", "--addr", "1.2.3.4",
        "--name="},
       "litenl: --name is empty (leave it out for no name) (see 'litenl node "
       "set --help')\n"},
      {{"events", "--peer", "99999999999"},
       "litenl: --peer: node id '99999999999' is more than 4294967295 (see "
       "'litenl events --help')\n"},
      {{"lmr", "free", "--id", "1", "--id", "2"},
       "litenl: --id given twice (see 'litenl lmr free --help')\n"},
      {{"events", "--type", "joined"},
       "litenl: --type must be connected, failed or removed, not 'joined' "
       "(see 'litenl events --help')\n"},
      {{"agent", "--timeout", "0"},
       "litenl: --timeout must be a positive number of seconds, not '0' (see "
       "'litenl agent --help')\n"},
      {{"--attr-u32", "0=1", "node", "show"},
       "litenl: --attr-u32 wants TYPE=VALUE (TYPE 1..16383, VALUE "
       "0..4294967295), not '0=1' (see 'litenl node show --help')\n"},
      {{"peers", "-o", "yaml"},
       "litenl: -o: table or json, not 'yaml' (see 'litenl peers --help')\n"},
      {{"peer", "add", "--id", "2", "--incarnation", "1", "--addr", "10.0.0.2",
        "--secret", "abcd"},
       "litenl: --secret must be 64 hex digits (the 32-byte pair secret); got "
       "4 characters (see 'litenl peer add --help')\n"},
      {{"peer", "add", "--id", "2", "--incarnation", "1", "--addr", "10.0.0.2",
        "--secret", std::string(63, 'a') + "g"},
       "litenl: --secret must be 64 hex digits (the 32-byte pair secret); got "
       "64 characters, not all hex digits (see 'litenl peer add --help')\n"},
      {{"services", "-o", "yaml"},
       "litenl: -o: table or json, not 'yaml' (see 'litenl services "
       "--help')\n"},
      {{"lmr", "list", "--chunks=maybe"},
       "litenl: --chunks takes no value (got 'maybe') (see 'litenl lmr list "
       "--help')\n"},
  };
  for (const auto& [args, want] : cases) {
    EXPECT_EQ(Run(args), 2) << absl::StrJoin(args, " ");
    EXPECT_EQ(err_.str(), want) << absl::StrJoin(args, " ");
    EXPECT_EQ(out_.str(), "") << absl::StrJoin(args, " ");
  }
}

}  // namespace
}  // namespace lite::litenl
