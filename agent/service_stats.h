// The node's RPC service counters for heartbeats (Heartbeat.service_stats):
// lite.ko's LITE_CMD_RPC_SERVICE_GET, dumped on a thread of its own so that
// the heartbeat never waits on the module. Every `every`-th heartbeat takes
// the last dump (never blocking) and asks for a fresh one for next time:
// the stats a heartbeat carries are at most `every` heartbeats old. A node
// that serves nothing sends none, and neither does one whose lite.ko has
// no RPC services (UNIMPLEMENTED: dumped no more).
#ifndef LITE_AGENT_SERVICE_STATS_H_
#define LITE_AGENT_SERVICE_STATS_H_

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/counters.h"
#include "agent/module.h"
#include "lite/v1/manager.pb.h"

namespace lite::agent {

class ServiceStatsCache {
 public:
  // Stats ride on every `every`-th heartbeat (>= 1).
  ServiceStatsCache(Module* module, Counters* counters, int every = 5);
  ~ServiceStatsCache();
  ServiceStatsCache(const ServiceStatsCache&) = delete;
  ServiceStatsCache& operator=(const ServiceStatsCache&) = delete;

  void Start();
  // Waits for a dump in progress (bounded by the module's request timeout).
  void Stop();

  // Called for each heartbeat, in order: on every `every`-th one (the 1st,
  // then every `every`), the last dump's stats (empty when none came yet
  // or the node serves nothing) and a fresh dump is asked for; otherwise
  // empty. Never blocks on the module.
  std::vector<lite::v1::ServiceStats> ForHeartbeat();
  // Asks for a dump now (e.g. right after a join) without waiting for it.
  void Refresh();
  // Dumps done (ok or not), for tests.
  uint64_t Dumps() const;

 private:
  void Loop();

  Module* const module_;
  Counters* const counters_;
  const int every_;

  mutable absl::Mutex mu_;
  uint64_t beats_ ABSL_GUARDED_BY(mu_) = 0;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t dumps_ ABSL_GUARDED_BY(mu_) = 0;
  // lite.ko answered that it has no RPC services: the thread ended.
  bool unsupported_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<lite::v1::ServiceStats> last_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_SERVICE_STATS_H_
