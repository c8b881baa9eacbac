// A latency histogram as a plain value: fixed bucket bounds, counts, sum.
// Not thread-safe: the lock of whatever owns it guards it, so a copy taken
// under that lock is a consistent snapshot of it together with the owner's
// other numbers, which prometheus::Histogram (its own mutex, not copyable)
// cannot give. families.h turns it into the exposition format.
#ifndef LITE_COMMON_METRICS_HISTOGRAM_H_
#define LITE_COMMON_METRICS_HISTOGRAM_H_

#include <array>
#include <cstdint>

#include "absl/time/time.h"

namespace lite::metrics {

class LatencyHistogram {
 public:
  // Upper bounds in seconds, for control-plane round trips: a gRPC call on
  // a LAN takes about a millisecond, an emulated guest's agent hundreds,
  // and the daemons give up after seconds (--request_timeout_ms,
  // --upcall_timeout).
  static constexpr std::array<double, 14> kBounds = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
      0.1,    0.25,  0.5,    1,     2.5,  5,     10};

  void Observe(absl::Duration d);

  // Observations in bucket i (kBounds[i-1], kBounds[i]]; the last entry,
  // index kBounds.size(), counts those above every bound. Not cumulative.
  const std::array<uint64_t, kBounds.size() + 1>& buckets() const {
    return buckets_;
  }
  uint64_t count() const { return count_; }
  double sum_seconds() const { return sum_seconds_; }

 private:
  std::array<uint64_t, kBounds.size() + 1> buckets_ = {};
  uint64_t count_ = 0;
  double sum_seconds_ = 0;
};

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_HISTOGRAM_H_
