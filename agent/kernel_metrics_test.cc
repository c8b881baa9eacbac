// The counter tables (kernel_metrics.cc, agent_metrics.cc): consistent,
// named as Prometheus wants, complete for lite.ko's debugfs counters, and
// what MapCounters makes of counters.
#include "agent/kernel_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/agent_metrics.h"
#include "agent/counter_metrics.h"
#include "agent/counters.h"
#include "agent/fake_module.h"

namespace lite::agent {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

const MetricFamily* FindFamily(const std::vector<MetricFamily>& all,
                               const std::string& name) {
  for (const MetricFamily& f : all) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The value of `name`'s sample with label `label`=`value` (or the unlabelled
// one when label is empty).
std::optional<double> Value(const std::vector<MetricFamily>& all,
                            const std::string& name,
                            const std::string& label = "",
                            const std::string& value = "") {
  const MetricFamily* f = FindFamily(all, name);
  if (f == nullptr) return std::nullopt;
  for (const prometheus::ClientMetric& m : f->metric) {
    const bool match = label.empty()
                           ? m.label.empty()
                           : m.label.size() == 1 && m.label[0].name == label &&
                                 m.label[0].value == value;
    if (!match) continue;
    switch (f->type) {
      case MetricType::Counter:
        return m.counter.value;
      case MetricType::Gauge:
        return m.gauge.value;
      default:
        return m.untyped.value;
    }
  }
  return std::nullopt;
}

TEST(CounterTables, MappingsNameTheirTablesFamiliesAndEveryFamilyIsUsed) {
  for (const CounterTable* table :
       {&KernelCounterTable(), &AgentCounterTable()}) {
    std::set<std::string> families;
    for (const CounterFamily& f : table->families) {
      EXPECT_TRUE(families.insert(f.name).second) << "twice: " << f.name;
    }
    std::set<std::string> used;
    std::set<std::string> sources;
    for (const CounterMapping& m : table->mappings) {
      EXPECT_TRUE(sources.insert(m.source).second) << "twice: " << m.source;
      if (m.family == nullptr) continue;
      EXPECT_TRUE(families.contains(m.family))
          << m.source << " -> " << m.family << " is not a family of its table";
      EXPECT_EQ(m.label == nullptr, m.value == nullptr) << m.source;
      used.insert(m.family);
    }
    for (const std::string& f : families) {
      EXPECT_TRUE(used.contains(f)) << f << " has no counter";
    }
  }
}

// https://prometheus.io/docs/practices/naming/
TEST(CounterTables, NamesFollowPrometheusConventions) {
  const std::regex snake("lite_[a-z0-9_]+");
  for (const CounterTable* table :
       {&KernelCounterTable(), &AgentCounterTable()}) {
    std::vector<CounterFamily> all(table->families.begin(),
                                   table->families.end());
    all.push_back(table->other);
    for (const CounterFamily& f : all) {
      EXPECT_TRUE(std::regex_match(f.name, snake)) << f.name;
      EXPECT_EQ(absl::EndsWith(f.name, "_total"), f.type == MetricType::Counter)
          << f.name << ": counters, and only they, end in _total";
      EXPECT_FALSE(std::regex_search(
          f.name, std::regex("_(us|ms|ns|microseconds|milliseconds|nanoseconds|"
                             "kib|mib|kb|mb)(_|$)")))
          << f.name << ": base units (seconds, bytes)";
      EXPECT_GT(std::string(f.help).size(), 10u) << f.name;
    }
    for (const CounterMapping& m : table->mappings) {
      if (m.label != nullptr) {
        EXPECT_TRUE(std::regex_match(m.label, std::regex("[a-z_]+")))
            << m.label;
      }
    }
  }
}

// The names in one `static const char * const ARRAY[...] = { [X] = "name",
// ... };` of a lite.ko source file.
std::vector<std::string> DebugfsNames(const std::string& file,
                                      const std::string& array) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                   std::getenv("TEST_WORKSPACE"), "/kmod/", file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const size_t start = source.find(absl::StrCat(array, "["));
  EXPECT_NE(start, std::string::npos) << array << " not in " << path;
  if (start == std::string::npos) return {};
  const std::string body =
      source.substr(start, source.find("};", start) - start);
  std::vector<std::string> names;
  const std::regex entry(R"re(\] = "([a-z_0-9]+)")re");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), entry);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  EXPECT_GT(names.size(), 3u) << array;
  return names;
}

