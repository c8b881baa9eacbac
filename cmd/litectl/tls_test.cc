// litectl over mutual TLS: a canned manager and agent served with
// certificates from cmd/litecerts. litectl presents the operator's
// certificate (flags or $LITE_TLS_*), checks the servers' names, and refuses
// to run without TLS files unless told --insecure.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/litectl/commands.h"
#include "common/tls/credentials.h"
#include "gtest/gtest.h"
#include "lite/v1/agent.grpc.pb.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::litectl {
namespace {

std::string Tmp() { return std::getenv("TEST_TMPDIR"); }

void Litecerts(const std::string& args) {
  const std::string cmd = absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                                       std::getenv("TEST_WORKSPACE"),
                                       "/cmd/litecerts ", args, " >/dev/null");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Who called, as the server's TLS layer verified it.
std::string PeerCn(grpc::ServerContext* ctx) {
  auto cn = ctx->auth_context()->FindPropertyValues("x509_common_name");
  return cn.empty() ? "" : std::string(cn[0].data(), cn[0].size());
}

class Manager final : public lite::v1::ClusterOperator::Service {
  grpc::Status ListNodes(grpc::ServerContext* ctx,
                         const lite::v1::ListNodesRequest*,
                         lite::v1::ListNodesResponse* resp) override {
    auto* n = resp->add_nodes();
    n->set_node_id(1);
    // The caller's name as the node's: the test sees who litectl was.
    n->set_node_name(PeerCn(ctx).empty() ? "anonymous" : PeerCn(ctx));
    n->set_state(lite::v1::NODE_STATE_ALIVE);
    return grpc::Status::OK;
  }
};

class Agent final : public lite::v1::NodeAgent::Service {
  grpc::Status GetStatus(grpc::ServerContext* ctx,
                         const lite::v1::GetStatusRequest*,
                         lite::v1::GetStatusResponse* resp) override {
    resp->set_node_name(PeerCn(ctx));
    return grpc::Status::OK;
  }
};

class LitectlTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(Tmp() + "/certs");
    Litecerts(*dir_ + " ca");
    Litecerts(*dir_ + " manager");
    Litecerts(*dir_ + " node node1");
    Litecerts(*dir_ + " operator ops");
  }

  // A server with `name`'s certificate.
  void Serve(const std::string& name, grpc::Service* service) {
    auto creds = tls::ServerCredentials(Files(name), absl::Seconds(60));
    ASSERT_TRUE(creds.ok()) << creds.status();
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", *creds, &port_);
    b.RegisterService(service);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port_);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  static tls::TlsFiles Files(const std::string& name) {
    return {.cert = *dir_ + "/" + name + ".crt",
            .key = *dir_ + "/" + name + ".key",
            .ca = *dir_ + "/ca.crt"};
  }
  // The operator's files as litectl flags.
  static std::vector<std::string> TlsFlags(const std::string& name = "ops") {
    const tls::TlsFiles f = Files(name);
    return {"--tls_cert", f.cert, "--tls_key", f.key, "--tls_ca", f.ca};
  }

  int Run(std::vector<std::string> args, const Environment& env = {}) {
    out_.str("");
    err_.str("");
    return RunLitectl(args, env, out_, err_, &interrupt_);
  }
  std::vector<std::string> With(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  static std::string* dir_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string address_;
  std::ostringstream out_, err_;
  Interrupt interrupt_;
};
std::string* LitectlTlsTest::dir_ = nullptr;

TEST_F(LitectlTlsTest, OperatorCertificateFromFlags) {
  Manager m;
  Serve("litemgr", &m);
  ASSERT_EQ(Run(With(TlsFlags(), {"--manager", address_, "nodes"})), 0)
      << err_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "ops")) << out_.str();
}

