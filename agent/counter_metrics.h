// Named counters (lite::v1::Counter, as NodeAgent.GetCounters reports them)
// as Prometheus families, by a table: which counter is which family, with
// which label, scaled how. The agent's counters and lite.ko's (debugfs and
// netlink) have flat dotted names made for a listing (`module.ops.read`,
// `agent.upcalls.map`); Prometheus wants one family per quantity with the
// variants as labels (`lite_kernel_operations_total{op="read"}`) and the
// type known (gauges as gauges). A counter the table does not name is not
// dropped: it goes to a catch-all family with its name as a label, so a
// counter added to lite.ko or the agent shows up before it has a name here.
#ifndef LITE_AGENT_COUNTER_METRICS_H_
#define LITE_AGENT_COUNTER_METRICS_H_

#include <vector>

#include "absl/types/span.h"
#include "lite/v1/agent.pb.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"

namespace lite::agent {

struct CounterFamily {
  const char* name;
  prometheus::MetricType type;
  const char* help;
};

struct CounterMapping {
  // The counter's name without the table's prefix ("ops.read").
  const char* source;
  // One of the table's families; nullptr: deliberately not exported (a sum
  // of other series, or meaningless as a metric).
  const char* family;
  // The sample's one label (nullptr: none).
  const char* label = nullptr;
  const char* value = nullptr;
  // Multiplies the value: e.g. 1e-6 for microseconds to seconds.
  double scale = 1;
};

struct CounterTable {
  // Counters without it are not the table's and are ignored.
  const char* prefix;
  absl::Span<const CounterFamily> families;
  absl::Span<const CounterMapping> mappings;
  // The catch-all: samples labelled name="<counter name without prefix>".
  CounterFamily other;
};

// The families of `table` that have samples among `counters`, in the
// table's order, each family's samples in mapping order; then the
// catch-all, if any counter fell to it.
std::vector<prometheus::MetricFamily> MapCounters(
    const std::vector<lite::v1::Counter>& counters, const CounterTable& table);

}  // namespace lite::agent

#endif  // LITE_AGENT_COUNTER_METRICS_H_