// A counter added to lite.ko without a name here would still be exported
// (lite_kernel_counter), but without its type: this catches it first.
TEST(KernelMetrics, EveryDebugfsCounterOfLiteKoHasAName) {
  std::set<std::string> mapped;
  for (const CounterMapping& m : KernelCounterTable().mappings) {
    mapped.insert(m.source);
  }
  std::vector<std::string> expected;
  for (const std::string& n :
       DebugfsNames("core/lite_debugfs.c", "lite_counter_names")) {
    expected.push_back(n);
  }
  for (const std::string& n :
       DebugfsNames("core/lite_debugfs.c", "lite_ops_stat_names")) {
    expected.push_back(absl::StrCat("ops.", n));
  }
  for (const std::string& n :
       DebugfsNames("core/lite_debugfs.c", "lite_rpc_stat_names")) {
    expected.push_back(absl::StrCat("rpc.", n));
  }
  for (const std::string& n :
       DebugfsNames("qos/lite_qos_throttle.c", "lite_qos_rule_names")) {
    expected.push_back(absl::StrCat("qos.windows_", n));
  }
  for (const std::string& name : expected) {
    EXPECT_TRUE(mapped.contains(name))
        << "lite.ko's counter " << name << " has no Prometheus name";
  }
}

TEST(KernelMetrics, CountersBecomeFamiliesWithLabelsTypesAndBaseUnits) {
  const std::vector<lite::v1::Counter> counters = {
      MakeCounter("agent.joins", 9, ""),  // Not the kernel table's.
      MakeCounter("module.ops.read", 7, ""),
      MakeCounter("module.ops.write", 3, ""),
      MakeCounter("module.ops.bytes_read", 7 * 4096, ""),
      MakeCounter("module.ops.err_etimedout", 2, ""),
      MakeCounter("module.ops.err_other", 1, ""),
      MakeCounter("module.ops.qos_wait_us", 2500000, ""),
      MakeCounter("module.peers", 2, ""),
      MakeCounter("module.qps_connected", 4, ""),
      MakeCounter("module.rejects_received", 5, ""),
      MakeCounter("module.debugfs_available", 1, ""),
  };
  const std::vector<MetricFamily> m =
      MapCounters(counters, KernelCounterTable());
  EXPECT_EQ(Value(m, "lite_kernel_operations_total", "op", "read"), 7);
  EXPECT_EQ(Value(m, "lite_kernel_operations_total", "op", "write"), 3);
  EXPECT_EQ(Value(m, "lite_kernel_bytes_total", "direction", "read"), 28672);
  EXPECT_EQ(
      Value(m, "lite_kernel_operation_errors_total", "errno", "ETIMEDOUT"), 2);
  EXPECT_EQ(Value(m, "lite_kernel_operation_errors_total", "errno", "other"),
            1);
  EXPECT_DOUBLE_EQ(*Value(m, "lite_kernel_qos_wait_seconds_total"), 2.5);
  EXPECT_EQ(Value(m, "lite_kernel_peers"), 2);
  EXPECT_EQ(FindFamily(m, "lite_kernel_peers")->type, MetricType::Gauge);
  EXPECT_EQ(FindFamily(m, "lite_kernel_qps_connected")->type,
            MetricType::Gauge);
  EXPECT_EQ(FindFamily(m, "lite_kernel_operations_total")->type,
            MetricType::Counter);
  EXPECT_EQ(
      Value(m, "lite_kernel_connection_rejects_total", "direction", "received"),
      5);
  EXPECT_EQ(Value(m, "lite_kernel_debugfs_up"), 1);
  // No sample, no family; nothing of another table.
  EXPECT_EQ(FindFamily(m, "lite_kernel_lmrs"), nullptr);
  EXPECT_EQ(FindFamily(m, "lite_kernel_counter"), nullptr);
  EXPECT_EQ(FindFamily(m, "lite_agent_joins_total"), nullptr);
}

