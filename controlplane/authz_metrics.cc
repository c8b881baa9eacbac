#include "controlplane/authz_metrics.h"

#include "common/metrics/families.h"

namespace lite::controlplane {

std::vector<prometheus::MetricFamily> AuthzMetrics::Collect() const {
  if (authz_->insecure()) return {};
  const tls::Authz::FileState state = authz_->file_state();
  using metrics::Single;
  using prometheus::MetricType;
  return {
      Single("lite_manager_authz_file_valid",
             "1 when the authz file read last was valid; 0 after a missing "
             "file or a bad edit (roles kept, removals applied)",
             MetricType::Gauge, state.valid ? 1 : 0),
      Single("lite_manager_authz_generation",
             "authz tables applied since the start (the first load is 1)",
             MetricType::Gauge, static_cast<double>(state.generation)),
      Single("lite_manager_authz_names", "names with a role in the authz table",
             MetricType::Gauge, static_cast<double>(state.names)),
      Single("lite_manager_authz_holds",
             "open Session and Watch streams holding a role (ended when it "
             "is withdrawn)",
             MetricType::Gauge, static_cast<double>(authz_->holds())),
  };
}

}  // namespace lite::controlplane
