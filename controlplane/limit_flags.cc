#include "controlplane/limit_flags.h"

#include <cstdint>
#include <limits>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

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
ABSL_FLAG(int64_t, max_grants_per_lmr, 4096,
          "Grants into one LMR; MapLmr past it is RESOURCE_EXHAUSTED. Must "
          "be below --session_queue_limit / 2 (checked at start).");
ABSL_FLAG(int64_t, max_lmrs_per_node, 4096,
          "LMRs homed on one node, whatever uid owns them; RegisterLmr and "
          "AllocLmr past it are RESOURCE_EXHAUSTED. Must be below "
          "--session_queue_limit / 2 (a home's failure announces one "
          "LmrRemoved per LMR).");
ABSL_FLAG(int64_t, max_lmr_chunks_per_node, 65536,
          "Chunks of all the LMRs homed on one node together; a registration "
          "past it is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_lmr_bytes_per_owner, int64_t{64} << 30,
          "Bytes of LMRs one uid may own cluster-wide (allocations in flight "
          "count); RegisterLmr/AllocLmr past it are RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_lmr_bytes_per_owner_per_home, int64_t{256} << 20,
          "Bytes of LMRs one uid may own on one home, so that one user "
          "cannot take a home's whole lmr_quota_mib (512 MiB by default).");
ABSL_FLAG(int64_t, max_pending_binds_per_node, 256,
          "BindService calls waiting for their server node, per calling node "
          "and per server node; one more is RESOURCE_EXHAUSTED.");
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

// One flag's value, refused below `minimum` (a limit of nothing would
// refuse every call) or above `maximum`.
absl::Status InRange(const char* flag, int64_t value, int64_t minimum,
                     int64_t maximum = std::numeric_limits<int64_t>::max()) {
  if (value >= minimum && value <= maximum) return absl::OkStatus();
  if (maximum == std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", value, ": must be at least ", minimum));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--", flag, "=", value, ": must be ", minimum, "..", maximum));
}

}  // namespace

absl::Status ApplyLimitFlags(ManagerOptions* options) {
  const int64_t max_nodes = absl::GetFlag(FLAGS_max_nodes);
  const int64_t max_departed = absl::GetFlag(FLAGS_max_departed_records);
  const int64_t max_watchers = absl::GetFlag(FLAGS_max_watchers);
  const int64_t max_grants = absl::GetFlag(FLAGS_max_grants_per_node);
  const int64_t max_lmrs = absl::GetFlag(FLAGS_max_lmrs_per_owner);
  const int64_t max_allocs = absl::GetFlag(FLAGS_max_pending_allocs);
  const int64_t max_joins = absl::GetFlag(FLAGS_max_joins_per_minute);
  const int64_t history = absl::GetFlag(FLAGS_watch_history);
  const int64_t per_lmr = absl::GetFlag(FLAGS_max_grants_per_lmr);
  const int64_t per_node = absl::GetFlag(FLAGS_max_lmrs_per_node);
  const int64_t chunks = absl::GetFlag(FLAGS_max_lmr_chunks_per_node);
  const int64_t bytes = absl::GetFlag(FLAGS_max_lmr_bytes_per_owner);
  const int64_t bytes_home =
      absl::GetFlag(FLAGS_max_lmr_bytes_per_owner_per_home);
  const int64_t binds = absl::GetFlag(FLAGS_max_pending_binds_per_node);
  for (const absl::Status& s : {
           InRange("max_nodes", max_nodes, 1),
           InRange("max_departed_records", max_departed, 0),
           InRange("max_watchers", max_watchers, 1),
           InRange("max_grants_per_node", max_grants, 1),
           InRange("max_lmrs_per_owner", max_lmrs, 1),
           InRange("max_pending_allocs", max_allocs, 1),
           InRange("max_joins_per_minute", max_joins, 1),
           InRange("watch_history", history, 0),
           InRange("max_grants_per_lmr", per_lmr, 1),
           InRange("max_lmrs_per_node", per_node, 1),
           InRange("max_lmr_chunks_per_node", chunks, 1),
           InRange("max_lmr_bytes_per_owner", bytes, 1),
           InRange("max_lmr_bytes_per_owner_per_home", bytes_home, 1),
           InRange("max_pending_binds_per_node", binds, 1),
           InRange("max_message_bytes", absl::GetFlag(FLAGS_max_message_bytes),
                   1024, std::numeric_limits<int>::max()),
       }) {
    if (!s.ok()) return s;
  }
  options->max_nodes = max_nodes;
  options->max_departed_records = max_departed;
  options->max_watchers = max_watchers;
  options->max_grants_per_node = max_grants;
  options->max_lmrs_per_owner = max_lmrs;
  options->max_pending_allocs = max_allocs;
  options->max_joins_per_minute = max_joins;
  options->watch_history = history;
  options->max_grants_per_lmr = per_lmr;
  options->max_lmrs_per_node = per_node;
  options->max_lmr_chunks_per_node = chunks;
  options->max_lmr_bytes_per_owner = static_cast<uint64_t>(bytes);
  options->max_lmr_bytes_per_owner_per_home = static_cast<uint64_t>(bytes_home);
  options->max_pending_binds_per_node = binds;
  return absl::OkStatus();
}

absl::Status CheckBurstLimits(const ManagerOptions& options) {
  // The largest bursts of messages into one idle session under one lock:
  // a revocation loop over one LMR's grants (GrantRevoked each), a home's
  // failure (one LmrRemoved per LMR), the binds pushed to one server node.
  // Each must fit with room to spare, or an idle node's session overflows
  // and the node is declared failed by design (review cp H2, M3).
  const int64_t half = options.session_queue_limit / 2;
  struct Bound {
    const char* flag;
    int64_t value;
  };
  for (const Bound& b :
       {Bound{"max_grants_per_lmr", options.max_grants_per_lmr},
        Bound{"max_lmrs_per_node", options.max_lmrs_per_node},
        Bound{"max_pending_binds_per_node",
              options.max_pending_binds_per_node}}) {
    if (b.value >= half) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", b.flag, "=", b.value,
          " must be below --session_queue_limit/2 (", half,
          "): a burst of that many messages into one idle session would "
          "close it and fail its node"));
    }
  }
  return absl::OkStatus();
}

void ApplyServerLimits(grpc::ServerBuilder* builder) {
  // Checked by ApplyLimitFlags: 1024..INT_MAX.
  builder->SetMaxReceiveMessageSize(
      static_cast<int>(absl::GetFlag(FLAGS_max_message_bytes)));
}

}  // namespace lite::controlplane
