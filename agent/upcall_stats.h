// How the agent answered applications' upcalls: by kind and by the status
// the application got (its errno follows from it), and how long each took
// from the agent's receipt to its answer, including any wait for the
// manager connection. The UpcallDispatcher records, the agent's metrics
// endpoint reads (agent_metrics.h). Thread-safe.
#ifndef LITE_AGENT_UPCALL_STATS_H_
#define LITE_AGENT_UPCALL_STATS_H_

#include <array>
#include <cstdint>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/histogram.h"

namespace lite::agent {

// Upcall kinds by Upcall::request's index (module.h), as metric labels.
inline constexpr std::array<const char*, 9> kUpcallKinds = {
    "alloc",        "register",       "map",      "unmap",   "free",
    "rpc_register", "rpc_unregister", "rpc_open", "rpc_bind"};

class UpcallStats {
 public:
  struct Kind {
    // The status codes answered, with OK always present.
    std::map<absl::StatusCode, uint64_t> answered = {
        {absl::StatusCode::kOk, 0}};
    metrics::LatencyHistogram latency;
  };
  using Summary = std::array<Kind, kUpcallKinds.size()>;

  // An upcall of kind `kind` (an index of kUpcallKinds) was answered with
  // `code` after `took`.
  void Answered(size_t kind, absl::StatusCode code, absl::Duration took);
  Summary summary() const;

 private:
  mutable absl::Mutex mu_;
  Summary summary_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::agent

#endif  // LITE_AGENT_UPCALL_STATS_H_
