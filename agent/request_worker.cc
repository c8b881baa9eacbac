#include "agent/request_worker.h"

#include <utility>

namespace lite::agent {

RequestWorker::RequestWorker() : thread_([this] { Run(); }) {}

RequestWorker::~RequestWorker() { Stop(); }

bool RequestWorker::Submit(std::function<void()> request) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(request));
  return true;
}

size_t RequestWorker::Stop() {
  size_t dropped;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped = queue_.size();
    queue_.clear();
  }
  if (thread_.joinable()) thread_.join();
  return dropped;
}

void RequestWorker::Run() {
  while (true) {
    std::function<void()> next;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    next();
  }
}

}  // namespace lite::agent
