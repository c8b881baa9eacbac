#include "agent/counters.h"

#include <utility>

namespace lite::agent {

lite::v1::Counter MakeCounter(std::string name, uint64_t value,
                              std::string help) {
  lite::v1::Counter c;
  c.set_name(std::move(name));
  c.set_value(value);
  c.set_help(std::move(help));
  return c;
}

Counters::Counters(
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        declared) {
  for (const auto& [name, help] : declared) {
    entries_[std::string(name)].help = std::string(help);
  }
}

void Counters::Add(absl::string_view name, uint64_t n) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end())
    it = entries_.emplace(std::string(name), Entry{}).first;
  it->second.value += n;
}

uint64_t Counters::Get(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  return it == entries_.end() ? 0 : it->second.value;
}

std::vector<lite::v1::Counter> Counters::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::vector<lite::v1::Counter> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) {
    out.push_back(MakeCounter(name, entry.value, entry.help));
  }
  return out;
}

}  // namespace lite::agent
