// liteagent's Prometheus metrics (docs/metrics.md lists each): the manager
// connection, the agent's own counters, how upcalls were answered and how
// long they took, and lite.ko's counters, all read at each scrape. lite.ko's
// are read through a CounterReader, so a stuck module makes
// lite_kernel_counters_up 0 instead of a hung scrape. RPC calls on the
// NodeAgent service are counted apart (common/metrics/rpc_metrics.h).
#ifndef LITE_AGENT_AGENT_METRICS_H_
#define LITE_AGENT_AGENT_METRICS_H_

#include <vector>

#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/counter_metrics.h"
#include "agent/counter_reader.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace lite::agent {

// For MapCounters (prefix "agent."): the Counters the Agent keeps.
const CounterTable& AgentCounterTable();

class AgentMetrics : public prometheus::Collectable {
 public:
  // How long a scrape waits for lite.ko's counters: well inside
  // Prometheus' default scrape timeout (10 s).
  static constexpr absl::Duration kModuleBound = absl::Seconds(2);

  // `agent` must outlive this object and the endpoint that serves it;
  // `module_counters` reads the module's (Module::GetCounters), and is
  // waited for at most `module_bound`.
  AgentMetrics(const Agent* agent, CounterReader::ReadFn module_counters,
               absl::Duration module_bound = kModuleBound);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Agent* const agent_;
  // Collect is const for prometheus-cpp; reading is not.
  mutable CounterReader module_counters_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_AGENT_METRICS_H_
