#include "agent/service_unregisterer.h"

#include <algorithm>
#include <optional>

#include "absl/time/clock.h"
#include "agent/upcall_dispatcher.h"
#include "common/grpc/status.h"
#include "common/log/log.h"

namespace lite::agent {
namespace {

// Answers that asking again cannot change.
bool Final(const absl::Status& s) {
  return s.ok() || absl::IsNotFound(s) || absl::IsFailedPrecondition(s) ||
         absl::IsPermissionDenied(s) || absl::IsInvalidArgument(s);
}

}  // namespace

ServiceUnregisterer::ServiceUnregisterer(
    ServiceUnregistererOptions options,
    lite::v1::ClusterManager::StubInterface* stub, CallerSource* callers,
    Counters* counters)
    : options_(options), stub_(stub), callers_(callers), counters_(counters) {}

ServiceUnregisterer::~ServiceUnregisterer() { Stop(); }

void ServiceUnregisterer::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ServiceUnregisterer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  contexts_.CancelAll();
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  if (!jobs_.empty()) {
    LITE_LOG_WARNING(
        "%u RPC service unregistrations not delivered at shutdown (the "
        "manager drops a node's services when the node ends)",
        jobs_.size());
    jobs_.clear();
  }
}

void ServiceUnregisterer::Unregister(uint64_t service_id) {
  absl::MutexLock lock(&mu_);
  jobs_.try_emplace(service_id, Job{.queued = absl::Now()});
}

size_t ServiceUnregisterer::Pending() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

void ServiceUnregisterer::Loop() {
  while (true) {
    uint64_t service_id = 0;
    Job job;
    {
      absl::MutexLock lock(&mu_);
      // Wake for a new job, shutdown, or the earliest retry.
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (stopping_) return true;
        const absl::Time now = absl::Now();
        for (const auto& [id, j] : jobs_) {
          if (j.next <= now) return true;
        }
        return false;
      };
      absl::Time wake = absl::InfiniteFuture();
      for (const auto& [id, j] : jobs_) wake = std::min(wake, j.next);
      mu_.AwaitWithDeadline(absl::Condition(&ready), wake);
      if (stopping_) return;
      const absl::Time now = absl::Now();
      auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& e) {
        return e.second.next <= now;
      });
      if (it == jobs_.end()) continue;  // woken by a new, later job
      service_id = it->first;
      job = it->second;
    }
    const bool done = Attempt(service_id, job);
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(service_id);
    if (it == jobs_.end()) continue;
    if (done) {
      jobs_.erase(it);
      continue;
    }
    Job& j = it->second;
    ++j.failures;
    const absl::Duration wait =
        std::min(options_.retry_max,
                 options_.retry_initial * (1 << std::min(j.failures - 1, 16)));
    j.next = absl::Now() + wait;
  }
}

bool ServiceUnregisterer::Attempt(uint64_t service_id, const Job& job) {
  const absl::Time now = absl::Now();
  if (now - job.queued > options_.give_up_after) {
    counters_->Add("agent.services_unregister_abandoned");
    LITE_LOG_WARNING(
        "gave up telling the manager that service %#x is gone after %s "
        "(it drops the node's services when the node ends)",
        service_id, absl::FormatDuration(options_.give_up_after));
    return true;
  }
  std::optional<lite::v1::NodeCaller> caller =
      callers_->WaitForCaller(now + options_.rpc_timeout);
  if (!caller.has_value()) return false;  // not connected: later
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::UnregisterServiceRequest req;
  *req.mutable_caller() = *caller;
  req.set_service_id(service_id);
  lite::v1::UnregisterServiceResponse resp;
  const absl::Status s =
      FromGrpcStatus(stub_->UnregisterService(&ctx, req, &resp));
  if (s.ok()) {
    counters_->Add("agent.services_unregistered");
    LITE_LOG_INFO("service %#x unregistered", service_id);
    return true;
  }
  if (Final(s)) {
    counters_->Add("agent.services_unregister_refused");
    LITE_LOG_INFO("unregistering service %#x: %s (nothing to retry)",
                  service_id, s.ToString());
    return true;
  }
  if (job.failures == 0) {
    LITE_LOG_WARNING("unregistering service %#x: %s; retrying", service_id,
                     s.ToString());
  }
  return false;
}

}  // namespace lite::agent
