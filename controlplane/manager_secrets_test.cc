// ManagerState with a fake clock: pair secrets (issue #16). Both nodes of a
// pair get the same secret and nobody else gets it; pairs and incarnations
// have their own; no listing, watch or shared event encoding carries one;
// a manager that restarts with the same cluster key hands out the same ones.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controlplane/manager_test_util.h"
#include "controlplane/memory_store.h"

namespace lite::controlplane::testing {
namespace {

// (peer id, peer incarnation) -> secret, as one node learned them.
using Secrets = std::map<std::pair<uint32_t, uint64_t>, std::string>;

class SecretsTest : public ManagerTest {
 protected:
  // Everything `node` was sent: its JoinResponse, then its session.
  struct Received {
    Secrets secrets;
    // Every byte the node received, to look for secrets it must not see.
    std::string bytes;
    bool joined = false;
  };

  void Receive(const TestNode& node, bool batched = false) {
    Received& r = received_[Name(node)];
    if (!r.joined) {
      r.joined = true;
      r.bytes += node.join.SerializeAsString();
      for (const lite::v1::PeerSecret& s : node.join.peer_secrets()) {
        EXPECT_TRUE(r.secrets.emplace(Key(s), s.secret()).second);
      }
    }
    for (const lite::v1::ManagerMessage& m : DrainSession(node, batched)) {
      r.bytes += m.SerializeAsString();
      // A secret comes in the message of the MemberJoined it is for.
      std::set<std::pair<uint32_t, uint64_t>> announced;
      if (m.has_event() && m.event().has_member_joined()) {
        announced.insert(Key(m.event().member_joined().member()));
      }
      for (const lite::v1::Event& e : m.event_batch().events()) {
        if (e.has_member_joined()) {
          announced.insert(Key(e.member_joined().member()));
        }
      }
      for (const lite::v1::PeerSecret& s : m.peer_secrets()) {
        EXPECT_TRUE(announced.contains(Key(s)))
            << node.name << " got a secret for node " << s.node_id()
            << " without its MemberJoined";
        announced.erase(Key(s));
        r.secrets[Key(s)] = s.secret();
      }
      EXPECT_TRUE(announced.empty())
          << node.name << " got a MemberJoined without its pair secret";
    }
  }

  template <typename T>
  static std::pair<uint32_t, uint64_t> Key(const T& t) {
    return {t.node_id(), t.incarnation()};
  }

  std::string SecretOf(const TestNode& of, const TestNode& peer) {
    const Secrets& secrets = received_[Name(of)].secrets;
    auto it = secrets.find({peer.id, peer.incarnation});
    return it == secrets.end() ? "" : it->second;
  }

  // Every secret of every pair among `nodes`, checked to be the same at
  // both ends.
  std::vector<std::string> CheckPairs(const std::vector<TestNode>& nodes) {
    std::vector<std::string> secrets;
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (size_t j = i + 1; j < nodes.size(); ++j) {
        const std::string ij = SecretOf(nodes[i], nodes[j]);
        EXPECT_EQ(ij.size(), 32u) << nodes[i].name << " - " << nodes[j].name;
        EXPECT_EQ(ij, SecretOf(nodes[j], nodes[i]))
            << nodes[i].name << " - " << nodes[j].name;
        secrets.push_back(ij);
      }
    }
    return secrets;
  }

  // By node name and incarnation: a new incarnation starts afresh.
  static std::string Name(const TestNode& node) {
    return absl::StrCat(node.name, "#", node.incarnation);
  }
  std::map<std::string, Received> received_;
};

TEST_F(SecretsTest, BothEndsOfEveryPairGetTheSameSecret) {
  // alpha learns of beta and gamma from the session, beta of alpha from its
  // Join and of gamma from the session, gamma of both from its Join.
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  EXPECT_EQ(a.join.peer_secrets_size(), 0);
  EXPECT_EQ(b.join.peer_secrets_size(), 1);
  EXPECT_EQ(c.join.peer_secrets_size(), 2);
  for (const TestNode& n : {a, b, c}) Receive(n);
  for (const TestNode& n : {a, b, c}) {
    EXPECT_EQ(received_[Name(n)].secrets.size(), 2u) << n.name;
  }
  const std::vector<std::string> secrets = CheckPairs({a, b, c});
  EXPECT_EQ(std::set<std::string>(secrets.begin(), secrets.end()).size(), 3u)
      << "every pair has its own secret";
}

TEST_F(SecretsTest, BatchedSessionsGetTheSecretsWithTheBatch) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  TestNode d = JoinAndOpen("delta", 4);
  // alpha's backlog (three MemberJoined) goes out as one batch.
  const std::vector<lite::v1::ManagerMessage> first = DrainSession(a, true);
  ASSERT_GE(first.size(), 2u);
  // [0] is the ack of the first heartbeat, [1] the batch.
  ASSERT_TRUE(first[1].has_event_batch());
  EXPECT_EQ(first[1].event_batch().events_size(), 3);
  EXPECT_EQ(first[1].peer_secrets_size(), 3);
  // Put back what was drained to check it like the others: run it again.
  Restart(TestOptions());
  a = JoinAndOpen("alpha", 1);
  b = JoinAndOpen("beta", 2);
  c = JoinAndOpen("gamma", 3);
  d = JoinAndOpen("delta", 4);
  for (const TestNode& n : {a, b, c, d}) Receive(n, /*batched=*/true);
  CheckPairs({a, b, c, d});
}

