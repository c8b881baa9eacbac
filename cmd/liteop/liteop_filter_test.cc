// RunFilter: what rpc-serve --exec answers with.
#include "cmd/liteop/liteop_filter.h"

#include <gtest/gtest.h>

#include <string>

namespace lite::liteop {
namespace {

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(RunFilterTest, TheRequestGoesToStdinAndStdoutIsTheReply) {
  bool cut = true;
  absl::StatusOr<std::string> got =
      RunFilter("tr a-z A-Z", Bytes("hello lite"), 100, &cut);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "HELLO LITE");
  EXPECT_FALSE(cut);
}

TEST(RunFilterTest, AnEmptyRequestIsAnEmptyStdin) {
  bool cut = true;
  absl::StatusOr<std::string> got = RunFilter("wc -c", Bytes(""), 100, &cut);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "0\n");
}

TEST(RunFilterTest, OutputPastTheLimitIsCutAndSaidSo) {
  bool cut = false;
  absl::StatusOr<std::string> got =
      RunFilter("head -c 100000 /dev/zero", Bytes(""), 10, &cut);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 10u);
  EXPECT_TRUE(cut);
}

TEST(RunFilterTest, ALargeRequestAnsweredBeforeItIsReadDoesNotDeadlock) {
  // 1 MiB through `cat`: more than a pipe holds, both ways at once.
  std::string big(1 << 20, 'x');
  bool cut = true;
  absl::StatusOr<std::string> got = RunFilter("cat", Bytes(big), 2 << 20, &cut);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), big.size());
  // A command that ignores its stdin and answers at once.
  got = RunFilter("echo done", Bytes(big), 100, &cut);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "done\n");
}

TEST(RunFilterTest, AFailingCommandIsAnErrorNamingItsExitCode) {
  bool cut = false;
  absl::StatusOr<std::string> got = RunFilter("exit 3", Bytes("x"), 10, &cut);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("exit 3"), std::string::npos)
      << got.status();
}

}  // namespace
}  // namespace lite::liteop
