// Counts every RPC a gRPC server finishes, by service, method and status
// code, without touching any handler: a server interceptor sees the status
// each call ends with (unary and streaming alike, sync and callback API),
// and this collectable serves the counts as one counter family, e.g.
// lite_manager_rpc_calls_total{service="lite.v1.ClusterManager",
// method="Join",code="OK"}.
#ifndef LITE_COMMON_METRICS_RPC_METRICS_H_
#define LITE_COMMON_METRICS_RPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace lite::metrics {

class RpcMetrics : public prometheus::Collectable {
 public:
  // `name` and `help`: the counter family's. `services`: full names
  // ("lite.v1.ClusterManager") of the services the server registers,
  // looked up in the linked protobuf descriptors; every one of their
  // methods is counted by name, with a zero series for code OK from the
  // start. The standard health service (grpc.health.v1.Health, which
  // grpc::EnableDefaultHealthCheckService adds) is always known. A call to
  // any other path (gRPC answers it UNIMPLEMENTED) counts as service and
  // method "other": a client cannot make new series by inventing names.
  // INTERNAL if a service is not among the linked descriptors.
  static absl::StatusOr<std::shared_ptr<RpcMetrics>> Create(
      std::string name, std::string help,
      const std::vector<std::string>& services);

  // For grpc::ServerBuilder::experimental().SetInterceptorCreators, which
  // takes ownership; this object must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewInterceptorFactory();

  // Calls of service/method that ended with `code` so far.
  uint64_t Count(absl::string_view service, absl::string_view method,
                 absl::StatusCode code) const;

  std::vector<prometheus::MetricFamily> Collect() const override;

  // For the interceptor: one call of `path` ("/pkg.Service/Method") ended.
  void Finished(absl::string_view path, absl::StatusCode code);

 private:
  using Key = std::tuple<std::string, std::string, absl::StatusCode>;

  RpcMetrics(std::string name, std::string help) : name_(name), help_(help) {}

  const std::string name_;
  const std::string help_;
  // "/pkg.Service/Method" -> (service, method). Immutable after Create.
  absl::flat_hash_map<std::string, std::pair<std::string, std::string>> known_;

  mutable absl::Mutex mu_;
  std::map<Key, uint64_t> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_RPC_METRICS_H_
