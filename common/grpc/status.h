// Conversions between grpc::Status and absl::Status, at the edge of every
// gRPC call: the daemons' logic speaks absl::Status, the wire speaks
// grpc::Status. The two enums have the same codes with the same numbers
// (both follow google.rpc.Code), so a conversion keeps the code and the
// message; gRPC's binary error details are not carried (LITE sends none).
#ifndef LITE_COMMON_GRPC_STATUS_H_
#define LITE_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace lite {

// OK stays OK (with no message); a code outside google.rpc.Code becomes
// UNKNOWN, with the message kept.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace lite

#endif  // LITE_COMMON_GRPC_STATUS_H_
