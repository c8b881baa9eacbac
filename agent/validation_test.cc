#include "agent/validation.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/fake_spec.h"

namespace lite::agent {
namespace {

TEST(ValidationTest, NodeNames) {
  EXPECT_TRUE(ValidateNodeName("node-1.rack_2").ok());
  EXPECT_TRUE(ValidateNodeName(std::string(64, 'a')).ok());
  EXPECT_FALSE(ValidateNodeName("").ok());
  EXPECT_FALSE(ValidateNodeName(std::string(65, 'a')).ok());
  EXPECT_FALSE(ValidateNodeName("-lead").ok());
  EXPECT_FALSE(ValidateNodeName("has space").ok());
  EXPECT_FALSE(ValidateNodeName("a/b").ok());
}

TEST(ValidationTest, LmrNames) {
  EXPECT_TRUE(ValidateLmrName("db/table:1-a.b_c").ok());
  EXPECT_FALSE(ValidateLmrName("/abs").ok());
  EXPECT_FALSE(ValidateLmrName("a=b").ok());
  EXPECT_FALSE(ValidateLmrName(std::string(129, 'x')).ok());
}

TEST(ValidationTest, RdmaAddresses) {
  EXPECT_TRUE(ValidateRdmaAddress("10.0.0.2:7471").ok());
  EXPECT_TRUE(ValidateRdmaAddress("[fe80::1]:7471").ok());
  EXPECT_FALSE(ValidateRdmaAddress("10.0.0.2").ok());
  EXPECT_FALSE(ValidateRdmaAddress("10.0.0.2:0").ok());
  EXPECT_FALSE(ValidateRdmaAddress("10.0.0.2:65536").ok());
  EXPECT_FALSE(ValidateRdmaAddress("host:7471").ok());
  EXPECT_FALSE(ValidateRdmaAddress("10.0.0.300:1").ok());
  EXPECT_FALSE(ValidateRdmaAddress("[10.0.0.2]:1").ok());
  EXPECT_FALSE(ValidateRdmaAddress("fe80::1:7471").ok());
  EXPECT_FALSE(ValidateRdmaAddress("10.0.0.2:+1").ok());
}

TEST(ValidationTest, HostPorts) {
  EXPECT_TRUE(ValidateHostPort("--listen", "127.0.0.1:0", true).ok());
  EXPECT_FALSE(ValidateHostPort("--manager", "127.0.0.1:0", false).ok());
  EXPECT_TRUE(ValidateHostPort("--manager", "mgr.example:7420", false).ok());
  EXPECT_TRUE(ValidateHostPort("--manager", "[::1]:7420", false).ok());
  EXPECT_FALSE(ValidateHostPort("--manager", ":7420", false).ok());
  EXPECT_FALSE(ValidateHostPort("--manager", "mgr", false).ok());
}

TEST(ValidationTest, Sizes) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("64K"), 64u << 10);
  EXPECT_EQ(*ParseSize("3m"), 3u << 20);
  EXPECT_EQ(*ParseSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseSize("2T"), uint64_t{2} << 40);
  EXPECT_FALSE(ParseSize("0").ok());
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("K").ok());
  EXPECT_FALSE(ParseSize("-1").ok());
  EXPECT_FALSE(ParseSize("1.5G").ok());
  EXPECT_FALSE(ParseSize("99999999999T").ok());
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
  EXPECT_FALSE(ParseFakeLmrs("buf").ok());
  EXPECT_FALSE(ParseFakeLmrs("buf=0").ok());
  EXPECT_FALSE(ParseFakeLmrs("buf=1M@0777").ok());
  EXPECT_FALSE(ParseFakeLmrs("buf=1M@9").ok());
  EXPECT_FALSE(ParseFakeLmrs("buf=1M,buf=2M").ok());
  EXPECT_FALSE(ParseFakeLmrs("-bad=1M").ok());
  EXPECT_FALSE(ParseFakeLmrs("a=1M,").ok());
}

TEST(FakeSpecTest, Maps) {
  auto maps = ParseFakeMaps("a=r,b=w,c=rw");
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_EQ(maps->size(), 3u);
  EXPECT_TRUE((*maps)[0].read && !(*maps)[0].write);
  EXPECT_TRUE(!(*maps)[1].read && (*maps)[1].write);
  EXPECT_TRUE((*maps)[2].read && (*maps)[2].write);
  EXPECT_FALSE(ParseFakeMaps("a=x").ok());
  EXPECT_FALSE(ParseFakeMaps("a=").ok());
}

}  // namespace
}  // namespace lite::agent
