// Host integration: pair secrets for lite.ko's peer authentication (issue
// #16), from the real litemgr through the real agents into their (fake)
// lite.ko. With a known --pair_key_file the test derives every secret itself
// and checks that both nodes of each pair were given exactly it (the fake
// reports the SHA-256 of what it holds, never the secret), that no log,
// event log, `litectl nodes` or `litectl watch` shows one, that an agent
// restart changes the secrets of its pairs only, and that a manager restart
// keeps them with the same key and replaces them in place without it.
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

const char kNames[3][3] = {"n1", "n2", "n3"};

// What one agent's fake lite.ko holds (its --fake_peers_file).
struct Held {
  uint32_t self_id = 0;
  uint64_t self_incarnation = 0;
  // peer id -> (incarnation, SHA-256 of its secret in hex, or "-").
  std::map<uint32_t, std::pair<uint64_t, std::string>> peers;
};

Held ReadHeld(const std::string& path) {
  Held held;
  for (absl::string_view line :
       absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    uint32_t id = 0;
    uint64_t inc = 0;
    if (f.size() == 3 && f[0] == "self" && absl::SimpleAtoi(f[1], &id) &&
        absl::SimpleAtoi(f[2], &inc)) {
      held.self_id = id;
      held.self_incarnation = inc;
    } else if (f.size() == 4 && f[0] == "peer" && absl::SimpleAtoi(f[1], &id) &&
               absl::SimpleAtoi(f[2], &inc)) {
      held.peers[id] = {inc, f[3]};
    }
  }
  return held;
}

std::string Sha256Hex(const std::string& bytes) {
  unsigned char sha[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
         sha);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(sha), sizeof(sha)));
}

void AppendEnd(std::string* out, uint32_t id, uint64_t inc) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(id >> shift);
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(inc >> shift);
}

// docs/controlplane.md, "Pair secrets", computed independently of litemgr.
std::string ExpectedSecret(const std::string& key, uint32_t a_id,
                           uint64_t a_inc, uint32_t b_id, uint64_t b_inc) {
  if (b_id < a_id) {
    std::swap(a_id, b_id);
    std::swap(a_inc, b_inc);
  }
  std::string message = "lite-pair-v1";
  AppendEnd(&message, a_id, a_inc);
  AppendEnd(&message, b_id, b_inc);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

class PairSecretsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  void StartAgents() {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(cluster_.StartAgent(kNames[i], i + 1, {}).ok());
    }
  }

  // Every agent's fake lite.ko, once each holds both other nodes, as the
  // agents' current incarnations, each with a secret.
  std::map<std::string, Held> WaitForMesh() {
    std::map<std::string, Held> held;
    const bool meshed = Eventually(
        [&] {
          std::map<uint32_t, uint64_t> current;
          for (const char* name : kNames) {
            auto st = cluster_.AgentStatus(name);
            if (!st.ok() || st->manager_connection_state() !=
                                lite::v1::MANAGER_CONNECTION_STATE_CONNECTED) {
              return false;
            }
            current[st->node_id()] = st->incarnation();
            held[name] = ReadHeld(cluster_.peers_file(name));
          }
          for (const auto& [name, h] : held) {
            if (h.peers.size() != 2) return false;
            for (const auto& [id, peer] : h.peers) {
              if (current[id] != peer.first || peer.second == "-") return false;
            }
          }
          return true;
        },
        absl::Seconds(30), absl::Milliseconds(50));
    EXPECT_TRUE(meshed) << "the agents did not all hold each other with "
                           "secrets for the current incarnations";
    return held;
  }

  // Both ends of every pair hold the same secret, each pair its own; with
  // `key`, exactly the one derived from it. Returns pair -> digest.
  std::map<std::pair<uint32_t, uint32_t>, std::string> CheckPairs(
      const std::map<std::string, Held>& held, const std::string& key = "") {
    std::map<std::pair<uint32_t, uint32_t>, std::string> digests;
    for (const auto& [name, a] : held) {
      for (const auto& [peer_id, peer] : a.peers) {
        const auto pair = std::minmax(a.self_id, peer_id);
        auto [it, fresh] = digests.emplace(pair, peer.second);
        EXPECT_EQ(it->second, peer.second)
            << "nodes " << pair.first << " and " << pair.second
            << " hold different secrets";
        if (!key.empty()) {
          EXPECT_EQ(peer.second,
                    Sha256Hex(ExpectedSecret(key, a.self_id, a.self_incarnation,
                                             peer_id, peer.first)))
              << name << " holds another secret for node " << peer_id;
        }
      }
    }
    std::set<std::string> distinct;
    for (const auto& [pair, digest] : digests) distinct.insert(digest);
    EXPECT_EQ(distinct.size(), 3u) << "pairs share a secret";
    return digests;
  }

  uint64_t ModuleCounter(const std::string& agent, const std::string& name) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    lite::v1::GetCountersResponse resp;
    grpc::Status s = cluster_.agent_stub(agent)->GetCounters(
        &ctx, lite::v1::GetCountersRequest(), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    for (const auto& c : resp.counters()) {
      if (c.name() == name) return c.value();
    }
    ADD_FAILURE() << agent << " has no counter " << name;
    return 0;
  }

  void RestartManager(const Cluster::ManagerConfig& config) {
    const int port = cluster_.manager_port();
    cluster_.manager()->Signal(SIGKILL);
    ASSERT_TRUE(cluster_.manager()->Wait(absl::Seconds(10)).has_value());
    cluster_.DropManager();
    ASSERT_TRUE(cluster_.StartManager(config, port).ok());
  }

  Cluster cluster_;
};

