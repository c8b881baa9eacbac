// Tests' view of collected metrics: one sample's value, found by family
// name and exact labels, so a test states what a scrape must show.
#ifndef LITE_COMMON_METRICS_SAMPLE_VALUE_H_
#define LITE_COMMON_METRICS_SAMPLE_VALUE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/metric_family.h"

namespace lite::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// The value of family `name`'s sample with exactly `labels` (in order): a
// counter's or gauge's value, a histogram's count. nullopt when there is
// no such sample.
std::optional<double> SampleValue(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name, const Labels& labels = {});

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_SAMPLE_VALUE_H_
