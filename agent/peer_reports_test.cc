// Which peer failures the agent reports to the manager, and in what form.
#include "agent/peer_reports.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace lite::agent {
namespace {

PeerConnectionFailed Failed(int reason_errno) {
  PeerConnectionFailed f;
  f.node_id = 3;
  f.incarnation = 7;
  f.reason_errno = reason_errno;
  f.reason = "Host is down (EHOSTDOWN) on QP 1 to 10.0.0.3; 0 QPs connected";
  return f;
}

TEST(PeerReportsTest, TheDataPathVerdictIsReported) {
  auto report = PeerFailureToReport(Failed(EHOSTDOWN), 1);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->node_id(), 3u);
  EXPECT_EQ(report->incarnation(), 7u);
  EXPECT_EQ(report->reason_errno(), EHOSTDOWN);
  EXPECT_EQ(report->detail(), Failed(EHOSTDOWN).reason);
}

TEST(PeerReportsTest, ConnectionTroubleIsNot) {
  for (int e : {0, ECONNRESET, ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH,
                EKEYREJECTED, ENOKEY, ESTALE, ENODEV, EIO}) {
    SCOPED_TRACE(e);
    EXPECT_FALSE(PeerFailureToReport(Failed(e), 1).has_value());
  }
}

TEST(PeerReportsTest, MalformedOrSelfIsNot) {
  PeerConnectionFailed f = Failed(EHOSTDOWN);
  f.node_id = 0;
  EXPECT_FALSE(PeerFailureToReport(f, 1).has_value());
  f = Failed(EHOSTDOWN);
  f.incarnation = 0;
  EXPECT_FALSE(PeerFailureToReport(f, 1).has_value());
  EXPECT_FALSE(PeerFailureToReport(Failed(EHOSTDOWN), 3).has_value());
}

TEST(PeerReportsTest, DetailIsCutToTheManagersLimit) {
  PeerConnectionFailed f = Failed(EHOSTDOWN);
  f.reason = std::string(1000, 'x');
  auto report = PeerFailureToReport(f, 1);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->detail().size(), kMaxReportDetail);
}

}  // namespace
}  // namespace lite::agent
