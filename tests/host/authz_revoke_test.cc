// Revocation reaches open streams (review cp-2026-11-28 M4). The attacker
// holds a stolen certificate with a stream open: node "n7" (the test itself,
// with n7's certificate) keeps its Session and heartbeats, operator "op2"
// keeps a Watch. The operator removes both from the authz file, as
// docs/security.md says to. Within the reload interval (1 s, a few seconds
// allowed on a loaded machine) both streams end with the reason, n7 is
// failed, and when a new node joins afterwards n7 receives neither its
// MemberJoined nor its pair secret, and op2 no event.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using grpc::StatusCode;

// The reload interval is 1 s; allow a loaded 2-core machine some slack.
constexpr absl::Duration kRevokeBound = absl::Seconds(5);

// What a stream received, recorded from its reader thread.
struct Received {
  absl::Mutex mu;
  std::vector<lite::v1::Event> events ABSL_GUARDED_BY(mu);
  int peer_secrets ABSL_GUARDED_BY(mu) = 0;
  bool done ABSL_GUARDED_BY(mu) = false;
  grpc::Status status ABSL_GUARDED_BY(mu);
  absl::Time ended ABSL_GUARDED_BY(mu);

  void Add(const lite::v1::ManagerMessage& m) {
    absl::MutexLock lock(&mu);
    if (m.has_event()) events.push_back(m.event());
    for (const auto& e : m.event_batch().events()) events.push_back(e);
    peer_secrets += m.peer_secrets_size();
  }
  void Finish(const grpc::Status& s) {
    absl::MutexLock lock(&mu);
    done = true;
    status = s;
    ended = absl::Now();
  }
  bool Joined(const std::string& name) {
    absl::MutexLock lock(&mu);
    for (const auto& e : events) {
      if (e.has_member_joined() &&
          e.member_joined().member().node_name() == name) {
        return true;
      }
    }
    return false;
  }
};

class AuthzRevokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.tls());
    ASSERT_TRUE(cluster_.Certificate("node", "n7").ok());
    ASSERT_TRUE(cluster_.Certificate("operator", "op2").ok());
    ASSERT_TRUE(cluster_.StartManager({.recovery_window_ms = 0}).ok())
        << cluster_.Logs();
    ASSERT_TRUE(cluster_.StartAgent("n1", 1, {}).ok());
    ASSERT_TRUE(cluster_.WaitConnected("n1").ok());
  }
  void TearDown() override {
    stop_ = true;
    if (n7_context_ != nullptr) n7_context_->TryCancel();
    if (op2_context_ != nullptr) op2_context_->TryCancel();
    for (std::thread& t : threads_) t.join();
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  // Joins as n7 with n7's certificate and keeps a session open,
  // heartbeating every 100 ms, recording what it receives.
  void OpenN7Session() {
    n7_stub_ = cluster_.NewManagerStub(cluster_.Files("n7"));
    grpc::ClientContext join_context;
    join_context.set_deadline(
        absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    lite::v1::JoinRequest join;
    join.set_node_name("n7");
    join.set_rdma_address("127.0.0.1:17907");
    lite::v1::JoinResponse joined;
    const grpc::Status s = n7_stub_->Join(&join_context, join, &joined);
    ASSERT_TRUE(s.ok()) << s.error_message();
    const uint32_t id = joined.node_id();
    const uint64_t incarnation = joined.incarnation();
    n7_context_ = std::make_unique<grpc::ClientContext>();
    n7_stream_ = n7_stub_->Session(n7_context_.get());
    threads_.emplace_back([this, id, incarnation] {
      for (uint64_t seq = 1; !stop_; ++seq) {
        lite::v1::AgentMessage hb;
        hb.mutable_heartbeat()->set_node_id(id);
        hb.mutable_heartbeat()->set_incarnation(incarnation);
        hb.mutable_heartbeat()->set_heartbeat_seq(seq);
        if (!n7_stream_->Write(hb)) break;
        absl::SleepFor(absl::Milliseconds(100));
      }
    });
    threads_.emplace_back([this] {
      lite::v1::ManagerMessage m;
      while (n7_stream_->Read(&m)) n7_.Add(m);
      stop_ = true;
      n7_.Finish(n7_stream_->Finish());
    });
    // Bound once the manager lists n7 alive.
    ASSERT_TRUE(Eventually(
        [&] {
          auto nodes = cluster_.Nodes();
          if (!nodes.ok()) return false;
          for (const auto& n : *nodes) {
            if (n.node_name() == "n7" &&
                n.state() == lite::v1::NODE_STATE_ALIVE) {
              return true;
            }
          }
          return false;
        },
        kStartTimeout));
  }

  // A Watch with op2's certificate, recording every event.
  void OpenOp2Watch() {
    op2_stub_ = cluster_.NewOperatorStub(cluster_.Files("op2"));
    op2_context_ = std::make_unique<grpc::ClientContext>();
    op2_stream_ = op2_stub_->Watch(op2_context_.get(), {});
    // The initial metadata comes once the watch is registered.
    op2_stream_->WaitForInitialMetadata();
    threads_.emplace_back([this] {
      lite::v1::Event e;
      while (op2_stream_->Read(&e)) {
        lite::v1::ManagerMessage m;
        *m.mutable_event() = e;
        op2_.Add(m);
      }
      op2_.Finish(op2_stream_->Finish());
    });
  }

  // The authz file without the lines of `names` (as an operator's edit).
  void Withdraw(const std::vector<std::string>& names) {
    const std::string path = absl::StrCat(cluster_.cert_dir(), "/authz");
    std::string text = ReadFile(path);
    for (const std::string& name : names) {
      for (const char* role : {"node", "operator"}) {
        text = absl::StrReplaceAll(
            text, {{absl::StrCat("\n", name, " ", role, "\n"), "\n"}});
      }
    }
    const std::string tmp = path + ".new";
    std::ofstream(tmp, std::ios::trunc) << text;
    ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0);
  }

  static bool Done(Received& r) {
    absl::MutexLock lock(&r.mu);
    return r.done;
  }

  Cluster cluster_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::unique_ptr<lite::v1::ClusterManager::Stub> n7_stub_;
  std::unique_ptr<grpc::ClientContext> n7_context_;
  std::unique_ptr<grpc::ClientReaderWriter<lite::v1::AgentMessage,
                                           lite::v1::ManagerMessage>>
      n7_stream_;
  std::unique_ptr<lite::v1::ClusterOperator::Stub> op2_stub_;
  std::unique_ptr<grpc::ClientContext> op2_context_;
  std::unique_ptr<grpc::ClientReader<lite::v1::Event>> op2_stream_;
  Received n7_;
  Received op2_;
};

