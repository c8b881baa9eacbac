#include "controlplane/pair_secrets.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace lite::controlplane {
namespace {

std::string TestKey() {
  std::string key;
  for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(i));
  return key;
}

std::unique_ptr<PairSecrets> Make(const std::string& key) {
  absl::StatusOr<std::unique_ptr<PairSecrets>> secrets =
      PairSecrets::Create(key);
  EXPECT_TRUE(secrets.ok()) << secrets.status();
  return secrets.ok() ? *std::move(secrets) : nullptr;
}

std::string WriteFile(const std::string& name, const std::string& content,
                      mode_t mode) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  std::ofstream(path, std::ios::trunc | std::ios::binary) << content;
  chmod(path.c_str(), mode);
  return path;
}

// The layout the docs give, computed independently (Python's hmac module):
// HMAC-SHA256(00 01 .. 1f, "lite-pair-v1" || be32(2) be64(7) || be32(5)
// be64(1)).
TEST(PairSecretsTest, KnownAnswer) {
  auto secrets = Make(TestKey());
  ASSERT_NE(secrets, nullptr);
  EXPECT_EQ(absl::BytesToHexString(secrets->Derive({5, 1}, {2, 7})),
            "332dffd091b59b9db7fe83c869cfa2a80ee71c7b762ec8de7b8ae997438f95c2");
}

TEST(PairSecretsTest, BothEndsGetTheSameSecretAndPairsDiffer) {
  auto secrets = Make(TestKey());
  ASSERT_NE(secrets, nullptr);
  const std::string ab = secrets->Derive({1, 1}, {2, 1});
  EXPECT_EQ(ab.size(), PairSecrets::kSecretBytes);
  EXPECT_EQ(ab, secrets->Derive({2, 1}, {1, 1}));
  std::set<std::string> all = {ab};
  // Another pair, and the same pair with either incarnation changed.
  EXPECT_TRUE(all.insert(secrets->Derive({1, 1}, {3, 1})).second);
  EXPECT_TRUE(all.insert(secrets->Derive({1, 2}, {2, 1})).second);
  EXPECT_TRUE(all.insert(secrets->Derive({1, 1}, {2, 2})).second);
  EXPECT_TRUE(all.insert(secrets->Derive({1, 2}, {2, 2})).second);
  // The id and the incarnation are separate fields: (id 1, inc 2) is not
  // (id 2, inc 1) however they are paired.
  EXPECT_TRUE(all.insert(secrets->Derive({2, 1}, {3, 1})).second);
  EXPECT_TRUE(all.insert(secrets->Derive({1, 2}, {3, 1})).second);
  // Another key, other secrets.
  std::string other_key = TestKey();
  other_key[0] = 'x';
  auto other = Make(other_key);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other->Derive({1, 1}, {2, 1}), ab);
}

TEST(PairSecretsTest, ThreadsAndInstancesEachGetTheirOwn) {
  auto secrets = Make(TestKey());
  std::string other_key = TestKey();
  other_key[5] = 'o';
  auto other = Make(other_key);
  ASSERT_TRUE(secrets != nullptr && other != nullptr);
  const std::string want = secrets->Derive({1, 1}, {2, 1});
  const std::string want_other = other->Derive({1, 1}, {2, 1});
  ASSERT_NE(want, want_other);
  // Alternating instances on one thread, and many threads at once.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (secrets->Derive({2, 1}, {1, 1}) != want) ++wrong;
        if (other->Derive({1, 1}, {2, 1}) != want_other) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  // A new instance on a thread that used a destroyed one.
  other.reset();
  auto again = Make(other_key);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->Derive({1, 1}, {2, 1}), want_other);
}

