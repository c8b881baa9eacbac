// Where the manager keeps the cluster's durable records: nodes, LMRs, grants
// and the id counters. The state machine (ManagerState) owns the volatile
// part (leases, sessions, requests in flight) and keeps this interface free
// of policy: a Store only stores, indexes and lists. The in-memory
// implementation is the default; a persistent one would let a restarted
// manager skip rebuilding state from the agents.
//
// Calls are made with the state machine's lock held; implementations need no
// locking of their own.
#ifndef LITE_CONTROLPLANE_STORE_H_
#define LITE_CONTROLPLANE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lite/v1/types.pb.h"

namespace lite::controlplane {

class Store {
 public:
  virtual ~Store() = default;

  // True when the store holds no node, LMR or grant (a fresh start).
  virtual bool Empty() const = 0;

  // Nodes, keyed by node_id; node_name is unique.
  virtual std::optional<lite::v1::Member> GetNode(uint32_t node_id) const = 0;
  virtual std::optional<uint32_t> FindNodeId(absl::string_view name) const = 0;
  // The node whose record holds rdma_address `address` (live or departed),
  // if any: a recorded address stays its name's until the record is
  // forgotten (ManagerState::AdmitLocked, review cp L8).
  virtual std::optional<uint32_t> FindNodeIdByAddress(
      absl::string_view address) const = 0;
  // Inserts or replaces. Replacing may not change node_name.
  virtual void PutNode(const lite::v1::Member& node) = 0;
  // Up to `limit` nodes with node_id > after_id, by id.
  virtual std::vector<lite::v1::Member> ListNodes(uint32_t after_id,
                                                  int limit) const = 0;
  virtual size_t NodeCount() const = 0;
  // Node records in `state` (for the metrics: kept with the records so
  // that a scrape does not walk them).
  virtual size_t NodeCountInState(lite::v1::NodeState state) const = 0;
  // Forgets a node record (a departed one past --max_departed_records). Its
  // id is not handed out again (NextNodeId keeps counting).
  virtual void DeleteNode(uint32_t node_id) = 0;

  // LMRs, keyed by lmr_id; name is unique among those not RELEASING, and
  // FindLmrId finds only those (a RELEASING record's name is free again).
  virtual std::optional<lite::v1::Lmr> GetLmr(uint64_t lmr_id) const = 0;
  virtual std::optional<uint64_t> FindLmrId(absl::string_view name) const = 0;
  virtual void PutLmr(const lite::v1::Lmr& lmr) = 0;
  virtual void DeleteLmr(uint64_t lmr_id) = 0;
  // Up to `limit` LMRs with lmr_id > after_id, by id; home_node_id 0 = any.
  virtual std::vector<lite::v1::Lmr> ListLmrs(uint32_t home_node_id,
                                              uint64_t after_id,
                                              int limit) const = 0;
  virtual std::vector<uint64_t> LmrIdsOnHome(uint32_t home_node_id) const = 0;
  virtual size_t LmrCount() const = 0;
  // The size_bytes of every LMR (LIVE and RELEASING) together.
  virtual uint64_t LmrBytes() const = 0;
  // LMRs (LIVE and RELEASING) whose owner_uid is `uid`.
  virtual size_t LmrCountOwnedBy(uint32_t uid) const = 0;
  // The size_bytes of the LMRs (LIVE and RELEASING) owned by `uid`, in all
  // and on one home.
  virtual uint64_t LmrBytesOwnedBy(uint32_t uid) const = 0;
  virtual uint64_t LmrBytesOwnedOnHome(uint32_t home_node_id,
                                       uint32_t uid) const = 0;
  // LMRs (LIVE and RELEASING) homed on a node, and their chunks together.
  virtual size_t LmrCountOnHome(uint32_t home_node_id) const = 0;
  virtual uint64_t LmrChunksOnHome(uint32_t home_node_id) const = 0;

  // Grants, keyed by grant_id.
  virtual std::optional<lite::v1::Grant> GetGrant(uint64_t grant_id) const = 0;
  virtual void PutGrant(const lite::v1::Grant& grant) = 0;
  virtual void DeleteGrant(uint64_t grant_id) = 0;
  // Up to `limit` grants with grant_id > after_id, by id; 0 filters = any.
  virtual std::vector<lite::v1::Grant> ListGrants(uint64_t lmr_id,
                                                  uint32_t holder_node_id,
                                                  uint64_t after_id,
                                                  int limit) const = 0;
  virtual std::vector<uint64_t> GrantIdsForLmr(uint64_t lmr_id) const = 0;
  virtual std::vector<uint64_t> GrantIdsHeldBy(uint32_t node_id) const = 0;
  virtual size_t GrantCount() const = 0;
  virtual size_t GrantCountHeldBy(uint32_t node_id) const = 0;
  virtual size_t GrantCountForLmr(uint64_t lmr_id) const = 0;

  // Id counters. Each Next* returns a value never returned before and above
  // any value passed to the matching Raise* (Raise* records that an id was
  // restored from an agent, so new ids must not collide with it), or 0 when
  // the 32-bit space is used up.
  virtual uint32_t NextNodeId() = 0;
  virtual void RaiseNodeId(uint32_t used_id) = 0;
  // The highest node id NextNodeId returned or RaiseNodeId was given (0:
  // none yet): how far a restored identity's id may reach (AdmitLocked).
  virtual uint32_t HighestNodeId() const = 0;
  // Per-node sequences for the low 32 bits of LMR and grant ids.
  virtual uint32_t NextLmrSeq(uint32_t home_node_id) = 0;
  virtual void RaiseLmrSeq(uint32_t home_node_id, uint32_t used_seq) = 0;
  // The highest LMR sequence given or raised to for a home (0: none): an
  // LMR id at or below it is one this manager issued (or restored).
  virtual uint32_t LastLmrSeq(uint32_t home_node_id) const = 0;
  virtual uint32_t NextGrantSeq(uint32_t holder_node_id) = 0;
  virtual void RaiseGrantSeq(uint32_t holder_node_id, uint32_t used_seq) = 0;
  // The global event sequence: returns last + 1 and records it.
  virtual uint64_t NextEventSequence() = 0;
  virtual uint64_t LastEventSequence() const = 0;

  // The cluster key every pair secret is derived from (pair_secrets.h):
  // empty until the manager sets it. Kept with the records so that a
  // manager restarting on a persistent store hands out the same secrets. It
  // does not count for Empty(): a key alone is nothing to recover.
  virtual std::string ClusterKey() const = 0;
  virtual void SetClusterKey(std::string key) = 0;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_STORE_H_
