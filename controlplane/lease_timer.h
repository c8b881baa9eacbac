// Runs ManagerState::Tick when something is due (a lease expiry, a request
// deadline, the end of recovery) and sleeps otherwise: no polling. The state
// machine wakes it when a deadline earlier than the one it sleeps towards
// appears.
#ifndef LITE_CONTROLPLANE_LEASE_TIMER_H_
#define LITE_CONTROLPLANE_LEASE_TIMER_H_

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "controlplane/manager_state.h"

namespace lite::controlplane {

class LeaseTimer {
 public:
  // Starts the timer thread. `state` must use the real clock and outlive
  // this object.
  explicit LeaseTimer(ManagerState* state);
  ~LeaseTimer();  // Stops and joins.

  LeaseTimer(const LeaseTimer&) = delete;
  LeaseTimer& operator=(const LeaseTimer&) = delete;

  void Stop();
  // How many times Tick ran (for tests: proves the timer does not spin).
  int64_t ticks() const;

 private:
  void Run();
  void Wake();

  ManagerState* const state_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  int64_t ticks_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_LEASE_TIMER_H_
