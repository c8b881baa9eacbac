// The requests the manager sends agents on their sessions (NodeRequest:
// AllocateLmrMemory, ReleaseLmrMemory, BindServiceRing): how many are in
// flight, how each ended, and how long the answered ones took, by kind.
// ManagerState keeps one under its lock and reports a Summary on its
// metrics endpoint (manager_metrics.h); an operator sees from it whether
// agents answer and how fast.
#ifndef LITE_CONTROLPLANE_NODE_REQUEST_STATS_H_
#define LITE_CONTROLPLANE_NODE_REQUEST_STATS_H_

#include <array>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/metrics/histogram.h"

namespace lite::controlplane {

class NodeRequestStats {
 public:
  enum class Kind {
    kAllocateLmrMemory,
    kReleaseLmrMemory,
    kBindServiceRing,
    kProbePeer,
  };
  enum class Outcome {
    // The agent answered with status 0 / with an error status.
    kOk,
    kError,
    // No answer within --request_timeout_ms.
    kTimeout,
    // Given up unanswered: the node's incarnation ended, or the manager
    // shut down.
    kAbandoned,
  };
  static constexpr size_t kKinds = 4;
  static constexpr size_t kOutcomes = 4;
  // Metric label values: "allocate_lmr_memory", ...; "ok", "error",
  // "timeout", "abandoned".
  static const char* KindName(Kind kind);
  static const char* OutcomeName(Outcome outcome);

  struct Summary {
    std::array<std::array<uint64_t, kOutcomes>, kKinds> ended = {};
    std::array<uint64_t, kKinds> in_flight = {};
    // From the send to the answer, answered requests only (a timeout's
    // time is the timeout).
    std::array<metrics::LatencyHistogram, kKinds> latency = {};
  };

  // Request `request_id` of `kind` was queued on a session at `now`.
  void Sent(uint64_t request_id, Kind kind, absl::Time now);
  // It ended. A request that is not in flight (ended already: a late
  // answer, or a give-up after the answer) is ignored, so each request
  // counts once, with the first way it ended.
  void Ended(uint64_t request_id, Outcome outcome, absl::Time now);

  const Summary& summary() const { return summary_; }

 private:
  absl::flat_hash_map<uint64_t, std::pair<Kind, absl::Time>> in_flight_;
  Summary summary_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_NODE_REQUEST_STATS_H_
