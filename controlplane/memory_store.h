// The default Store: everything in memory, lost when the manager exits (the
// agents then rebuild it, see JoinRequest.restore in manager.proto).
#ifndef LITE_CONTROLPLANE_MEMORY_STORE_H_
#define LITE_CONTROLPLANE_MEMORY_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "controlplane/store.h"

namespace lite::controlplane {

class MemoryStore final : public Store {
 public:
  bool Empty() const override;

  std::optional<lite::v1::Member> GetNode(uint32_t node_id) const override;
  std::optional<uint32_t> FindNodeId(absl::string_view name) const override;
  std::optional<uint32_t> FindNodeIdByAddress(
      absl::string_view address) const override;
  void PutNode(const lite::v1::Member& node) override;
  std::vector<lite::v1::Member> ListNodes(uint32_t after_id,
                                          int limit) const override;
  size_t NodeCount() const override { return nodes_.size(); }
  size_t NodeCountInState(lite::v1::NodeState state) const override;
  void DeleteNode(uint32_t node_id) override;

  std::optional<lite::v1::Lmr> GetLmr(uint64_t lmr_id) const override;
  std::optional<uint64_t> FindLmrId(absl::string_view name) const override;
  void PutLmr(const lite::v1::Lmr& lmr) override;
  void DeleteLmr(uint64_t lmr_id) override;
  std::vector<lite::v1::Lmr> ListLmrs(uint32_t home_node_id, uint64_t after_id,
                                      int limit) const override;
  std::vector<uint64_t> LmrIdsOnHome(uint32_t home_node_id) const override;
  size_t LmrCount() const override { return lmrs_.size(); }
  uint64_t LmrBytes() const override { return lmr_bytes_; }

  std::optional<lite::v1::Grant> GetGrant(uint64_t grant_id) const override;
  void PutGrant(const lite::v1::Grant& grant) override;
  void DeleteGrant(uint64_t grant_id) override;
  std::vector<lite::v1::Grant> ListGrants(uint64_t lmr_id,
                                          uint32_t holder_node_id,
                                          uint64_t after_id,
                                          int limit) const override;
  std::vector<uint64_t> GrantIdsForLmr(uint64_t lmr_id) const override;
  std::vector<uint64_t> GrantIdsHeldBy(uint32_t node_id) const override;
  size_t GrantCount() const override { return grants_.size(); }
  size_t GrantCountHeldBy(uint32_t node_id) const override;
  size_t LmrCountOwnedBy(uint32_t uid) const override;
  uint64_t LmrBytesOwnedBy(uint32_t uid) const override;
  uint64_t LmrBytesOwnedOnHome(uint32_t home_node_id,
                               uint32_t uid) const override;
  size_t LmrCountOnHome(uint32_t home_node_id) const override;
  uint64_t LmrChunksOnHome(uint32_t home_node_id) const override;
  size_t GrantCountForLmr(uint64_t lmr_id) const override;
  uint32_t LastLmrSeq(uint32_t home_node_id) const override;

  uint32_t NextNodeId() override;
  void RaiseNodeId(uint32_t used_id) override;
  uint32_t HighestNodeId() const override { return highest_node_id_; }
  uint32_t NextLmrSeq(uint32_t home_node_id) override;
  void RaiseLmrSeq(uint32_t home_node_id, uint32_t used_seq) override;
  uint32_t NextGrantSeq(uint32_t holder_node_id) override;
  void RaiseGrantSeq(uint32_t holder_node_id, uint32_t used_seq) override;
  uint64_t NextEventSequence() override { return ++event_sequence_; }
  uint64_t LastEventSequence() const override { return event_sequence_; }
  std::string ClusterKey() const override { return cluster_key_; }
  void SetClusterKey(std::string key) override {
    cluster_key_ = std::move(key);
  }

 private:
  void UncountOwner(uint32_t uid);
  // Adds (sign +1) or removes (-1) the LMR's bytes and chunks in the
  // per-owner and per-home totals.
  void CountUsage(const lite::v1::Lmr& lmr, int sign);
  void UncountState(lite::v1::NodeState state);
  void UnindexName(const std::string& name, uint64_t lmr_id);
  void UnindexAddress(const std::string& address, uint32_t node_id);

  // Ordered maps: listings page by id.
  std::map<uint32_t, lite::v1::Member> nodes_;
  // state -> records in it (no zero entries).
  absl::flat_hash_map<int, size_t> nodes_by_state_;
  absl::flat_hash_map<std::string, uint32_t> node_ids_by_name_;
  absl::flat_hash_map<std::string, uint32_t> node_ids_by_address_;
  std::map<uint64_t, lite::v1::Lmr> lmrs_;
  uint64_t lmr_bytes_ = 0;
  absl::flat_hash_map<std::string, uint64_t> lmr_ids_by_name_;
  absl::flat_hash_map<uint32_t, std::set<uint64_t>> lmrs_by_home_;
  // owner_uid -> how many LMRs it owns (no zero entries).
  absl::flat_hash_map<uint32_t, size_t> lmrs_by_owner_;
  // Bytes by owner_uid, by (home, owner_uid); chunks by home (no zeros).
  absl::flat_hash_map<uint32_t, uint64_t> bytes_by_owner_;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint64_t>
      bytes_by_home_owner_;
  absl::flat_hash_map<uint32_t, uint64_t> chunks_by_home_;
  std::map<uint64_t, lite::v1::Grant> grants_;
  absl::flat_hash_map<uint64_t, std::set<uint64_t>> grants_by_lmr_;
  absl::flat_hash_map<uint32_t, std::set<uint64_t>> grants_by_holder_;

  // The next id to try; NextNodeId skips ids in use (restored ones).
  uint32_t next_node_id_ = 1;
  uint32_t highest_node_id_ = 0;
  absl::flat_hash_map<uint32_t, uint32_t> last_lmr_seq_;
  absl::flat_hash_map<uint32_t, uint32_t> last_grant_seq_;
  uint64_t event_sequence_ = 0;
  std::string cluster_key_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_MEMORY_STORE_H_
