// The manager's part for the fenced free (docs/architecture.md). A freed
// or lost LMR leaves the namespace at once but stays RELEASING until no
// node can reach its memory: every holder of a grant into it acknowledged
// that its lite.ko drained the revoked grant (GrantRevokeAck), or ended its
// incarnation (its MemberFailed or MemberLeft goes out first, and the
// home's lite.ko tears down its connections to it before LMR_FREE
// returns). Then the home is sent ReleaseLmrMemory; after
// --free_fence_timeout_ms with acks still missing, ReleaseLmrMemory with
// quarantine. The request is sent again with backoff until the home answers
// OK (or NOT_FOUND), or its incarnation ends.
//
// Not thread-safe: ManagerState calls it under its one lock, which also
// covers the Store, EventBus and NodeRequests it is given.
#ifndef LITE_CONTROLPLANE_FENCED_FREE_H_
#define LITE_CONTROLPLANE_FENCED_FREE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controlplane/clock.h"
#include "controlplane/event_bus.h"
#include "controlplane/node_requests.h"
#include "controlplane/options.h"
#include "controlplane/store.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

class FencedFree {
 public:
  // The incarnation of `node_id` whose session is open now, if any: where a
  // release request can go.
  using OpenSessionOf = std::function<std::optional<uint64_t>(uint32_t)>;
  // A grant holder: (node id, incarnation).
  using Holder = std::pair<uint32_t, uint64_t>;

  // Totals since the manager started (ManagerCounters has the meanings).
  struct Counters {
    uint64_t revoke_acks = 0;
    uint64_t revoke_acks_implied = 0;
    uint64_t revoke_acks_late = 0;
    uint64_t lmrs_released = 0;
    uint64_t lmrs_quarantined = 0;
    uint64_t release_retries = 0;
  };

  // `recovering`: the manager starts in its recovery window, during which
  // revoking grants are restored and no fence runs (RecoveryEnded).
  FencedFree(const ManagerOptions& options, const Clock* clock, Store* store,
             EventBus* events, NodeRequests* requests,
             OpenSessionOf open_session_of, bool recovering);

  // `lmr` (removed from the namespace, its grants revoked with an ack
  // requested) is RELEASING from now on, waiting for `pending`.
  void Start(lite::v1::Lmr lmr, std::map<uint64_t, Holder> pending);
  // Its home ended: the memory went with that incarnation. Forgets the
  // release (the caller deletes the record).
  void Drop(uint64_t lmr_id);
  bool Releasing(uint64_t lmr_id) const { return releases_.contains(lmr_id); }
  // Acknowledgements still missing for a RELEASING LMR (0 if none).
  uint32_t AcksMissing(uint64_t lmr_id) const;
  size_t size() const { return releases_.size(); }
  // The bytes of the RELEASING LMRs (a few at a time: releases wait for
  // acks and one answer each).
  uint64_t BytesReleasing() const;

  // GrantRevokeAck from `holder` for a grant no longer live. INVALID_ARGUMENT
  // if the grant is live or was revoked from another holder; an ack nothing
  // waits for is counted late and ignored (OK).
  absl::Status Ack(const Holder& holder, uint64_t grant_id);
  // A holder's incarnation ended: its acks are implied.
  void HolderEnded(const Holder& holder);
  // The home's answer to a ReleaseLmrMemory (from the incarnation asked).
  void Answered(const lite::v1::NodeRequestResult& result);
  // A revoking grant restored by its holder's agent (RestoreGrant.revoking),
  // before or after its LMR was re-registered as releasing.
  void RestoreRevoking(const lite::v1::Grant& grant);
  // Recovery is over: the pending sets are complete, the fences start.
  void RecoveryEnded();

  // Does what the timers due at `now` ask; returns the next timer
  // (InfiniteFuture: none).
  absl::Time Due(absl::Time now);
  absl::Time NextTimer() const;
  const Counters& counters() const { return counters_; }

 private:
  // A RELEASING LMR: its revoked grants waiting for their holders, then
  // the ReleaseLmrMemory request to its home.
  struct Release {
    uint32_t home_node_id = 0;
    // Revoked grant -> its holder, until acked or the holder's incarnation
    // ends.
    std::map<uint64_t, Holder> pending;
    // Missing acks then make it a quarantine. InfiniteFuture while the
    // manager recovers (the pending set is complete only at its end).
    absl::Time fence_deadline = absl::InfiniteFuture();
    bool quarantine = false;
    // The ReleaseLmrMemory in flight (0: none) and until when it is waited
    // for.
    uint64_t request_id = 0;
    absl::Time request_deadline = absl::InfiniteFuture();
    // Requests sent or found impossible so far (the backoff), and the
    // earliest time of the next one.
    int attempts = 0;
    absl::Time retry_at = absl::InfinitePast();
    // Its key in timers_ (InfiniteFuture: none).
    absl::Time timer = absl::InfiniteFuture();
  };
  // A revoking grant restored before its LMR was re-registered as
  // releasing.
  struct RestoredRevoke {
    uint64_t lmr_id = 0;
    Holder holder;
  };

  // Does what is due for the release of lmr_id at `now` (quarantine, send,
  // time out, retry) and re-arms its timer.
  void Advance(uint64_t lmr_id, absl::Time now);
  void SetTimer(uint64_t lmr_id, Release& release, absl::Time when);

  const ManagerOptions& options_;
  const Clock* const clock_;
  Store* const store_;
  EventBus* const events_;
  NodeRequests* const requests_;
  const OpenSessionOf open_session_of_;
  bool recovering_;

  // RELEASING LMRs by id; ReleaseLmrMemory requests in flight -> LMR;
  // pending grant -> LMR; timers (time, LMR); revoking grants restored
  // before their LMR, by grant id.
  absl::flat_hash_map<uint64_t, Release> releases_;
  absl::flat_hash_map<uint64_t, uint64_t> requests_to_lmr_;
  absl::flat_hash_map<uint64_t, uint64_t> pending_acks_;
  std::set<std::pair<absl::Time, uint64_t>> timers_;
  std::map<uint64_t, RestoredRevoke> restored_revoking_;
  Counters counters_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_FENCED_FREE_H_
