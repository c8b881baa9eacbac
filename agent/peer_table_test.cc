#include "agent/peer_table.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "agent/fake_module.h"

namespace lite::agent {
namespace {

lite::v1::Member M(uint32_t id, uint64_t inc, std::string addr) {
  lite::v1::Member m;
  m.set_node_id(id);
  m.set_node_name(absl::StrCat("n", id));
  m.set_incarnation(inc);
  m.set_rdma_address(std::move(addr));
  return m;
}

TEST(PeerTableTest, UpsertOnlyReprogramsRealChanges) {
  FakeModule module;
  PeerTable t(&module);
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1")).ok());
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1")).ok());  // Same: no call.
  ASSERT_TRUE(t.Upsert(M(2, 2, "10.0.0.2:1")).ok());  // New incarnation.
  EXPECT_EQ(module.Calls(),
            (std::vector<std::string>{"AddPeer 2 1 10.0.0.2:1",
                                      "AddPeer 2 2 10.0.0.2:1"}));
  EXPECT_EQ(t.List()[0].incarnation(), 2u);
}

// Review cp H1: an older incarnation of a known peer (a replayed identity)
// does not replace it, as lite.ko never lets it; another name under the id
// (ids handed out again) does.
TEST(PeerTableTest, AnOlderIncarnationOfTheSamePeerIsRefused) {
  FakeModule module;
  PeerTable t(&module);
  ASSERT_TRUE(t.Upsert(M(2, 7, "10.0.0.2:1")).ok());
  const absl::Status older = t.Upsert(M(2, 3, "10.0.0.9:1"));
  EXPECT_EQ(older.code(), absl::StatusCode::kFailedPrecondition) << older;
  EXPECT_EQ(t.List()[0].incarnation(), 7u);
  EXPECT_EQ(t.List()[0].rdma_address(), "10.0.0.2:1");
  lite::v1::Member other = M(2, 1, "10.0.0.5:1");
  other.set_node_name("another");
  ASSERT_TRUE(t.Upsert(other).ok());
  EXPECT_EQ(module.Calls(),
            (std::vector<std::string>{"AddPeer 2 7 10.0.0.2:1",
                                      "AddPeer 2 1 10.0.0.5:1"}));
}

TEST(PeerTableTest, RemoveNeedsTheIncarnation) {
  FakeModule module;
  PeerTable t(&module);
  ASSERT_TRUE(t.Upsert(M(2, 3, "10.0.0.2:1")).ok());
  EXPECT_FALSE(*t.Remove(2, 2));
  EXPECT_EQ(t.List().size(), 1u);
  EXPECT_TRUE(*t.Remove(2, 3));
  EXPECT_TRUE(t.List().empty());
  EXPECT_TRUE(module.ListPeers()->empty());
}

TEST(PeerTableTest, ReconcileSkipsSelfAndKeepsMissingWhileRecovering) {
  FakeModule module;
  PeerTable t(&module);
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1")).ok());
  ASSERT_TRUE(t.Upsert(M(3, 1, "10.0.0.3:1")).ok());
  ASSERT_TRUE(
      t.Reconcile({M(1, 1, "10.0.0.1:1"), M(3, 1, "10.0.0.3:1")}, 1, true)
          .ok());
  EXPECT_EQ(t.List().size(), 2u);  // 2 kept: it may still come back.
  ASSERT_TRUE(
      t.Reconcile({M(1, 1, "10.0.0.1:1"), M(3, 1, "10.0.0.3:1")}, 1, false)
          .ok());
  ASSERT_EQ(t.List().size(), 1u);
  EXPECT_EQ(t.List()[0].node_id(), 3u);
  ASSERT_TRUE(t.RetainOnly({}).ok());
  EXPECT_TRUE(t.List().empty());
  EXPECT_TRUE(module.ListPeers()->empty());
}

TEST(PeerTableTest, TheModuleLearnsEachPeersName) {
  FakeModule module;
  PeerTable t(&module);
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1")).ok());
  ASSERT_TRUE(t.Upsert(M(3, 1, "10.0.0.3:1")).ok());
  absl::StatusOr<std::vector<Peer>> peers = module.ListPeers();
  ASSERT_TRUE(peers.ok()) << peers.status();
  ASSERT_EQ(peers->size(), 2u);
  EXPECT_EQ((*peers)[0].name, "n2");
  EXPECT_EQ((*peers)[1].name, "n3");
}

TEST(PeerTableTest, AModuleRefusalLeavesTheTableAsTheModuleIs) {
  FakeModule module;
  ASSERT_TRUE(module
                  .SetIdentity([] {
                    lite::v1::NodeIdentity id;
                    id.set_node_id(1);
                    id.set_incarnation(1);
                    return id;
                  }())
                  .ok());
  PeerTable t(&module);
  // The fake refuses this node as its own peer.
  EXPECT_FALSE(t.Upsert(M(1, 1, "10.0.0.1:1")).ok());
  EXPECT_TRUE(t.List().empty());
}

TEST(PeerTableTest, SecretsGoToTheModuleAndANewOneReplacesOnlyIt) {
  FakeModule module;
  PeerTable t(&module);
  const std::string s1(kPairSecretBytes, '1');
  const std::string s2(kPairSecretBytes, '2');
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1"), s1).ok());
  EXPECT_EQ(module.PeerSecret(2), s1);
  // The same secret again: nothing to do. None: the one there stays.
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1"), s1).ok());
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1")).ok());
  EXPECT_EQ(module.Calls().size(), 1u);
  EXPECT_EQ(module.PeerSecret(2), s1);
  // A new secret for the same peer: AddPeer again, no RemovePeer.
  ASSERT_TRUE(t.Upsert(M(2, 1, "10.0.0.2:1"), s2).ok());
  EXPECT_EQ(module.PeerSecret(2), s2);
  EXPECT_EQ(module.Calls(),
            (std::vector<std::string>{"AddPeer 2 1 10.0.0.2:1",
                                      "AddPeer 2 1 10.0.0.2:1"}));
  // Listing shows members, never secrets.
  EXPECT_FALSE(absl::StrContains(t.List()[0].SerializeAsString(), s2));
}

TEST(PeerTableTest, ReconcileTakesOnlyASecretForTheMembersIncarnation) {
  FakeModule module;
  PeerTable t(&module);
  lite::v1::JoinResponse join;
  lite::v1::PeerSecret* good = join.add_peer_secrets();
  good->set_node_id(2);
  good->set_incarnation(4);
  good->set_secret(std::string(kPairSecretBytes, 'g'));
  lite::v1::PeerSecret* other = join.add_peer_secrets();
  other->set_node_id(3);
  other->set_incarnation(1);  // The member is incarnation 2.
  other->set_secret(std::string(kPairSecretBytes, 'o'));
  lite::v1::PeerSecret* short_one = join.add_peer_secrets();
  short_one->set_node_id(4);
  short_one->set_incarnation(1);
  short_one->set_secret("short");
  int invalid = 0;
  const PeerSecrets secrets = CollectPeerSecrets(join.peer_secrets(), &invalid);
  EXPECT_EQ(invalid, 1);
  ASSERT_TRUE(t.Reconcile({M(1, 1, "10.0.0.1:1"), M(2, 4, "10.0.0.2:1"),
                           M(3, 2, "10.0.0.3:1"), M(4, 1, "10.0.0.4:1")},
                          1, false, secrets)
                  .ok());
  EXPECT_EQ(module.PeerSecret(2), std::string(kPairSecretBytes, 'g'));
  EXPECT_EQ(module.PeerSecret(3), std::string());
  EXPECT_EQ(module.PeerSecret(4), std::string());
}

}  // namespace
}  // namespace lite::agent