TEST_F(SecretsTest, NoOtherNodeEverReceivesAPairsSecret) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  for (const TestNode& n : {a, b, c}) Receive(n);
  const std::map<std::string, std::pair<TestNode, TestNode>> pairs = {
      {SecretOf(a, b), {a, b}},
      {SecretOf(a, c), {a, c}},
      {SecretOf(b, c), {b, c}}};
  for (const TestNode& n : {a, b, c}) {
    for (const auto& [secret, pair] : pairs) {
      ASSERT_EQ(secret.size(), 32u);
      const bool member = n.id == pair.first.id || n.id == pair.second.id;
      EXPECT_EQ(absl::StrContains(received_[Name(n)].bytes, secret), member)
          << n.name << " and the secret of " << pair.first.name << " - "
          << pair.second.name;
    }
  }
}

TEST_F(SecretsTest, ANewIncarnationGetsNewSecrets) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  Receive(a);
  Receive(b);
  const std::string before = SecretOf(a, b);
  // beta's agent restarts: incarnation 2, superseding 1.
  TestNode b2 = JoinAndOpen("beta", 2);
  ASSERT_EQ(b2.incarnation, b.incarnation + 1);
  Receive(a);
  Receive(b2);
  const std::string after = SecretOf(a, b2);
  EXPECT_EQ(after.size(), 32u);
  EXPECT_NE(after, before);
  EXPECT_EQ(after, SecretOf(b2, a));
  // And alpha's restart changes it again, for both.
  TestNode a2 = JoinAndOpen("alpha", 1);
  Receive(b2);
  Receive(a2);
  const std::string again = SecretOf(b2, a2);
  EXPECT_EQ(again.size(), 32u);
  EXPECT_NE(again, after);
  EXPECT_NE(again, before);
  EXPECT_EQ(again, SecretOf(a2, b2));
}

TEST_F(SecretsTest, NoListingWatchOrSharedEncodingCarriesASecret) {
  std::shared_ptr<Outbox> watch = state_->OpenWatch();
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  // What is shared between sessions, before the sessions take their own.
  std::string shared;
  for (const TestNode& n : {a, b, c}) {
    Outbox::Batch all = n.outbox->PopEvents(1024, 1 << 20);
    for (const OutMessagePtr& m : all.messages) {
      shared += m->SessionWire();
      shared += m->WatchWire();
    }
    if (all.messages.size() > 1) shared += EventBatchWire(all.messages);
  }
  for (Outbox::Next next = watch->Pop(); next.message != nullptr;
       next = watch->Pop()) {
    shared += next.message->WatchWire();
  }
  lite::v1::ListNodesRequest list;
  absl::StatusOr<lite::v1::ListNodesResponse> nodes = state_->ListNodes(list);
  ASSERT_TRUE(nodes.ok());
  shared += nodes->SerializeAsString();
  shared += Snapshot();
  const std::vector<std::string> secrets = {
      state_->pair_secrets().Derive({a.id, a.incarnation},
                                    {b.id, b.incarnation}),
      state_->pair_secrets().Derive({a.id, a.incarnation},
                                    {c.id, c.incarnation}),
      state_->pair_secrets().Derive({b.id, b.incarnation},
                                    {c.id, c.incarnation})};
  for (const std::string& secret : secrets) {
    EXPECT_FALSE(absl::StrContains(shared, secret));
    EXPECT_FALSE(absl::StrContains(shared, absl::BytesToHexString(secret)));
  }
  // The Join responses do carry them: the search would find them.
  EXPECT_TRUE(absl::StrContains(c.join.SerializeAsString(), secrets[1]));
}

