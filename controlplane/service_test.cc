// The gRPC layer end to end on loopback, with the real clock and timer:
// Join, the Session stream (acks, events, node requests and their results),
// stream error statuses, lease expiry by the timer, Watch, and health.
#include "controlplane/service.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/tls/authz.h"
#include "controlplane/clock.h"
#include "controlplane/lease_timer.h"
#include "controlplane/memory_store.h"
#include "controlplane/operator_service.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::controlplane {
namespace {

using ::testing::HasSubstr;
using Stream =
    grpc::ClientReaderWriter<lite::v1::AgentMessage, lite::v1::ManagerMessage>;

class ServiceTest : public ::testing::Test {
 protected:
  virtual absl::Duration Lease() const { return absl::Milliseconds(300); }

  void SetUp() override {
    ManagerOptions options;
    options.lease = Lease();
    options.recovery_window = absl::ZeroDuration();
    options.request_timeout = absl::Seconds(5);
    state_ = std::make_unique<ManagerState>(options, &clock_,
                                            std::make_unique<MemoryStore>());
    service_ =
        std::make_unique<ClusterManagerService>(state_.get(), authz_.get());
    operator_service_ =
        std::make_unique<ClusterOperatorService>(state_.get(), authz_.get());
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(service_.get());
    builder.RegisterService(operator_service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    server_->GetHealthCheckService()->SetServingStatus(
        lite::v1::ClusterManager::service_full_name(), true);
    timer_ = std::make_unique<LeaseTimer>(state_.get());
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = lite::v1::ClusterManager::NewStub(channel_);
    operator_stub_ = lite::v1::ClusterOperator::NewStub(channel_);
  }

  void TearDown() override {
    state_->Shutdown();
    timer_->Stop();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  }

  lite::v1::JoinResponse Join(const std::string& name, int index) {
    grpc::ClientContext context;
    lite::v1::JoinRequest request;
    request.set_node_name(name);
    request.set_rdma_address(absl::StrCat("127.0.0.1:", 7000 + index));
    lite::v1::JoinResponse response;
    grpc::Status status = stub_->Join(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static lite::v1::AgentMessage Heartbeat(const lite::v1::JoinResponse& joined,
                                          uint64_t seq) {
    lite::v1::AgentMessage message;
    message.mutable_heartbeat()->set_node_id(joined.node_id());
    message.mutable_heartbeat()->set_incarnation(joined.incarnation());
    message.mutable_heartbeat()->set_heartbeat_seq(seq);
    return message;
  }

  // Reads until a message matching `want` arrives (skipping others).
  template <typename Pred>
  static bool ReadUntil(Stream* stream, Pred want,
                        lite::v1::ManagerMessage* out) {
    while (stream->Read(out)) {
      if (want(*out)) return true;
    }
    return false;
  }

  RealClock clock_;
  // These tests run plaintext: every caller may act for any node.
  std::unique_ptr<tls::Authz> authz_ = tls::Authz::Insecure();
  std::unique_ptr<ManagerState> state_;
  std::unique_ptr<ClusterManagerService> service_;
  std::unique_ptr<ClusterOperatorService> operator_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<LeaseTimer> timer_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<lite::v1::ClusterManager::Stub> stub_;
  std::unique_ptr<lite::v1::ClusterOperator::Stub> operator_stub_;
};

TEST_F(ServiceTest, SessionAcksHeartbeatsAndDeliversEvents) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub_->Session(&context);
  ASSERT_TRUE(stream->Write(Heartbeat(a, 1)));
  lite::v1::ManagerMessage message;
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_EQ(message.heartbeat_ack().heartbeat_seq(), 1u);
  EXPECT_EQ(message.heartbeat_ack().lease_remaining_ms(), 300u);
  const lite::v1::JoinResponse b = Join("beta", 2);
  ASSERT_TRUE(stream->Read(&message));
  ASSERT_TRUE(message.has_event());
  EXPECT_EQ(message.event().member_joined().member().node_id(), b.node_id());
  EXPECT_EQ(message.event().sequence(), a.event_sequence() + 1);
  // With it, only to this session, the pair secret beta's Join carried.
  ASSERT_EQ(message.peer_secrets_size(), 1);
  EXPECT_EQ(message.peer_secrets(0).node_id(), b.node_id());
  EXPECT_EQ(message.peer_secrets(0).incarnation(), b.incarnation());
  ASSERT_EQ(b.peer_secrets_size(), 1);
  EXPECT_EQ(b.peer_secrets(0).node_id(), a.node_id());
  EXPECT_EQ(message.peer_secrets(0).secret().size(), 32u);
  EXPECT_EQ(message.peer_secrets(0).secret(), b.peer_secrets(0).secret());
  ASSERT_TRUE(stream->Write(Heartbeat(a, 2)));
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_EQ(message.heartbeat_ack().heartbeat_seq(), 2u);
  // Leave, then close: the stream ends OK after the MemberLeft event.
  grpc::ClientContext leave_context;
  lite::v1::LeaveRequest leave;
  leave.mutable_caller()->set_node_id(a.node_id());
  leave.mutable_caller()->set_incarnation(a.incarnation());
  lite::v1::LeaveResponse left;
  ASSERT_TRUE(stub_->Leave(&leave_context, leave, &left).ok());
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_EQ(message.event().member_left().node_id(), a.node_id());
  stream->WritesDone();
  EXPECT_FALSE(stream->Read(&message));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServiceTest, StreamErrorsCarryExactCodes) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  {
    // First message not a heartbeat.
    grpc::ClientContext context;
    auto stream = stub_->Session(&context);
    lite::v1::AgentMessage result;
    result.mutable_result()->set_request_id(1);
    stream->Write(result);
    stream->WritesDone();
    lite::v1::ManagerMessage message;
    EXPECT_FALSE(stream->Read(&message));
    grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("must be a Heartbeat"));
  }
  {
    // Unknown node.
    grpc::ClientContext context;
    auto stream = stub_->Session(&context);
    lite::v1::JoinResponse ghost = a;
    ghost.set_node_id(99);
    stream->Write(Heartbeat(ghost, 1));
    lite::v1::ManagerMessage message;
    EXPECT_FALSE(stream->Read(&message));
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    // Stale incarnation.
    grpc::ClientContext context;
    auto stream = stub_->Session(&context);
    lite::v1::JoinResponse stale = a;
    stale.set_incarnation(a.incarnation() + 1);
    stream->Write(Heartbeat(stale, 1));
    lite::v1::ManagerMessage message;
    EXPECT_FALSE(stream->Read(&message));
    grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(status.error_message(), HasSubstr("Join again"));
  }
  // None of these touched the real node.
  lite::v1::ListNodesResponse nodes;
  grpc::ClientContext list_context;
  ASSERT_TRUE(operator_stub_->ListNodes(&list_context, {}, &nodes).ok());
  EXPECT_EQ(nodes.nodes(0).state(), lite::v1::NODE_STATE_ALIVE);
}

TEST_F(ServiceTest, LeaseExpiryByTheTimerEndsTheSessionWithItsOwnFailure) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  grpc::ClientContext context;
  auto stream = stub_->Session(&context);
  ASSERT_TRUE(stream->Write(Heartbeat(a, 1)));
  const absl::Time start = absl::Now();
  lite::v1::ManagerMessage message;
  ASSERT_TRUE(ReadUntil(
      stream.get(), [](const auto& m) { return m.has_event(); }, &message));
  const absl::Duration waited = absl::Now() - start;
  EXPECT_EQ(message.event().member_failed().node_id(), a.node_id());
  EXPECT_EQ(message.event().member_failed().cause(),
            lite::v1::FAILURE_CAUSE_LEASE_EXPIRED);
  EXPECT_GE(waited, absl::Milliseconds(250));
  EXPECT_LT(waited, absl::Milliseconds(1500));
  EXPECT_FALSE(stream->Read(&message));
  EXPECT_EQ(stream->Finish().error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // The timer slept between deadlines instead of polling.
  EXPECT_LT(timer_->ticks(), 10);
}

TEST_F(ServiceTest, AllocLmrGoesThroughTheHomesSession) {
  const lite::v1::JoinResponse home = Join("home", 1);
  grpc::ClientContext session_context;
  auto session = stub_->Session(&session_context);
  ASSERT_TRUE(session->Write(Heartbeat(home, 1)));
  lite::v1::ManagerMessage message;
  ASSERT_TRUE(session->Read(&message));  // The ack: the session is open.
  // The home's agent answers allocation requests on its own thread.
  std::thread agent([&] {
    lite::v1::ManagerMessage in;
    if (!ReadUntil(
            session.get(), [](const auto& m) { return m.has_request(); },
            &in)) {
      return;
    }
    lite::v1::AgentMessage out;
    out.mutable_result()->set_request_id(in.request().request_id());
    auto* chunk =
        out.mutable_result()->mutable_allocated_lmr_memory()->add_chunks();
    chunk->set_address(0x4000);
    chunk->set_length_bytes(in.request().allocate_lmr_memory().size_bytes());
    session->Write(out);
  });
  grpc::ClientContext context;
  lite::v1::AllocLmrRequest request;
  request.mutable_caller()->set_node_id(home.node_id());
  request.mutable_caller()->set_incarnation(home.incarnation());
  request.mutable_owner()->set_uid(1000);
  request.mutable_owner()->set_gid(1000);
  request.mutable_owner()->set_pid(55);
  request.set_name("table");
  request.set_size_bytes(1 << 20);
  request.set_mode(0600);
  lite::v1::AllocLmrResponse response;
  grpc::Status status = stub_->AllocLmr(&context, request, &response);
  agent.join();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.lmr().name(), "table");
  // The home's addresses and key stay between the home and the manager
  // (they travel again only inside a grant, to its holder).
  EXPECT_EQ(response.lmr().chunks_size(), 0);
  EXPECT_EQ(response.lmr().memory_key(), 0u);
  EXPECT_EQ(response.lmr().size_bytes(), 1u << 20);
  EXPECT_EQ(response.lmr().origin(), lite::v1::LMR_ORIGIN_ALLOCATED);
  // A rejected AllocLmr comes back at once with its code.
  grpc::ClientContext again_context;
  status = stub_->AllocLmr(&again_context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  session_context.TryCancel();
}

TEST_F(ServiceTest, ClientCancellingItsSessionFailsTheNode) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  const lite::v1::JoinResponse b = Join("beta", 2);
  grpc::ClientContext watch_context;
  auto watch = operator_stub_->Watch(&watch_context, lite::v1::WatchRequest());
  watch->WaitForInitialMetadata();
  auto* context = new grpc::ClientContext;
  auto stream = stub_->Session(context);
  ASSERT_TRUE(stream->Write(Heartbeat(a, 1)));
  lite::v1::ManagerMessage message;
  ASSERT_TRUE(stream->Read(&message));
  context->TryCancel();
  stream->Finish();
  stream.reset();
  delete context;
  lite::v1::Event event;
  // b never opened a session; a's failure must come first (session closed).
  ASSERT_TRUE(watch->Read(&event));
  EXPECT_EQ(event.member_failed().node_id(), a.node_id());
  EXPECT_EQ(event.member_failed().cause(),
            lite::v1::FAILURE_CAUSE_SESSION_CLOSED);
  (void)b;
  watch_context.TryCancel();
}

