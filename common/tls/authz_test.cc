// The authz file's format, its reload, and Require's answers over an
// AuthContext shaped as gRPC's SSL transport fills it (the real handshake is
// covered by controlplane/service_test.cc and tests/host/tls_test.cc).
#include "common/tls/authz.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/testing/status_matchers.h"
#include "common/tls/identity.h"
#include "grpc/grpc_security_constants.h"

namespace lite::tls {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

// AuthPropertyIterator's empty constructor is protected.
struct NoProperties : grpc::AuthPropertyIterator {};

// Only the parts PeerName reads.
class FakeAuthContext final : public grpc::AuthContext {
 public:
  bool IsPeerAuthenticated() const override { return !identity_.empty(); }
  std::vector<grpc::string_ref> GetPeerIdentity() const override {
    return FindPropertyValues(identity_);
  }
  std::string GetPeerIdentityPropertyName() const override { return identity_; }
  std::vector<grpc::string_ref> FindPropertyValues(
      const std::string& name) const override {
    std::vector<grpc::string_ref> values;
    auto [begin, end] = properties_.equal_range(name);
    for (auto it = begin; it != end; ++it) values.emplace_back(it->second);
    return values;
  }
  grpc::AuthPropertyIterator begin() const override { return NoProperties(); }
  grpc::AuthPropertyIterator end() const override { return NoProperties(); }
  void AddProperty(const std::string& key,
                   const grpc::string_ref& value) override {
    properties_.emplace(key, std::string(value.data(), value.size()));
  }
  bool SetPeerIdentityPropertyName(const std::string& name) override {
    identity_ = name;
    return true;
  }

 private:
  std::multimap<std::string, std::string> properties_;
  std::string identity_;
};

// A verified TLS peer named `cn`, as gRPC's SSL transport describes it.
FakeAuthContext Verified(const std::string& cn) {
  FakeAuthContext context;
  context.AddProperty(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME, "ssl");
  context.AddProperty(GRPC_X509_CN_PROPERTY_NAME, cn);
  context.SetPeerIdentityPropertyName(GRPC_X509_CN_PROPERTY_NAME);
  return context;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(dir == nullptr ? "/tmp" : dir, "/", name);
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

TEST(PeerName, OnlyFromAVerifiedTlsCertificate) {
  EXPECT_EQ(PeerName(Verified("n1")), "n1");
  // TLS without a client certificate: no identity property.
  FakeAuthContext anonymous;
  anonymous.AddProperty(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME, "ssl");
  EXPECT_EQ(PeerName(anonymous), std::nullopt);
  // An identity from another transport (not TLS) does not count.
  FakeAuthContext other;
  other.AddProperty(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME, "insecure");
  other.AddProperty(GRPC_X509_CN_PROPERTY_NAME, "n1");
  other.SetPeerIdentityPropertyName(GRPC_X509_CN_PROPERTY_NAME);
  EXPECT_EQ(PeerName(other), std::nullopt);
  // Two CNs: ambiguous.
  FakeAuthContext two = Verified("n1");
  two.AddProperty(GRPC_X509_CN_PROPERTY_NAME, "op");
  EXPECT_EQ(PeerName(two), std::nullopt);
}

TEST(ParseAuthz, ReadsNamesRolesCommentsAndBlankLines) {
  absl::StatusOr<RoleTable> table = ParseAuthz(
      "# cluster roles\n"
      "litemgr manager\n"
      "\n"
      "n1 node   # first node\n"
      "\talice@example operator\r\n"
      "alice@example node\n",
      "authz");
  ASSERT_THAT(table.status(), IsOk());
  EXPECT_EQ(table->size(), 3u);
  EXPECT_EQ(table->at("litemgr"), static_cast<unsigned>(Role::kManager));
  EXPECT_EQ(table->at("n1"), static_cast<unsigned>(Role::kNode));
  EXPECT_EQ(table->at("alice@example"), static_cast<unsigned>(Role::kOperator) |
                                            static_cast<unsigned>(Role::kNode));
}

TEST(ParseAuthz, ABadLineIsNamedByFileAndLine) {
  EXPECT_THAT(ParseAuthz("n1 node\nn2 admin\n", "/etc/lite/authz"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("/etc/lite/authz:2: unknown role \"admin\"")));
  EXPECT_THAT(ParseAuthz("n1\n", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f:1: expected 2 words, found 1")));
  EXPECT_THAT(ParseAuthz("\n\nn1 node extra\n", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f:3: expected 2 words, found 3")));
  EXPECT_THAT(ParseAuthz("n\x1b[2J node\n", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f:1: name \"n\\x1b[2J\" has character 0x1b "
                                 "at offset 1")));
  EXPECT_THAT(ParseAuthz(std::string(65, 'a') + " node\n", "f"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("f:1: name of 65 characters (at most 64)")));
}

TEST(Authz, LoadRefusesABadFileAndAMissingOne) {
  const std::string bad = WriteFile("bad_authz", "n1 node\nn2 nod\n");
  EXPECT_THAT(Authz::Load(bad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(bad, ":2: unknown role"))));
  EXPECT_THAT(Authz::Load(bad + ".missing").status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("cannot read the authz file")));
}

TEST(Authz, RequireAnswersByRole) {
  const std::string path =
      WriteFile("authz", "n1 node\nop operator\nlitemgr manager\n");
  absl::StatusOr<std::unique_ptr<Authz>> authz = Authz::Load(path);
  ASSERT_THAT(authz.status(), IsOk());
  std::string name;
  EXPECT_THAT((*authz)->Require(Verified("n1"), Role::kNode, &name), IsOk());
  EXPECT_EQ(name, "n1");
  EXPECT_THAT((*authz)->Require(Verified("op"), Role::kOperator, &name),
              IsOk());
  EXPECT_EQ(name, "op");
  EXPECT_THAT(
      (*authz)->Require(Verified("n1"), Role::kOperator, &name),
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr("certificate \"n1\" lacks the role this call needs; "
                         "it needs role operator")));
  EXPECT_EQ(name, "n1");
  EXPECT_THAT((*authz)->Require(Verified("op"), Role::kNode, &name),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("it needs role node")));
  // Signed by the CA but not in the file: no role at all.
  EXPECT_THAT((*authz)->Require(Verified("n9"), Role::kNode, &name),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("certificate \"n9\" has no role")));
  FakeAuthContext anonymous;
  anonymous.AddProperty(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME, "ssl");
  EXPECT_THAT((*authz)->Require(anonymous, Role::kNode, &name),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       HasSubstr("needs a client certificate")));
  EXPECT_FALSE((*authz)->insecure());
}

