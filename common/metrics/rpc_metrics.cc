#include "common/metrics/rpc_metrics.h"

#include "absl/strings/str_cat.h"
#include "common/metrics/families.h"
#include "google/protobuf/descriptor.h"

namespace lite::metrics {
namespace {

using grpc::experimental::InterceptionHookPoints;

// Served by gRPC itself (grpc::EnableDefaultHealthCheckService), not a
// generated service of this binary, so not in the descriptor pool.
constexpr char kHealthService[] = "grpc.health.v1.Health";
constexpr const char* kHealthMethods[] = {"Check", "Watch"};
constexpr char kOther[] = "other";

class CountingInterceptor : public grpc::experimental::Interceptor {
 public:
  CountingInterceptor(RpcMetrics* metrics, std::string path)
      : metrics_(metrics), path_(std::move(path)) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    // The status a call ends with passes here exactly once, whatever the
    // kind of RPC and whoever ended it (the handler, or gRPC for a
    // cancelled call).
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->Finished(path_, static_cast<absl::StatusCode>(
                                    methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* const metrics_;
  const std::string path_;
};

class Factory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(RpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new CountingInterceptor(
        metrics_, info->method() == nullptr ? "" : info->method());
  }

 private:
  RpcMetrics* const metrics_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<RpcMetrics>> RpcMetrics::Create(
    std::string name, std::string help,
    const std::vector<std::string>& services) {
  std::shared_ptr<RpcMetrics> metrics(
      new RpcMetrics(std::move(name), std::move(help)));
  for (const char* method : kHealthMethods) {
    metrics->known_[absl::StrCat("/", kHealthService, "/", method)] = {
        kHealthService, method};
  }
  for (const std::string& service : services) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
            service);
    if (descriptor == nullptr) {
      return absl::InternalError(absl::StrCat(
          "RPC metrics: service ", service, " is not linked into this binary"));
    }
    for (int i = 0; i < descriptor->method_count(); ++i) {
      const std::string& method = descriptor->method(i)->name();
      metrics->known_[absl::StrCat("/", service, "/", method)] = {service,
                                                                  method};
    }
  }
  absl::MutexLock lock(&metrics->mu_);
  for (const auto& [path, names] : metrics->known_) {
    metrics->counts_[{names.first, names.second, absl::StatusCode::kOk}] = 0;
  }
  return metrics;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
RpcMetrics::NewInterceptorFactory() {
  return std::make_unique<Factory>(this);
}

void RpcMetrics::Finished(absl::string_view path, absl::StatusCode code) {
  auto it = known_.find(path);
  Key key = it == known_.end() ? Key{kOther, kOther, code}
                               : Key{it->second.first, it->second.second, code};
  absl::MutexLock lock(&mu_);
  ++counts_[std::move(key)];
}

uint64_t RpcMetrics::Count(absl::string_view service, absl::string_view method,
                           absl::StatusCode code) const {
  absl::MutexLock lock(&mu_);
  auto it = counts_.find(Key{std::string(service), std::string(method), code});
  return it == counts_.end() ? 0 : it->second;
}

std::vector<prometheus::MetricFamily> RpcMetrics::Collect() const {
  prometheus::MetricFamily family =
      Family(name_, help_, prometheus::MetricType::Counter);
  absl::MutexLock lock(&mu_);
  for (const auto& [key, count] : counts_) {
    const auto& [service, method, code] = key;
    Add(family,
        {{"service", service},
         {"method", method},
         {"code", absl::StatusCodeToString(code)}},
        static_cast<double>(count));
  }
  return {std::move(family)};
}

}  // namespace lite::metrics