// Identity tokens (review cp H1): bound to the name, the id, the
// incarnation and the key; never a pair secret.
TEST(PairSecretsTest, IdentityTokensBindNameIdIncarnationAndKey) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  std::unique_ptr<PairSecrets> secrets = *PairSecrets::Create(key);
  const std::string token = secrets->IdentityToken("alpha", {2, 7});
  ASSERT_EQ(token.size(), PairSecrets::kTokenBytes);
  EXPECT_TRUE(secrets->VerifyIdentityToken("alpha", {2, 7}, token));
  EXPECT_FALSE(secrets->VerifyIdentityToken("beta", {2, 7}, token));
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {3, 7}, token));
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {2, 6}, token));
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {2, 8}, token));
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {2, 7}, ""));
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {2, 7}, token + "x"));
  EXPECT_FALSE(secrets->VerifyIdentityToken("", {2, 7}, token));
  std::string flipped = token;
  flipped[31] ^= 1;
  EXPECT_FALSE(secrets->VerifyIdentityToken("alpha", {2, 7}, flipped));
  // The name's length is in the message: "alpha" || id is not "alph" ||
  // "a" || id.
  EXPECT_NE(secrets->IdentityToken("alph", {2, 7}), token);
  EXPECT_NE(secrets->Derive({2, 7}, {3, 1}), token);
  std::string other_key = key;
  other_key[0] = 'X';
  std::unique_ptr<PairSecrets> other = *PairSecrets::Create(other_key);
  EXPECT_FALSE(other->VerifyIdentityToken("alpha", {2, 7}, token));
  // A known answer (Python's hmac over the documented message), so that a
  // change of the format is noticed.
  EXPECT_EQ(absl::BytesToHexString(token),
            "7a39e1691910645de8be3e4e4159593aa28988e7e80a4957051bb539a1a4f31d");
}

TEST(PairSecretsTest, RandomKeysAreKeysAndDiffer) {
  absl::StatusOr<std::string> a = PairSecrets::RandomKey();
  absl::StatusOr<std::string> b = PairSecrets::RandomKey();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(PairSecrets::ValidateClusterKey(*a, "key").ok());
  EXPECT_NE(*a, *b);
}

TEST(PairSecretsTest, RefusesKeysThatAreNotKeys) {
  EXPECT_FALSE(PairSecrets::Create("short").ok());
  EXPECT_FALSE(PairSecrets::Create(std::string(32, '\0')).ok());
  absl::Status s = PairSecrets::ValidateClusterKey(std::string(33, 'k'), "k");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "33 bytes")) << s;
}

TEST(PairSecretsTest, LoadsRawAndHexKeyFiles) {
  const std::string raw = WriteFile("raw.key", TestKey(), 0600);
  absl::StatusOr<std::string> key = PairSecrets::LoadKeyFile(raw);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(*key, TestKey());
  const std::string hex =
      WriteFile("hex.key", absl::BytesToHexString(TestKey()) + "\n", 0400);
  key = PairSecrets::LoadKeyFile(hex);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(*key, TestKey());
}

TEST(PairSecretsTest, RefusesBadKeyFiles) {
  auto refused = [](const std::string& path, const std::string& says) {
    absl::StatusOr<std::string> key = PairSecrets::LoadKeyFile(path);
    ASSERT_FALSE(key.ok()) << path;
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(key.status().message(), says))
        << key.status();
  };
  refused(WriteFile("open.key", TestKey(), 0644), "chmod 600");
  refused(WriteFile("short.key", "abc", 0600), "holds 3 bytes");
  refused(WriteFile("nothex.key", std::string(64, 'g'), 0600), "hex digits");
  refused(WriteFile("zero.key", std::string(64, '0'), 0600), "repeated");
  refused(absl::StrCat(std::getenv("TEST_TMPDIR"), "/missing.key"),
          "openssl rand -hex 32");
}

// Wipe overwrites the bytes in place, not only the length: the buffer a
// copy of the key lived in reads as zeros afterwards.
TEST(PairSecretsTest, WipeZeroesTheBufferItEmpties) {
  std::string key = TestKey();
  ASSERT_GT(key.size(), 15u);  // on the heap, not in the inline buffer
  const char* buffer = key.data();
  const size_t size = key.size();
  PairSecrets::Wipe(&key);
  EXPECT_TRUE(key.empty());
  ASSERT_EQ(key.data(), buffer);  // clear() keeps the allocation
  EXPECT_EQ(std::string(buffer, size), std::string(size, '\0'));
  PairSecrets::Wipe(&key);  // an empty string is fine
  EXPECT_TRUE(key.empty());
}

}  // namespace
}  // namespace lite::controlplane
