#include "agent/counters.h"

namespace lite::agent {

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
    lite::v1::Counter& c = out.emplace_back();
    c.set_name(name);
    c.set_value(entry.value);
    c.set_help(entry.help);
  }
  return out;
}

}  // namespace lite::agent