TEST_F(AuthzRevokeTest, WithdrawnNodeAndOperatorLoseTheirOpenStreams) {
  OpenN7Session();
  OpenOp2Watch();
  // Both streams work before: a node joining is seen by both, and n7 gets
  // its pair secret.
  ASSERT_TRUE(cluster_.StartAgent("n2", 2, {}).ok());
  ASSERT_TRUE(cluster_.WaitConnected("n2").ok());
  ASSERT_TRUE(Eventually([&] { return n7_.Joined("n2"); }, kStartTimeout));
  ASSERT_TRUE(Eventually([&] { return op2_.Joined("n2"); }, kStartTimeout));
  {
    absl::MutexLock lock(&n7_.mu);
    ASSERT_GE(n7_.peer_secrets, 1);
  }

  const absl::Time withdrawn = absl::Now();
  Withdraw({"n7", "op2"});
  EXPECT_TRUE(Eventually([&] { return Done(n7_); }, kRevokeBound))
      << "n7's session is still open " << kRevokeBound
      << " after its name left the authz file";
  EXPECT_TRUE(Eventually([&] { return Done(op2_); }, kRevokeBound))
      << "op2's watch is still open " << kRevokeBound
      << " after its name left the authz file";
  {
    absl::MutexLock lock(&n7_.mu);
    if (n7_.done) {
      EXPECT_LE(n7_.ended - withdrawn, kRevokeBound);
      EXPECT_TRUE(absl::StrContains(n7_.status.error_message(),
                                    "no longer has role node"))
          << n7_.status.error_message();
    }
  }
  {
    absl::MutexLock lock(&op2_.mu);
    if (op2_.done) {
      EXPECT_EQ(op2_.status.error_code(), StatusCode::PERMISSION_DENIED)
          << op2_.status.error_message();
      EXPECT_TRUE(absl::StrContains(op2_.status.error_message(),
                                    "no longer has role operator"));
    }
  }
  // n7 was failed, not left lingering with its lease.
  EXPECT_TRUE(Eventually(
      [&] {
        auto nodes = cluster_.Nodes();
        if (!nodes.ok()) return false;
        for (const auto& n : *nodes) {
          if (n.node_name() == "n7") {
            return n.state() == lite::v1::NODE_STATE_FAILED;
          }
        }
        return false;
      },
      kRevokeBound));

  // A node joining now: neither revoked stream learns of it.
  int secrets_before;
  {
    absl::MutexLock lock(&n7_.mu);
    secrets_before = n7_.peer_secrets;
  }
  ASSERT_TRUE(cluster_.StartAgent("n3", 3, {}).ok());
  ASSERT_TRUE(cluster_.WaitConnected("n3").ok());
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_FALSE(n7_.Joined("n3")) << "revoked n7 was told of n3";
  EXPECT_FALSE(op2_.Joined("n3")) << "revoked op2 saw n3 join";
  {
    absl::MutexLock lock(&n7_.mu);
    EXPECT_EQ(n7_.peer_secrets, secrets_before)
        << "revoked n7 received a pair secret";
  }
  // And the certificates cannot come back on a new call.
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  lite::v1::JoinRequest join;
  join.set_node_name("n7");
  join.set_rdma_address("127.0.0.1:17907");
  lite::v1::JoinResponse joined;
  EXPECT_EQ(n7_stub_->Join(&context, join, &joined).error_code(),
            StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace lite::hosttest
