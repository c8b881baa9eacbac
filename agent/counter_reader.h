// Reads the module's counters for the metrics endpoint with a bound on the
// wait. lite.ko answers over netlink (bounded only by --module_timeout,
// 10 s) and debugfs; a module stuck in the kernel must not hang a scrape,
// or Prometheus times out and loses every other metric of the node with it.
// One read at a time, on a thread of its own: a scrape that finds a read
// still running waits for that one (up to the bound) instead of starting
// another, so a stuck module ties up one thread, not one per scrape.
#ifndef LITE_AGENT_COUNTER_READER_H_
#define LITE_AGENT_COUNTER_READER_H_

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lite/v1/agent.pb.h"

namespace lite::agent {

class CounterReader {
 public:
  using Counters = std::vector<lite::v1::Counter>;
  using ReadFn = std::function<absl::StatusOr<Counters>()>;

  // `read` runs on the reader's thread; `bound` is the longest Read waits.
  CounterReader(ReadFn read, absl::Duration bound);
  // Waits for a read in progress to return (the module bounds its own
  // requests), then stops the thread.
  ~CounterReader();

  CounterReader(const CounterReader&) = delete;
  CounterReader& operator=(const CounterReader&) = delete;

  // The counters, or the read's error, or DEADLINE_EXCEEDED if no read
  // finished within the bound.
  absl::StatusOr<Counters> Read();

 private:
  void Loop();

  const ReadFn read_;
  const absl::Duration bound_;

  absl::Mutex mu_;
  // Reads asked for and done; a read is running while done_ < wanted_.
  uint64_t wanted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  absl::StatusOr<Counters> result_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_COUNTER_READER_H_