TEST_F(SecretsTest, ARestartWithTheSameKeyHandsOutTheSameSecrets) {
  ManagerOptions options = TestOptions();
  options.pair_key = std::string(32, 'k');
  options.pair_key[0] = 'K';
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  Receive(a);
  Receive(b);
  const std::string before = SecretOf(a, b);
  EXPECT_EQ(a.join.identity_token().size(), PairSecrets::kTokenBytes);
  options.recovery_window = absl::Seconds(5);

  // The agents restore their identities on a restarted manager (empty store,
  // the same --pair_key_file), each with the token its Join gave it: alpha
  // first, then beta, whose Join lists alpha with the same secret; alpha
  // gets it again with beta's MemberJoined.
  auto rejoin = [&](const TestNode& n, int address) {
    lite::v1::JoinRequest request = JoinRequestFor(n.name, address);
    request.mutable_restore()->set_node_id(n.id);
    request.mutable_restore()->set_incarnation(n.incarnation);
    request.mutable_restore()->set_token(n.join.identity_token());
    return state_->Join(request);
  };
  auto restore = [&](const TestNode& n, int address) {
    absl::StatusOr<lite::v1::JoinResponse> joined = rejoin(n, address);
    EXPECT_TRUE(joined.ok() && joined->restored()) << joined.status();
    return joined.ok() ? *joined : lite::v1::JoinResponse();
  };
  Restart(options);
  restore(a, 1);
  const lite::v1::JoinResponse jb = restore(b, 2);
  ASSERT_EQ(jb.peer_secrets_size(), 1);
  EXPECT_EQ(jb.peer_secrets(0).secret(), before);

  // The key the store kept is the one used when no key is configured (a
  // manager restarting on a persistent store).
  auto store = std::make_unique<MemoryStore>();
  store->SetClusterKey(options.pair_key);
  ManagerOptions without_key = options;
  without_key.pair_key.clear();
  Restart(without_key, std::move(store));
  restore(a, 1);
  EXPECT_EQ(restore(b, 2).peer_secrets(0).secret(), before);

  // Without either (no --pair_key_file), a restarted manager draws a new
  // key: the tokens no longer verify, so no identity is restored. During
  // recovery the nodes wait; then they join as new nodes, with new ids
  // and new secrets (the agents replace their peers).
  Restart(without_key);
  EXPECT_EQ(rejoin(a, 1).status().code(), absl::StatusCode::kUnavailable);
  clock_.Advance(absl::Seconds(5));
  state_->Tick();
  absl::StatusOr<lite::v1::JoinResponse> fa = rejoin(a, 1);
  absl::StatusOr<lite::v1::JoinResponse> fb = rejoin(b, 2);
  ASSERT_TRUE(fa.ok() && fb.ok()) << fa.status() << fb.status();
  EXPECT_FALSE(fa->restored());
  EXPECT_FALSE(fb->restored());
  EXPECT_EQ(fa->incarnation(), 1u);
  ASSERT_EQ(fb->peer_secrets_size(), 1);
  EXPECT_EQ(fb->peer_secrets(0).secret().size(), 32u);
  EXPECT_NE(fb->peer_secrets(0).secret(), before);
}