// A lease long enough that a loaded machine cannot fail the reader.
class LongLeaseServiceTest : public ServiceTest {
 protected:
  absl::Duration Lease() const override { return absl::Seconds(10); }
};

TEST_F(LongLeaseServiceTest, BatchingSessionsSeeEveryEventOnceInOrder) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  grpc::ClientContext context;
  auto stream = stub_->Session(&context);
  lite::v1::AgentMessage first = Heartbeat(a, 1);
  first.mutable_heartbeat()->set_accept_event_batches(true);
  ASSERT_TRUE(stream->Write(first));
  lite::v1::ManagerMessage message;
  ASSERT_TRUE(stream->Read(&message));  // The ack: the session is open.
  // Joins from several threads at once, so that events pile up behind the
  // session's writes and get batched.
  constexpr int kJoiners = 4;
  constexpr int kPerJoiner = 100;
  std::vector<std::thread> joiners;
  for (int t = 0; t < kJoiners; ++t) {
    joiners.emplace_back([this, t] {
      for (int i = 0; i < kPerJoiner; ++i) {
        Join(absl::StrCat("n", t, "-", i), 2 + t * kPerJoiner + i);
      }
    });
  }
  uint64_t expected = a.event_sequence() + 1;
  int batches = 0;
  int joined = 0;
  while (joined < kJoiners * kPerJoiner) {
    ASSERT_TRUE(stream->Read(&message));
    std::vector<lite::v1::Event> events;
    if (message.has_event()) events.push_back(message.event());
    if (message.has_event_batch()) {
      ++batches;
      ASSERT_GT(message.event_batch().events_size(), 0);
      for (const auto& e : message.event_batch().events()) events.push_back(e);
    }
    // One pair secret per MemberJoined, in the same message.
    ASSERT_EQ(message.peer_secrets_size(), static_cast<int>(events.size()));
    for (size_t i = 0; i < events.size(); ++i) {
      const lite::v1::Event& event = events[i];
      ASSERT_EQ(event.sequence(), expected);
      ASSERT_TRUE(event.has_member_joined());
      EXPECT_EQ(message.peer_secrets(static_cast<int>(i)).node_id(),
                event.member_joined().member().node_id());
      EXPECT_EQ(message.peer_secrets(static_cast<int>(i)).secret(),
                state_->pair_secrets().Derive(
                    {a.node_id(), a.incarnation()},
                    {event.member_joined().member().node_id(),
                     event.member_joined().member().incarnation()}));
      ++joined;
      ++expected;
    }
  }
  for (std::thread& joiner : joiners) joiner.join();
  std::printf("events arrived in %d batches\n", batches);
  context.TryCancel();
}

