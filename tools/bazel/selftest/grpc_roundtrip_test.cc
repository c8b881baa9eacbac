// Proves the offline toolchain end to end: a generated gRPC service served and
// called over loopback, with Abseil in the same binary.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "echo.grpc.pb.h"

namespace {

class EchoService final : public lite::selftest::Echo::Service {
  grpc::Status Say(grpc::ServerContext*, const lite::selftest::EchoRequest* req,
                   lite::selftest::EchoReply* reply) override {
    if (req->text().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "text is empty");
    }
    reply->set_text(absl::StrCat("echo: ", req->text()));
    return grpc::Status::OK;
  }
};

class GrpcRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
    stub_ = lite::selftest::Echo::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { server_->Shutdown(); }

  EchoService service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<lite::selftest::Echo::Stub> stub_;
};

TEST_F(GrpcRoundTrip, RepliesWithGeneratedMessages) {
  grpc::ClientContext ctx;
  lite::selftest::EchoRequest req;
  req.set_text("hello");
  req.mutable_delay()->set_seconds(1);
  lite::selftest::EchoReply reply;
  grpc::Status status = stub_->Say(&ctx, req, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.text(), "echo: hello");
}

TEST_F(GrpcRoundTrip, CarriesStatusCodes) {
  grpc::ClientContext ctx;
  lite::selftest::EchoReply reply;
  grpc::Status status = stub_->Say(&ctx, {}, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "text is empty");
}

}  // namespace