TEST_F(LitectlTlsTest, OperatorCertificateFromEnvironment) {
  Manager m;
  Serve("litemgr", &m);
  const tls::TlsFiles f = Files("ops");
  Environment env{.lite_manager = address_,
                  .lite_tls_cert = f.cert,
                  .lite_tls_key = f.key,
                  .lite_tls_ca = f.ca};
  ASSERT_EQ(Run({"nodes"}, env), 0) << err_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "ops")) << out_.str();
  // $LITE_INSECURE=1 does not silently downgrade a shell set up for TLS
  // (review cp-2026-11-28 L5): refused as bad usage, nothing dialled.
  env.lite_insecure = "1";
  EXPECT_EQ(Run({"nodes"}, env), 2);
  EXPECT_TRUE(absl::StrContains(err_.str(),
                                "LITE_INSECURE=1 and LITE_TLS_CERT/"
                                "LITE_TLS_KEY/LITE_TLS_CA exclude each other"))
      << err_.str();
  // The flag is explicit: plaintext for this call, refused by the server.
  EXPECT_EQ(Run({"--insecure", "nodes"}, env), 1);
  EXPECT_TRUE(absl::StrContains(err_.str(), "UNAVAILABLE")) << err_.str();
}

TEST_F(LitectlTlsTest, PlaintextFromTheEnvironmentIsSaid) {
  Environment env{.lite_manager = "127.0.0.1:1", .lite_insecure = "1"};
  EXPECT_EQ(Run({"--timeout", "200ms", "nodes"}, env), 1);
  EXPECT_TRUE(absl::StrContains(
      err_.str(), "litectl: warning: plaintext (LITE_INSECURE=1)"))
      << err_.str();
}

TEST_F(LitectlTlsTest, RefusesToRunWithoutTlsOrInsecure) {
  EXPECT_EQ(Run({"--manager", "127.0.0.1:1", "nodes"}), 2);
  EXPECT_TRUE(absl::StrContains(err_.str(), "litectl needs mutual TLS"))
      << err_.str();
  EXPECT_TRUE(absl::StrContains(err_.str(), "cmd/litecerts")) << err_.str();
  EXPECT_EQ(Run({"--manager", "127.0.0.1:1", "--tls_cert", "x", "nodes"}), 2);
  EXPECT_TRUE(absl::StrContains(err_.str(), "missing: --tls_key, --tls_ca"))
      << err_.str();
  EXPECT_EQ(Run(With(TlsFlags(), {"--insecure", "nodes"})), 2);
  EXPECT_TRUE(absl::StrContains(err_.str(), "exclude each other"))
      << err_.str();
}

TEST_F(LitectlTlsTest, BadFilesAreNamed) {
  std::vector<std::string> flags = TlsFlags();
  flags[3] = Files("node1").key;  // another certificate's key
  EXPECT_EQ(Run(With(flags, {"--manager", "127.0.0.1:1", "nodes"})), 1);
  EXPECT_TRUE(absl::StrContains(err_.str(), "is not the key of --tls_cert"))
      << err_.str();
}

TEST_F(LitectlTlsTest, ManagerMustCarryItsName) {
  // A node's certificate serving as the manager: litectl expects litemgr.
  Manager m;
  Serve("node1", &m);
  EXPECT_EQ(Run(With(TlsFlags(), {"--manager", address_, "nodes"})), 1);
  EXPECT_TRUE(absl::StrContains(err_.str(), "UNAVAILABLE")) << err_.str();
  ASSERT_EQ(Run(With(TlsFlags(), {"--manager", address_, "--manager_tls_name",
                                  "node1", "nodes"})),
            0)
      << err_.str();
}

TEST_F(LitectlTlsTest, AgentNameIsRequiredAndChecked) {
  Agent a;
  Serve("node1", &a);
  EXPECT_EQ(Run(With(TlsFlags(), {"agent", "status", "--agent", address_})), 2);
  EXPECT_TRUE(absl::StrContains(err_.str(), "--agent_tls_name")) << err_.str();
  EXPECT_EQ(Run(With(TlsFlags(), {"--agent_tls_name", "node2", "agent",
                                  "status", "--agent", address_})),
            1);
  EXPECT_TRUE(absl::StrContains(err_.str(), "UNAVAILABLE")) << err_.str();
  ASSERT_EQ(Run(With(TlsFlags(), {"--agent_tls_name", "node1", "agent",
                                  "status", "--agent", address_})),
            0)
      << err_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "ops")) << out_.str();
  // From the environment too.
  Environment env{.lite_agent_tls_name = "node1"};
  ASSERT_EQ(
      Run(With(TlsFlags(), {"agent", "status", "--agent", address_}), env), 0)
      << err_.str();
}

}  // namespace
}  // namespace lite::litectl
