// Finishing a unary callback RPC with a state-machine result: the one way
// both of litemgr's services (service.cc, operator_service.cc) answer.
#ifndef LITE_CONTROLPLANE_UNARY_REPLY_H_
#define LITE_CONTROLPLANE_UNARY_REPLY_H_

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/status/statusor.h"
#include "common/grpc/status.h"

namespace lite::controlplane {

// Copies the response on success and finishes with the status's code.
template <typename Response>
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context,
                                absl::StatusOr<Response> result,
                                Response* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (result.ok()) *response = std::move(*result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_UNARY_REPLY_H_