TEST_F(ServiceTest, HealthServiceReportsServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  for (const std::string& service :
       {std::string(), std::string("lite.v1.ClusterManager")}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, request, &response).ok()) << service;
    EXPECT_EQ(response.status(),
              grpc::health::v1::HealthCheckResponse::SERVING);
  }
}

TEST_F(ServiceTest, WatchResumesAfterARevisionAndEndsWithOpenWatchsCode) {
  const lite::v1::JoinResponse a = Join("alpha", 1);
  const lite::v1::JoinResponse b = Join("beta", 2);
  {
    // From alpha's join on: beta's MemberJoined, which happened before the
    // watch was opened, comes first.
    grpc::ClientContext context;
    lite::v1::WatchRequest request;
    request.set_since_revision(a.event_sequence());
    auto watch = operator_stub_->Watch(&context, request);
    lite::v1::Event event;
    ASSERT_TRUE(watch->Read(&event));
    EXPECT_EQ(event.sequence(), a.event_sequence() + 1);
    EXPECT_EQ(event.member_joined().member().node_id(), b.node_id());
    context.TryCancel();
  }
  // A revision past the last event: the stream ends with OpenWatch's code.
  grpc::ClientContext context;
  lite::v1::WatchRequest request;
  request.set_since_revision(b.event_sequence() + 100);
  auto watch = operator_stub_->Watch(&context, request);
  lite::v1::Event event;
  EXPECT_FALSE(watch->Read(&event));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServiceTest, UnaryErrorsKeepCodeAndMessage) {
  grpc::ClientContext context;
  lite::v1::JoinRequest request;
  request.set_node_name("bad name");
  request.set_rdma_address("127.0.0.1:1");
  lite::v1::JoinResponse response;
  grpc::Status status = stub_->Join(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("node_name \"bad name\""));
}

