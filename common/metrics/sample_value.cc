#include "common/metrics/sample_value.h"

namespace lite::metrics {

std::optional<double> SampleValue(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name, const Labels& labels) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      if (m.label.size() != labels.size()) continue;
      bool same = true;
      for (size_t i = 0; i < labels.size(); ++i) {
        same &= m.label[i].name == labels[i].first &&
                m.label[i].value == labels[i].second;
      }
      if (!same) continue;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          return m.counter.value;
        case prometheus::MetricType::Gauge:
          return m.gauge.value;
        case prometheus::MetricType::Histogram:
          return static_cast<double>(m.histogram.sample_count);
        default:
          return m.untyped.value;
      }
    }
  }
  return std::nullopt;
}

}  // namespace lite::metrics
