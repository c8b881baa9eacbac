// The HTTP endpoint a daemon serves its Prometheus metrics on: GET /metrics
// in the text exposition format, on the address of --metrics_listen
// (listen.h). prometheus-cpp's Exposer (civetweb) does the HTTP; this adds a
// start that fails with a message instead of an exception, and keeps the
// collectables alive as long as the endpoint (the Exposer holds only weak
// pointers to them).
#ifndef LITE_COMMON_METRICS_SERVER_H_
#define LITE_COMMON_METRICS_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace lite::metrics {

class MetricsServer {
 public:
  // Serves what `collectables` report, collected at each scrape, on
  // `listen` (HOST:PORT, checked with ValidateMetricsListen; port 0 picks a
  // free one). Errors: INVALID_ARGUMENT for a bad address, UNAVAILABLE when
  // it cannot be bound (in use, or not an address of this host).
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const std::string& listen,
      std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  // Stops serving; a scrape in progress finishes first.
  ~MetricsServer();

  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port bound.
  int port() const { return port_; }

 private:
  MetricsServer(std::unique_ptr<prometheus::Exposer> exposer,
                std::vector<std::shared_ptr<prometheus::Collectable>> kept,
                int port)
      : exposer_(std::move(exposer)), kept_(std::move(kept)), port_(port) {}

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::vector<std::shared_ptr<prometheus::Collectable>> kept_;
  const int port_;
};

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_SERVER_H_
