// Every request the manager has sent a node on its session and still waits
// for: the one table behind the four "ask a node and wait" paths
// (AllocateLmrMemory for AllocLmr, BindServiceRing for BindService,
// ReleaseLmrMemory for the fenced free, ProbePeer for a SUSPECT node).
//
// It hands out the request ids, remembers which incarnation of which node
// each request went to and when its caller gives up, checks that an answer
// comes from that incarnation, tells a late answer (to a request already
// given up: ignored) from one naming a request never sent (an error), and
// counts how each request ended for the metrics endpoint. What a request is
// for stays with the part that sent it (the pending allocation, the bind,
// the probe round, the release), keyed by the request id.
//
// Not thread-safe: ManagerState keeps one under its lock.
#ifndef LITE_CONTROLPLANE_NODE_REQUESTS_H_
#define LITE_CONTROLPLANE_NODE_REQUESTS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/histogram.h"

namespace lite::controlplane {

class NodeRequests {
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
    // No answer by the request's deadline.
    kTimeout,
    // Given up unanswered: the node's incarnation ended, the probe round
    // ended, or the manager shut down.
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
    // From the send to the answer, answered requests only.
    std::array<metrics::LatencyHistogram, kKinds> latency = {};
  };

  struct Request {
    Kind kind = Kind::kAllocateLmrMemory;
    uint32_t node_id = 0;
    uint64_t incarnation = 0;
    absl::Time sent;
    // When NextDue hands it back as timed out. InfiniteFuture: never; the
    // part that sent it keeps the time itself (a probe ends with its round,
    // a release request with the release's own timer, which also drives
    // the fence and the backoff).
    absl::Time deadline = absl::InfiniteFuture();
  };

  // Records a request to `incarnation` of `node_id`, sent at `now`, and
  // returns its id: never 0, never handed out twice.
  uint64_t Start(Kind kind, uint32_t node_id, uint64_t incarnation,
                 absl::Time now, absl::Time deadline = absl::InfiniteFuture());

  // The request a NodeRequestResult from `incarnation` of `node_id` answers.
  // nullopt: the request was in flight once and has ended (given up, timed
  // out, or answered before): a late answer, to be ignored.
  // INVALID_ARGUMENT: no such request was ever sent, or it was sent to
  // another node or incarnation (an agent may answer only its own).
  absl::StatusOr<std::optional<Request>> Answered(uint64_t request_id,
                                                  uint32_t node_id,
                                                  uint64_t incarnation) const;

  // Ends a request with `outcome` at `now`. False (and nothing counted) if
  // it is not in flight: each request counts once, with the first way it
  // ended.
  bool End(uint64_t request_id, Outcome outcome, absl::Time now);

  // The earliest request whose deadline is at or before `now`, if any. It
  // stays in flight until End.
  std::optional<std::pair<uint64_t, Kind>> NextDue(absl::Time now) const;
  // The earliest deadline in flight (InfiniteFuture: none).
  absl::Time NextDeadline() const;

  const Summary& summary() const { return summary_; }

 private:
  uint64_t last_id_ = 0;
  absl::flat_hash_map<uint64_t, Request> in_flight_;
  // (deadline, id) of the requests with a finite deadline.
  std::set<std::pair<absl::Time, uint64_t>> deadlines_;
  Summary summary_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_NODE_REQUESTS_H_
