// The manager's audit log under attack (review cp-2026-11-28 M1): a caller
// with no certificate, a certificate without the node role, and a node
// acting for itself each send RegisterLmr with a 1 MiB name. Nothing the
// first two send reaches the log, the second's refusals are logged at a
// limited rate, and the node's own line is bounded. The log is litemgr's
// stderr, as journald would get it.
#include <grpcpp/grpcpp.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using grpc::StatusCode;

// Longest audit line the manager may write: a handful of fields, each
// string cut at 256 bytes and escaped to at most 4 characters a byte.
constexpr size_t kMaxAuditLine = 4096;

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.tls());
    ASSERT_TRUE(cluster_.StartManager({}).ok()) << cluster_.Logs();
    ASSERT_TRUE(cluster_.StartAgent("n1", 1, {}).ok());
    auto n1 = cluster_.WaitConnected("n1");
    ASSERT_TRUE(n1.ok()) << n1.status();
    n1_.set_node_id(n1->node_id());
    n1_.set_incarnation(n1->incarnation());
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  // RegisterLmr as n1 with a 1 MiB name of \x01 (escaped: 4 MiB of text).
  grpc::Status RegisterHugeName(lite::v1::ClusterManager::Stub* stub) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::RegisterLmrRequest request;
    *request.mutable_caller() = n1_;
    request.set_name(std::string(1 << 20, '\x01'));
    request.set_size_bytes(4096);
    request.mutable_owner()->set_uid(1000);
    lite::v1::RegisterLmrResponse response;
    return stub->RegisterLmr(&context, request, &response);
  }

  std::string Log() { return ReadFile(cluster_.manager()->stderr_path()); }

  // The audit lines of `method`, each checked to be bounded and to hold no
  // run of the name's bytes longer than the cut.
  std::vector<std::string> AuditLines(const std::string& caller,
                                      const std::string& method) {
    std::vector<std::string> found;
    for (absl::string_view line : absl::StrSplit(Log(), '\n')) {
      EXPECT_LE(line.size(), kMaxAuditLine)
          << "a log line of " << line.size()
          << " bytes: " << line.substr(0, 200);
      if (absl::StrContains(
              line, absl::StrCat("audit: ", caller, " ", method, " "))) {
        found.emplace_back(line);
      }
    }
    return found;
  }

  Cluster cluster_;
  lite::v1::NodeCaller n1_;
};

TEST_F(AuditTest, CallerWithoutCertificateReachesNeitherServiceNorLog) {
  const TlsFiles no_cert{"", "", cluster_.Files("n1").ca};
  for (int i = 0; i < 5; ++i) {
    const grpc::Status s =
        RegisterHugeName(cluster_.NewManagerStub(no_cert).get());
    // Refused at the TLS handshake: the request is never parsed.
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  }
  EXPECT_TRUE(AuditLines("(unauthenticated)", "RegisterLmr").empty());
  EXPECT_FALSE(absl::StrContains(Log(), "\\x01\\x01\\x01\\x01"));
}

TEST_F(AuditTest, CertificateWithoutTheRoleIsCountedNotQuoted) {
  // The operator's certificate is verified but has no node role.
  auto as_operator = cluster_.NewManagerStub(cluster_.Files("ops"));
  for (int i = 0; i < 20; ++i) {
    const grpc::Status s = RegisterHugeName(as_operator.get());
    EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED)
        << s.error_message();
  }
  const std::vector<std::string> lines = AuditLines("ops", "RegisterLmr");
  // One line for the first refusal; the other 19 fall in the same 10 s
  // window and are counted, not written.
  ASSERT_EQ(lines.size(), 1u) << Log();
  EXPECT_TRUE(absl::StrContains(lines[0], "-> PERMISSION_DENIED")) << lines[0];
  EXPECT_FALSE(absl::StrContains(lines[0], "name=")) << lines[0];
  EXPECT_FALSE(absl::StrContains(Log(), "\\x01\\x01\\x01\\x01"));
}

TEST_F(AuditTest, NodeOwnRequestIsAuditedBounded) {
  const grpc::Status s = RegisterHugeName(cluster_.manager_stub_as("n1"));
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  const std::vector<std::string> lines = AuditLines("n1", "RegisterLmr");
  ASSERT_EQ(lines.size(), 1u) << Log();
  EXPECT_TRUE(absl::StrContains(lines[0], "...(1048576 bytes)")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[0], "-> INVALID_ARGUMENT")) << lines[0];
}

}  // namespace
}  // namespace lite::hosttest
