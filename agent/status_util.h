// Conversions between gRPC and Abseil status (same code numbers).
#ifndef LITE_AGENT_STATUS_UTIL_H_
#define LITE_AGENT_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace lite::agent {

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      s.error_message());
}

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()),
                      std::string(s.message()));
}

}  // namespace lite::agent

#endif  // LITE_AGENT_STATUS_UTIL_H_
