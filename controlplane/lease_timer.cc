#include "controlplane/lease_timer.h"

#include "absl/time/clock.h"

namespace lite::controlplane {

LeaseTimer::LeaseTimer(ManagerState* state) : state_(state) {
  state_->SetDeadlineListener([this] { Wake(); });
  thread_ = std::thread([this] { Run(); });
}

LeaseTimer::~LeaseTimer() { Stop(); }

void LeaseTimer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
    cv_.Signal();
  }
  if (thread_.joinable()) thread_.join();
  state_->SetDeadlineListener(nullptr);
}

int64_t LeaseTimer::ticks() const {
  absl::MutexLock lock(&mu_);
  return ticks_;
}

void LeaseTimer::Wake() {
  absl::MutexLock lock(&mu_);
  woken_ = true;
  cv_.Signal();
}

void LeaseTimer::Run() {
  while (true) {
    const absl::Time next = state_->Tick();
    absl::MutexLock lock(&mu_);
    ++ticks_;
    while (!stop_ && !woken_ && absl::Now() < next) {
      cv_.WaitWithDeadline(&mu_, next);
    }
    if (stop_) return;
    woken_ = false;
  }
}

}  // namespace lite::controlplane
