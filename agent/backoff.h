// Exponential backoff with jitter for reconnecting to the manager: the first
// wait is `initial`, each later one doubles up to `max`, and each is spread
// uniformly over [50%, 100%] of its nominal value so that agents which lost
// the manager at the same moment do not all come back at the same moment.
#ifndef LITE_AGENT_BACKOFF_H_
#define LITE_AGENT_BACKOFF_H_

#include <cstdint>

#include "absl/random/random.h"
#include "absl/time/time.h"

namespace lite::agent {

class Backoff {
 public:
  // Requires 0 < initial <= max.
  Backoff(absl::Duration initial, absl::Duration max);

  // The next wait; advances the sequence.
  absl::Duration Next();
  // Back to `initial` (after a session that worked).
  void Reset();

 private:
  const absl::Duration initial_;
  const absl::Duration max_;
  absl::Duration nominal_;
  absl::BitGen rng_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_BACKOFF_H_
