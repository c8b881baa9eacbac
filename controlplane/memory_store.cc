#include "controlplane/memory_store.h"

#include <algorithm>
#include <limits>

namespace lite::controlplane {
namespace {

constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();

template <typename Id>
std::vector<Id> ToVector(const std::set<Id>* ids) {
  if (ids == nullptr) return {};
  return std::vector<Id>(ids->begin(), ids->end());
}

template <typename Map, typename Key>
const typename Map::mapped_type* Find(const Map& map, const Key& key) {
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

uint32_t NextSeq(absl::flat_hash_map<uint32_t, uint32_t>& last, uint32_t key) {
  uint32_t& seq = last[key];
  if (seq == kMax32) return 0;
  return ++seq;
}

void RaiseSeq(absl::flat_hash_map<uint32_t, uint32_t>& last, uint32_t key,
              uint32_t used) {
  uint32_t& seq = last[key];
  seq = std::max(seq, used);
}

}  // namespace

bool MemoryStore::Empty() const {
  return nodes_.empty() && lmrs_.empty() && grants_.empty();
}

std::optional<lite::v1::Member> MemoryStore::GetNode(uint32_t node_id) const {
  const auto* node = Find(nodes_, node_id);
  if (node == nullptr) return std::nullopt;
  return *node;
}

std::optional<uint32_t> MemoryStore::FindNodeId(absl::string_view name) const {
  auto it = node_ids_by_name_.find(name);
  if (it == node_ids_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> MemoryStore::FindNodeIdByAddress(
    absl::string_view address) const {
  auto it = node_ids_by_address_.find(address);
  if (it == node_ids_by_address_.end()) return std::nullopt;
  return it->second;
}

void MemoryStore::UnindexAddress(const std::string& address, uint32_t node_id) {
  auto it = node_ids_by_address_.find(address);
  if (it != node_ids_by_address_.end() && it->second == node_id) {
    node_ids_by_address_.erase(it);
  }
}

void MemoryStore::PutNode(const lite::v1::Member& node) {
  auto it = nodes_.find(node.node_id());
  if (it != nodes_.end()) {
    UncountState(it->second.state());
    UnindexAddress(it->second.rdma_address(), node.node_id());
  }
  nodes_[node.node_id()] = node;
  node_ids_by_name_[node.node_name()] = node.node_id();
  if (!node.rdma_address().empty()) {
    node_ids_by_address_[node.rdma_address()] = node.node_id();
  }
  ++nodes_by_state_[node.state()];
}

void MemoryStore::DeleteNode(uint32_t node_id) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  node_ids_by_name_.erase(it->second.node_name());
  UnindexAddress(it->second.rdma_address(), node_id);
  UncountState(it->second.state());
  nodes_.erase(it);
}

size_t MemoryStore::NodeCountInState(lite::v1::NodeState state) const {
  auto it = nodes_by_state_.find(state);
  return it == nodes_by_state_.end() ? 0 : it->second;
}

void MemoryStore::UncountState(lite::v1::NodeState state) {
  auto it = nodes_by_state_.find(state);
  if (it != nodes_by_state_.end() && --it->second == 0) {
    nodes_by_state_.erase(it);
  }
}

void MemoryStore::UncountOwner(uint32_t uid) {
  auto it = lmrs_by_owner_.find(uid);
  if (it != lmrs_by_owner_.end() && --it->second == 0) {
    lmrs_by_owner_.erase(it);
  }
}

size_t MemoryStore::LmrCountOwnedBy(uint32_t uid) const {
  auto it = lmrs_by_owner_.find(uid);
  return it == lmrs_by_owner_.end() ? 0 : it->second;
}

namespace {

// Adds `sign` * amount to map[key], erasing entries that reach zero.
template <typename Map, typename Key>
void Adjust(Map& map, const Key& key, int sign, uint64_t amount) {
  uint64_t& value = map[key];
  value = sign > 0 ? value + amount : value - amount;
  if (value == 0) map.erase(key);
}

template <typename Map, typename Key>
uint64_t Get(const Map& map, const Key& key) {
  auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

}  // namespace

void MemoryStore::CountUsage(const lite::v1::Lmr& lmr, int sign) {
  Adjust(bytes_by_owner_, lmr.owner_uid(), sign, lmr.size_bytes());
  Adjust(bytes_by_home_owner_,
         std::make_pair(lmr.home_node_id(), lmr.owner_uid()), sign,
         lmr.size_bytes());
  Adjust(chunks_by_home_, lmr.home_node_id(), sign,
         static_cast<uint64_t>(lmr.chunks_size()));
}

uint64_t MemoryStore::LmrBytesOwnedBy(uint32_t uid) const {
  return Get(bytes_by_owner_, uid);
}

uint64_t MemoryStore::LmrBytesOwnedOnHome(uint32_t home_node_id,
                                          uint32_t uid) const {
  return Get(bytes_by_home_owner_, std::make_pair(home_node_id, uid));
}

uint64_t MemoryStore::LmrChunksOnHome(uint32_t home_node_id) const {
  return Get(chunks_by_home_, home_node_id);
}

size_t MemoryStore::LmrCountOnHome(uint32_t home_node_id) const {
  auto it = lmrs_by_home_.find(home_node_id);
  return it == lmrs_by_home_.end() ? 0 : it->second.size();
}

size_t MemoryStore::GrantCountForLmr(uint64_t lmr_id) const {
  auto it = grants_by_lmr_.find(lmr_id);
  return it == grants_by_lmr_.end() ? 0 : it->second.size();
}

uint32_t MemoryStore::LastLmrSeq(uint32_t home_node_id) const {
  auto it = last_lmr_seq_.find(home_node_id);
  return it == last_lmr_seq_.end() ? 0 : it->second;
}

size_t MemoryStore::GrantCountHeldBy(uint32_t node_id) const {
  auto it = grants_by_holder_.find(node_id);
  return it == grants_by_holder_.end() ? 0 : it->second.size();
}

std::vector<lite::v1::Member> MemoryStore::ListNodes(uint32_t after_id,
                                                     int limit) const {
  std::vector<lite::v1::Member> out;
  for (auto it = nodes_.upper_bound(after_id);
       it != nodes_.end() && static_cast<int>(out.size()) < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::optional<lite::v1::Lmr> MemoryStore::GetLmr(uint64_t lmr_id) const {
  const auto* lmr = Find(lmrs_, lmr_id);
  if (lmr == nullptr) return std::nullopt;
  return *lmr;
}

std::optional<uint64_t> MemoryStore::FindLmrId(absl::string_view name) const {
  auto it = lmr_ids_by_name_.find(name);
  if (it == lmr_ids_by_name_.end()) return std::nullopt;
  return it->second;
}

void MemoryStore::UnindexName(const std::string& name, uint64_t lmr_id) {
  // A RELEASING record's name may be another LMR's by now.
  auto it = lmr_ids_by_name_.find(name);
  if (it != lmr_ids_by_name_.end() && it->second == lmr_id) {
    lmr_ids_by_name_.erase(it);
  }
}

void MemoryStore::PutLmr(const lite::v1::Lmr& lmr) {
  auto it = lmrs_.find(lmr.lmr_id());
  if (it != lmrs_.end()) {
    // Replacing: drop the old record's index entries first.
    UnindexName(it->second.name(), lmr.lmr_id());
    lmrs_by_home_[it->second.home_node_id()].erase(lmr.lmr_id());
    UncountOwner(it->second.owner_uid());
    lmr_bytes_ -= it->second.size_bytes();
    CountUsage(it->second, -1);
  }
  lmrs_[lmr.lmr_id()] = lmr;
  lmr_bytes_ += lmr.size_bytes();
  CountUsage(lmr, +1);
  if (lmr.state() != lite::v1::LMR_STATE_RELEASING) {
    lmr_ids_by_name_[lmr.name()] = lmr.lmr_id();
  }
  lmrs_by_home_[lmr.home_node_id()].insert(lmr.lmr_id());
  ++lmrs_by_owner_[lmr.owner_uid()];
}

void MemoryStore::DeleteLmr(uint64_t lmr_id) {
  auto it = lmrs_.find(lmr_id);
  if (it == lmrs_.end()) return;
  UnindexName(it->second.name(), lmr_id);
  auto home = lmrs_by_home_.find(it->second.home_node_id());
  if (home != lmrs_by_home_.end()) {
    home->second.erase(lmr_id);
    if (home->second.empty()) lmrs_by_home_.erase(home);
  }
  UncountOwner(it->second.owner_uid());
  lmr_bytes_ -= it->second.size_bytes();
  CountUsage(it->second, -1);
  lmrs_.erase(it);
}

std::vector<lite::v1::Lmr> MemoryStore::ListLmrs(uint32_t home_node_id,
                                                 uint64_t after_id,
                                                 int limit) const {
  std::vector<lite::v1::Lmr> out;
  if (home_node_id != 0) {
    const auto* ids = Find(lmrs_by_home_, home_node_id);
    if (ids == nullptr) return out;
    for (auto it = ids->upper_bound(after_id);
         it != ids->end() && static_cast<int>(out.size()) < limit; ++it) {
      out.push_back(lmrs_.at(*it));
    }
    return out;
  }
  for (auto it = lmrs_.upper_bound(after_id);
       it != lmrs_.end() && static_cast<int>(out.size()) < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<uint64_t> MemoryStore::LmrIdsOnHome(uint32_t home_node_id) const {
  return ToVector(Find(lmrs_by_home_, home_node_id));
}

std::optional<lite::v1::Grant> MemoryStore::GetGrant(uint64_t grant_id) const {
  const auto* grant = Find(grants_, grant_id);
  if (grant == nullptr) return std::nullopt;
  return *grant;
}

void MemoryStore::PutGrant(const lite::v1::Grant& grant) {
  DeleteGrant(grant.grant_id());
  grants_[grant.grant_id()] = grant;
  grants_by_lmr_[grant.lmr_id()].insert(grant.grant_id());
  grants_by_holder_[grant.holder_node_id()].insert(grant.grant_id());
}

void MemoryStore::DeleteGrant(uint64_t grant_id) {
  auto it = grants_.find(grant_id);
  if (it == grants_.end()) return;
  auto by_lmr = grants_by_lmr_.find(it->second.lmr_id());
  if (by_lmr != grants_by_lmr_.end()) {
    by_lmr->second.erase(grant_id);
    if (by_lmr->second.empty()) grants_by_lmr_.erase(by_lmr);
  }
  auto by_holder = grants_by_holder_.find(it->second.holder_node_id());
  if (by_holder != grants_by_holder_.end()) {
    by_holder->second.erase(grant_id);
    if (by_holder->second.empty()) grants_by_holder_.erase(by_holder);
  }
  grants_.erase(it);
}

std::vector<lite::v1::Grant> MemoryStore::ListGrants(uint64_t lmr_id,
                                                     uint32_t holder_node_id,
                                                     uint64_t after_id,
                                                     int limit) const {
  std::vector<lite::v1::Grant> out;
  const auto matches = [&](const lite::v1::Grant& g) {
    return (lmr_id == 0 || g.lmr_id() == lmr_id) &&
           (holder_node_id == 0 || g.holder_node_id() == holder_node_id);
  };
  // Walk the narrowest index available.
  const std::set<uint64_t>* ids = nullptr;
  if (lmr_id != 0) {
    ids = Find(grants_by_lmr_, lmr_id);
    if (ids == nullptr) return out;
  } else if (holder_node_id != 0) {
    ids = Find(grants_by_holder_, holder_node_id);
    if (ids == nullptr) return out;
  }
  if (ids != nullptr) {
    for (auto it = ids->upper_bound(after_id);
         it != ids->end() && static_cast<int>(out.size()) < limit; ++it) {
      const lite::v1::Grant& g = grants_.at(*it);
      if (matches(g)) out.push_back(g);
    }
    return out;
  }
  for (auto it = grants_.upper_bound(after_id);
       it != grants_.end() && static_cast<int>(out.size()) < limit; ++it) {
    out.push_back(it->second);
  }
  return out;
}

std::vector<uint64_t> MemoryStore::GrantIdsForLmr(uint64_t lmr_id) const {
  return ToVector(Find(grants_by_lmr_, lmr_id));
}

std::vector<uint64_t> MemoryStore::GrantIdsHeldBy(uint32_t node_id) const {
  return ToVector(Find(grants_by_holder_, node_id));
}

uint32_t MemoryStore::NextNodeId() {
  // Restored nodes may hold ids above the counter's old value; skip them.
  while (next_node_id_ != 0 && nodes_.contains(next_node_id_)) {
    ++next_node_id_;  // Wraps to 0 after kMax32: the space is used up.
  }
  if (next_node_id_ == 0) return 0;
  highest_node_id_ = std::max(highest_node_id_, next_node_id_);
  return next_node_id_++;
}

void MemoryStore::RaiseNodeId(uint32_t used_id) {
  highest_node_id_ = std::max(highest_node_id_, used_id);
  // The counter never wraps to 0 (which means "every id is taken") because
  // of one id in use: NextNodeId skips ids in use on its own, so the last
  // one is left to it (review cp H1: restore id 0xFFFFFFFF stopped every
  // new name from joining).
  if (used_id == kMax32) return;
  if (next_node_id_ != 0 && used_id >= next_node_id_) {
    next_node_id_ = used_id + 1;
  }
}

uint32_t MemoryStore::NextLmrSeq(uint32_t home_node_id) {
  return NextSeq(last_lmr_seq_, home_node_id);
}

void MemoryStore::RaiseLmrSeq(uint32_t home_node_id, uint32_t used_seq) {
  RaiseSeq(last_lmr_seq_, home_node_id, used_seq);
}

uint32_t MemoryStore::NextGrantSeq(uint32_t holder_node_id) {
  return NextSeq(last_grant_seq_, holder_node_id);
}

void MemoryStore::RaiseGrantSeq(uint32_t holder_node_id, uint32_t used_seq) {
  RaiseSeq(last_grant_seq_, holder_node_id, used_seq);
}

}  // namespace lite::controlplane
