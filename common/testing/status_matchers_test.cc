#include "common/testing/status_matchers.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatusIsTest, MatchesTheCodeOfAStatus) {
  absl::Status s = absl::NotFoundError("no LMR \"kv\"");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(s, Not(StatusIs(absl::StatusCode::kInvalidArgument)));
  EXPECT_THAT(s, StatusIs(AnyOf(absl::StatusCode::kNotFound,
                                absl::StatusCode::kAborted)));
}

TEST(StatusIsTest, MatchesTheCodeAndMessage) {
  absl::Status s = absl::NotFoundError("no LMR \"kv\"");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, "no LMR \"kv\""));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("kv")));
  EXPECT_THAT(s, Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("x"))));
  EXPECT_THAT(s, Not(StatusIs(absl::StatusCode::kAborted, HasSubstr("kv"))));
}

TEST(StatusIsTest, MatchesAStatusOr) {
  absl::StatusOr<int> error = absl::PermissionDeniedError("mode 0600");
  EXPECT_THAT(error,
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("0600")));
  absl::StatusOr<int> value = 7;
  EXPECT_THAT(value, StatusIs(absl::StatusCode::kOk));
}

TEST(IsOkTest, OkOnlyForOk) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<std::string>("x"), IsOk());
  EXPECT_THAT(absl::InternalError("boom"), Not(IsOk()));
  EXPECT_THAT(absl::StatusOr<int>(absl::UnknownError("?")), Not(IsOk()));
}

TEST(StatusMatchersTest, FailureExplainsTheStatus) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(
      ::testing::ExplainMatchResult(StatusIs(absl::StatusCode::kNotFound),
                                    absl::AbortedError("raced"), &listener));
  EXPECT_THAT(listener.str(), HasSubstr("ABORTED: raced"));
}

}  // namespace
