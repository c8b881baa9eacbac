#include "common/grpc/status.h"

#include <string>

namespace lite {
namespace {

// The last code google.rpc.Code defines; both enums stop there.
constexpr int kLastCode = static_cast<int>(absl::StatusCode::kUnauthenticated);
static_assert(kLastCode == grpc::StatusCode::UNAUTHENTICATED);
static_assert(static_cast<int>(absl::StatusCode::kNotFound) ==
              grpc::StatusCode::NOT_FOUND);
static_assert(static_cast<int>(absl::StatusCode::kFailedPrecondition) ==
              grpc::StatusCode::FAILED_PRECONDITION);

bool IsKnownCode(int code) { return code >= 0 && code <= kLastCode; }

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(status.code());
  return grpc::Status(IsKnownCode(code) ? static_cast<grpc::StatusCode>(code)
                                        : grpc::StatusCode::UNKNOWN,
                      std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const int code = static_cast<int>(status.error_code());
  return absl::Status(IsKnownCode(code) ? static_cast<absl::StatusCode>(code)
                                        : absl::StatusCode::kUnknown,
                      status.error_message());
}

}  // namespace lite
