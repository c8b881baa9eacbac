// The manager's memory stays bounded against clients that open many Watch
// and Session streams and never read: an in-process litemgr (both services
// on 127.0.0.1:0) is flooded with events while 40 sessions and
// --max_watchers watches sit unread. Every queue is bounded
// (--session_queue_limit; a reader that falls behind is closed), the event
// history too (--watch_history), and one watch past --max_watchers is
// RESOURCE_EXHAUSTED. VmRSS (this process: manager and clients) is measured
// before and after.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log/log.h"
#include "common/tls/authz.h"
#include "controlplane/clock.h"
#include "controlplane/limit_flags.h"
#include "controlplane/memory_store.h"
#include "controlplane/operator_service.h"
#include "controlplane/service.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

// Under AddressSanitizer (tests/run.sh's second pass) freed memory is held
// in a quarantine of up to 256 MiB before reuse, so VmRSS would measure the
// sanitizer rather than what the manager retains. This test is about the
// latter: no quarantine in this binary (ASAN_OPTIONS still adds its flags).
// Read by the ASan runtime only; unused in a plain build.
extern "C" const char* __asan_default_options() {
  return "quarantine_size_mb=0";
}

namespace lite::controlplane {
namespace {

using ::testing::HasSubstr;
using Session =
    grpc::ClientReaderWriter<lite::v1::AgentMessage, lite::v1::ManagerMessage>;

constexpr int kWatchers = 32;
constexpr int kSessions = 40;
constexpr int64_t kQueueLimit = 2000;
constexpr int kEvents = 200000;

// Resident set size of this process, in bytes.
int64_t VmRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::string kb = line.substr(6);
    kb = kb.substr(0, kb.find("kB"));
    int64_t value = 0;
    absl::SimpleAtoi(absl::StripAsciiWhitespace(kb), &value);
    return value * 1024;
  }
  return -1;
}

class BoundedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Every drain toggle is logged at INFO; the flood would be 200,000 lines.
    logging::SetMinLogLevel(logging::LogLevel::kWarning);
    ManagerOptions options;
    options.lease = absl::Hours(1);  // Only an overflow ends a session.
    options.recovery_window = absl::ZeroDuration();
    options.session_queue_limit = kQueueLimit;
    options.watch_history = kQueueLimit / 2;
    options.max_watchers = kWatchers;
    state_ = std::make_unique<ManagerState>(options, &clock_,
                                            std::make_unique<MemoryStore>());
    service_ =
        std::make_unique<ClusterManagerService>(state_.get(), authz_.get());
    operator_service_ =
        std::make_unique<ClusterOperatorService>(state_.get(), authz_.get());
    grpc::ServerBuilder builder;
    ApplyServerLimits(&builder);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(service_.get());
    builder.RegisterService(operator_service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = lite::v1::ClusterManager::NewStub(channel_);
    operator_stub_ = lite::v1::ClusterOperator::NewStub(channel_);
  }

  void TearDown() override {
    state_->Shutdown();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  }

  // Emits `count` events (MemberDrainChanged) without gRPC.
  void Emit(uint32_t node_id, int count) {
    lite::v1::DrainNodeRequest drain;
    drain.set_node_id(node_id);
    for (int i = 0; i < count; ++i) {
      drain.set_cancel(i % 2 == 1);
      ASSERT_TRUE(state_->DrainNode(drain).ok());
    }
  }

  template <typename Pred>
  static bool WaitFor(Pred done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  RealClock clock_;
  std::unique_ptr<tls::Authz> authz_ = tls::Authz::Insecure();
  std::unique_ptr<ManagerState> state_;
  std::unique_ptr<ClusterManagerService> service_;
  std::unique_ptr<ClusterOperatorService> operator_service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<lite::v1::ClusterManager::Stub> stub_;
  std::unique_ptr<lite::v1::ClusterOperator::Stub> operator_stub_;
};

