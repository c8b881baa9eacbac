// gMock matchers for absl::Status and absl::StatusOr<T>, shaped like
// Abseil's absl/status/status_matchers.h (absent from Debian's 20220623), so
// that a later Abseil is a rename of lite_testing to absl_testing:
//
//   EXPECT_THAT(Parse("x"), StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(Lookup(id), StatusIs(absl::StatusCode::kNotFound,
//                                    HasSubstr("no LMR")));
//   ASSERT_THAT(Open(), IsOk());
//
// As Abseil says, there is no NotOk(): check for the specific error.
#ifndef LITE_COMMON_TESTING_STATUS_MATCHERS_H_
#define LITE_COMMON_TESTING_STATUS_MATCHERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace lite_testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace internal

// The code (a value or a matcher of absl::StatusCode) and, optionally, the
// message (a string or a matcher of std::string).
MATCHER_P(StatusIs, code,
          "has status code " +
              ::testing::DescribeMatcher<absl::StatusCode>(code, negation)) {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "whose status is " << status;
  return ::testing::Matches(code)(status.code());
}

MATCHER_P2(StatusIs, code, message,
           (negation ? "not (" : "(") + std::string("has status code ") +
               ::testing::DescribeMatcher<absl::StatusCode>(code) +
               " and a message that " +
               ::testing::DescribeMatcher<std::string>(message) + ")") {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "whose status is " << status;
  return ::testing::Matches(code)(status.code()) &&
         ::testing::SafeMatcherCast<const std::string&>(message).Matches(
             std::string(status.message()));
}

MATCHER(IsOk, negation ? "is not OK" : "is OK") {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "whose status is " << status;
  return status.ok();
}

}  // namespace lite_testing

#endif  // LITE_COMMON_TESTING_STATUS_MATCHERS_H_
