// The manager's part for the LMR registry and grants: named LMRs (their
// records are the Store's), the allocations in flight to their homes, map
// grants, their revocation, and the limits on what callers may make the
// manager keep of them. A freed LMR goes on to the fenced free
// (fenced_free.h); announcements go out on the EventBus; an allocation is a
// request in the one NodeRequests table.
//
// Callers pass members ManagerState has checked are live (membership is
// its part); what the registry needs to know of membership besides is asked
// through NotSuspect. Every method changes nothing when it returns an
// error. Not thread-safe: ManagerState calls it under its one lock, which
// also covers the Store and the parts it is given.
#ifndef LITE_CONTROLPLANE_LMR_REGISTRY_H_
#define LITE_CONTROLPLANE_LMR_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controlplane/clock.h"
#include "controlplane/event_bus.h"
#include "controlplane/fenced_free.h"
#include "controlplane/node_requests.h"
#include "controlplane/options.h"
#include "controlplane/store.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

class LmrRegistry {
 public:
  using AllocDone =
      std::function<void(absl::StatusOr<lite::v1::AllocLmrResponse>)>;
  // Work to run once the caller's lock is released (an allocation's done).
  using Deferred = std::vector<std::function<void()>>;
  // UNAVAILABLE if `node_id` is live and SUSPECT: `what` needs its agent.
  using NotSuspect =
      std::function<absl::Status(uint32_t node_id, const std::string& what)>;

  struct Counters {
    uint64_t grants_issued = 0;
    uint64_t grants_revoked = 0;
  };

  LmrRegistry(const ManagerOptions& options, const Clock* clock, Store* store,
              EventBus* events, NodeRequests* requests, FencedFree* fenced_free,
              Deferred* deferred, NotSuspect not_suspect);

  // ---- the RPCs, for a live `caller` (requests validated by the
  // Validate* functions first; manager.proto is the spec)
  static absl::Status ValidateRegister(
      const lite::v1::RegisterLmrRequest& request,
      const ManagerOptions& options);
  // `recovering`: the manager is in its recovery window (re-registrations
  // of ids it never issued are accepted, grants restored before are
  // checked). A new registration is refused while recovering by the caller.
  absl::StatusOr<lite::v1::Lmr> Register(
      const lite::v1::Member& caller,
      const lite::v1::RegisterLmrRequest& request, bool recovering);
  // On `home`, a live member with its session open and not SUSPECT:
  // validation errors at once; else `done` once, later, deferred.
  absl::Status Alloc(const lite::v1::Member& home,
                     const lite::v1::AllocLmrRequest& request, AllocDone done);
  // The grant, with the LMR's chunks.
  absl::StatusOr<lite::v1::Grant> Map(const lite::v1::Member& caller,
                                      const lite::v1::MapLmrRequest& request);
  absl::Status Unmap(const lite::v1::Member& caller, uint64_t grant_id);
  // The number of grants revoked.
  absl::StatusOr<uint32_t> Free(const lite::v1::FreeLmrRequest& request);
  static absl::Status ValidateRestore(
      const lite::v1::RestoreGrantRequest& request,
      const ManagerOptions& options);
  absl::StatusOr<lite::v1::RestoreGrantResponse> Restore(
      const lite::v1::Member& caller,
      const lite::v1::RestoreGrantRequest& request, bool recovering);
  // Up to `limit` records after `after_id` (filters 0: any), without keys;
  // `more` says whether further ones exist.
  std::vector<lite::v1::Lmr> ListLmrs(uint32_t home_node_id, uint64_t after_id,
                                      int limit, bool* more) const;
  std::vector<lite::v1::Grant> ListGrants(uint64_t lmr_id,
                                          uint32_t holder_node_id,
                                          uint64_t after_id, int limit,
                                          bool* more) const;

  // ---- from the other parts
  // The home's answer to an allocation (from the incarnation asked).
  void AllocAnswered(const lite::v1::NodeRequestResult& result,
                     uint64_t home_incarnation);
  // Its deadline passed (NodeRequests said so and ended it).
  void AllocTimedOut(uint64_t request_id);
  // Fails every allocation in flight (the manager shuts down).
  void FailAllAllocs(const absl::Status& why);

  // Revokes every grant into the LMR, then removes it; both announced.
  // With `release` the LMR stays RELEASING and the fenced free starts.
  // A RELEASING LMR is dropped silently (its home ended). Returns the
  // grants revoked.
  size_t RemoveLmr(uint64_t lmr_id, lite::v1::RemovalCause cause,
                   bool release = false);
  // An incarnation of `node_id` ended (`left`, or failed): its LMRs go,
  // announced, with every grant into them; its own grants are dropped;
  // allocations on it fail. `label` names it in errors. Returns (LMRs
  // removed, grants into them revoked, own grants dropped).
  struct NodeEndedCounts {
    size_t lmrs = 0;
    size_t revoked = 0;
    size_t dropped = 0;
  };
  NodeEndedCounts NodeEnded(uint32_t node_id, bool left,
                            const std::string& label);
  // Recovery is over: grants restored into LMRs no home re-registered are
  // revoked, one LmrRemoved per missing LMR. Returns how many.
  size_t RevokeOrphans();

  const Counters& counters() const { return counters_; }

 private:
  // An AllocLmr waiting for its home's answer (the request is in
  // requests_ under the same id, with the home's incarnation).
  struct PendingAlloc {
    lite::v1::Lmr lmr;  // Everything but chunks and key.
    AllocDone done;
  };
  std::optional<std::pair<uint32_t, uint64_t>> RevokeGrant(
      uint64_t grant_id, lite::v1::RemovalCause cause,
      bool ack_requested = false);
  void FinishAlloc(uint64_t request_id,
                   absl::StatusOr<lite::v1::AllocLmrResponse> outcome);
  absl::Status CheckNameFree(const std::string& name) const;
  // The limits (manager_limits' part for LMRs and grants): room for one
  // more grant held by `holder` / into `lmr_id`, LMR owned by `uid`,
  // allocation in flight, and on `home` for an LMR of `bytes` and
  // `chunks` owned by `uid` (allocations in flight count).
  absl::Status CheckGrantRoom(uint32_t holder) const;
  absl::Status CheckLmrGrantRoom(uint64_t lmr_id) const;
  absl::Status CheckOwnerRoom(uint32_t uid) const;
  absl::Status CheckPendingRoom() const;
  absl::Status CheckHomeRoom(uint32_t home, uint32_t uid, uint64_t bytes,
                             int64_t chunks) const;

  const ManagerOptions& options_;
  const Clock* const clock_;
  Store* const store_;
  EventBus* const events_;
  NodeRequests* const requests_;
  FencedFree* const fenced_free_;
  Deferred* const deferred_;
  const NotSuspect not_suspect_;

  // Allocations in flight by request id, and the names they reserve.
  absl::flat_hash_map<uint64_t, PendingAlloc> allocs_;
  absl::flat_hash_map<std::string, uint64_t> alloc_names_;
  Counters counters_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_LMR_REGISTRY_H_
