#include "agent/fake_module.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace lite::agent {
namespace {

lite::v1::AllocateLmrMemory Alloc(uint64_t id, uint64_t size) {
  lite::v1::AllocateLmrMemory a;
  a.set_lmr_id(id);
  a.set_name("x");
  a.set_size_bytes(size);
  a.set_mode(0600);
  return a;
}

lite::v1::Credentials Creds() {
  lite::v1::Credentials c;
  c.set_uid(1);
  c.set_gid(1);
  c.set_pid(1);
  return c;
}

TEST(FakeModuleTest, AllocatesWithinCapacityInChunks) {
  FakeModule m(
      FakeModuleOptions{.memory_bytes = 10 << 20, .max_chunk_bytes = 4 << 20});
  auto mem = m.AllocateLmrMemory(Alloc(1, 9 << 20));
  ASSERT_TRUE(mem.ok()) << mem.status();
  ASSERT_EQ(mem->chunks_size(), 3);
  EXPECT_EQ(mem->chunks(2).length_bytes(), 1u << 20);
  EXPECT_NE(mem->chunks(0).address(), mem->chunks(1).address());
  EXPECT_EQ(m.AllocateLmrMemory(Alloc(2, 2 << 20)).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(m.AllocateLmrMemory(Alloc(1, 1)).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(m.FreeLmrMemory(1, false).ok());
  EXPECT_TRUE(m.AllocateLmrMemory(Alloc(2, 10 << 20)).ok());
  EXPECT_TRUE(absl::IsNotFound(m.FreeLmrMemory(1, false)));
}

TEST(FakeModuleTest, PeersAreReplacedAndRemovedByIncarnation) {
  FakeModule m;
  ASSERT_TRUE(m.AddPeer({2, 1, "10.0.0.2:1"}).ok());
  ASSERT_TRUE(m.AddPeer({2, 2, "10.0.0.2:1"}).ok());
  EXPECT_TRUE(absl::IsNotFound(m.RemovePeer(2, 1)));
  EXPECT_TRUE(m.RemovePeer(2, 2).ok());
  EXPECT_TRUE(m.ListPeers()->empty());
  EXPECT_FALSE(m.AddPeer({0, 1, "x"}).ok());
}

TEST(FakeModuleTest, PeersKeepTheirNamesUnderLiteKosRules) {
  FakeModule m(FakeModuleOptions{.node_name = "alpha"});
  ASSERT_TRUE(m.AddPeer({2, 1, "10.0.0.2:1", "beta"}).ok());
  ASSERT_TRUE(m.AddPeer({3, 1, "10.0.0.3:1"}).ok());  // unnamed
  absl::StatusOr<std::vector<Peer>> peers = m.ListPeers();
  ASSERT_TRUE(peers.ok()) << peers.status();
  ASSERT_EQ(peers->size(), 2u);
  EXPECT_EQ((*peers)[0].name, "beta");
  EXPECT_EQ((*peers)[1].name, "");
  // Not this node's own name, and only names the shared rule accepts.
  EXPECT_EQ(m.AddPeer({4, 1, "10.0.0.4:1", "alpha"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.AddPeer({4, 1, "10.0.0.4:1", "a/b"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.ListPeers()->size(), 2u);
}

TEST(FakeModuleTest, UpdateHostedLmrKeepsTheModulesChunks) {
  FakeModule m;
  ASSERT_TRUE(m.AllocateLmrMemory(Alloc(5, 4096)).ok());
  lite::v1::Lmr record;
  record.set_lmr_id(7);
  record.set_size_bytes(4096);
  record.set_epoch(3);
  ASSERT_TRUE(m.UpdateHostedLmr(5, record).ok());
  auto hosted = m.ListHostedLmrs();
  ASSERT_EQ(hosted->size(), 1u);
  EXPECT_EQ((*hosted)[0].lmr_id(), 7u);
  EXPECT_EQ((*hosted)[0].epoch(), 3u);
  EXPECT_EQ((*hosted)[0].chunks_size(), 1);
  EXPECT_EQ((*hosted)[0].origin(), lite::v1::LMR_ORIGIN_ALLOCATED);
  record.set_size_bytes(1);
  EXPECT_FALSE(m.UpdateHostedLmr(7, record).ok());
  EXPECT_TRUE(absl::IsNotFound(m.UpdateHostedLmr(5, record)));
}

// As LITE_ATTR_RELEASING: set by a mark or a RELEASING record, listed,
// never cleared by a later record.
TEST(FakeModuleTest, TheReleasingMarkIsListedAndSticky) {
  FakeModule m;
  ASSERT_TRUE(m.AllocateLmrMemory(Alloc(5, 4096)).ok());
  ASSERT_TRUE(m.AllocateLmrMemory(Alloc(6, 4096)).ok());
  EXPECT_TRUE(absl::IsNotFound(m.MarkLmrReleasing(9)));
  ASSERT_TRUE(m.MarkLmrReleasing(5).ok());
  lite::v1::Lmr live;
  live.set_lmr_id(5);
  live.set_size_bytes(4096);
  live.set_epoch(4);
  live.set_state(lite::v1::LMR_STATE_LIVE);
  ASSERT_TRUE(m.UpdateHostedLmr(5, live).ok());
  lite::v1::Lmr freed = live;
  freed.set_lmr_id(6);
  freed.set_state(lite::v1::LMR_STATE_RELEASING);
  ASSERT_TRUE(m.UpdateHostedLmr(6, freed).ok());
  auto hosted = m.ListHostedLmrs();
  ASSERT_TRUE(hosted.ok());
  ASSERT_EQ(hosted->size(), 2u);
  EXPECT_EQ((*hosted)[0].epoch(), 4u);
  EXPECT_EQ((*hosted)[0].state(), lite::v1::LMR_STATE_RELEASING);
  EXPECT_EQ((*hosted)[1].state(), lite::v1::LMR_STATE_RELEASING);
}

TEST(FakeModuleTest, UpcallRoundTrip) {
  FakeModule m;
  uint64_t reg = m.InjectUpcall(
      Creds(), RegisterUpcall{.name = "r", .size_bytes = 8192, .mode = 0600});
  uint64_t map = m.InjectUpcall(Creds(), MapUpcall{.name = "r", .read = true});
  auto first = m.Receive();
  ASSERT_TRUE(first.ok());
  const Upcall& up = std::get<Upcall>(*first);
  EXPECT_EQ(up.upcall_id, reg);
  const auto& r = std::get<RegisterUpcall>(up.request);
  ASSERT_FALSE(r.chunks.empty());  // The fake "pinned" memory.

  // A successful register reply must carry the LMR.
  UpcallReply bad{.upcall_id = reg};
  EXPECT_FALSE(m.CompleteUpcall(bad).ok());
  lite::v1::Lmr lmr;
  lmr.set_lmr_id(11);
  lmr.set_size_bytes(8192);
  ASSERT_TRUE(m.CompleteUpcall({.upcall_id = reg, .lmr = lmr}).ok());
  EXPECT_TRUE(absl::IsNotFound(m.CompleteUpcall({.upcall_id = reg})));
  EXPECT_EQ(m.ListHostedLmrs()->at(0).origin(),
            lite::v1::LMR_ORIGIN_REGISTERED);

  lite::v1::Grant g;
  g.set_grant_id(99);
  ASSERT_TRUE(m.CompleteUpcall({.upcall_id = map, .grant = g}).ok());
  EXPECT_EQ(m.ListGrants()->size(), 1u);
  auto reply = m.WaitForReply(map, absl::Seconds(1));
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->grant->grant_id(), 99u);
  EXPECT_EQ(m.WaitForReply(12345, absl::Milliseconds(10)).status().code(),
            absl::StatusCode::kDeadlineExceeded);

  // Unmapping drops the grant at once; revoking an absent one is NOT_FOUND.
  m.InjectUpcall(Creds(), UnmapUpcall{.grant_id = 99});
  EXPECT_TRUE(m.ListGrants()->empty());
  EXPECT_TRUE(absl::IsNotFound(m.RevokeGrant(99)));
}

TEST(FakeModuleTest, CloseWakesReceive) {
  FakeModule m;
  absl::StatusOr<ModuleMessage> received;
  absl::Notification returned;
  std::thread receiver([&] {
    received = m.Receive();
    returned.Notify();
  });
  // The receiver is provably asleep in Receive() before Close(): the fake
  // counts it only once it found nothing to return and started waiting.
  ASSERT_TRUE(m.AwaitBlockedReceivers(1, absl::Seconds(10)));
  EXPECT_FALSE(returned.HasBeenNotified());
  m.Close();
  const bool woken = returned.WaitForNotificationWithTimeout(absl::Seconds(10));
  if (!woken) {
    // Release the receiver so the test can end, and fail.
    m.InjectPeerConnectionFailed({});
  }
  receiver.join();
  ASSERT_TRUE(woken) << "Close() did not wake a blocked Receive()";
  EXPECT_TRUE(absl::IsCancelled(received.status())) << received.status();
}

TEST(FakeModuleTest, PairSecretsAreKeptWriteOnlyAndCheckedAsLiteKoDoes) {
  const std::string secret(kPairSecretBytes, 's');
  FakeModule m;
  ASSERT_TRUE(m.AddPeer({2, 1, "10.0.0.2:1", "beta", secret}).ok());
  ASSERT_TRUE(m.AddPeer({3, 1, "10.0.0.3:1", "gamma"}).ok());
  EXPECT_EQ(m.PeerSecret(2), secret);
  EXPECT_EQ(m.PeerSecret(3), std::string());
  EXPECT_FALSE(m.PeerSecret(4).has_value());
  const auto listed = m.ListPeers();
  ASSERT_TRUE(listed.ok());
  for (const Peer& p : *listed) EXPECT_TRUE(p.secret.empty());
  for (const std::string& call : m.Calls()) {
    EXPECT_EQ(call.find(secret), std::string::npos) << call;
  }
  EXPECT_FALSE(m.AddPeer({4, 1, "10.0.0.4:1", "", "short"}).ok());
  EXPECT_FALSE(
      m.AddPeer({4, 1, "10.0.0.4:1", "", std::string(kPairSecretBytes, '\0')})
          .ok());
  // Same peer, new secret: counted as a replacement.
  ASSERT_TRUE(m.AddPeer({2, 1, "10.0.0.2:1", "beta",
                         std::string(kPairSecretBytes, 't')})
                  .ok());
  uint64_t without = 99, replaced = 99;
  const auto counters = m.GetCounters();
  ASSERT_TRUE(counters.ok());
  for (const auto& c : *counters) {
    if (c.name() == "module.peers_without_secret") without = c.value();
    if (c.name() == "module.peer_secrets_replaced") replaced = c.value();
  }
  EXPECT_EQ(without, 1u);
  EXPECT_EQ(replaced, 1u);
}

TEST(FakeModuleTest, PeersFileHasDigestsNotSecrets) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/peers.txt";
  FakeModule m(FakeModuleOptions{.peers_file = path});
  lite::v1::NodeIdentity id;
  id.set_node_id(1);
  id.set_incarnation(3);
  ASSERT_TRUE(m.SetIdentity(id).ok());
  // 32 bytes of 'a': SHA-256 below (sha256sum of the same bytes).
  ASSERT_TRUE(
      m.AddPeer({2, 5, "10.0.0.2:1", "", std::string(kPairSecretBytes, 'a')})
          .ok());
  ASSERT_TRUE(m.AddPeer({3, 1, "10.0.0.3:1"}).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "self 1 3\n"
            "peer 2 5 "
            "3ba3f5f43b92602683c19aee62a20342b084dd5971ddd33808d81a328879a547\n"
            "peer 3 1 -\n");
  ASSERT_TRUE(m.RemovePeer(3, 1).ok());
  std::ifstream again(path);
  std::stringstream after;
  after << again.rdbuf();
  EXPECT_EQ(after.str().find("peer 3"), std::string::npos);
}

}  // namespace
}  // namespace lite::agent
