#include "common/metrics/listen.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::metrics {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

TEST(ValidateMetricsListen, TakesAddressesThePortsAndEmpty) {
  for (const char* ok : {"", "127.0.0.1:9742", "0.0.0.0:9743", "10.211.0.1:0",
                         "[::1]:9742", "[::]:65535", "localhost:9742",
                         kManagerMetricsListen, kAgentMetricsListen}) {
    EXPECT_THAT(ValidateMetricsListen("--metrics_listen", ok), IsOk()) << ok;
  }
}

TEST(ValidateMetricsListen, RefusesWhatTheServerWouldNotBind) {
  for (const char* bad :
       {"9742", ":9742", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
        "127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1:80s", "127.0.0.1: 80",
        "::1:9742", "[::1]", "[127.0.0.1]:80", "256.0.0.1:80",
        "metrics.example:9742", "127.0.0.1:9742,127.0.0.1:9743"}) {
    EXPECT_THAT(ValidateMetricsListen("--metrics_listen", bad),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("--metrics_listen='", bad))))
        << bad;
  }
}

}  // namespace
}  // namespace lite::metrics
