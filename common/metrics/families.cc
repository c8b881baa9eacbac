#include "common/metrics/families.h"

#include <limits>

namespace lite::metrics {

prometheus::MetricFamily Family(std::string name, std::string help,
                                prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

namespace {

prometheus::ClientMetric& NewSample(prometheus::MetricFamily& family,
                                    const Labels& labels) {
  prometheus::ClientMetric& sample = family.metric.emplace_back();
  for (const auto& [name, value] : labels) {
    sample.label.push_back({name, value});
  }
  return sample;
}

}  // namespace

void Add(prometheus::MetricFamily& family, const Labels& labels, double value) {
  prometheus::ClientMetric& sample = NewSample(family, labels);
  switch (family.type) {
    case prometheus::MetricType::Counter:
      sample.counter.value = value;
      break;
    case prometheus::MetricType::Gauge:
      sample.gauge.value = value;
      break;
    default:
      sample.untyped.value = value;
      break;
  }
}

void AddHistogram(prometheus::MetricFamily& family, const Labels& labels,
                  const LatencyHistogram& histogram) {
  prometheus::ClientMetric& sample = NewSample(family, labels);
  sample.histogram.sample_count = histogram.count();
  sample.histogram.sample_sum = histogram.sum_seconds();
  uint64_t cumulative = 0;
  for (size_t i = 0; i < histogram.buckets().size(); ++i) {
    cumulative += histogram.buckets()[i];
    sample.histogram.bucket.push_back(
        {cumulative, i < LatencyHistogram::kBounds.size()
                         ? LatencyHistogram::kBounds[i]
                         : std::numeric_limits<double>::infinity()});
  }
}

prometheus::MetricFamily Single(std::string name, std::string help,
                                prometheus::MetricType type, double value) {
  prometheus::MetricFamily family =
      Family(std::move(name), std::move(help), type);
  Add(family, {}, value);
  return family;
}

}  // namespace lite::metrics