// Review cp H1, as the attacker: after a manager restart, the node
// certificate "beta" asks for alpha's identity. It never gets alpha's id,
// incarnation or any secret of alpha's pairs; alpha itself gets them back
// with its token.
TEST_F(SecretsTest, ARestoreIsAdoptedOnlyWithTheTokenOfItsName) {
  JoinAndOpen("alpha", 1);
  // Incarnation 2: its token is what an older incarnation would carry.
  const TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  const std::string a_with_c = state_->pair_secrets().Derive(
      {a.id, a.incarnation}, {c.id, c.incarnation});
  ManagerOptions options = TestOptions();
  options.recovery_window = absl::Seconds(5);
  Restart(options);

  auto join = [&](const std::string& name, int address, uint32_t id,
                  uint64_t incarnation, const std::string& token) {
    lite::v1::JoinRequest request = JoinRequestFor(name, address);
    request.mutable_restore()->set_node_id(id);
    request.mutable_restore()->set_incarnation(incarnation);
    request.mutable_restore()->set_token(token);
    return state_->Join(request);
  };
  // gamma restores with its own token: adopted as-is.
  absl::StatusOr<lite::v1::JoinResponse> jc =
      join("gamma", 3, c.id, c.incarnation, c.join.identity_token());
  ASSERT_TRUE(jc.ok()) << jc.status();
  EXPECT_TRUE(jc->restored());
  // beta asks for alpha's id and incarnation: with no token, with alpha's
  // token (stolen), with its own token. And alpha's own token for an older
  // incarnation. None is adopted; while recovery lasts, none joins at all
  // (a new name could otherwise take an id a node has yet to restore).
  struct Attempt {
    std::string what, name;
    uint64_t incarnation;
    std::string token;
  };
  const std::vector<Attempt> attempts = {
      {"no token", "beta", a.incarnation, ""},
      {"alpha's token", "beta", a.incarnation, a.join.identity_token()},
      {"beta's token", "beta", a.incarnation, b.join.identity_token()},
      {"a random token", "beta", a.incarnation, std::string(32, 'x')},
      {"alpha, older incarnation", "alpha", a.incarnation - 1,
       a.join.identity_token()},
  };
  for (const Attempt& at : attempts) {
    absl::StatusOr<lite::v1::JoinResponse> j = join(
        at.name, at.name == "beta" ? 2 : 1, a.id, at.incarnation, at.token);
    EXPECT_EQ(j.status().code(), absl::StatusCode::kUnavailable)
        << at.what << ": " << j.status();
    EXPECT_TRUE(absl::StrContains(j.status().message(), "restore was refused"))
        << at.what << ": " << j.status();
  }
  clock_.Advance(absl::Seconds(5));
  state_->Tick();
  ASSERT_FALSE(state_->recovering());
  for (size_t i = 0; i < 4; ++i) {
    absl::StatusOr<lite::v1::JoinResponse> j =
        join("beta", 2, a.id, a.incarnation, attempts[i].token);
    ASSERT_TRUE(j.ok()) << attempts[i].what << ": " << j.status();
    EXPECT_FALSE(j->restored()) << attempts[i].what;
    EXPECT_NE(j->node_id(), a.id) << attempts[i].what;
    EXPECT_FALSE(absl::StrContains(j->SerializeAsString(), a_with_c))
        << attempts[i].what;
    for (const lite::v1::PeerSecret& s : j->peer_secrets()) {
      EXPECT_EQ(s.secret(),
                state_->pair_secrets().Derive({j->node_id(), j->incarnation()},
                                              {s.node_id(), s.incarnation()}));
    }
  }
  // alpha comes back with its token: its id and incarnation, and the same
  // secret with gamma as before the restart.
  absl::StatusOr<lite::v1::JoinResponse> ja =
      join("alpha", 1, a.id, a.incarnation, a.join.identity_token());
  ASSERT_TRUE(ja.ok()) << ja.status();
  EXPECT_TRUE(ja->restored());
  EXPECT_EQ(ja->node_id(), a.id);
  EXPECT_EQ(ja->incarnation(), a.incarnation);
  EXPECT_TRUE(absl::StrContains(ja->SerializeAsString(), a_with_c));
}

// Review cp H1: restore.node_id 0xFFFFFFFF set the id counter to 0, and no
// new name could join. Without a token it is not adopted; with a valid one
// (a leaked key) it is still refused, far above every id issued.
TEST_F(SecretsTest, ARestoreNeverUsesUpTheNodeIds) {
  JoinAndOpen("alpha", 1);
  for (const bool with_token : {false, true}) {
    const std::string name = with_token ? "minted" : "fresh";
    lite::v1::JoinRequest request =
        with_token ? RestoreRequestFor(name, 7, 0xFFFFFFFF, 1)
                   : JoinRequestFor(name, 8);
    request.mutable_restore()->set_node_id(0xFFFFFFFF);
    request.mutable_restore()->set_incarnation(1);
    absl::StatusOr<lite::v1::JoinResponse> j = state_->Join(request);
    ASSERT_TRUE(j.ok()) << j.status();
    EXPECT_FALSE(j->restored());
    EXPECT_LT(j->node_id(), 10u);
    lite::v1::LeaveRequest leave;
    leave.mutable_caller()->set_node_id(j->node_id());
    leave.mutable_caller()->set_incarnation(j->incarnation());
    ASSERT_TRUE(state_->Leave(leave).ok());
  }
  // New names still join.
  const lite::v1::JoinResponse d = JoinOnly("delta", 4);
  EXPECT_NE(d.node_id(), 0u);
  EXPECT_LT(d.node_id(), 10u);
}

TEST_F(SecretsTest, FailedAndLeftNodesAreNotListed) {
  TestNode a = JoinAndOpen("alpha", 1);
  TestNode b = JoinAndOpen("beta", 2);
  TestNode c = JoinAndOpen("gamma", 3);
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = b.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  const lite::v1::JoinResponse d = JoinOnly("delta", 4);
  std::set<uint32_t> listed;
  for (const lite::v1::PeerSecret& s : d.peer_secrets()) {
    listed.insert(s.node_id());
  }
  EXPECT_EQ(listed, (std::set<uint32_t>{a.id, c.id}));
}

}  // namespace
}  // namespace lite::controlplane::testing
