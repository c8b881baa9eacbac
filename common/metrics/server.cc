#include "common/metrics/server.h"

#include <exception>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/metrics/listen.h"

namespace lite::metrics {

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& listen,
    std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  if (absl::Status s = ValidateMetricsListen("--metrics_listen", listen);
      !s.ok()) {
    return s;
  }
  if (listen.empty()) {
    return absl::InvalidArgumentError(
        "--metrics_listen is empty: there is nothing to serve on");
  }
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // Two threads: a scrape reads the daemon's state under its lock for a
    // moment; a second one lets a slow client not hold up Prometheus.
    exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", listen, "num_threads", "2"});
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot serve metrics on --metrics_listen=%s (address in use, or not "
        "an address of this host?): %s",
        listen, e.what()));
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    return absl::UnavailableError(absl::StrFormat(
        "the metrics endpoint on %s reports no listening port", listen));
  }
  for (const auto& collectable : collectables) {
    exposer->RegisterCollectable(collectable);
  }
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(exposer), std::move(collectables), ports[0]));
}

MetricsServer::~MetricsServer() {
  // The Exposer stops civetweb (joining its threads) before the
  // collectables it reads go.
  exposer_.reset();
}

}  // namespace lite::metrics