TEST(KernelMetrics, ACounterWithoutANameIsKeptUnderItsOwn) {
  const std::vector<MetricFamily> m =
      MapCounters({MakeCounter("module.ops.read", 1, ""),
                   MakeCounter("module.future_thing", 42, "")},
                  KernelCounterTable());
  EXPECT_EQ(Value(m, "lite_kernel_counter", "name", "future_thing"), 42);
  EXPECT_EQ(FindFamily(m, "lite_kernel_counter")->type, MetricType::Untyped);
  EXPECT_EQ(FindFamily(m, "lite_kernel_counter")->metric.size(), 1u);
}

// The fake module names its counters as lite.ko does where they mean the
// same, so a host test's agent reports lite_kernel_lmrs like a real one.
TEST(KernelMetrics, TheFakeModulesCountersReadLikeLiteKos) {
  FakeModule module;
  Peer peer{.node_id = 2, .incarnation = 1, .rdma_address = "10.0.0.2:18600"};
  ASSERT_TRUE(module.AddPeer(peer).ok());
  lite::v1::AllocateLmrMemory alloc;
  alloc.set_lmr_id(0x100000001);
  alloc.set_name("kv");
  alloc.set_size_bytes(1 << 20);
  ASSERT_TRUE(module.AllocateLmrMemory(alloc).ok());
  absl::StatusOr<std::vector<lite::v1::Counter>> counters =
      module.GetCounters();
  ASSERT_TRUE(counters.ok());
  const std::vector<MetricFamily> m =
      MapCounters(*counters, KernelCounterTable());
  EXPECT_EQ(Value(m, "lite_kernel_peers"), 1);
  EXPECT_EQ(Value(m, "lite_kernel_lmrs"), 1);
  EXPECT_EQ(Value(m, "lite_kernel_lmr_bytes"), 1 << 20);
  EXPECT_EQ(Value(m, "lite_kernel_grants"), 0);
  // Its own, which lite.ko does not have, are kept by name.
  EXPECT_EQ(Value(m, "lite_kernel_counter", "name", "upcalls_pending"), 0);
}

TEST(AgentCounterTable, MapsTheAgentsCountersAndKeepsTheRest) {
  const std::vector<MetricFamily> m =
      MapCounters({MakeCounter("agent.joins", 3, ""),
                   MakeCounter("agent.join_failures", 2, ""),
                   MakeCounter("agent.events_applied", 5, ""),
                   MakeCounter("agent.events.member_joined", 5, ""),
                   MakeCounter("agent.upcalls.map", 4, ""),
                   MakeCounter("agent.grants_restored", 6, "")},
                  AgentCounterTable());
  EXPECT_EQ(Value(m, "lite_agent_joins_total", "result", "ok"), 3);
  EXPECT_EQ(Value(m, "lite_agent_joins_total", "result", "failed"), 2);
  EXPECT_EQ(
      Value(m, "lite_agent_events_applied_total", "kind", "member_joined"), 5);
  EXPECT_EQ(Value(m, "lite_agent_upcalls_received_total", "kind", "map"), 4);
  EXPECT_EQ(Value(m, "lite_agent_counter_total", "name", "grants_restored"), 6);
  // A sum of other series is not exported again.
  EXPECT_EQ(Value(m, "lite_agent_counter_total", "name", "events_applied"),
            std::nullopt);
}

}  // namespace
}  // namespace lite::agent
