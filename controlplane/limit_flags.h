// litemgr's --max_* flags: the bounds on what callers can make the manager
// keep (docs/controlplane.md "Limits"). Each refusal is RESOURCE_EXHAUSTED
// with a message naming the limit and its flag.
#ifndef LITE_CONTROLPLANE_LIMIT_FLAGS_H_
#define LITE_CONTROLPLANE_LIMIT_FLAGS_H_

#include <cstdint>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "controlplane/options.h"
#include "grpcpp/server_builder.h"

ABSL_DECLARE_FLAG(int64_t, max_nodes);
ABSL_DECLARE_FLAG(int64_t, max_departed_records);
ABSL_DECLARE_FLAG(int64_t, max_watchers);
ABSL_DECLARE_FLAG(int64_t, max_grants_per_node);
ABSL_DECLARE_FLAG(int64_t, max_lmrs_per_owner);
ABSL_DECLARE_FLAG(int64_t, max_pending_allocs);
ABSL_DECLARE_FLAG(int64_t, max_grants_per_lmr);
ABSL_DECLARE_FLAG(int64_t, max_lmrs_per_node);
ABSL_DECLARE_FLAG(int64_t, max_lmr_chunks_per_node);
ABSL_DECLARE_FLAG(int64_t, max_lmr_bytes_per_owner);
ABSL_DECLARE_FLAG(int64_t, max_lmr_bytes_per_owner_per_home);
ABSL_DECLARE_FLAG(int64_t, max_pending_binds_per_node);
ABSL_DECLARE_FLAG(int64_t, max_joins_per_minute);
ABSL_DECLARE_FLAG(int64_t, max_message_bytes);
ABSL_DECLARE_FLAG(int64_t, watch_history);

namespace lite::controlplane {

// Checks every limit flag, then copies them into `options`. A value below
// its minimum (1; 0 for --max_departed_records and --watch_history: a limit
// of nothing would refuse every call), or --max_message_bytes outside
// 1024..INT_MAX, is INVALID_ARGUMENT naming the flag, and `options` is left
// unchanged.
absl::Status ApplyLimitFlags(ManagerOptions* options);

// Once options.session_queue_limit is set: INVALID_ARGUMENT (litemgr does
// not start) unless --max_grants_per_lmr, --max_lmrs_per_node and
// --max_pending_binds_per_node are each below half of it, so that no single
// operation can overflow an idle session by design.
absl::Status CheckBurstLimits(const ManagerOptions& options);

// The largest message litemgr accepts (--max_message_bytes, checked by
// ApplyLimitFlags): a bigger one is RESOURCE_EXHAUSTED before it is parsed.
void ApplyServerLimits(grpc::ServerBuilder* builder);

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_LIMIT_FLAGS_H_
