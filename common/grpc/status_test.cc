#include "common/grpc/status.h"

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace lite {
namespace {

struct CodePair {
  absl::StatusCode absl_code;
  grpc::StatusCode grpc_code;
};

// Every code of google.rpc.Code, in both spellings.
constexpr CodePair kCodes[] = {
    {absl::StatusCode::kOk, grpc::StatusCode::OK},
    {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
    {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
    {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
    {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
    {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
    {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
    {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
    {absl::StatusCode::kResourceExhausted,
     grpc::StatusCode::RESOURCE_EXHAUSTED},
    {absl::StatusCode::kFailedPrecondition,
     grpc::StatusCode::FAILED_PRECONDITION},
    {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
    {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
    {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
    {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
    {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
    {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
    {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
};

TEST(GrpcStatusTest, EveryCodeBothWaysWithItsMessage) {
  for (const CodePair& c : kCodes) {
    SCOPED_TRACE(absl::StatusCodeToString(c.absl_code));
    const std::string message =
        c.absl_code == absl::StatusCode::kOk
            ? ""
            : absl::StrCat("node \"a/b\" failed: ",
                           absl::StatusCodeToString(c.absl_code));

    grpc::Status to = ToGrpcStatus(absl::Status(c.absl_code, message));
    EXPECT_EQ(to.error_code(), c.grpc_code);
    EXPECT_EQ(to.error_message(), message);

    absl::Status from = FromGrpcStatus(grpc::Status(c.grpc_code, message));
    EXPECT_EQ(from.code(), c.absl_code);
    EXPECT_EQ(from.message(), message);

    // A round trip changes nothing.
    EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(absl::Status(c.absl_code, message))),
              absl::Status(c.absl_code, message));
  }
}

TEST(GrpcStatusTest, OkCarriesNoMessage) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::OkStatus()).error_message(), "");
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

// A code no enumerator names (a newer peer's). 31 is the largest value
// grpc::StatusCode can hold: it has no fixed underlying type and its largest
// enumerator is 16, so its values are 0..31 and 42 would be undefined
// behaviour to load (UBSan: "not a valid value for type 'StatusCode'").
TEST(GrpcStatusTest, CodeOutsideTheEnumIsUnknown) {
  grpc::Status odd(static_cast<grpc::StatusCode>(31), "from the future");
  absl::Status from = FromGrpcStatus(odd);
  EXPECT_EQ(from.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(from.message(), "from the future");
}

}  // namespace
}  // namespace lite
