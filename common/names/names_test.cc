// The naming rules, through the C++ wrapper and the C function. The
// NodeNames/LmrNames cases moved here from agent/validation_test.cc and
// controlplane/validation_test.cc with the implementations they tested.
#include "common/names/names.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "common/names/name_rules.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite.h"

namespace lite::names {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

TEST(LimitsTest, AreTheKernelsOwn) {
  EXPECT_EQ(kMaxLmrNameLength, size_t{LITE_NAME_MAX});
  EXPECT_EQ(kMaxNodeNameLength, size_t{LITE_NODE_NAME_MAX});
  EXPECT_EQ(kMaxLmrSizeBytes, uint64_t{64} << 30);
  EXPECT_EQ(kMaxLmrChunks, 4096);
  EXPECT_EQ(lite_name_max(LITE_NAME_KIND_LMR), kMaxLmrNameLength);
  EXPECT_EQ(lite_name_max(LITE_NAME_KIND_NODE), kMaxNodeNameLength);
}

// From agent/validation_test.cc.
TEST(ValidationTest, NodeNames) {
  EXPECT_THAT(ValidateNodeName("n", "node-1.rack_2"), IsOk());
  EXPECT_THAT(ValidateNodeName("n", std::string(64, 'a')), IsOk());
  EXPECT_THAT(ValidateNodeName("n", ""), StatusIs(kInvalid));
  EXPECT_THAT(ValidateNodeName("n", std::string(65, 'a')), StatusIs(kInvalid));
  EXPECT_THAT(ValidateNodeName("n", "-lead"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateNodeName("n", "has space"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateNodeName("n", "a/b"), StatusIs(kInvalid));
  // Lower case only, no trailing dot: "Node1" and "node1." are not "node1".
  EXPECT_THAT(ValidateNodeName("n", "Node1"),
              StatusIs(kInvalid, HasSubstr("must start with a lower-case")));
  EXPECT_THAT(ValidateNodeName("n", "nodE1"),
              StatusIs(kInvalid, HasSubstr("only [a-z0-9._-] are allowed")));
  EXPECT_THAT(ValidateNodeName("n", "node1."),
              StatusIs(kInvalid, HasSubstr("must not end with '.'")));
  EXPECT_THAT(ValidateNodeName("n", "node1.rack"), IsOk());
  // LMR names keep upper case.
  EXPECT_THAT(ValidateLmrName("n", "KV/Store."), IsOk());
}

// From agent/validation_test.cc.
TEST(ValidationTest, LmrNames) {
  EXPECT_THAT(ValidateLmrName("n", "db/table:1-a.b_c"), IsOk());
  EXPECT_THAT(ValidateLmrName("n", "/abs"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateLmrName("n", "a=b"), StatusIs(kInvalid));
  EXPECT_THAT(ValidateLmrName("n", std::string(129, 'x')), StatusIs(kInvalid));
}

// From controlplane/validation_test.cc.
TEST(ValidationTest, ManagerNodeNames) {
  EXPECT_TRUE(ValidateNodeName("n", "node-1.rack_2").ok());
  EXPECT_TRUE(ValidateNodeName("n", std::string(64, 'a')).ok());
  EXPECT_EQ(ValidateNodeName("n", std::string(65, 'a')).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateNodeName("n", "").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateNodeName("n", ".hidden").code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status slash = ValidateNodeName("node_name", "a/b");
  EXPECT_THAT(slash.message(), HasSubstr("node_name \"a/b\" has character "
                                         "0x2f at offset 1"));
}

// From controlplane/validation_test.cc.
TEST(ValidationTest, LmrNamesAllowPathLikeNames) {
  EXPECT_TRUE(ValidateLmrName("name", "app:db/shard-0.main").ok());
  EXPECT_EQ(ValidateLmrName("name", "/rooted").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateLmrName("name", "tab\tname").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateLmrName("name", std::string(129, 'x')).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidationTest, EveryMessageNamesFieldValueAndRule) {
  EXPECT_THAT(ValidateLmrName("name", ""),
              StatusIs(kInvalid,
                       "name is empty; give 1 to 128 characters "
                       "from [A-Za-z0-9._:/-]"));
  EXPECT_THAT(ValidateNodeName("node_name", std::string(65, 'a')),
              StatusIs(kInvalid, HasSubstr("is 65 characters long; the "
                                           "limit is 64")));
  EXPECT_THAT(ValidateNodeName("node_name", "_x"),
              StatusIs(kInvalid,
                       "node_name \"_x\" must start with a lower-case "
                       "letter or digit"));
  EXPECT_THAT(ValidateNodeName("node_name", "a:b"),
              StatusIs(kInvalid,
                       "node_name \"a:b\" has character 0x3a at "
                       "offset 1; only [a-z0-9._-] are allowed"));
}

TEST(ValidationTest, LongAndUnprintableValuesAreShownSafely) {
  const absl::Status long_name = ValidateLmrName("name", std::string(500, 'x'));
  EXPECT_THAT(long_name,
              StatusIs(kInvalid, HasSubstr("\"" + std::string(80, 'x') +
                                           "...\" is 500")));
  const absl::Status nul =
      ValidateLmrName("name", absl::string_view("ab\0c\n", 5));
  EXPECT_THAT(nul, StatusIs(kInvalid, HasSubstr("\"ab?c?\" has character "
                                                "0x00 at offset 2")));
}

TEST(NameRulesTest, CutsTheMessageToTheBuffer) {
  char small[16];
  std::memset(small, 'z', sizeof(small));
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_LMR, "the LMR name", "a b", 3, small,
                            sizeof(small)),
            -EINVAL);
  EXPECT_STREQ(small, "the LMR name \"a");
  // No buffer: only the verdict.
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_NODE, "n", "", 0, nullptr, 0),
            -EINVAL);
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_NODE, "n", "ok", 2, nullptr, 0), 0);
}

TEST(NameRulesTest, LimitsAreInclusive) {
  const std::string lmr(LITE_NAME_MAX, 'n');
  const std::string longer(LITE_NAME_MAX + 1, 'n');
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_LMR, "n", lmr.data(), lmr.size(),
                            nullptr, 0),
            0);
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_LMR, "n", longer.data(),
                            longer.size(), nullptr, 0),
            -EINVAL);
  const std::string node(LITE_NODE_NAME_MAX + 1, 'n');
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_NODE, "n", node.data(),
                            node.size() - 1, nullptr, 0),
            0);
  EXPECT_EQ(lite_name_check(LITE_NAME_KIND_NODE, "n", node.data(), node.size(),
                            nullptr, 0),
            -EINVAL);
}

}  // namespace
}  // namespace lite::names
