// Named monotonic counters that the agent reports through
// NodeAgent.GetCounters. Every counter is declared with its help text up
// front so that a listing shows all of them, zero or not. Modules report
// theirs (Module::GetCounters) with MakeCounter.
#ifndef LITE_AGENT_COUNTERS_H_
#define LITE_AGENT_COUNTERS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lite/v1/agent.pb.h"

namespace lite::agent {

// One reported counter.
lite::v1::Counter MakeCounter(std::string name, uint64_t value,
                              std::string help);

class Counters {
 public:
  // (name, help) pairs.
  explicit Counters(
      std::initializer_list<std::pair<absl::string_view, absl::string_view>>
          declared);

  // Adds n. A name that was not declared is added with an empty help text,
  // so a typo shows up in the listing instead of being lost.
  void Add(absl::string_view name, uint64_t n = 1);
  uint64_t Get(absl::string_view name) const;
  // Sorted by name.
  std::vector<lite::v1::Counter> Snapshot() const;

 private:
  struct Entry {
    uint64_t value = 0;
    std::string help;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::agent

#endif  // LITE_AGENT_COUNTERS_H_
