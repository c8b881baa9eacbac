// The cases of cmd/liteop/cli_util_test.cc and cmd/litectl/format_test.cc
// merged: one parser and one formatter for every tool.
#include "common/units/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lite::units {
namespace {

using ::testing::HasSubstr;

TEST(ParseSizeTest, SuffixesArePowersOf1024) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("8B"), 8u);
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("64M"), 64u << 20);
  EXPECT_EQ(*ParseSize("64MiB"), 64u << 20);
  EXPECT_EQ(*ParseSize("64mib"), 64u << 20);
  EXPECT_EQ(*ParseSize("2GB"), 2ull << 30);
  EXPECT_EQ(*ParseSize("1T"), 1ull << 40);
  EXPECT_EQ(*ParseSize("0x1000"), 4096u);
  // Decimal means decimal, whatever strtoull's base 0 would say.
  EXPECT_EQ(*ParseSize("010"), 10u);
}

TEST(ParseSizeTest, RejectsJunkAndOverflow) {
  for (const char* bad :
       {"", "M", "-1", "+1", "1.5M", "4X", "4Kx", "4BB", " 4", "4 ", "0x",
        "0xZZ", "0x-1", "0x1K", "99999999999999999999"}) {
    absl::StatusOr<uint64_t> v = ParseSize(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseSize("17179869184G").ok());  // 2^34 GiB = 2^64
  EXPECT_TRUE(ParseSize("17179869183G").ok());
  EXPECT_THAT(std::string(ParseSize("12Q").status().message()),
              HasSubstr("'12Q' is not a size"));
  EXPECT_THAT(std::string(ParseSize("4Kx").status().message()),
              HasSubstr("unknown size suffix 'Kx'"));
  EXPECT_THAT(std::string(ParseSize("17179869184G").status().message()),
              HasSubstr("does not fit in 64 bits"));
}

TEST(ParseNumberTest, DecimalAndHexOnly) {
  EXPECT_EQ(*ParseNumber("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseNumber("0xff"), 255u);
  EXPECT_EQ(*ParseNumber("0"), 0u);
  EXPECT_EQ(*ParseNumber("010"), 10u);
  EXPECT_FALSE(ParseNumber("4K").ok());
  EXPECT_FALSE(ParseNumber("+4").ok());
  EXPECT_FALSE(ParseNumber("-1").ok());
  EXPECT_FALSE(ParseNumber("18446744073709551616").ok());
  EXPECT_EQ(*ParseNumber("255", 255), 255u);
  absl::StatusOr<uint64_t> big = ParseNumber("256", 255);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(), "'256' is more than 255");
}

TEST(ParseIdTest, PositiveDecimalOrHexUpToMax) {
  EXPECT_EQ(*ParseId("x", "42", 100), 42u);
  EXPECT_EQ(*ParseId("x", "0x2a", 100), 42u);
  EXPECT_FALSE(ParseId("x", "0", 100).ok());
  EXPECT_FALSE(ParseId("x", "101", 100).ok());
  EXPECT_FALSE(ParseId("x", "-1", 100).ok());
  EXPECT_FALSE(ParseId("x", "0x", 100).ok());
  EXPECT_FALSE(ParseId("x", "abc", 100).ok());
  absl::StatusOr<uint64_t> zero = ParseId("--id", "0", UINT32_MAX);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.status().message(),
            "--id '0' is not an id (a number 1..4294967295, decimal or "
            "0x-hex)");
}

TEST(ParseModeTest, Octal) {
  EXPECT_EQ(*ParseMode("0640"), 0640u);
  EXPECT_EQ(*ParseMode("600"), 0600u);
  EXPECT_FALSE(ParseMode("0680").ok());
  EXPECT_FALSE(ParseMode("01777").ok());
  EXPECT_FALSE(ParseMode("").ok());
  EXPECT_EQ(*ParseMode("07777", 07777), 07777u);
  EXPECT_THAT(std::string(ParseMode("0800").status().message()),
              HasSubstr("not an octal mode"));
  EXPECT_THAT(std::string(ParseMode("01777").status().message()),
              HasSubstr("more than 0777"));
}

TEST(HumanBytesTest, BinaryUnitsWithAtMostOneDecimal) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(100), "100 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(4096), "4 KiB");
  // liteop's own HumanBytes printed "1536 B"; the shared one reads like
  // litectl's.
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(64 << 20), "64 MiB");
  EXPECT_EQ(HumanBytes((uint64_t{1} << 30) - 1), "1023.9 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 40), "3 TiB");
}

}  // namespace
}  // namespace lite::units
