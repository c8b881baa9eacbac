#include "agent/validation.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/fake_spec.h"
#include "common/testing/status_matchers.h"

namespace lite::agent {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

TEST(ValidationTest, RdmaAddresses) {
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.2:7471"), IsOk());
  EXPECT_THAT(ValidateRdmaAddress("[fe80::1]:7471"), IsOk());
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.2"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.2:0"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.2:65536"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("host:7471"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.300:1"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("[10.0.0.2]:1"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("fe80::1:7471"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateRdmaAddress("10.0.0.2:+1"), StatusIs(kInvalid));
}

TEST(ValidationTest, HostPorts) {
  EXPECT_THAT(ValidateHostPort("--listen", "127.0.0.1:0", true), IsOk());
  EXPECT_THAT(ValidateHostPort("--manager", "127.0.0.1:0", false),
              StatusIs(kInvalid));
  EXPECT_THAT(ValidateHostPort("--manager", "mgr.example:7420", false), IsOk());
  EXPECT_THAT(ValidateHostPort("--manager", "[::1]:7420", false), IsOk());
  EXPECT_THAT(ValidateHostPort("--manager", ":7420", false),
              StatusIs(kInvalid));
  EXPECT_THAT(ValidateHostPort("--manager", "mgr", false), StatusIs(kInvalid));
}

TEST(ValidationTest, Sizes) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("64K"), 64u << 10);
  EXPECT_EQ(*ParseSize("3m"), 3u << 20);
  EXPECT_EQ(*ParseSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("2T"), uint64_t{2} << 40);
  EXPECT_THAT(ParseSize("0"), StatusIs(kInvalid));
  EXPECT_THAT(ParseSize(""), StatusIs(kInvalid));
  EXPECT_THAT(ParseSize("K"), StatusIs(kInvalid));
  EXPECT_THAT(ParseSize("-1"), StatusIs(kInvalid));
  EXPECT_THAT(ParseSize("1.5G"), StatusIs(kInvalid));
  EXPECT_THAT(ParseSize("99999999999T"), StatusIs(kInvalid));
}

TEST(FakeSpecTest, Lmrs) {
  auto lmrs = ParseFakeLmrs("buf=64M,shared/log=1G@0644");
  ASSERT_TRUE(lmrs.ok()) << lmrs.status();
  ASSERT_EQ(lmrs->size(), 2u);
  EXPECT_EQ((*lmrs)[0].name, "buf");
  EXPECT_EQ((*lmrs)[0].size_bytes, 64u << 20);
  EXPECT_EQ((*lmrs)[0].mode, 0600u);
  EXPECT_EQ((*lmrs)[1].name, "shared/log");
  EXPECT_EQ((*lmrs)[1].mode, 0644u);
  EXPECT_TRUE(ParseFakeLmrs("")->empty());
  EXPECT_THAT(ParseFakeLmrs("buf"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("buf=0"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("buf=1M@0777"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("buf=1M@9"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("buf=1M,buf=2M"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("-bad=1M"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeLmrs("a=1M,"), StatusIs(kInvalid));
}

TEST(FakeSpecTest, Maps) {
  auto maps = ParseFakeMaps("a=r,b=w,c=rw");
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_EQ(maps->size(), 3u);
  EXPECT_TRUE((*maps)[0].read && !(*maps)[0].write);
  EXPECT_TRUE(!(*maps)[1].read && (*maps)[1].write);
  EXPECT_TRUE((*maps)[2].read && (*maps)[2].write);
  EXPECT_THAT(ParseFakeMaps("a=x"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeMaps("a="), StatusIs(kInvalid));
}

TEST(FakeSpecTest, ServicesAndOpens) {
  auto services = ParseFakeServices("echo=0711,svc/priv=0700");
  ASSERT_TRUE(services.ok()) << services.status();
  ASSERT_EQ(services->size(), 2u);
  EXPECT_EQ((*services)[0].name, "echo");
  EXPECT_EQ((*services)[0].mode, 0711u);
  EXPECT_EQ((*services)[1].name, "svc/priv");
  EXPECT_EQ((*services)[1].mode, 0700u);
  EXPECT_TRUE(ParseFakeServices("")->empty());
  EXPECT_THAT(ParseFakeServices("echo"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeServices("echo=1777"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeServices("echo=8"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeServices("echo=0711,echo=0700"), StatusIs(kInvalid));
  auto opens = ParseFakeOpens("echo,svc/priv");
  ASSERT_TRUE(opens.ok()) << opens.status();
  EXPECT_EQ(*opens, (std::vector<std::string>{"echo", "svc/priv"}));
  EXPECT_TRUE(ParseFakeOpens("")->empty());
  EXPECT_THAT(ParseFakeOpens("echo,"), StatusIs(kInvalid));
  EXPECT_THAT(ParseFakeOpens("-bad"), StatusIs(kInvalid));
}

}  // namespace
}  // namespace lite::agent
