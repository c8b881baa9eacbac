// The authz file as litemgr last read it, for Prometheus (docs/metrics.md):
// whether the file read last was valid (a bad edit keeps roles and only
// withdraws, common/tls/authz.h), how many tables were applied, how many
// names have a role, and how many open streams hold one. An alert on
// lite_manager_authz_file_valid == 0 catches an edit that did not take.
#ifndef LITE_CONTROLPLANE_AUTHZ_METRICS_H_
#define LITE_CONTROLPLANE_AUTHZ_METRICS_H_

#include <vector>

#include "common/tls/authz.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace lite::controlplane {

class AuthzMetrics : public prometheus::Collectable {
 public:
  // `authz` must outlive this object and the endpoint serving it. Under
  // --insecure there is no file: nothing is reported.
  explicit AuthzMetrics(const tls::Authz* authz) : authz_(authz) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const tls::Authz* const authz_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_AUTHZ_METRICS_H_