// ---- Over mutual TLS, with roles: gRPC's own SSL credentials and
// certificates made by cmd/litecerts, the server requesting a client
// certificate and verifying it when presented (as litemgr's does).

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TlsServiceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = new std::string(
        absl::StrCat(tmp == nullptr ? "/tmp" : tmp, "/certs.", getpid()));
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* workspace = std::getenv("TEST_WORKSPACE");
    const std::string litecerts = absl::StrCat(
        srcdir == nullptr ? "." : srcdir, "/",
        workspace == nullptr ? "lite" : workspace, "/cmd/litecerts");
    for (const std::string& what :
         {std::string("ca"), std::string("manager"), std::string("node n1"),
          std::string("node n2"), std::string("operator op"),
          std::string("operator stranger")}) {
      const std::string command =
          absl::StrCat(litecerts, " ", *dir_, " ", what, " >/dev/null");
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    // Our own roles file: "stranger" is signed by the CA but has no role.
    std::ofstream(*dir_ + "/roles")
        << "litemgr manager\nn1 node\nn2 node\nop operator\n";
  }

  void SetUp() override {
    ManagerOptions options;
    options.lease = absl::Seconds(10);
    options.recovery_window = absl::ZeroDuration();
    state_ = std::make_unique<ManagerState>(options, &clock_,
                                            std::make_unique<MemoryStore>());
    absl::StatusOr<std::unique_ptr<tls::Authz>> authz =
        tls::Authz::Load(*dir_ + "/roles");
    ASSERT_TRUE(authz.ok()) << authz.status();
    authz_ = *std::move(authz);
    service_ =
        std::make_unique<ClusterManagerService>(state_.get(), authz_.get());
    operator_service_ =
        std::make_unique<ClusterOperatorService>(state_.get(), authz_.get());
    grpc::SslServerCredentialsOptions ssl(
        GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = Slurp(*dir_ + "/ca.crt");
    ssl.pem_key_cert_pairs.push_back(
        {Slurp(*dir_ + "/litemgr.key"), Slurp(*dir_ + "/litemgr.crt")});
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl),
                             &port_);
    builder.RegisterService(service_.get());
    builder.RegisterService(operator_service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    state_->Shutdown();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  }

  // A channel presenting certificate `name` (empty: none).
  std::shared_ptr<grpc::Channel> Channel(const std::string& name) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = Slurp(*dir_ + "/ca.crt");
    if (!name.empty()) {
      ssl.pem_private_key = Slurp(absl::StrCat(*dir_, "/", name, ".key"));
      ssl.pem_cert_chain = Slurp(absl::StrCat(*dir_, "/", name, ".crt"));
    }
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("litemgr");
    return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port_),
                                     grpc::SslCredentials(ssl), args);
  }
  std::unique_ptr<lite::v1::ClusterManager::Stub> Node(const std::string& n) {
    return lite::v1::ClusterManager::NewStub(Channel(n));
  }
  std::unique_ptr<lite::v1::ClusterOperator::Stub> Operator(
      const std::string& n) {
    return lite::v1::ClusterOperator::NewStub(Channel(n));
  }

  static grpc::Status Join(lite::v1::ClusterManager::Stub* stub,
                           const std::string& name, int index,
                           lite::v1::JoinResponse* response) {
    grpc::ClientContext context;
    lite::v1::JoinRequest request;
    request.set_node_name(name);
    request.set_rdma_address(absl::StrCat("127.0.0.1:", 7000 + index));
    return stub->Join(&context, request, response);
  }

  // What an operator sees: nodes (with state and session), LMRs, grants.
  std::string Snapshot() {
    auto op = Operator("op");
    std::string out;
    grpc::ClientContext c1, c2, c3;
    lite::v1::ListNodesResponse nodes;
    EXPECT_TRUE(op->ListNodes(&c1, {}, &nodes).ok());
    for (const auto& node : nodes.nodes()) {
      absl::StrAppend(&out, node.node_id(), " ", node.node_name(), " ",
                      node.incarnation(), " ", node.state(), " ",
                      node.session_open(), "\n");
    }
    lite::v1::ListLmrsResponse lmrs;
    EXPECT_TRUE(op->ListLmrs(&c2, {}, &lmrs).ok());
    absl::StrAppend(&out, "lmrs ", lmrs.lmrs_size());
    lite::v1::ListGrantsResponse grants;
    EXPECT_TRUE(op->ListGrants(&c3, {}, &grants).ok());
    absl::StrAppend(&out, " grants ", grants.grants_size());
    return out;
  }

  static std::string* dir_;
  RealClock clock_;
  std::unique_ptr<tls::Authz> authz_;
  std::unique_ptr<ManagerState> state_;
  std::unique_ptr<ClusterManagerService> service_;
  std::unique_ptr<ClusterOperatorService> operator_service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

