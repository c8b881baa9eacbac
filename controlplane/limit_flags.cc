#include "controlplane/limit_flags.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/flags/flag.h"
#include "common/log/log.h"

ABSL_FLAG(int64_t, max_nodes, 4096,
          "Node records litemgr keeps (alive, failed and left). A new node "
          "name joining past it first forgets the oldest departed record; "
          "with none to forget, the Join is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_departed_records, 1024,
          "FAILED/LEFT node records kept; past it the oldest are forgotten "
          "(a forgotten node that joins again gets a new node id).");
ABSL_FLAG(int64_t, max_watchers, 64,
          "Watch streams open at once; one more is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_grants_per_node, 65536,
          "Grants one node may hold; MapLmr past it is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_lmrs_per_owner, 4096,
          "LMRs one uid may own cluster-wide; RegisterLmr/AllocLmr past it "
          "are RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_pending_allocs, 1024,
          "AllocLmr calls waiting for their homes at once; one more is "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_joins_per_minute, 60,
          "Joins per node name in any minute; one more is "
          "RESOURCE_EXHAUSTED (an agent's rejoin backoff stays far below).");
ABSL_FLAG(int64_t, max_message_bytes, 4 << 20,
          "Largest gRPC message litemgr accepts, in bytes.");
ABSL_FLAG(int64_t, watch_history, 10000,
          "Events kept for Watch resumes (WatchRequest.since_revision); an "
          "older revision is OUT_OF_RANGE. Below --session_queue_limit.");

namespace lite::controlplane {

namespace {

int64_t AtLeast(const char* flag, int64_t value, int64_t minimum) {
  if (value >= minimum) return value;
  LITE_LOG_WARNING("--%s=%d is below its minimum; using %d", flag, value,
                   minimum);
  return minimum;
}

}  // namespace

void ApplyLimitFlags(ManagerOptions* options) {
  options->max_nodes = AtLeast("max_nodes", absl::GetFlag(FLAGS_max_nodes), 1);
  options->max_departed_records = AtLeast(
      "max_departed_records", absl::GetFlag(FLAGS_max_departed_records), 0);
  options->max_watchers =
      AtLeast("max_watchers", absl::GetFlag(FLAGS_max_watchers), 1);
  options->max_grants_per_node = AtLeast(
      "max_grants_per_node", absl::GetFlag(FLAGS_max_grants_per_node), 1);
  options->max_lmrs_per_owner =
      AtLeast("max_lmrs_per_owner", absl::GetFlag(FLAGS_max_lmrs_per_owner), 1);
  options->max_pending_allocs =
      AtLeast("max_pending_allocs", absl::GetFlag(FLAGS_max_pending_allocs), 1);
  options->max_joins_per_minute = AtLeast(
      "max_joins_per_minute", absl::GetFlag(FLAGS_max_joins_per_minute), 1);
  options->watch_history =
      AtLeast("watch_history", absl::GetFlag(FLAGS_watch_history), 0);
}

void ApplyServerLimits(grpc::ServerBuilder* builder) {
  const int64_t bytes =
      std::clamp<int64_t>(absl::GetFlag(FLAGS_max_message_bytes), 1024,
                          std::numeric_limits<int>::max());
  builder->SetMaxReceiveMessageSize(static_cast<int>(bytes));
}

}  // namespace lite::controlplane
