#include "agent/peer_prober.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace lite::agent {

PeerProber::PeerProber(PeerProberOptions options, Module* module)
    : options_(options), module_(module) {}

PeerProber::~PeerProber() { Stop(); }

void PeerProber::Start() {
  absl::MutexLock lock(&mu_);
  if (running_ || stopping_) return;
  running_ = true;
  const int n = std::max(1, options_.max_in_flight);
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { Loop(); });
}

void PeerProber::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  // Only Start and Stop touch workers_, from the agent's Start/Shutdown.
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

absl::Status PeerProber::Submit(uint32_t node_id, uint64_t incarnation,
                                Done done) {
  absl::MutexLock lock(&mu_);
  if (!running_ || stopping_) {
    return absl::UnavailableError("the agent is not running or shutting down");
  }
  const int limit = std::max(1, options_.max_in_flight);
  if (in_flight_ >= limit) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%d peer probes are running on this node already (the limit); "
        "node %u not probed",
        in_flight_, node_id));
  }
  ++in_flight_;
  queue_.push_back(Job{node_id, incarnation, std::move(done)});
  return absl::OkStatus();
}

int PeerProber::InFlight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

void PeerProber::Loop() {
  while (true) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      // Accepted probes are answered even while stopping: their callers
      // wait for an answer (or drop it themselves).
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const absl::StatusOr<lite::v1::ProbedPeer> answer =
        module_->ProbePeer(job.node_id, job.incarnation);
    {
      // Free before the answer goes out: once the manager has it, another
      // probe fits.
      absl::MutexLock lock(&mu_);
      --in_flight_;
    }
    job.done(answer);
  }
}

}  // namespace lite::agent
