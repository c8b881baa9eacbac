#include "common/log/log.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::logging {
namespace {

using ::testing::EndsWith;
using ::testing::MatchesRegex;

TEST(ParseLogLevelTest, AcceptsTheFourNames) {
  LogLevel level = LogLevel::kError;
  ASSERT_TRUE(ParseLogLevel("debug", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  ASSERT_TRUE(ParseLogLevel("info", &level));
  EXPECT_EQ(level, LogLevel::kInfo);
  ASSERT_TRUE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
  ASSERT_TRUE(ParseLogLevel("error", &level));
  EXPECT_EQ(level, LogLevel::kError);
}

TEST(ParseLogLevelTest, RefusesAnythingElseAndLeavesTheLevel) {
  LogLevel level = LogLevel::kWarning;
  EXPECT_FALSE(ParseLogLevel("INFO", &level));
  EXPECT_FALSE(ParseLogLevel("warn", &level));
  EXPECT_FALSE(ParseLogLevel("", &level));
  EXPECT_EQ(level, LogLevel::kWarning);
}

// One line per message: timestamp, level, text.
TEST(LogTest, WritesOneLineWithTimestampAndLevel) {
  SetMinLogLevel(LogLevel::kInfo);
  ::testing::internal::CaptureStderr();
  LITE_LOG_WARNING("peer %u failed: %s", 7u, "timeout");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(out, MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z "
                                "WARN peer 7 failed: timeout\n"));
}

TEST(LogTest, DropsMessagesBelowTheMinimumLevel) {
  SetMinLogLevel(LogLevel::kWarning);
  EXPECT_EQ(MinLogLevel(), LogLevel::kWarning);
  ::testing::internal::CaptureStderr();
  LITE_LOG_DEBUG("not shown");
  LITE_LOG_INFO("not shown either");
  LITE_LOG_ERROR("shown");
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(out, EndsWith("ERROR shown\n"));
  EXPECT_EQ(out.find("not shown"), std::string::npos);
  SetMinLogLevel(LogLevel::kInfo);
}

}  // namespace
}  // namespace lite::logging
