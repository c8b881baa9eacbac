#include "common/pattern/pattern.h"

#include <gtest/gtest.h>

#include <vector>

namespace lite::pattern {
namespace {

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

TEST(PatternTest, MatchesAnIndependentImplementation) {
  // liteop_test.sh: "checksum --pattern 1 --length 1001" prints
  // fnv1a64=dade9137f0933add (computed in Python).
  std::vector<uint8_t> buf(1001);
  FillPattern(1, 0, absl::MakeSpan(buf));
  EXPECT_EQ(Fnv1a64(buf), 0xdade9137f0933addull);
}

}  // namespace
}  // namespace lite::pattern
