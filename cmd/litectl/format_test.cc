// litectl's own formats. Tables, sizes, ids and the argument grammar moved
// to common/cli and common/units with their tests (cli_test.cc,
// units_test.cc).
#include "cmd/litectl/format.h"

#include <gtest/gtest.h>

namespace lite::litectl {
namespace {

TEST(FormatTest, AgesAndDurations) {
  EXPECT_EQ(HumanAge(0, 5000), "-");
  EXPECT_EQ(HumanAge(1000, 43999), "42s");
  EXPECT_EQ(HumanAge(1000, 1000 + 310000), "5m10s");
  EXPECT_EQ(HumanAge(5000, 1000), "0s");  // Clock skew never goes negative.
  EXPECT_EQ(HumanMs(850), "850ms");
  EXPECT_EQ(HumanMs(1250), "1.2s");
  EXPECT_EQ(HumanMs(3 * 3600 * 1000 + 120000), "3h2m");
  EXPECT_EQ(HumanMs(2 * 86400 * 1000), "2d0h");
}

TEST(FormatTest, IdsModesAndTimes) {
  EXPECT_EQ(HexId((uint64_t{2} << 32) | 1), "0x200000001");
  EXPECT_EQ(OctalMode(0640), "0640");
  EXPECT_EQ(UtcTime(86400000 + 1), "1970-01-02T00:00:00.001Z");
}

TEST(FormatTest, InertRowsEscapeEveryCell) {
  EXPECT_EQ(Inert("node\x1b[2J"), "node\\x1B[2J");
  cli::Table t({"A", "B"});
  AddInertRow(t, {"ok", "bad\nline"});
  AddInertRow(t, {"a\\b", "caf\xC3\xA9"});
  EXPECT_EQ(t.Render(),
            "A     B\n"
            "ok    bad\\x0Aline\n"
            "a\\\\b  caf\xC3\xA9\n");
}

}  // namespace
}  // namespace lite::litectl
