#include "common/status/macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace lite {
namespace {

absl::Status Fail(absl::StatusCode code, int* calls) {
  ++*calls;
  return absl::Status(code, "failed");
}

absl::Status ReturnIfError(absl::Status first, bool* reached_end) {
  LITE_RETURN_IF_ERROR(first);
  *reached_end = true;
  return absl::OkStatus();
}

TEST(ReturnIfErrorTest, ReturnsTheErrorAndStops) {
  bool reached_end = false;
  absl::Status s = ReturnIfError(absl::NotFoundError("gone"), &reached_end);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "gone");
  EXPECT_FALSE(reached_end);
}

TEST(ReturnIfErrorTest, ContinuesOnOk) {
  bool reached_end = false;
  EXPECT_TRUE(ReturnIfError(absl::OkStatus(), &reached_end).ok());
  EXPECT_TRUE(reached_end);
}

TEST(ReturnIfErrorTest, EvaluatesItsExpressionOnce) {
  int calls = 0;
  auto run = [&]() -> absl::Status {
    LITE_RETURN_IF_ERROR(Fail(absl::StatusCode::kAborted, &calls));
    return absl::OkStatus();
  };
  EXPECT_EQ(run().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(calls, 1);
}

absl::StatusOr<std::unique_ptr<std::string>> MakeText(bool ok) {
  if (!ok) return absl::InvalidArgumentError("no text");
  return std::make_unique<std::string>("text");
}

absl::StatusOr<size_t> TextLength(bool ok) {
  // A move-only value, declared in the macro.
  LITE_ASSIGN_OR_RETURN(std::unique_ptr<std::string> text, MakeText(ok));
  return text->size();
}

TEST(AssignOrReturnTest, AssignsTheValue) {
  absl::StatusOr<size_t> n = TextLength(true);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 4u);
}

TEST(AssignOrReturnTest, ReturnsTheError) {
  absl::StatusOr<size_t> n = TextLength(false);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(n.status().message(), "no text");
}

TEST(AssignOrReturnTest, AssignsToAnExistingVariable) {
  auto run = [](bool ok) -> absl::StatusOr<std::string> {
    std::unique_ptr<std::string> text;
    LITE_ASSIGN_OR_RETURN(text, MakeText(ok));
    LITE_ASSIGN_OR_RETURN(text, MakeText(ok));  // twice in one scope
    return *text;
  };
  EXPECT_EQ(*run(true), "text");
  EXPECT_EQ(run(false).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lite
