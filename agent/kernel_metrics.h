// lite.ko's counters (Module::GetCounters: /sys/kernel/debug/lite/ and the
// netlink NODE_GET, see kmod/core/lite_debugfs.c) as Prometheus families:
// lite_kernel_operations_total{op="read"}, lite_kernel_peers, ... The names,
// types and labels are docs/metrics.md's; counters the table does not name
// come out as lite_kernel_counter{name="..."}.
#ifndef LITE_AGENT_KERNEL_METRICS_H_
#define LITE_AGENT_KERNEL_METRICS_H_

#include "agent/counter_metrics.h"

namespace lite::agent {

// For MapCounters (prefix "module.").
const CounterTable& KernelCounterTable();

}  // namespace lite::agent

#endif  // LITE_AGENT_KERNEL_METRICS_H_
