// Building Prometheus metric families by hand, for collectors that read a
// daemon's state at scrape time (a prometheus::Collectable) instead of
// keeping prometheus::Counter and Gauge objects up to date at every change:
// what is computed from the state when asked can never drift from it.
#ifndef LITE_COMMON_METRICS_FAMILIES_H_
#define LITE_COMMON_METRICS_FAMILIES_H_

#include <string>
#include <utility>
#include <vector>

#include "common/metrics/histogram.h"
#include "prometheus/metric_family.h"

namespace lite::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// An empty family. Prometheus' naming rules (docs/metrics.md): lite_
// prefix, snake_case, counters end in _total, base units (_seconds,
// _bytes).
prometheus::MetricFamily Family(std::string name, std::string help,
                                prometheus::MetricType type);

// One sample of `family`, of the family's type.
void Add(prometheus::MetricFamily& family, const Labels& labels, double value);
// One histogram (the family must be a histogram's).
void AddHistogram(prometheus::MetricFamily& family, const Labels& labels,
                  const LatencyHistogram& histogram);

// A family with one unlabelled sample.
prometheus::MetricFamily Single(std::string name, std::string help,
                                prometheus::MetricType type, double value);

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_FAMILIES_H_
