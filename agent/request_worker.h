// RequestWorker: runs a session's node requests, one at a time and in the
// order they came, on a thread of its own, so that the thread reading the
// session stream keeps reading heartbeat acks and events while lite.ko
// works on a request (an LMR of gigabytes takes seconds to zero and map;
// read on the reader, it once ended the agent's own session for want of
// acks).
#ifndef LITE_AGENT_REQUEST_WORKER_H_
#define LITE_AGENT_REQUEST_WORKER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace lite::agent {

class RequestWorker {
 public:
  RequestWorker();
  // Stop()s.
  ~RequestWorker();
  RequestWorker(const RequestWorker&) = delete;
  RequestWorker& operator=(const RequestWorker&) = delete;

  // Queues `request`; false once stopped (it is not run).
  bool Submit(std::function<void()> request);
  // No more requests run: those queued are dropped, the one running (a
  // lite.ko call cannot be interrupted) is waited for. Returns how many were
  // dropped. Idempotent.
  size_t Stop();

 private:
  void Run();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_REQUEST_WORKER_H_
