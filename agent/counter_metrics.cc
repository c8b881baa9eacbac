#include "agent/counter_metrics.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/metrics/families.h"

namespace lite::agent {

std::vector<prometheus::MetricFamily> MapCounters(
    const std::vector<lite::v1::Counter>& counters, const CounterTable& table) {
  absl::flat_hash_map<absl::string_view, const lite::v1::Counter*> by_name;
  for (const lite::v1::Counter& c : counters) {
    absl::string_view name = c.name();
    if (absl::ConsumePrefix(&name, table.prefix)) by_name.emplace(name, &c);
  }
  std::vector<prometheus::MetricFamily> families;
  absl::flat_hash_map<absl::string_view, size_t> index;
  for (const CounterFamily& f : table.families) {
    index[f.name] = families.size();
    families.push_back(metrics::Family(f.name, f.help, f.type));
  }
  for (const CounterMapping& m : table.mappings) {
    auto c = by_name.find(m.source);
    if (c == by_name.end()) continue;
    const double value = static_cast<double>(c->second->value()) * m.scale;
    by_name.erase(c);
    if (m.family == nullptr) continue;
    auto f = index.find(m.family);
    if (f == index.end()) continue;  // A table error; the test catches it.
    metrics::Labels labels;
    if (m.label != nullptr) labels.push_back({m.label, m.value});
    metrics::Add(families[f->second], labels, value);
  }
  prometheus::MetricFamily other =
      metrics::Family(table.other.name, table.other.help, table.other.type);
  // In the counters' order (sorted by name where they come from).
  for (const lite::v1::Counter& c : counters) {
    absl::string_view name = c.name();
    if (!absl::ConsumePrefix(&name, table.prefix) || !by_name.contains(name)) {
      continue;
    }
    metrics::Add(other, {{"name", std::string(name)}},
                 static_cast<double>(c.value()));
  }
  std::vector<prometheus::MetricFamily> out;
  for (prometheus::MetricFamily& f : families) {
    if (!f.metric.empty()) out.push_back(std::move(f));
  }
  if (!other.metric.empty()) out.push_back(std::move(other));
  return out;
}

}  // namespace lite::agent
