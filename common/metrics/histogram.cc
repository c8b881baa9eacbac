#include "common/metrics/histogram.h"

#include <algorithm>

namespace lite::metrics {

void LatencyHistogram::Observe(absl::Duration d) {
  // A clock that stepped back must not make a negative latency.
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(d));
  const auto* bound = std::lower_bound(kBounds.begin(), kBounds.end(), seconds);
  ++buckets_[static_cast<size_t>(bound - kBounds.begin())];
  ++count_;
  sum_seconds_ += seconds;
}

}  // namespace lite::metrics