TEST_F(BoundedTest, UnreadWatchesAndSessionsCannotGrowTheManager) {
  // Warm up (threads, allocator arenas, the history filled to its bound),
  // then the baseline.
  lite::v1::JoinRequest join;
  join.set_node_name("warm");
  join.set_rdma_address("127.0.0.1:6999");
  lite::v1::JoinResponse warm;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Join(&context, join, &warm).ok());
  }
  Emit(warm.node_id(), 2 * kQueueLimit);
  const int64_t before = VmRssBytes();
  ASSERT_GT(before, 0);

  // kWatchers watches and kSessions sessions that never read.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<lite::v1::Event>>> watches;
  for (int i = 0; i < kWatchers; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    watches.push_back(
        operator_stub_->Watch(contexts.back().get(), lite::v1::WatchRequest()));
  }
  ASSERT_TRUE(WaitFor([&] { return state_->counters().watchers == kWatchers; }))
      << state_->counters().watchers;
  // One more is refused, naming the flag.
  {
    grpc::ClientContext context;
    auto extra = operator_stub_->Watch(&context, lite::v1::WatchRequest());
    lite::v1::Event event;
    EXPECT_FALSE(extra->Read(&event));
    const grpc::Status status = extra->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(status.error_message(), HasSubstr("--max_watchers"));
  }
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < kSessions; ++i) {
    join.set_node_name(absl::StrCat("idle-", i));
    join.set_rdma_address(absl::StrCat("127.0.0.1:", 7000 + i));
    lite::v1::JoinResponse joined;
    {
      grpc::ClientContext context;
      ASSERT_TRUE(stub_->Join(&context, join, &joined).ok());
    }
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    sessions.push_back(stub_->Session(contexts.back().get()));
    lite::v1::AgentMessage first;
    first.mutable_heartbeat()->set_node_id(joined.node_id());
    first.mutable_heartbeat()->set_incarnation(joined.incarnation());
    first.mutable_heartbeat()->set_heartbeat_seq(1);
    ASSERT_TRUE(sessions.back()->Write(first));
  }
  ASSERT_TRUE(
      WaitFor([&] { return state_->counters().sessions_open == kSessions; }));

  // The flood: far more events than any queue may hold. Unbounded, each
  // of the 72 readers would keep a reference to every event (200,000 x 72
  // x 16 bytes = 230 MB of queue entries alone, plus the events).
  Emit(warm.node_id(), kEvents);
  // Every reader fell behind and was closed; nothing of theirs is kept.
  EXPECT_TRUE(WaitFor([&] { return state_->counters().watchers == 0; }))
      << state_->counters().watchers;
  // ("warm" never opened its session: its queue overflowed in the warm-up.)
  EXPECT_EQ(state_->counters().session_overflows,
            static_cast<uint64_t>(kSessions) + 1);
  EXPECT_EQ(state_->counters().sessions_open, 0u);

  const int64_t after = VmRssBytes();
  // What may legitimately remain: the history (kQueueLimit / 2 events of
  // under 1 KiB with their encodings), 40 node records, and what gRPC holds
  // for 72 streams (each at most its 64 KiB flow-control window on both
  // ends, ~9 MiB) plus allocator slack. 48 MiB is well above that and far
  // below the unbounded growth above.
  const int64_t growth = after - before;
  EXPECT_LT(growth, int64_t{48} << 20)
      << "VmRSS grew by " << growth / 1024 << " KiB (" << before / 1024
      << " -> " << after / 1024 << " KiB)";
  RecordProperty("vmrss_growth_kib", std::to_string(growth / 1024));
  std::printf("VmRSS %lld -> %lld KiB\n", static_cast<long long>(before / 1024),
              static_cast<long long>(after / 1024));

  for (auto& context : contexts) context->TryCancel();
  for (auto& watch : watches) watch->Finish();
  for (auto& session : sessions) session->Finish();
}

TEST_F(BoundedTest, OversizedMessagesAreRefused) {
  lite::v1::JoinRequest join;
  join.set_node_name(std::string(absl::GetFlag(FLAGS_max_message_bytes), 'x'));
  join.set_rdma_address("127.0.0.1:7000");
  grpc::ClientContext context;
  lite::v1::JoinResponse joined;
  const grpc::Status status = stub_->Join(&context, join, &joined);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_EQ(state_->counters().joins, 0u);
}

}  // namespace
}  // namespace lite::controlplane
