#include "controlplane/memory_store.h"

#include <gtest/gtest.h>

namespace lite::controlplane {
namespace {

lite::v1::Member Node(uint32_t id, const std::string& name) {
  lite::v1::Member member;
  member.set_node_id(id);
  member.set_node_name(name);
  return member;
}

lite::v1::Grant GrantOf(uint64_t id, uint64_t lmr, uint32_t holder) {
  lite::v1::Grant grant;
  grant.set_grant_id(id);
  grant.set_lmr_id(lmr);
  grant.set_holder_node_id(holder);
  return grant;
}

TEST(MemoryStoreTest, NodeIdsSkipRestoredIds) {
  MemoryStore store;
  EXPECT_TRUE(store.Empty());
  EXPECT_EQ(store.NextNodeId(), 1u);
  store.PutNode(Node(1, "a"));
  store.PutNode(Node(3, "restored"));
  store.RaiseNodeId(3);
  EXPECT_EQ(store.NextNodeId(), 4u);
  store.PutNode(Node(5, "also-restored"));  // Not raised: still skipped.
  EXPECT_EQ(store.NextNodeId(), 6u);
  EXPECT_EQ(*store.FindNodeId("restored"), 3u);
  EXPECT_FALSE(store.Empty());
  EXPECT_EQ(store.HighestNodeId(), 6u);
  // The last id in use does not wrap the counter to 0, "every id taken"
  // (review cp H1): new names still get ids.
  store.PutNode(Node(0xFFFFFFFF, "last"));
  store.RaiseNodeId(0xFFFFFFFF);
  EXPECT_EQ(store.HighestNodeId(), 0xFFFFFFFFu);
  EXPECT_EQ(store.NextNodeId(), 7u);
}

TEST(MemoryStoreTest, AddressesIndexEveryRecordUntilForgotten) {
  MemoryStore store;
  lite::v1::Member a = Node(1, "a");
  a.set_rdma_address("10.0.0.1:7471");
  store.PutNode(a);
  EXPECT_EQ(store.FindNodeIdByAddress("10.0.0.1:7471"), 1u);
  a.set_state(lite::v1::NODE_STATE_FAILED);  // Departed: still its own.
  store.PutNode(a);
  EXPECT_EQ(store.FindNodeIdByAddress("10.0.0.1:7471"), 1u);
  a.set_rdma_address("10.0.0.9:7471");  // Moved: the old one is free.
  store.PutNode(a);
  EXPECT_FALSE(store.FindNodeIdByAddress("10.0.0.1:7471").has_value());
  EXPECT_EQ(store.FindNodeIdByAddress("10.0.0.9:7471"), 1u);
  store.DeleteNode(1);
  EXPECT_FALSE(store.FindNodeIdByAddress("10.0.0.9:7471").has_value());
}

TEST(MemoryStoreTest, LmrIndexesFollowReplaceAndDelete) {
  MemoryStore store;
  lite::v1::Lmr lmr;
  lmr.set_lmr_id(10);
  lmr.set_name("x");
  lmr.set_home_node_id(1);
  store.PutLmr(lmr);
  lmr.set_name("y");
  store.PutLmr(lmr);  // Renaming replaces the index entry.
  EXPECT_FALSE(store.FindLmrId("x").has_value());
  EXPECT_EQ(*store.FindLmrId("y"), 10u);
  EXPECT_EQ(store.LmrIdsOnHome(1), std::vector<uint64_t>{10});
  EXPECT_EQ(store.ListLmrs(2, 0, 10).size(), 0u);
  store.DeleteLmr(10);
  EXPECT_TRUE(store.LmrIdsOnHome(1).empty());
  EXPECT_EQ(store.LmrCount(), 0u);
}

TEST(MemoryStoreTest, GrantIndexesAndFilteredPaging) {
  MemoryStore store;
  store.PutGrant(GrantOf(1, 100, 1));
  store.PutGrant(GrantOf(2, 100, 2));
  store.PutGrant(GrantOf(3, 200, 2));
  store.PutGrant(GrantOf(4, 100, 2));
  EXPECT_EQ(store.GrantIdsForLmr(100), (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(store.GrantIdsHeldBy(2), (std::vector<uint64_t>{2, 3, 4}));
  const auto both = store.ListGrants(100, 2, 0, 10);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].grant_id(), 4u);
  const auto page = store.ListGrants(0, 0, 1, 2);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].grant_id(), 2u);
  store.DeleteGrant(2);
  EXPECT_EQ(store.GrantIdsHeldBy(2), (std::vector<uint64_t>{3, 4}));
}

