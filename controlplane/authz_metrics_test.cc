// The authz gauges follow the file: valid, then a bad edit (valid 0, the
// withdrawn name gone from the count), a hold counted while it lasts.
#include "controlplane/authz_metrics.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/metrics/sample_value.h"
#include "gtest/gtest.h"

namespace lite::controlplane {
namespace {

using metrics::SampleValue;

std::string Write(const std::string& text) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/authz");
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

TEST(AuthzMetrics, FollowTheFileAndTheHolds) {
  absl::StatusOr<std::unique_ptr<tls::Authz>> authz = tls::Authz::Load(
      Write("n1 node\nn2 node\nops operator\n"), absl::ZeroDuration());
  ASSERT_TRUE(authz.ok()) << authz.status();
  AuthzMetrics m(authz->get());
  auto families = m.Collect();
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_file_valid"), 1);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_generation"), 1);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_names"), 3);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_holds"), 0);
  absl::StatusOr<uint64_t> hold = (*authz)->Hold(
      "ops", tls::Role::kOperator, absl::InfiniteFuture(), [](auto&) {});
  ASSERT_TRUE(hold.ok());
  // n2 removed, a typo on ops' line: not valid, n2 withdrawn.
  Write("n1 node\nops operatr\n");
  EXPECT_TRUE((*authz)->Allows("n1", tls::Role::kNode));
  families = m.Collect();
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_file_valid"), 0);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_generation"), 2);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_names"), 2);
  EXPECT_EQ(SampleValue(families, "lite_manager_authz_holds"), 1);
  (*authz)->Release(*hold);
  EXPECT_TRUE(AuthzMetrics(tls::Authz::Insecure().get()).Collect().empty());
}

}  // namespace
}  // namespace lite::controlplane
