#include "agent/counter_reader.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace lite::agent {

CounterReader::CounterReader(ReadFn read, absl::Duration bound)
    : read_(std::move(read)), bound_(bound) {
  thread_ = std::thread([this] { Loop(); });
}

CounterReader::~CounterReader() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

absl::StatusOr<CounterReader::Counters> CounterReader::Read() {
  absl::MutexLock lock(&mu_);
  if (done_ == wanted_) {
    ++wanted_;
    started_ = absl::Now();
  }
  // This read, or the one still running that an earlier scrape gave up on.
  const uint64_t want = wanted_;
  auto finished = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ >= want;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&finished), bound_)) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "the module's counters were not read within %s (a read has been "
        "running for %s)",
        absl::FormatDuration(bound_),
        absl::FormatDuration(absl::Now() - started_)));
  }
  return result_;
}

void CounterReader::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || done_ < wanted_;
    };
    mu_.Await(absl::Condition(&work));
    if (stopping_) return;
    const uint64_t target = wanted_;
    mu_.Unlock();
    absl::StatusOr<Counters> result = read_();
    mu_.Lock();
    result_ = std::move(result);
    done_ = target;
  }
}

}  // namespace lite::agent
