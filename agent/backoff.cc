#include "agent/backoff.h"

#include <algorithm>

namespace lite::agent {

Backoff::Backoff(absl::Duration initial, absl::Duration max)
    : initial_(initial), max_(std::max(initial, max)), nominal_(initial) {}

absl::Duration Backoff::Next() {
  const absl::Duration nominal = nominal_;
  nominal_ = std::min(nominal_ * 2, max_);
  return nominal * absl::Uniform(rng_, 0.5, 1.0);
}

void Backoff::Reset() { nominal_ = initial_; }

}  // namespace lite::agent
