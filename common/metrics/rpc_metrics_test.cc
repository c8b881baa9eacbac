#include "common/metrics/rpc_metrics.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/metrics/scrape.h"
#include "common/metrics/server.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"

namespace lite::metrics {
namespace {

using ::grpc::health::v1::Health;
using ::grpc::health::v1::HealthCheckRequest;
using ::grpc::health::v1::HealthCheckResponse;
using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kHealth[] = "grpc.health.v1.Health";

// Check: OK, or NOT_FOUND for service "missing". Watch: two answers then
// OK, or for service "forever" answers until the client cancels.
class SyncHealth final : public Health::Service {
 public:
  grpc::Status Check(grpc::ServerContext*, const HealthCheckRequest* req,
                     HealthCheckResponse* resp) override {
    if (req->service() == "missing") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such service");
    }
    resp->set_status(HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }
  grpc::Status Watch(grpc::ServerContext* ctx, const HealthCheckRequest* req,
                     grpc::ServerWriter<HealthCheckResponse>* writer) override {
    HealthCheckResponse resp;
    resp.set_status(HealthCheckResponse::SERVING);
    for (int i = 0; i < 2 || req->service() == "forever"; ++i) {
      if (ctx->IsCancelled() || !writer->Write(resp)) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    return grpc::Status::OK;
  }
};

// The callback API (the manager's unary methods use it).
class CallbackHealth final : public Health::CallbackService {
 public:
  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* ctx,
                                  const HealthCheckRequest* req,
                                  HealthCheckResponse* resp) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    if (req->service() == "missing") {
      reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "none"));
    } else {
      resp->set_status(HealthCheckResponse::SERVING);
      reactor->Finish(grpc::Status::OK);
    }
    return reactor;
  }
};

struct Served {
  std::shared_ptr<RpcMetrics> metrics;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<Health::Stub> stub;
  std::shared_ptr<grpc::Channel> channel;
};

Served Serve(grpc::Service* service) {
  Served s;
  absl::StatusOr<std::shared_ptr<RpcMetrics>> metrics =
      RpcMetrics::Create("lite_test_rpc_calls_total", "calls", {kHealth});
  EXPECT_THAT(metrics, IsOk());
  s.metrics = *metrics;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(service);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      factories;
  factories.push_back(s.metrics->NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(factories));
  s.server = builder.BuildAndStart();
  EXPECT_NE(s.server, nullptr);
  s.channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                  grpc::InsecureChannelCredentials());
  s.stub = Health::NewStub(s.channel);
  return s;
}

grpc::Status Check(Health::Stub* stub, const std::string& service) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  HealthCheckRequest req;
  req.set_service(service);
  HealthCheckResponse resp;
  return stub->Check(&ctx, req, &resp);
}

