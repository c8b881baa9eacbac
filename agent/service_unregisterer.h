// Tells the manager that services of this node are gone (the RPC_UNREGISTER
// upcall: the server process closed the service or exited). Nobody waits
// for the answer in lite.ko, so this runs off the upcall workers: one thread
// calls UnregisterService and, while the manager is unreachable (not
// connected, UNAVAILABLE, DEADLINE_EXCEEDED), asks again with backoff, so
// that a service does not stay listed (and openable) after its process
// ended. It gives up on answers that cannot change by asking again
// (NOT_FOUND: gone already; FAILED_PRECONDITION: a stale incarnation,
// whose services the manager removed with it; PERMISSION_DENIED,
// INVALID_ARGUMENT) and after `give_up_after`. Jobs live in memory only: a
// restarted agent re-registers what lite.ko still serves, and the manager
// drops a node's services when the node ends.
#ifndef LITE_AGENT_SERVICE_UNREGISTERER_H_
#define LITE_AGENT_SERVICE_UNREGISTERER_H_

#include <cstdint>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/context_registry.h"
#include "agent/counters.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::agent {

class CallerSource;

struct ServiceUnregistererOptions {
  // Bound of one UnregisterService call.
  absl::Duration rpc_timeout = absl::Seconds(5);
  absl::Duration retry_initial = absl::Milliseconds(200);
  absl::Duration retry_max = absl::Seconds(10);
  // A job older than this is dropped (logged and counted).
  absl::Duration give_up_after = absl::Minutes(10);
};

class ServiceUnregisterer {
 public:
  ServiceUnregisterer(ServiceUnregistererOptions options,
                      lite::v1::ClusterManager::StubInterface* stub,
                      CallerSource* callers, Counters* counters);
  ~ServiceUnregisterer();
  ServiceUnregisterer(const ServiceUnregisterer&) = delete;
  ServiceUnregisterer& operator=(const ServiceUnregisterer&) = delete;

  void Start();
  // Cancels a call in flight and joins; jobs still queued are dropped.
  void Stop();

  // Queues UnregisterService for the service (once per id).
  void Unregister(uint64_t service_id);
  // Jobs not finished yet, for tests and status.
  size_t Pending() const;

 private:
  struct Job {
    absl::Time queued;
    absl::Time next = absl::InfinitePast();
    int failures = 0;
  };
  void Loop();
  // One attempt; true when the job is finished (either way).
  bool Attempt(uint64_t service_id, const Job& job);

  const ServiceUnregistererOptions options_;
  lite::v1::ClusterManager::StubInterface* const stub_;
  CallerSource* const callers_;
  Counters* const counters_;
  ContextRegistry contexts_;

  mutable absl::Mutex mu_;
  std::map<uint64_t, Job> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_SERVICE_UNREGISTERER_H_