TEST(MemoryStoreTest, SequencesAreMonotonicAndRaisable) {
  MemoryStore store;
  EXPECT_EQ(store.NextLmrSeq(1), 1u);
  store.RaiseLmrSeq(1, 10);
  EXPECT_EQ(store.NextLmrSeq(1), 11u);
  store.RaiseLmrSeq(1, 5);  // Never lowers.
  EXPECT_EQ(store.NextLmrSeq(1), 12u);
  EXPECT_EQ(store.NextLmrSeq(2), 1u);
  store.RaiseGrantSeq(3, 0xFFFFFFFF);
  EXPECT_EQ(store.NextGrantSeq(3), 0u);  // Used up.
  EXPECT_EQ(store.NextEventSequence(), 1u);
  EXPECT_EQ(store.NextEventSequence(), 2u);
  EXPECT_EQ(store.LastEventSequence(), 2u);
}

// The counts the limits read (manager_limits.cc) follow every change.
TEST(MemoryStoreTest, CountsForLimitsFollowPutReplaceAndDelete) {
  MemoryStore store;
  store.PutNode(Node(store.NextNodeId(), "a"));
  store.PutNode(Node(store.NextNodeId(), "b"));
  store.DeleteNode(1);
  EXPECT_EQ(store.NodeCount(), 1u);
  EXPECT_FALSE(store.FindNodeId("a").has_value());
  EXPECT_FALSE(store.GetNode(1).has_value());
  EXPECT_EQ(store.NextNodeId(), 3u);  // A forgotten id is not reused.

  lite::v1::Lmr lmr;
  lmr.set_lmr_id(10);
  lmr.set_name("x");
  lmr.set_owner_uid(7);
  store.PutLmr(lmr);
  lmr.set_lmr_id(11);
  lmr.set_name("y");
  store.PutLmr(lmr);
  EXPECT_EQ(store.LmrCountOwnedBy(7), 2u);
  lmr.set_owner_uid(8);  // Replacing moves it to the new owner.
  store.PutLmr(lmr);
  EXPECT_EQ(store.LmrCountOwnedBy(7), 1u);
  EXPECT_EQ(store.LmrCountOwnedBy(8), 1u);
  store.DeleteLmr(10);
  store.DeleteLmr(10);  // Twice: no change.
  EXPECT_EQ(store.LmrCountOwnedBy(7), 0u);
  EXPECT_EQ(store.LmrCountOwnedBy(8), 1u);

  store.PutGrant(GrantOf(100, 11, 2));
  store.PutGrant(GrantOf(101, 11, 2));
  store.PutGrant(GrantOf(101, 11, 2));  // Replacing: still two.
  EXPECT_EQ(store.GrantCountHeldBy(2), 2u);
  store.DeleteGrant(100);
  EXPECT_EQ(store.GrantCountHeldBy(2), 1u);
  EXPECT_EQ(store.GrantCountHeldBy(3), 0u);
}

// The counts the metrics read (manager_metrics.cc) follow every change.
TEST(MemoryStoreTest, CountsForMetricsFollowPutReplaceAndDelete) {
  MemoryStore store;
  lite::v1::Member a = Node(store.NextNodeId(), "a");
  a.set_state(lite::v1::NODE_STATE_ALIVE);
  lite::v1::Member b = Node(store.NextNodeId(), "b");
  b.set_state(lite::v1::NODE_STATE_ALIVE);
  store.PutNode(a);
  store.PutNode(b);
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_ALIVE), 2u);
  b.set_state(lite::v1::NODE_STATE_FAILED);
  store.PutNode(b);  // Replacing moves it to its new state.
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_ALIVE), 1u);
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_FAILED), 1u);
  store.DeleteNode(b.node_id());
  store.DeleteNode(b.node_id());  // Twice: no change.
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_FAILED), 0u);
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_ALIVE), 1u);
  EXPECT_EQ(store.NodeCountInState(lite::v1::NODE_STATE_LEFT), 0u);

  lite::v1::Lmr lmr;
  lmr.set_lmr_id(10);
  lmr.set_name("x");
  lmr.set_size_bytes(4096);
  store.PutLmr(lmr);
  lmr.set_lmr_id(11);
  lmr.set_name("y");
  lmr.set_size_bytes(1 << 20);
  store.PutLmr(lmr);
  EXPECT_EQ(store.LmrBytes(), 4096u + (1u << 20));
  lmr.set_size_bytes(8192);  // Replacing counts the new size only.
  lmr.set_state(lite::v1::LMR_STATE_RELEASING);
  store.PutLmr(lmr);
  EXPECT_EQ(store.LmrBytes(), 4096u + 8192u);
  store.DeleteLmr(10);
  store.DeleteLmr(10);
  EXPECT_EQ(store.LmrBytes(), 8192u);
  store.DeleteLmr(11);
  EXPECT_EQ(store.LmrBytes(), 0u);
}

}  // namespace
}  // namespace lite::controlplane
