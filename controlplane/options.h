// Tunables of the manager's state machine; litemgr fills them from flags.
#ifndef LITE_CONTROLPLANE_OPTIONS_H_
#define LITE_CONTROLPLANE_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "common/names/names.h"

namespace lite::controlplane {

struct ManagerOptions {
  // A node with no heartbeat for this long is failed.
  absl::Duration lease = absl::Seconds(1);
  // Agents are told to heartbeat every lease / heartbeats_per_lease.
  int heartbeats_per_lease = 4;
  // Messages (events, requests, acks) a session or watcher may have queued
  // before it is closed with RESOURCE_EXHAUSTED. Must exceed the largest burst
  // of events (e.g. a whole cluster joining at once).
  int64_t session_queue_limit = 16384;
  // SUSPECT (manager_suspect.cc): a node whose lease runs out while peers
  // with open sessions can be asked about it is not failed at once; the
  // peers probe its lite.ko, and it stays SUSPECT while one still gets an
  // acknowledgment, for at most this long. Zero: no SUSPECT state, a lease
  // that runs out fails the node (the library default; litemgr's
  // --suspect_max_ms defaults to 30 s).
  absl::Duration suspect_max = absl::ZeroDuration();
  // How long AllocLmr waits for the home node's answer.
  absl::Duration request_timeout = absl::Seconds(5);
  // The fenced free: how long a RELEASING LMR waits for its holders'
  // acknowledgements before its home is told to quarantine the memory.
  absl::Duration free_fence_timeout = absl::Seconds(60);
  // After a start with empty storage: how long agents may restore grants and
  // how long until RecoveryComplete is announced. Zero: no recovery phase.
  absl::Duration recovery_window = absl::Seconds(5);
  // Upper bounds on LMR size and chunk count, so that one request cannot ask
  // for unbounded work or memory. The size is at most what lite.ko allocates
  // for one LMR (64 GiB), the chunk count what lite.ko takes in a grant.
  uint64_t max_lmr_size_bytes = names::kMaxLmrSizeBytes;
  int max_lmr_chunks = names::kMaxLmrChunks;
  // The cluster key pair secrets are derived from (--pair_key_file):
  // PairSecrets::kKeyBytes, or empty for the Store's key, or a new random one
  // if the Store has none (then a manager restarted on an empty store hands
  // out new secrets, and the agents replace them in lite.ko).
  std::string pair_key;

  // Bounds on what callers can make the manager keep (--max_* flags in
  // limit_flags.h; docs/controlplane.md "Limits"). Each refusal is
  // RESOURCE_EXHAUSTED naming the limit and its flag.
  // Node records kept (alive, draining, failed and left).
  int64_t max_nodes = 4096;
  // FAILED/LEFT records kept; past it the oldest are forgotten.
  int64_t max_departed_records = 1024;
  // Watch streams open at once.
  int64_t max_watchers = 64;
  // Grants held by one node.
  int64_t max_grants_per_node = 65536;
  // LMRs owned by one uid (cluster-wide, LIVE and RELEASING).
  int64_t max_lmrs_per_owner = 4096;
  // Grants into one LMR. Below session_queue_limit / 2 (checked at start):
  // a revocation loop over one LMR's grants must fit an idle session.
  int64_t max_grants_per_lmr = 4096;
  // LMRs homed on one node (LIVE and RELEASING, whatever uid they claim),
  // and their chunks together. Also below session_queue_limit / 2: a home's
  // failure announces one LmrRemoved per LMR.
  int64_t max_lmrs_per_node = 4096;
  int64_t max_lmr_chunks_per_node = 65536;
  // Bytes of LMRs one uid may own cluster-wide (LIVE and RELEASING), and
  // on one home.
  uint64_t max_lmr_bytes_per_owner = uint64_t{64} << 30;
  uint64_t max_lmr_bytes_per_owner_per_home = uint64_t{256} << 20;
  // BindService calls waiting for their server node, per calling node and
  // per server node.
  int64_t max_pending_binds_per_node = 256;
  // AllocLmr calls waiting for their homes.
  int64_t max_pending_allocs = 1024;
  // Joins accepted per node name in any 60 s (agents rejoin with backoff).
  int64_t max_joins_per_minute = 60;
  // Events kept for Watch resumes (WatchRequest.since_revision).
  int64_t watch_history = 10000;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_OPTIONS_H_