std::string* TlsServiceTest::dir_ = nullptr;

TEST_F(TlsServiceTest, NodeCertificateActsOnlyForItsOwnNode) {
  auto n1 = Node("n1");
  auto n2 = Node("n2");
  lite::v1::JoinResponse j1, j2, ignored;
  ASSERT_TRUE(Join(n1.get(), "n1", 1, &j1).ok());
  ASSERT_TRUE(Join(n2.get(), "n2", 2, &j2).ok());
  const std::string before = Snapshot();

  // n1's certificate joining as n2 (which would supersede it), or as a name
  // nobody has.
  grpc::Status status = Join(n1.get(), "n2", 3, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("certificate \"n1\" may join only as node \"n1\", "
                        "not as \"n2\""));
  EXPECT_EQ(Join(n1.get(), "fake", 4, &ignored).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A malformed name is reported as such (INVALID_ARGUMENT, the field rule).
  EXPECT_EQ(Join(n1.get(), "a/b", 4, &ignored).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  lite::v1::NodeCaller as_n2;
  as_n2.set_node_id(j2.node_id());
  as_n2.set_incarnation(j2.incarnation());
  {
    grpc::ClientContext context;
    lite::v1::LeaveRequest leave;
    *leave.mutable_caller() = as_n2;
    lite::v1::LeaveResponse left;
    status = n1->Leave(&context, leave, &left);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(),
                HasSubstr(absl::StrCat("may act only for its own node (node ",
                                       j1.node_id(), "), not for node ",
                                       j2.node_id())));
  }
  {
    grpc::ClientContext context;
    lite::v1::RegisterLmrRequest request;
    *request.mutable_caller() = as_n2;
    request.mutable_owner()->set_uid(0);
    request.mutable_owner()->set_pid(1);
    request.set_name("forged");
    request.set_size_bytes(4096);
    request.set_mode(0666);
    request.set_lmr_id((uint64_t{j2.node_id()} << 32) | 1);
    request.add_chunks()->set_length_bytes(4096);
    lite::v1::RegisterLmrResponse response;
    EXPECT_EQ(n1->RegisterLmr(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext context;
    lite::v1::AllocLmrRequest request;
    *request.mutable_caller() = as_n2;
    request.mutable_owner()->set_pid(1);
    request.set_name("forged");
    request.set_size_bytes(4096);
    request.set_mode(0600);
    lite::v1::AllocLmrResponse response;
    EXPECT_EQ(n1->AllocLmr(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext context;
    lite::v1::MapLmrRequest request;
    *request.mutable_caller() = as_n2;
    request.mutable_requester()->set_pid(1);
    request.set_name("anything");
    request.mutable_access()->set_read(true);
    lite::v1::MapLmrResponse response;
    EXPECT_EQ(n1->MapLmr(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    // A session speaking for n2.
    grpc::ClientContext context;
    auto stream = n1->Session(&context);
    lite::v1::AgentMessage first;
    first.mutable_heartbeat()->set_node_id(j2.node_id());
    first.mutable_heartbeat()->set_incarnation(j2.incarnation());
    first.mutable_heartbeat()->set_heartbeat_seq(1);
    stream->Write(first);
    lite::v1::ManagerMessage message;
    EXPECT_FALSE(stream->Read(&message));
    EXPECT_EQ(stream->Finish().error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_EQ(Snapshot(), before);
  // Its own session opens.
  grpc::ClientContext context;
  auto stream = n1->Session(&context);
  lite::v1::AgentMessage first;
  first.mutable_heartbeat()->set_node_id(j1.node_id());
  first.mutable_heartbeat()->set_incarnation(j1.incarnation());
  first.mutable_heartbeat()->set_heartbeat_seq(1);
  ASSERT_TRUE(stream->Write(first));
  // (n2's MemberJoined, queued since n1's join, may come first.)
  lite::v1::ManagerMessage message;
  while (stream->Read(&message) && !message.has_heartbeat_ack()) {
  }
  EXPECT_EQ(message.heartbeat_ack().heartbeat_seq(), 1u);
  context.TryCancel();
}

// Review cp M2: a node certificate opening Session streams it never speaks
// on. One at a time per name waits for a first heartbeat, and for one lease
// (10 s here) at most; then the manager ends it.
TEST_F(TlsServiceTest, UnboundSessionsAreOnePerNameAndEndAfterALease) {
  auto n1 = Node("n1");
  lite::v1::JoinResponse joined;
  ASSERT_TRUE(Join(n1.get(), "n1", 1, &joined).ok());
  const absl::Time start = absl::Now();
  grpc::ClientContext idle_context;
  auto idle = n1->Session(&idle_context);
  // Until the server has the first stream, a second one may come first.
  absl::SleepFor(absl::Milliseconds(500));
  grpc::ClientContext second_context;
  auto second = n1->Session(&second_context);
  lite::v1::ManagerMessage message;
  EXPECT_FALSE(second->Read(&message));
  grpc::Status refused = second->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("first heartbeat"));
  // Another name is not affected.
  auto n2 = Node("n2");
  ASSERT_TRUE(Join(n2.get(), "n2", 2, &joined).ok());
  grpc::ClientContext n2_context;
  auto n2_session = n2->Session(&n2_context);
  lite::v1::AgentMessage beat;
  beat.mutable_heartbeat()->set_node_id(joined.node_id());
  beat.mutable_heartbeat()->set_incarnation(joined.incarnation());
  beat.mutable_heartbeat()->set_heartbeat_seq(1);
  ASSERT_TRUE(n2_session->Write(beat));
  ASSERT_TRUE(n2_session->Read(&message));
  // The idle one ends after one lease.
  EXPECT_FALSE(idle->Read(&message));
  const absl::Duration waited = absl::Now() - start;
  EXPECT_GE(waited, absl::Seconds(9));
  EXPECT_LT(waited, absl::Seconds(30));
  EXPECT_FALSE(idle->Finish().ok());
  n2_context.TryCancel();
}

TEST_F(TlsServiceTest, RolesKeepNodesAndOperatorsToTheirOwnService) {
  auto n1 = Node("n1");
  lite::v1::JoinResponse j1;
  ASSERT_TRUE(Join(n1.get(), "n1", 1, &j1).ok());
  const std::string before = Snapshot();
  // A node certificate on the operators' service.
  auto as_node = Operator("n1");
  {
    grpc::ClientContext context;
    lite::v1::ListLmrsResponse response;
    grpc::Status status = as_node->ListLmrs(&context, {}, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(),
                HasSubstr("certificate \"n1\" lacks the role this call "
                          "needs; it needs role operator"));
  }
  {
    grpc::ClientContext context;
    lite::v1::EvictNodeRequest request;
    request.set_node_id(j1.node_id());
    request.set_reason("mine now");
    lite::v1::EvictNodeResponse response;
    EXPECT_EQ(as_node->EvictNode(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext context;
    auto watch = as_node->Watch(&context, lite::v1::WatchRequest());
    lite::v1::Event event;
    EXPECT_FALSE(watch->Read(&event));
    EXPECT_EQ(watch->Finish().error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  // An operator certificate on the nodes' service: it cannot join.
  auto as_operator = Node("op");
  lite::v1::JoinResponse ignored;
  grpc::Status status = Join(as_operator.get(), "op", 5, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("it needs role node"));
  // Signed by the CA, but in no role.
  status = Join(Node("stranger").get(), "stranger", 6, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("certificate \"stranger\" has no role"));
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(TlsServiceTest, WithoutAClientCertificateOnlyHealthAnswers) {
  lite::v1::JoinResponse ignored;
  grpc::Status status = Join(Node("").get(), "n1", 1, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs a client certificate"));
  grpc::ClientContext context;
  lite::v1::ListNodesResponse nodes;
  EXPECT_EQ(Operator("")->ListNodes(&context, {}, &nodes).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  auto health = grpc::health::v1::Health::NewStub(Channel(""));
  grpc::ClientContext health_context;
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&health_context, request, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_EQ(Snapshot(), "lmrs 0 grants 0");
}

}  // namespace
}  // namespace lite::controlplane
