#include "agent/revoker.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "common/log/log.h"

namespace lite::agent {

Revoker::Revoker(RevokerOptions options, Module* module, GrantGate* gate,
                 Counters* counters, AckSink ack)
    : options_(options),
      module_(module),
      gate_(gate),
      counters_(counters),
      ack_(std::move(ack)) {
  gate_->SetRefusalSink([this](const lite::v1::Grant& grant, bool ack) {
    Revoke(grant.grant_id(), grant.holder_incarnation(), ack);
  });
}

Revoker::~Revoker() {
  gate_->SetRefusalSink(nullptr);
  Stop();
}

void Revoker::RevokeLmr(uint64_t lmr_id, bool ack) {
  // Marked first: a grant listed below is in the module; one installed
  // after the mark is refused and comes back through the refusal sink.
  gate_->MarkLmr(lmr_id, ack);
  absl::StatusOr<std::vector<lite::v1::Grant>> grants = module_->ListGrants();
  if (!grants.ok()) {
    // Unacknowledged grants only delay the home's memory until the
    // manager's fence timeout (then quarantined); nothing is unsafe.
    counters_->Add("agent.module_errors");
    LITE_LOG_WARNING("listing grants to revoke those into LMR %#x: %s", lmr_id,
                     grants.status().ToString());
    return;
  }
  for (const lite::v1::Grant& g : *grants) {
    if (g.lmr_id() == lmr_id) Revoke(g.grant_id(), g.holder_incarnation(), ack);
  }
}

void Revoker::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Revoker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Revoker::Revoke(uint64_t grant_id, uint64_t holder_incarnation, bool ack) {
  // Before anything else: a map answer for this grant still on its way to
  // lite.ko must not be installed.
  gate_->Mark(grant_id);
  absl::MutexLock lock(&mu_);
  Job& job = jobs_[grant_id];
  job.holder_incarnation = holder_incarnation;
  job.ack = job.ack || ack;
  job.next = absl::InfinitePast();
}

bool Revoker::Unmapped(uint64_t grant_id) {
  Job job;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(grant_id);
    if (it == jobs_.end()) return false;
    job = it->second;
    jobs_.erase(it);
  }
  Finish(grant_id, job, "given back (UNMAP)");
  return true;
}

size_t Revoker::Pending() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

void Revoker::Finish(uint64_t grant_id, const Job& job, const char* how) {
  LITE_LOG_DEBUG("grant %#x revoked: %s", grant_id, how);
  if (!job.ack) return;
  counters_->Add("agent.grant_revoke_acks");
  ack_(grant_id, job.holder_incarnation);
}

void Revoker::Loop() {
  while (true) {
    uint64_t grant_id = 0;
    {
      absl::MutexLock lock(&mu_);
      // The job due first; jobs are few (one per revoked grant of this
      // node), so a scan is cheaper than keeping a second index.
      auto due = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (stopping_) return true;
        const absl::Time now = absl::Now();
        for (const auto& [id, job] : jobs_) {
          if (job.next <= now) return true;
        }
        return false;
      };
      absl::Time wake = absl::InfiniteFuture();
      for (const auto& [id, job] : jobs_) wake = std::min(wake, job.next);
      mu_.AwaitWithDeadline(absl::Condition(&due), wake);
      if (stopping_) return;
      const absl::Time now = absl::Now();
      for (const auto& [id, job] : jobs_) {
        if (job.next <= now) {
          grant_id = id;
          break;
        }
      }
      if (grant_id == 0) continue;
    }
    const absl::Status s = module_->RevokeGrant(grant_id);
    Job job;
    {
      absl::MutexLock lock(&mu_);
      auto it = jobs_.find(grant_id);
      // Gone: Unmapped() finished it meanwhile.
      if (it == jobs_.end()) continue;
      if (s.ok() || absl::IsNotFound(s)) {
        job = it->second;
        jobs_.erase(it);
      } else {
        Job& retry = it->second;
        if (absl::IsDeadlineExceeded(s)) {
          // Operations still in flight: lite.ko keeps the grant revoked and
          // drains it; ask again.
          counters_->Add("agent.grant_revokes_timed_out");
          retry.next = absl::Now() + options_.retry_after_timeout;
        } else {
          counters_->Add("agent.module_errors");
          LITE_LOG_WARNING("revoking grant %#x: %s; trying again", grant_id,
                           s.ToString());
          retry.next = absl::Now() +
                       std::min(options_.retry_initial *
                                    (int64_t{1} << std::min(retry.failures, 6)),
                                options_.retry_max);
          ++retry.failures;
        }
        continue;
      }
    }
    if (s.ok()) counters_->Add("agent.grants_revoked");
    Finish(grant_id, job, s.ok() ? "drained" : "not held (ENOENT)");
  }
}

}  // namespace lite::agent
