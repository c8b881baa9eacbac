// The server limits hold against one client (review cp-2026-11-28 L6): a
// connection's streams beyond the limit wait (health Watch streams count),
// and a TCP connection that never finishes its handshake is closed.
#include "common/grpc/server_limits.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"

namespace lite {
namespace {

using ::grpc::health::v1::Health;
using ::grpc::health::v1::HealthCheckRequest;
using ::grpc::health::v1::HealthCheckResponse;

class ServerLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    ApplyConnectionLimits(&builder, {.max_streams_per_connection = 2,
                                     .memory_bytes = size_t{64} << 20,
                                     .max_threads = 8,
                                     .handshake_timeout_ms = 1000});
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                   grpc::InsecureChannelCredentials());
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Check(absl::Duration deadline) {
    auto stub = Health::NewStub(channel_);
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    HealthCheckResponse resp;
    return stub->Check(&ctx, HealthCheckRequest(), &resp);
  }

  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ServerLimitsTest, StreamsBeyondTheLimitWaitForASlot) {
  ASSERT_TRUE(Check(absl::Seconds(10)).ok());
  // Two health Watch streams held open take both slots of the connection.
  auto stub = Health::NewStub(channel_);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<HealthCheckResponse>>> watches;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    watches.push_back(stub->Watch(contexts.back().get(), HealthCheckRequest()));
    HealthCheckResponse first;
    ASSERT_TRUE(watches.back()->Read(&first));  // the stream is open
  }
  // A third call on the same connection gets no stream.
  EXPECT_EQ(Check(absl::Milliseconds(500)).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // One watch ends: its slot serves the next call.
  contexts[0]->TryCancel();
  HealthCheckResponse ignored;
  while (watches[0]->Read(&ignored)) {
  }
  watches[0]->Finish();
  EXPECT_TRUE(Check(absl::Seconds(10)).ok());
  contexts[1]->TryCancel();
  while (watches[1]->Read(&ignored)) {
  }
  watches[1]->Finish();
}

TEST_F(ServerLimitsTest, SilentConnectionIsClosedAfterTheHandshakeTimeout) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const absl::Time start = absl::Now();
  // Send nothing; the server must hang up (read returns 0 or an error).
  bool closed = false;
  while (!closed && absl::Now() - start < absl::Seconds(10)) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[256];
      closed = read(fd, buf, sizeof(buf)) <= 0;
    }
  }
  const absl::Duration took = absl::Now() - start;
  close(fd);
  EXPECT_TRUE(closed) << "the server kept a silent connection for 10 s";
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(5));
}

}  // namespace
}  // namespace lite