TEST(Authz, InsecurePassesEveryCheck) {
  std::unique_ptr<Authz> authz = Authz::Insecure();
  FakeAuthContext nothing;
  std::string name;
  for (Role role : {Role::kManager, Role::kNode, Role::kOperator}) {
    EXPECT_THAT(authz->Require(nothing, role, &name), IsOk());
    EXPECT_EQ(name, "(insecure)");
  }
  EXPECT_TRUE(authz->insecure());
}

TEST(Authz, ReloadsAChangedFileAndKeepsTheOldRolesOnABadEdit) {
  const std::string path = WriteFile("reload_authz", "n1 node\n");
  absl::StatusOr<std::unique_ptr<Authz>> authz =
      Authz::Load(path, absl::ZeroDuration());
  ASSERT_THAT(authz.status(), IsOk());
  EXPECT_THAT((*authz)->Require(Verified("n2"), Role::kNode, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied));
  WriteFile("reload_authz", "n1 node\nn2 node\n");
  EXPECT_THAT((*authz)->Require(Verified("n2"), Role::kNode, nullptr), IsOk());
  // A bad edit: logged, the previous table stays.
  WriteFile("reload_authz", "n1 node\nn2 bosses\n");
  EXPECT_THAT((*authz)->Require(Verified("n2"), Role::kNode, nullptr), IsOk());
  // Withdrawn: n1's line removed.
  WriteFile("reload_authz", "n2 node\n");
  EXPECT_THAT((*authz)->Require(Verified("n1"), Role::kNode, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST(Authz, LooksAtTheFileAtMostOncePerInterval) {
  const std::string path = WriteFile("slow_authz", "n1 node\n");
  absl::StatusOr<std::unique_ptr<Authz>> authz =
      Authz::Load(path, absl::Hours(1));
  ASSERT_THAT(authz.status(), IsOk());
  WriteFile("slow_authz", "n1 node\nn2 node\n");
  // Within the interval the change is not seen yet.
  EXPECT_THAT((*authz)->Require(Verified("n2"), Role::kNode, nullptr),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST(Authz, ABadEditWithdrawsWhatItNoLongerListsAndAddsNothing) {
  const std::string path =
      WriteFile("withdraw_authz", "n1 node\nn7 node\nop operator\n");
  absl::StatusOr<std::unique_ptr<Authz>> authz =
      Authz::Load(path, absl::ZeroDuration());
  ASSERT_THAT(authz.status(), IsOk());
  EXPECT_EQ((*authz)->file_state().generation, 1u);
  // n7 removed, a typo on op's line, and a new name n9: n7 loses its role,
  // op (named on the bad line) keeps its, n9 gets nothing.
  WriteFile("withdraw_authz", "n1 node\nop operatr\nn9 node\n");
  EXPECT_FALSE((*authz)->Allows("n7", Role::kNode));
  EXPECT_TRUE((*authz)->Allows("n1", Role::kNode));
  EXPECT_TRUE((*authz)->Allows("op", Role::kOperator));
  EXPECT_FALSE((*authz)->Allows("n9", Role::kNode));
  const Authz::FileState state = (*authz)->file_state();
  EXPECT_FALSE(state.valid);
  EXPECT_THAT(state.error, HasSubstr(":2: unknown role \"operatr\""));
  EXPECT_EQ(state.generation, 2u);
  // Fixed: valid again, with exactly the file's roles.
  WriteFile("withdraw_authz", "n1 node\nop operator\nn9 node\n");
  EXPECT_TRUE((*authz)->Allows("n9", Role::kNode));
  EXPECT_TRUE((*authz)->file_state().valid);
  // A missing file keeps the roles (a file being replaced), but says so.
  ASSERT_EQ(std::remove(path.c_str()), 0);
  EXPECT_TRUE((*authz)->Allows("n1", Role::kNode));
  EXPECT_FALSE((*authz)->file_state().valid);
  EXPECT_THAT((*authz)->file_state().error, HasSubstr("cannot read"));
}

// Waits (bounded) for `done`.
bool WaitFor(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST(Authz, HoldsEndWhenTheRoleIsWithdrawnOrTheCertificateExpires) {
  const std::string path = WriteFile("hold_authz", "n1 node\nop operator\n");
  absl::StatusOr<std::unique_ptr<Authz>> authz =
      Authz::Load(path, absl::ZeroDuration());
  ASSERT_THAT(authz.status(), IsOk());
  absl::Mutex mu;
  std::map<std::string, absl::Status> ended;
  auto recorder = [&](const std::string& who) {
    return [&, who](const absl::Status& why) {
      absl::MutexLock lock(&mu);
      ended[who] = why;
    };
  };
  auto count = [&] {
    absl::MutexLock lock(&mu);
    return ended.size();
  };
  // No hold for a role the name lacks.
  EXPECT_THAT(
      (*authz)
          ->Hold("n1", Role::kOperator, absl::InfiniteFuture(), recorder("bad"))
          .status(),
      StatusIs(absl::StatusCode::kPermissionDenied));
  absl::StatusOr<uint64_t> node = (*authz)->Hold(
      "n1", Role::kNode, absl::InfiniteFuture(), recorder("node"));
  absl::StatusOr<uint64_t> op = (*authz)->Hold(
      "op", Role::kOperator, absl::InfiniteFuture(), recorder("op"));
  absl::StatusOr<uint64_t> expiring = (*authz)->Hold(
      "op", Role::kOperator, absl::Now() + absl::Milliseconds(200),
      recorder("expiring"));
  absl::StatusOr<uint64_t> released = (*authz)->Hold(
      "n1", Role::kNode, absl::InfiniteFuture(), recorder("released"));
  ASSERT_TRUE(node.ok() && op.ok() && expiring.ok() && released.ok());
  EXPECT_EQ((*authz)->holds(), 4u);
  // The expiry, with nothing else changed.
  ASSERT_TRUE(WaitFor([&] { return count() == 1; }));
  {
    absl::MutexLock lock(&mu);
    EXPECT_THAT(ended["expiring"], StatusIs(absl::StatusCode::kUnauthenticated,
                                            HasSubstr("expired")));
  }
  (*authz)->Release(*released);
  // n1 withdrawn, with no call arriving: the holder thread reads the file.
  WriteFile("hold_authz", "op operator\n");
  ASSERT_TRUE(WaitFor([&] { return count() == 2; }));
  absl::SleepFor(absl::Milliseconds(200));
  // Not under `mu`: on_end takes it under the authz's lock.
  EXPECT_EQ((*authz)->holds(), 1u);
  (*authz)->Release(*op);
  absl::MutexLock lock(&mu);
  EXPECT_EQ(ended.size(), 2u);
  EXPECT_THAT(
      ended["node"],
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr("certificate \"n1\" no longer has role node")));
  EXPECT_FALSE(ended.contains("op"));
  EXPECT_FALSE(ended.contains("released"));
}

TEST(Authz, InsecureHoldsNeverEnd) {
  std::unique_ptr<Authz> authz = Authz::Insecure();
  absl::StatusOr<uint64_t> hold =
      authz->Hold("x", Role::kNode, absl::InfinitePast(), [](auto&) {});
  ASSERT_THAT(hold.status(), IsOk());
  authz->Release(*hold);
}

}  // namespace
}  // namespace lite::tls
