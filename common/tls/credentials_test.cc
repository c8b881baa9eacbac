// credentials: the startup checks of the files, and a real TLS server and
// client on loopback with certificates from cmd/litecerts — who gets in,
// who is refused at the handshake, and a renewed server certificate served
// without a restart.
#include "common/tls/credentials.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/auth_context.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/testing/status_matchers.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"

namespace lite::tls {
namespace {

using ::grpc::health::v1::Health;
using ::grpc::health::v1::HealthCheckRequest;
using ::grpc::health::v1::HealthCheckResponse;
using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

std::string Tmp() { return std::getenv("TEST_TMPDIR"); }

// Runs cmd/litecerts from the runfiles; fails the test on error.
void Litecerts(const std::string& args) {
  const std::string tool =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                   std::getenv("TEST_WORKSPACE"), "/cmd/litecerts");
  const std::string cmd = absl::StrCat(tool, " ", args, " >/dev/null");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Certificates shared by every test, made once (the first test to ask).
void MakeCerts(const std::string& dir) {
  Litecerts(dir + " ca");
  Litecerts(dir + " manager");
  Litecerts(dir + " node node1");
  Litecerts("--not-before 20200101000000Z --not-after 20210101000000Z " + dir +
            " node expired");
  Litecerts("--not-before 20900101000000Z --not-after 20910101000000Z " + dir +
            " node future");
  Litecerts(Tmp() + "/other ca");
  Litecerts(Tmp() + "/other node node1");
  // A second litemgr certificate from the same CA: the renewal.
  Litecerts("--ca " + dir + " " + Tmp() + "/renewed manager");
}

struct Certs {
  static const std::string& Dir() {
    static const std::string* dir = [] {
      auto* d = new std::string(Tmp() + "/certs");
      MakeCerts(*d);
      return d;
    }();
    return *dir;
  }
};

TlsFiles Files(const std::string& name, const std::string& dir = Certs::Dir()) {
  return {.cert = dir + "/" + name + ".crt",
          .key = dir + "/" + name + ".key",
          .ca = dir + "/ca.crt"};
}

TEST(CheckServerTlsFlags, AuthzExactlyWithTlsAndASaneReload) {
  const absl::Duration second = absl::Seconds(1);
  EXPECT_THAT(
      CheckServerTlsFlags(Files("litemgr"), false, "authz", second, "litemgr"),
      IsOk());
  EXPECT_THAT(CheckServerTlsFlags({}, true, "", second, "litemgr"), IsOk());
  // CheckTlsFlags' refusals come first.
  EXPECT_THAT(CheckServerTlsFlags({}, false, "authz", second, "litemgr"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("litemgr needs mutual TLS")));
  EXPECT_THAT(CheckServerTlsFlags({}, true, "authz", second, "liteagent"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--authz needs mutual TLS")));
  EXPECT_THAT(
      CheckServerTlsFlags(Files("node1"), false, "", second, "liteagent"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--authz FILE is required with TLS")));
  EXPECT_THAT(CheckServerTlsFlags(Files("node1"), false, "authz",
                                  absl::Milliseconds(999), "liteagent"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls_reload_interval must be at least 1s")));
}

TEST(CheckTlsFlags, AllFilesOrInsecure) {
  EXPECT_THAT(CheckTlsFlags(Files("node1"), false, "liteagent"), IsOk());
  EXPECT_THAT(CheckTlsFlags({}, true, "liteagent"), IsOk());
  EXPECT_THAT(CheckTlsFlags({}, false, "litemgr"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("litemgr needs mutual TLS")));
  EXPECT_THAT(
      CheckTlsFlags({}, false, "litemgr"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cmd/litecerts")));
  EXPECT_THAT(CheckTlsFlags(Files("node1"), true, "litemgr"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exclude each other")));
  TlsFiles partial = Files("node1");
  partial.key.clear();
  partial.ca.clear();
  EXPECT_THAT(CheckTlsFlags(partial, false, "litemgr"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("missing: --tls_key, --tls_ca")));
}

TEST(CheckFiles, GoodFilesNameTheCertificate) {
  absl::StatusOr<CertificateInfo> info = CheckFiles(Files("node1"));
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->name, "node1");
  EXPECT_GT(info->not_after, absl::Now() + absl::Hours(24 * 300));
}

TEST(CheckFiles, MissingFileIsNamed) {
  TlsFiles f = Files("node1");
  f.key = Certs::Dir() + "/nothing.key";
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("--tls_key " + f.key + ": cannot read")));
}

TEST(CheckFiles, UnreadableFileIsNamed) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads mode 0000 files";
  const std::string path = Tmp() + "/unreadable.crt";
  std::ofstream(path) << Slurp(Files("node1").cert);
  chmod(path.c_str(), 0);
  TlsFiles f = Files("node1");
  f.cert = path;
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Permission denied")));
}

// A key its group or others may read is refused, as the pair key is
// (review cp-2026-11-28 L3); 0600 and 0400 pass.
TEST(CheckFiles, KeyReadableByOthersIsRefused) {
  const std::string dir = Tmp() + "/modes";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + " && cp " +
                         Certs::Dir() + "/node1.key " + dir + "/node1.key")
                            .c_str()),
            0);
  TlsFiles f = Files("node1");
  f.key = dir + "/node1.key";
  for (mode_t mode : {0640, 0604, 0644, 0660}) {
    ASSERT_EQ(chmod(f.key.c_str(), mode), 0);
    EXPECT_THAT(
        CheckFiles(f).status(),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr(absl::StrFormat("%s has mode %04o: its group or "
                                           "others may read the private key",
                                           f.key, mode))));
    EXPECT_THAT(ServerCredentials(f, absl::Seconds(1)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  for (mode_t mode : {0600, 0400}) {
    ASSERT_EQ(chmod(f.key.c_str(), mode), 0);
    EXPECT_THAT(CheckFiles(f).status(), IsOk());
  }
}

TEST(CheckFiles, NotPemIsRefused) {
  const std::string path = Tmp() + "/garbage.pem";
  std::ofstream(path) << "not a certificate\n";
  TlsFiles f = Files("node1");
  f.ca = path;
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls_ca " + path + ": no PEM certificate")));
  f = Files("node1");
  f.key = path;
  chmod(path.c_str(), 0600);  // a key's mode, so that the content is read
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no unencrypted PEM private key")));
}

TEST(CheckFiles, KeyOfAnotherCertificateIsRefused) {
  TlsFiles f = Files("node1");
  f.key = Files("litemgr").key;
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not the key of --tls_cert")));
}

TEST(CheckFiles, CertificateOfAnotherCaIsRefused) {
  TlsFiles f = Files("node1", Tmp() + "/other");
  f.ca = Certs::Dir() + "/ca.crt";
  EXPECT_THAT(CheckFiles(f).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unable to get local issuer certificate")));
}

TEST(CheckFiles, ExpiredAndNotYetValidAreRefused) {
  EXPECT_THAT(CheckFiles(Files("expired")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("certificate has expired")));
  EXPECT_THAT(CheckFiles(Files("future")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("certificate is not yet valid")));
  EXPECT_THAT(ServerCredentials(Files("expired"), absl::Seconds(1)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ChannelCredentials(Files("future"), absl::Seconds(1)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// The health service, answering SERVING only to a caller whose certificate
// gRPC verified; it records who called and counts the calls that reached it.
class ProbeService final : public Health::Service {
 public:
  grpc::Status Check(grpc::ServerContext* context, const HealthCheckRequest*,
                     HealthCheckResponse* response) override {
    ++calls;
    std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
    if (auth == nullptr || !auth->IsPeerAuthenticated()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "no verified client certificate");
    }
    std::vector<grpc::string_ref> cn =
        auth->FindPropertyValues("x509_common_name");
    last_peer = cn.empty() ? "" : std::string(cn[0].data(), cn[0].size());
    response->set_status(HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }
  std::atomic<int> calls{0};
  std::string last_peer;
};

class TlsPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The server serves copies, so the reload test can replace them.
    server_dir_ =
        Tmp() + "/" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(
        std::system(("rm -rf " + server_dir_ + " && mkdir -p " + server_dir_ +
                     " && cp " + Certs::Dir() + "/litemgr.crt " + Certs::Dir() +
                     "/litemgr.key " + Certs::Dir() + "/ca.crt " + server_dir_)
                        .c_str()),
        0);
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
        ServerCredentials(Files("litemgr", server_dir_), absl::Seconds(1));
    ASSERT_THAT(creds.status(), IsOk());
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *creds, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // One call on a fresh connection (a private subchannel pool: gRPC would
  // otherwise reuse an earlier channel's connection and handshake).
  grpc::Status Call(std::shared_ptr<grpc::ChannelCredentials> creds,
                    const std::string& server_name = "litemgr",
                    std::string* server_pem = nullptr) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    if (!server_name.empty()) SetServerName(&args, server_name);
    auto stub = Health::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port_), creds, args));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    HealthCheckRequest req;
    HealthCheckResponse resp;
    grpc::Status s = stub->Check(&ctx, req, &resp);
    if (server_pem != nullptr && ctx.auth_context() != nullptr) {
      std::vector<grpc::string_ref> pem =
          ctx.auth_context()->FindPropertyValues("x509_pem_cert");
      *server_pem =
          pem.empty() ? "" : std::string(pem[0].data(), pem[0].size());
    }
    return s;
  }

  std::shared_ptr<grpc::ChannelCredentials> Client(const std::string& name) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
        ChannelCredentials(Files(name), absl::Seconds(60));
    EXPECT_THAT(creds.status(), IsOk());
    return creds.ok() ? *creds : nullptr;
  }

  // gRPC's own SSL credentials, for clients CheckFiles would refuse.
  static std::shared_ptr<grpc::ChannelCredentials> RawClient(
      const std::string& ca, const std::string& cert, const std::string& key) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = Slurp(ca);
    if (!cert.empty()) {
      o.pem_cert_chain = Slurp(cert);
      o.pem_private_key = Slurp(key);
    }
    return grpc::SslCredentials(o);
  }

  std::string server_dir_;
  ProbeService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(TlsPairTest, MutualTlsNamesBothEnds) {
  std::string server_pem;
  grpc::Status s = Call(Client("node1"), "litemgr", &server_pem);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(service_.last_peer, "node1");
  EXPECT_EQ(server_pem, Slurp(Certs::Dir() + "/litemgr.crt"));
}

// A caller without a certificate never reaches a service (not even
// health): nothing it sends is parsed or logged (review cp-2026-11-28 M1).
TEST_F(TlsPairTest, ClientWithoutCertificateIsRefusedAtTheHandshake) {
  grpc::Status s = Call(RawClient(Certs::Dir() + "/ca.crt", "", ""));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(service_.calls, 0);
}

TEST_F(TlsPairTest, HandshakeRefusals) {
  const std::string other = Tmp() + "/other";
  // A client certificate from another CA; one expired; one not yet valid.
  struct Case {
    const char* what;
    std::shared_ptr<grpc::ChannelCredentials> creds;
  } cases[] = {
      {"other CA", RawClient(Certs::Dir() + "/ca.crt", other + "/node1.crt",
                             other + "/node1.key")},
      {"expired",
       RawClient(Certs::Dir() + "/ca.crt", Certs::Dir() + "/expired.crt",
                 Certs::Dir() + "/expired.key")},
      {"not yet valid",
       RawClient(Certs::Dir() + "/ca.crt", Certs::Dir() + "/future.crt",
                 Certs::Dir() + "/future.key")},
      {"server from another CA",
       RawClient(other + "/ca.crt", Certs::Dir() + "/node1.crt",
                 Certs::Dir() + "/node1.key")},
      {"plaintext", grpc::InsecureChannelCredentials()},
  };
  for (const Case& c : cases) {
    grpc::Status s = Call(c.creds);
    // The handshake fails before any call exists: the client sees
    // UNAVAILABLE, and the service is never reached.
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE)
        << c.what << ": " << s.error_message();
  }
  EXPECT_EQ(service_.calls, 0);
}

TEST_F(TlsPairTest, ServerMustCarryTheExpectedName) {
  // The manager's certificate says litemgr; a client told to expect node1
  // (a node's certificate posing as the manager) refuses it.
  grpc::Status s = Call(Client("node1"), "node1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(service_.calls, 0);
  ASSERT_TRUE(Call(Client("node1"), "litemgr").ok());
}

// A certificate of the cluster CA named `cn` (SAN DNS:`san`), made with
// openssl directly: litecerts refuses such names now, but a CA run by other
// tools might not.
TlsFiles Forged(const std::string& file, const std::string& cn,
                const std::string& san) {
  const std::string dir = Tmp() + "/forged";
  const std::string base = dir + "/" + file;
  const std::string ca = Certs::Dir() + "/ca";
  mkdir(dir.c_str(), 0700);
  std::ofstream(base + ".ext") << "subjectAltName=DNS:" << san
                               << "\nextendedKeyUsage=serverAuth,clientAuth\n";
  const std::string cmd = absl::StrCat(
      "umask 077 && openssl genpkey -algorithm EC ",
      "-pkeyopt ec_paramgen_curve:P-256 -out ", base, ".key 2>/dev/null && ",
      "openssl req -new -key ", base, ".key -subj '/CN=", cn, "' -out ", base,
      ".csr && openssl x509 -req -in ", base, ".csr -CA ", ca, ".crt -CAkey ",
      ca, ".key -CAcreateserial -CAserial ", base, ".srl -days 2 -extfile ",
      base, ".ext -out ", base, ".crt 2>/dev/null");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return {.cert = base + ".crt",
          .key = base + ".key",
          .ca = Certs::Dir() + "/ca.crt"};
}

TEST(ExpectedServerName, TheOverrideOrTheTargetsHost) {
  EXPECT_EQ(ExpectedServerName("litemgr"), "litemgr");
  EXPECT_EQ(ExpectedServerName("mgr.example:7420"), "mgr.example");
  EXPECT_EQ(ExpectedServerName("[::1]:7420"), "::1");
  EXPECT_EQ(ExpectedServerName("::1"), "::1");
}

// A server whose certificate's name differs from the expected one only in
// case or by a trailing dot is refused (review cp-2026-11-28 L1): gRPC's
// own host name check accepted all three.
TEST(ExactServerName, CaseAndTrailingDotDoNotMatch) {
  struct Case {
    const char* file;
    const char* cn;
    const char* san;
  } cases[] = {
      {"upper", "Litemgr", "Litemgr"},
      {"dot", "litemgr.", "litemgr."},
      {"cn_upper", "LITEMGR", "litemgr"},
      {"exact", "litemgr", "litemgr"},
  };
  for (const Case& c : cases) {
    const TlsFiles files = Forged(c.file, c.cn, c.san);
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> server_creds =
        ServerCredentials(files, absl::Seconds(60));
    ASSERT_THAT(server_creds.status(), IsOk());
    ProbeService service;
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *server_creds, &port);
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    ASSERT_NE(server, nullptr);
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> client =
        ChannelCredentials(Files("node1"), absl::Seconds(60));
    ASSERT_THAT(client.status(), IsOk());
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    SetServerName(&args, "litemgr");
    auto stub = Health::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port), *client, args));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    HealthCheckResponse resp;
    const grpc::Status s = stub->Check(&ctx, HealthCheckRequest(), &resp);
    if (std::string(c.file) == "exact") {
      EXPECT_TRUE(s.ok()) << c.cn << ": " << s.error_message();
      EXPECT_EQ(service.calls, 1);
    } else {
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE)
          << "a server named \"" << c.cn << "\" passed as litemgr";
      EXPECT_EQ(service.calls, 0);
    }
    server->Shutdown();
  }
}

TEST_F(TlsPairTest, RenewedCertificateIsServedWithoutRestart) {
  const std::string old_pem = Slurp(Certs::Dir() + "/litemgr.crt");
  const std::string new_pem = Slurp(Tmp() + "/renewed/litemgr.crt");
  ASSERT_NE(old_pem, new_pem);
  std::string served;
  ASSERT_TRUE(Call(Client("node1"), "litemgr", &served).ok());
  ASSERT_EQ(served, old_pem);

  // Replace key and certificate by rename, as an operator's renewal should.
  for (const char* ext : {"key", "crt"}) {
    const std::string from = absl::StrCat(Tmp(), "/renewed/litemgr.", ext);
    const std::string tmp = absl::StrCat(server_dir_, "/new.", ext);
    const std::string to = absl::StrCat(server_dir_, "/litemgr.", ext);
    ASSERT_EQ(std::system(("cp " + from + " " + tmp).c_str()), 0);
    ASSERT_EQ(rename(tmp.c_str(), to.c_str()), 0);
  }
  // The refresh interval is 1 s; allow a loaded machine ten.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    grpc::Status s = Call(Client("node1"), "litemgr", &served);
    ASSERT_TRUE(s.ok()) << s.error_message();
    if (served == new_pem) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(served, new_pem);
  EXPECT_EQ(service_.last_peer, "node1");
}

}  // namespace
}  // namespace lite::tls