// The server's status is counted after it is sent; the client may see it
// first.
bool CountReaches(const RpcMetrics& m, const char* method,
                  absl::StatusCode code, uint64_t want) {
  for (int i = 0; i < 500; ++i) {
    if (m.Count(kHealth, method, code) == want) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return m.Count(kHealth, method, code) == want;
}

TEST(RpcMetrics, CountsUnaryCallsByMethodAndCode) {
  SyncHealth service;
  Served s = Serve(&service);
  EXPECT_EQ(s.metrics->Count(kHealth, "Check", absl::StatusCode::kOk), 0u);
  ASSERT_TRUE(Check(s.stub.get(), "").ok());
  ASSERT_TRUE(Check(s.stub.get(), "").ok());
  ASSERT_EQ(Check(s.stub.get(), "missing").error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(CountReaches(*s.metrics, "Check", absl::StatusCode::kOk, 2));
  EXPECT_TRUE(
      CountReaches(*s.metrics, "Check", absl::StatusCode::kNotFound, 1));
  EXPECT_EQ(s.metrics->Count(kHealth, "Watch", absl::StatusCode::kOk), 0u);
  s.server->Shutdown();
}

TEST(RpcMetrics, CountsCallbackApiCalls) {
  CallbackHealth service;
  Served s = Serve(&service);
  ASSERT_TRUE(Check(s.stub.get(), "").ok());
  ASSERT_EQ(Check(s.stub.get(), "missing").error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(CountReaches(*s.metrics, "Check", absl::StatusCode::kOk, 1));
  EXPECT_TRUE(
      CountReaches(*s.metrics, "Check", absl::StatusCode::kNotFound, 1));
  s.server->Shutdown();
}

TEST(RpcMetrics, CountsStreamsOnceWhenTheyEnd) {
  SyncHealth service;
  Served s = Serve(&service);
  {
    grpc::ClientContext ctx;
    HealthCheckRequest req;
    auto reader = s.stub->Watch(&ctx, req);
    HealthCheckResponse resp;
    int answers = 0;
    while (reader->Read(&resp)) ++answers;
    EXPECT_EQ(answers, 2);
    ASSERT_TRUE(reader->Finish().ok());
  }
  EXPECT_TRUE(CountReaches(*s.metrics, "Watch", absl::StatusCode::kOk, 1));
  {
    // A stream the client gives up on: counted once, with the code the
    // server ends it with.
    grpc::ClientContext ctx;
    HealthCheckRequest req;
    req.set_service("forever");
    auto reader = s.stub->Watch(&ctx, req);
    HealthCheckResponse resp;
    ASSERT_TRUE(reader->Read(&resp));
    ctx.TryCancel();
    while (reader->Read(&resp)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(
      CountReaches(*s.metrics, "Watch", absl::StatusCode::kCancelled, 1));
  EXPECT_EQ(s.metrics->Count(kHealth, "Watch", absl::StatusCode::kOk), 1u);
  s.server->Shutdown();
}

TEST(RpcMetrics, UnknownMethodsShareOneSeries) {
  SyncHealth service;
  Served s = Serve(&service);
  grpc::GenericStub generic(s.channel);
  for (const char* path : {"/nope.Nope/Nothing", "/made.Up/Name"}) {
    grpc::ClientContext ctx;
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    absl::Notification done;
    grpc::Status status;
    generic.UnaryCall(&ctx, path, grpc::StubOptions(), &request, &response,
                      [&](grpc::Status st) {
                        status = std::move(st);
                        done.Notify();
                      });
    ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  }
  // gRPC runs interceptors for methods no service registered too: both
  // land in the one "other" series, never in series of their own.
  uint64_t other = 0;
  for (int i = 0; i < 500 && other < 2; ++i) {
    other =
        s.metrics->Count("other", "other", absl::StatusCode::kUnimplemented);
    if (other < 2) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(other, 2u);
  EXPECT_EQ(s.metrics->Count("nope.Nope", "Nothing",
                             absl::StatusCode::kUnimplemented),
            0u);
  s.server->Shutdown();
}

TEST(RpcMetrics, ServesTheCountsOverHttp) {
  SyncHealth service;
  Served s = Serve(&service);
  ASSERT_EQ(Check(s.stub.get(), "missing").error_code(),
            grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(
      CountReaches(*s.metrics, "Check", absl::StatusCode::kNotFound, 1));
  absl::StatusOr<std::unique_ptr<MetricsServer>> http =
      MetricsServer::Start("127.0.0.1:0", {s.metrics});
  ASSERT_THAT(http, IsOk());
  absl::StatusOr<std::string> text = Scrape((*http)->port());
  ASSERT_THAT(text, IsOk());
  EXPECT_THAT(*text, HasSubstr("# TYPE lite_test_rpc_calls_total counter"));
  EXPECT_EQ(
      Sample(
          *text,
          R"(lite_test_rpc_calls_total{service="grpc.health.v1.Health",method="Check",code="NOT_FOUND"})"),
      1);
  // Every known method has its OK series from the start.
  EXPECT_EQ(
      Sample(
          *text,
          R"(lite_test_rpc_calls_total{service="grpc.health.v1.Health",method="Watch",code="OK"})"),
      0);
  s.server->Shutdown();
}

TEST(RpcMetrics, RefusesAServiceThisBinaryDoesNotHave) {
  EXPECT_THAT(RpcMetrics::Create("x_total", "x", {"nope.Service"}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("nope.Service")));
}

}  // namespace
}  // namespace lite::metrics
