#include "tools/litectl/format.h"

#include <gtest/gtest.h>

#include "tools/litectl/args.h"

namespace lite::litectl {
namespace {

TEST(FormatTest, TableAlignsColumnsWithoutTrailingBlanks) {
  Table t({"ID", "NAME", "X"});
  t.AddRow({"1", "alpha", ""});
  t.AddRow({"10", "b"});
  EXPECT_EQ(t.Render(),
            "ID  NAME   X\n"
            "1   alpha\n"
            "10  b\n");
}

TEST(FormatTest, HumanBytes) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(4096), "4 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(64 << 20), "64 MiB");
  EXPECT_EQ(HumanBytes((uint64_t{1} << 30) - 1), "1023.9 MiB");
  EXPECT_EQ(HumanBytes(uint64_t{3} << 40), "3 TiB");
}

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

TEST(FormatTest, IdsModesAndLines) {
  EXPECT_EQ(HexId((uint64_t{2} << 32) | 1), "0x200000001");
  EXPECT_EQ(OctalMode(0640), "0640");
  EXPECT_EQ(OneLine("a\nb\tc"), "a b c");
  EXPECT_EQ(UtcTime(86400000 + 1), "1970-01-02T00:00:00.001Z");
  EXPECT_EQ(*ParseId("x", "42", 100), 42u);
  EXPECT_EQ(*ParseId("x", "0x2a", 100), 42u);
  EXPECT_FALSE(ParseId("x", "0", 100).ok());
  EXPECT_FALSE(ParseId("x", "101", 100).ok());
  EXPECT_FALSE(ParseId("x", "-1", 100).ok());
  EXPECT_FALSE(ParseId("x", "0x", 100).ok());
  EXPECT_FALSE(ParseId("x", "abc", 100).ok());
}

TEST(ArgsTest, ParsesLongShortSwitchesAndPositionals) {
  std::vector<FlagSpec> specs = {
      {.name = "output", .short_name = 'o'},
      {.name = "id"},
      {.name = "undo", .takes_value = false},
  };
  auto p =
      ParseArgs({"n1", "-o", "json", "--id=3", "--undo", "--", "--x"}, specs);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Get("output"), "json");
  EXPECT_EQ(p->Get("id"), "3");
  EXPECT_TRUE(p->Has("undo"));
  EXPECT_EQ(p->positional, (std::vector<std::string>{"n1", "--x"}));
  EXPECT_EQ(ParseArgs({"-ojson"}, specs)->Get("output"), "json");
  EXPECT_TRUE(ParseArgs({"--help"}, specs)->help);
  EXPECT_FALSE(ParseArgs({"--nope"}, specs).ok());
  EXPECT_FALSE(ParseArgs({"--id"}, specs).ok());
  EXPECT_FALSE(ParseArgs({"--undo=maybe"}, specs).ok());
  EXPECT_FALSE(ParseArgs({"--undo=false"}, specs)->Has("undo"));
}

TEST(ArgsTest, FirstPositionalSkipsFlagValues) {
  std::vector<FlagSpec> specs = {{.name = "manager"},
                                 {.name = "output", .short_name = 'o'}};
  EXPECT_EQ(FirstPositional({"--manager", "nodes", "lmrs"}, specs), 2);
  EXPECT_EQ(FirstPositional({"-o", "json", "nodes"}, specs), 2);
  EXPECT_EQ(FirstPositional({"--manager=x", "nodes"}, specs), 1);
  EXPECT_EQ(FirstPositional({"--help"}, specs), -1);
}

}  // namespace
}  // namespace lite::litectl
