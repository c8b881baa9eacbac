#include "agent/upcall_stats.h"

namespace lite::agent {

void UpcallStats::Answered(size_t kind, absl::StatusCode code,
                           absl::Duration took) {
  if (kind >= kUpcallKinds.size()) return;
  absl::MutexLock lock(&mu_);
  ++summary_[kind].answered[code];
  summary_[kind].latency.Observe(took);
}

UpcallStats::Summary UpcallStats::summary() const {
  absl::MutexLock lock(&mu_);
  return summary_;
}

}  // namespace lite::agent
