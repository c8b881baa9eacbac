#include "agent/service_stats.h"

#include <algorithm>
#include <utility>

#include "common/log/log.h"

namespace lite::agent {

ServiceStatsCache::ServiceStatsCache(Module* module, Counters* counters,
                                     int every)
    : module_(module), counters_(counters), every_(std::max(every, 1)) {}

ServiceStatsCache::~ServiceStatsCache() { Stop(); }

void ServiceStatsCache::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ServiceStatsCache::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<lite::v1::ServiceStats> ServiceStatsCache::ForHeartbeat() {
  absl::MutexLock lock(&mu_);
  if (beats_++ % every_ != 0 || unsupported_) return {};
  wanted_ = true;
  return last_;
}

void ServiceStatsCache::Refresh() {
  absl::MutexLock lock(&mu_);
  wanted_ = true;
}

uint64_t ServiceStatsCache::Dumps() const {
  absl::MutexLock lock(&mu_);
  return dumps_;
}

void ServiceStatsCache::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || wanted_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      wanted_ = false;
    }
    absl::StatusOr<std::vector<ServedService>> served = module_->ListServices();
    std::vector<lite::v1::ServiceStats> stats;
    if (served.ok()) {
      stats.reserve(served->size());
      for (const ServedService& s : *served) {
        lite::v1::ServiceStats st;
        st.set_service_id(s.service.service_id());
        st.set_clients(s.service.clients());
        st.set_queued(s.service.queued());
        st.set_served(s.service.served());
        stats.push_back(std::move(st));
      }
    } else if (absl::IsUnimplemented(served.status())) {
      // A lite.ko without RPC services: nothing to report, ever.
      LITE_LOG_INFO("lite.ko has no RPC services (%s); no service stats",
                    served.status().ToString());
      absl::MutexLock lock(&mu_);
      ++dumps_;
      last_.clear();
      unsupported_ = true;
      return;
    } else {
      // The last good stats stay; the manager keeps what it had anyway.
      counters_->Add("agent.module_errors");
      LITE_LOG_WARNING("listing RPC services for heartbeat stats: %s",
                       served.status().ToString());
    }
    absl::MutexLock lock(&mu_);
    ++dumps_;
    if (served.ok()) last_ = std::move(stats);
  }
}

}  // namespace lite::agent
