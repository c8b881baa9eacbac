#include "controlplane/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/names/names.h"
#include "controlplane/access.h"

namespace lite::controlplane {
namespace {

using ::testing::HasSubstr;

TEST(ValidationTest, RdmaAddressesAreCanonical) {
  EXPECT_EQ(*CanonicalRdmaAddress("a", "10.0.0.2:7471"), "10.0.0.2:7471");
  EXPECT_EQ(*CanonicalRdmaAddress("a", "[fd00:0::2]:1"), "[fd00::2]:1");
  for (const char* bad :
       {"", "10.0.0.2", "10.0.0.2:", "10.0.0.2:0", "10.0.0.2:65536",
        "10.0.0.2:+1", "10.0.0.256:1", "name:1", "[fd00::2]", "[fd00::2:1",
        "fd00::2:1", "[zz::1]:1"}) {
    absl::StatusOr<std::string> result = CanonicalRdmaAddress("a", bad);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(result.status().message(), HasSubstr("expected \"IPv4:port\""));
  }
}

TEST(ValidationTest, ModesAreSubsetsOf0666) {
  EXPECT_TRUE(ValidateMode("mode", 0).ok());
  EXPECT_TRUE(ValidateMode("mode", 0666).ok());
  EXPECT_TRUE(ValidateMode("mode", 0640).ok());
  const absl::Status exec = ValidateMode("mode", 0755);
  EXPECT_EQ(exec.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exec.message(), HasSubstr("0755 has bits outside 0666 (0111)"));
  EXPECT_EQ(ValidateMode("mode", 04000).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidationTest, ChunksMustAddUpWithoutOverflow) {
  google::protobuf::RepeatedPtrField<lite::v1::LmrChunk> chunks;
  EXPECT_EQ(ValidateChunks("c", chunks, 10, 4).code(),
            absl::StatusCode::kInvalidArgument);
  chunks.Add()->set_length_bytes(6);
  chunks.Add()->set_length_bytes(4);
  EXPECT_TRUE(ValidateChunks("c", chunks, 10, 4).ok());
  EXPECT_EQ(ValidateChunks("c", chunks, 11, 4).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateChunks("c", chunks, 10, 1).code(),
            absl::StatusCode::kInvalidArgument);
  chunks.Mutable(0)->set_length_bytes(~uint64_t{0});
  EXPECT_EQ(ValidateChunks("c", chunks, 10, 4).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidationTest, CredentialsAndAccess) {
  lite::v1::Credentials creds;
  creds.set_uid(0);
  creds.set_gid(0);
  creds.set_pid(1);
  EXPECT_TRUE(ValidateCredentials("owner", creds).ok());
  creds.set_pid(0);
  EXPECT_THAT(ValidateCredentials("owner", creds).message(),
              HasSubstr("owner.pid is 0"));
  lite::v1::Access none;
  EXPECT_EQ(ValidateAccess("access", none).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ValidationTest, CredentialsGroupsAreBoundedAndRealGroups) {
  lite::v1::Credentials creds;
  creds.set_uid(2000);
  creds.set_gid(5);
  creds.set_pid(1);
  creds.add_groups(7);
  creds.add_groups(UINT32_MAX);
  EXPECT_THAT(ValidateCredentials("requester", creds).message(),
              HasSubstr("requester.groups has 4294967295"));
  creds.clear_groups();
  for (int i = 0; i <= names::kMaxSupplementaryGroups; ++i) {
    creds.add_groups(i);
  }
  EXPECT_EQ(ValidateCredentials("requester", creds).code(),
            absl::StatusCode::kInvalidArgument);
  creds.mutable_groups()->RemoveLast();
  EXPECT_TRUE(ValidateCredentials("requester", creds).ok());
}

TEST(ValidationTest, Paging) {
  EXPECT_EQ(ParsePage(0, "")->size, kDefaultPageSize);
  EXPECT_EQ(ParsePage(5, "42")->after_id, 42u);
  EXPECT_EQ(ParsePage(kMaxPageSize + 1, "").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePage(1, "-1").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePage(1, "99999999999999999999999").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PageToken(7), "7");
}

TEST(AccessTest, MessageSaysWhichClassAppliedAndWhatItAllows) {
  lite::v1::Credentials who;
  who.set_uid(2000);
  who.set_gid(100);
  who.set_pid(1);
  lite::v1::Access write;
  write.set_write(true);
  const absl::Status denied =
      CheckAccess("LMR 'x'", 0640, 1000, 100, who, write);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(),
            "uid 2000 gid 100 may not write LMR 'x': it is owned by uid 1000 "
            "gid 100 with mode 0640 (rw-r-----), and the group class allows "
            "r-");
  EXPECT_EQ(ModeString(0604), "rw----r--");
}

TEST(ValidationTest, PeerFailureReports) {
  lite::v1::PeerFailureReport r;
  r.set_node_id(3);
  r.set_incarnation(7);
  r.set_reason_errno(112);
  r.set_detail("Host is down");
  EXPECT_TRUE(ValidatePeerFailureReport(r, 1).ok());
  EXPECT_THAT(ValidatePeerFailureReport(r, 3).message(), HasSubstr("itself"));
  lite::v1::PeerFailureReport bad = r;
  bad.set_node_id(0);
  EXPECT_EQ(ValidatePeerFailureReport(bad, 1).code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.set_incarnation(0);
  EXPECT_EQ(ValidatePeerFailureReport(bad, 1).code(),
            absl::StatusCode::kInvalidArgument);
  for (int e : {-112, 0, 4096}) {
    bad = r;
    bad.set_reason_errno(e);
    EXPECT_THAT(ValidatePeerFailureReport(bad, 1).message(),
                HasSubstr("reason_errno"));
  }
  bad = r;
  bad.set_detail(std::string(kMaxReasonLength, 'x'));
  EXPECT_TRUE(ValidatePeerFailureReport(bad, 1).ok());
  bad.set_detail(std::string(kMaxReasonLength + 1, 'x'));
  EXPECT_THAT(ValidatePeerFailureReport(bad, 1).message(), HasSubstr("detail"));
}

TEST(ValidationTest, GrantRevokeAcksNameTheSessionsOwnGrants) {
  lite::v1::GrantRevokeAck ack;
  ack.set_grant_id((uint64_t{2} << 32) | 5);
  ack.set_holder_incarnation(7);
  EXPECT_TRUE(ValidateGrantRevokeAck(ack, 2, 7).ok());
  absl::Status s = ValidateGrantRevokeAck(ack, 3, 7);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not a grant of node 3"));
  s = ValidateGrantRevokeAck(ack, 2, 8);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not this session's incarnation 8"));
  for (uint64_t id : {uint64_t{0}, uint64_t{2} << 32}) {
    ack.set_grant_id(id);
    EXPECT_THAT(ValidateGrantRevokeAck(ack, 2, 7).message(),
                HasSubstr("grant_id"));
  }
}

TEST(ValidationTest, LmrLostReports) {
  lite::v1::LmrLost lost;
  lost.set_lmr_id((uint64_t{2} << 32) | 1);
  lost.set_reason_errno(19);
  lost.set_detail(std::string(kMaxReasonLength, 'x'));
  EXPECT_TRUE(ValidateLmrLost(lost).ok());
  lite::v1::LmrLost bad = lost;
  bad.set_lmr_id(0);
  EXPECT_THAT(ValidateLmrLost(bad).message(), HasSubstr("lmr_id is 0"));
  for (int e : {-19, 0, 4096}) {
    bad = lost;
    bad.set_reason_errno(e);
    EXPECT_EQ(ValidateLmrLost(bad).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(ValidateLmrLost(bad).message(), HasSubstr("reason_errno"));
  }
  bad = lost;
  bad.set_detail(std::string(kMaxReasonLength + 1, 'x'));
  EXPECT_THAT(ValidateLmrLost(bad).message(), HasSubstr("detail"));
}

// Text that would act on a terminal or forge a log line, and text too long.
std::vector<std::string> HostileTexts(size_t max_bytes) {
  return {
      "\x1b[2J\x1b[Hfake log line",  // ESC: clear screen, home.
      "\x1b]52;c;ZXZpbA==\x07",      // OSC 52 to the clipboard.
      "line\nINFO forged",           // A newline forges a log line.
      "tab\there",                   // Any C0.
      "del\x7f",                     // DEL.
      "\xc2\x9b"
      "2J",  // C1 CSI, encoded.
      "\x9b"
      "2J",                             // A bare C1 byte: invalid UTF-8.
      "\xff\xfe",                       // Invalid UTF-8.
      "\xc0\xaf",                       // Overlong '/'.
      std::string("nul\0x", 5),         // NUL.
      std::string(max_bytes + 1, 'x'),  // One byte too long.
  };
}

TEST(ValidationTest, FreeTextFromTheWireIsInert) {
  lite::v1::PeerFailureReport report;
  report.set_node_id(2);
  report.set_incarnation(1);
  report.set_reason_errno(112);
  lite::v1::LmrLost lost;
  lost.set_lmr_id((uint64_t{2} << 32) | 1);
  lost.set_reason_errno(19);
  lite::v1::NodeRequestResult result;
  result.set_request_id(1);
  // Printable UTF-8 at the bound passes.
  const std::string ok = "p\xc3\xa9riph\xc3\xa9rique \xe2\x9c\x93";
  report.set_detail(ok);
  lost.set_detail(ok);
  result.set_status_message(std::string(kMaxAgentMessageLength, 'y'));
  EXPECT_TRUE(ValidatePeerFailureReport(report, 1).ok());
  EXPECT_TRUE(ValidateLmrLost(lost).ok());
  EXPECT_TRUE(ValidateNodeRequestResult(result).ok());
  for (const std::string& bad : HostileTexts(kMaxReasonLength)) {
    report.set_detail(bad);
    lost.set_detail(bad);
    const absl::Status r = ValidatePeerFailureReport(report, 1);
    EXPECT_EQ(r.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.message(), HasSubstr("peer_failure.detail"));
    EXPECT_EQ(r.message().find('\x1b'), std::string::npos);  // Not echoed.
    EXPECT_EQ(ValidateLmrLost(lost).code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  for (const std::string& bad : HostileTexts(kMaxAgentMessageLength)) {
    result.set_status_message(bad);
    EXPECT_EQ(ValidateNodeRequestResult(result).code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace lite::controlplane
