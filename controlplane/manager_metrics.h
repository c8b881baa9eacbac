// litemgr's Prometheus metrics (docs/metrics.md lists each): membership,
// sessions, LMRs, grants, services and the requests sent to agents, read
// from the ManagerState at each scrape. The gauges are the state itself
// and the counters are totals the state keeps, so what a scrape shows can
// never drift from what the manager holds. RPC calls are counted apart, by
// the interceptor of common/metrics/rpc_metrics.h.
#ifndef LITE_CONTROLPLANE_MANAGER_METRICS_H_
#define LITE_CONTROLPLANE_MANAGER_METRICS_H_

#include <vector>

#include "controlplane/manager_state.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace lite::controlplane {

// The families of one snapshot, every series present (zero or not), so that
// a rate or an alert has a series to look at from the manager's start.
std::vector<prometheus::MetricFamily> ManagerFamilies(
    const ManagerMetricsSnapshot& snapshot);

class ManagerMetrics : public prometheus::Collectable {
 public:
  // `state` must outlive this object and the endpoint serving it.
  explicit ManagerMetrics(const ManagerState* state) : state_(state) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    return ManagerFamilies(state_->MetricsSnapshot());
  }

 private:
  const ManagerState* const state_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_MANAGER_METRICS_H_
