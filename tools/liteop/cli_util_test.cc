#include "tools/liteop/cli_util.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace lite::cli {
namespace {

TEST(ParseSizeTest, SuffixesArePowersOf1024) {
  EXPECT_EQ(*ParseSize("0"), 0u);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("8B"), 8u);
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("64M"), 64u << 20);
  EXPECT_EQ(*ParseSize("64MiB"), 64u << 20);
  EXPECT_EQ(*ParseSize("2GB"), 2ull << 30);
  EXPECT_EQ(*ParseSize("1T"), 1ull << 40);
  EXPECT_EQ(*ParseSize("0x1000"), 4096u);
}

TEST(ParseSizeTest, RejectsJunkAndOverflow) {
  for (const char* bad : {"", "M", "-1", "1.5M", "4X", "4Kx", "4BB", " 4", "0x",
                          "0xZZ", "99999999999999999999"}) {
    EXPECT_FALSE(ParseSize(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseSize("17179869184G").ok());  // 2^34 GiB = 2^64
  EXPECT_TRUE(ParseSize("17179869183G").ok());
}

TEST(ParseNumberTest, DecimalAndHexOnly) {
  EXPECT_EQ(*ParseNumber("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseNumber("0xff"), 255u);
  EXPECT_FALSE(ParseNumber("4K").ok());
  EXPECT_FALSE(ParseNumber("+4").ok());
  EXPECT_FALSE(ParseNumber("18446744073709551616").ok());
}

TEST(ParseModeTest, Octal) {
  EXPECT_EQ(*ParseMode("0640"), 0640u);
  EXPECT_EQ(*ParseMode("600"), 0600u);
  EXPECT_FALSE(ParseMode("0680").ok());
  EXPECT_FALSE(ParseMode("01777").ok());
  EXPECT_FALSE(ParseMode("").ok());
}

TEST(PatternTest, PiecesMatchTheWhole) {
  std::vector<uint8_t> whole(1000), piece(1000);
  FillPattern(7, 0, absl::MakeSpan(whole));
  // Odd piece boundaries exercise the unaligned start and end.
  size_t at = 0;
  for (size_t n : {3, 13, 1, 500, 483}) {
    FillPattern(7, at, absl::MakeSpan(piece.data() + at, n));
    at += n;
  }
  EXPECT_EQ(piece, whole);
  std::vector<uint8_t> other(1000);
  FillPattern(8, 0, absl::MakeSpan(other));
  EXPECT_NE(other, whole);
}

TEST(FnvTest, KnownVectorsAndChaining) {
  EXPECT_EQ(Fnv1a64({}), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(Fnv1a64(a), 0xaf63dc4c8601ec8cull);
  const char* foobar = "foobar";
  auto bytes = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(foobar), 6);
  EXPECT_EQ(Fnv1a64(bytes), 0x85944171f73967e8ull);
  EXPECT_EQ(Fnv1a64(bytes.subspan(3), Fnv1a64(bytes.subspan(0, 3))),
            Fnv1a64(bytes));
}

TEST(HumanBytesTest, ExactUnits) {
  EXPECT_EQ(HumanBytes(64 << 20), "64 MiB");
  EXPECT_EQ(HumanBytes(4096), "4 KiB");
  EXPECT_EQ(HumanBytes(100), "100 B");
  EXPECT_EQ(HumanBytes(1536), "1536 B");
}

}  // namespace
}  // namespace lite::cli