TEST_F(PairSecretsTest, BothEndsHoldTheDerivedSecretAndNothingShowsIt) {
  // A key the test knows, so that it can derive every secret itself.
  const std::string key = TestClusterKey();
  const std::string key_file = WritePairKeyFile();
  const Cluster::ManagerConfig config{
      .lease_ms = 1000, .recovery_window_ms = 3000, .pair_key_file = key_file};
  ASSERT_TRUE(cluster_.StartManager(config).ok());
  ASSERT_TRUE(cluster_.StartWatch().ok());
  StartAgents();
  std::map<std::string, Held> held = WaitForMesh();
  const auto first = CheckPairs(held, key);
  for (const char* name : kNames) {
    EXPECT_EQ(ModuleCounter(name, "module.peers_without_secret"), 0u) << name;
  }

  // n3's agent restarts: a new incarnation, new secrets for its two pairs;
  // the n1-n2 pair keeps its own.
  const uint32_t n1 = held["n1"].self_id, n2 = held["n2"].self_id;
  ASSERT_TRUE(cluster_.agent("n3")->Stop() >= 0);
  cluster_.DropAgent("n3");
  ASSERT_TRUE(cluster_.StartAgent("n3", 3, {}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return ReadHeld(cluster_.peers_file("n3")).self_incarnation >
               held["n3"].self_incarnation;
      },
      absl::Seconds(20)));
  held = WaitForMesh();
  const auto second = CheckPairs(held, key);
  for (const auto& [pair, digest] : second) {
    const bool has_n3 =
        pair.first != std::min(n1, n2) || pair.second != std::max(n1, n2);
    EXPECT_EQ(digest != first.at(pair), has_n3)
        << "pair " << pair.first << "-" << pair.second;
  }

  // The manager restarts with the same key: it adopts the identities, and
  // hands out the very same secrets; nothing is replaced in lite.ko.
  std::map<std::string, lite::v1::GetStatusResponse> status;
  for (const char* name : kNames) {
    auto st = cluster_.AgentStatus(name);
    ASSERT_TRUE(st.ok());
    status[name] = *st;
  }
  RestartManager(config);
  for (const char* name : kNames) {
    const lite::v1::GetStatusResponse* st = &status[name];
    ASSERT_TRUE(Eventually(
        [&] {
          auto now = cluster_.AgentStatus(name);
          return now.ok() && now->reconnects() > st->reconnects() &&
                 now->manager_connection_state() ==
                     lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
        },
        absl::Seconds(30)))
        << name << " did not reconnect";
  }
  held = WaitForMesh();
  EXPECT_EQ(CheckPairs(held, key), second);
  for (const char* name : kNames) {
    EXPECT_EQ(ModuleCounter(name, "module.peer_secrets_replaced"), 0u) << name;
  }

  // No secret, raw or in hex, in anything a person or another node sees.
  CtlResult nodes = cluster_.Litectl({"nodes", "-o", "json"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  std::string seen = nodes.out + ReadFile(cluster_.watch()->stdout_path()) +
                     ReadFile(cluster_.manager()->stdout_path());
  for (const char* name : kNames) {
    seen += ReadFile(cluster_.agent(name)->stdout_path());
    seen += ReadFile(cluster_.event_log(name));
  }
  for (const auto& [name, h] : held) {
    for (const auto& [peer_id, peer] : h.peers) {
      const std::string secret = ExpectedSecret(
          key, h.self_id, h.self_incarnation, peer_id, peer.first);
      EXPECT_FALSE(absl::StrContains(seen, secret));
      EXPECT_FALSE(absl::StrContains(seen, absl::BytesToHexString(secret)));
      EXPECT_FALSE(absl::StrContains(seen, absl::Base64Escape(secret)));
    }
  }
  EXPECT_FALSE(absl::StrContains(seen, absl::BytesToHexString(key)));
}

TEST_F(PairSecretsTest, AManagerWithANewKeyRestoresNoIdentity) {
  // No --pair_key_file: each start of the manager draws its own key. The
  // identity tokens the agents kept were made with the old key, so the
  // restarted manager adopts no identity (review cp H1): once recovery is
  // over the nodes join as new nodes, with secrets of the new key.
  const Cluster::ManagerConfig config{.lease_ms = 1000,
                                      .recovery_window_ms = 3000};
  ASSERT_TRUE(cluster_.StartManager(config).ok());
  StartAgents();
  std::map<std::string, Held> before = WaitForMesh();
  const auto first = CheckPairs(before);

  RestartManager(config);
  // Every pair gets a new secret, the same at both ends.
  std::map<std::string, Held> after;
  ASSERT_TRUE(Eventually(
      [&] {
        after = WaitForMesh();
        for (const auto& [name, h] : after) {
          for (const auto& [peer_id, peer] : h.peers) {
            auto old = before[name].peers.find(peer_id);
            if (old != before[name].peers.end() &&
                peer.second == old->second.second) {
              return false;
            }
          }
        }
        return true;
      },
      absl::Seconds(30), absl::Milliseconds(100)));
  const auto second = CheckPairs(after);
  for (const auto& [pair, digest] : second) {
    auto old = first.find(pair);
    if (old != first.end()) EXPECT_NE(digest, old->second);
  }
  for (const auto& [name, h] : after) {
    EXPECT_EQ(ModuleCounter(name, "agent.joins_restored"), 0u) << name;
    EXPECT_EQ(ModuleCounter(name, "module.peers_without_secret"), 0u) << name;
  }
}

}  // namespace
}  // namespace lite::hosttest
