// litectl end to end, in-process, against a canned ClusterOperator and
// NodeAgent: output formats, paging, the one-line error contract, exit
// codes, the --manager / $LITE_MANAGER precedence; and against a manager
// that misbehaves (issue #10): escape sequences in names and reasons are
// printed inert, keys and chunk addresses never printed, watch --since.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "cmd/litectl/commands.h"
#include "lite/v1/agent.grpc.pb.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::litectl {
namespace {

// What a hostile (or old) manager could send: a memory key and chunk
// addresses litectl must never print, and text that would act on a
// terminal: clear the screen, home the cursor, a fake prompt, and a C1 CSI.
constexpr uint32_t kKey = 0xdeadbeef;
constexpr uint64_t kChunkAddress = 0x7f0012345000;
constexpr char kEscReason[] =
    "\x1b[2J\x1b[Hroot@node1:~# \xc2\x9b"
    "31mred";
constexpr char kEscReasonShown[] =
    "\\x1B[2J\\x1B[Hroot@node1:~# \\xC2\\x9B31mred";

// The key and the address in every form litectl could print them.
void ExpectNoKeyOrAddress(const std::string& out) {
  for (const std::string& needle :
       {absl::StrCat(kKey), absl::StrCat(kChunkAddress),
        absl::StrFormat("%x", kKey), absl::StrFormat("%X", kKey),
        absl::StrFormat("%x", kChunkAddress),
        absl::StrFormat("%X", kChunkAddress), std::string("\"address\"")}) {
    EXPECT_FALSE(absl::StrContains(out, needle)) << needle << " in\n" << out;
  }
}

lite::v1::Member Node(uint32_t id, std::string name) {
  lite::v1::Member m;
  m.set_node_id(id);
  m.set_node_name(std::move(name));
  m.set_incarnation(id + 10);
  m.set_rdma_address(absl::StrCat("10.0.0.", id, ":7471"));
  m.set_state(lite::v1::NODE_STATE_ALIVE);
  m.set_session_open(true);
  m.set_lease_remaining_ms(800);
  return m;
}

class CannedManager final : public lite::v1::ClusterOperator::Service {
 public:
  grpc::Status ListNodes(grpc::ServerContext*,
                         const lite::v1::ListNodesRequest* req,
                         lite::v1::ListNodesResponse* resp) override {
    // Two pages, to prove litectl follows next_page_token.
    absl::MutexLock lock(&mu);
    if (req->page_token().empty()) {
      *resp->add_nodes() = Node(1, "alpha");
      if (suspect) {
        resp->mutable_nodes(0)->set_suspect_since_unix_ms(
            absl::ToUnixMillis(absl::Now() - absl::Seconds(12)));
      }
      resp->set_next_page_token("1");
      resp->set_event_sequence(40);
    } else if (req->page_token() == "1") {
      *resp->add_nodes() = Node(2, "beta");
      resp->mutable_nodes(0)->set_state(lite::v1::NODE_STATE_FAILED);
      // Later pages are read later: the listing's revision is the first's.
      resp->set_event_sequence(45);
      if (hostile) *resp->add_nodes() = Node(3, kEscReason);
    } else {
      return grpc::Status(grpc::INVALID_ARGUMENT, "bad page_token");
    }
    return grpc::Status::OK;
  }
  grpc::Status ListServices(grpc::ServerContext*,
                            const lite::v1::ListServicesRequest* req,
                            lite::v1::ListServicesResponse* resp) override {
    absl::MutexLock lock(&mu);
    last_services = *req;
    lite::v1::Service* s = resp->add_services();
    s->set_service_id((uint64_t{2} << 32) | 3);
    s->set_name("kv/get");
    s->set_node_id(2);
    s->set_port(7);
    s->set_owner_uid(1000);
    s->set_owner_gid(100);
    s->set_mode(0711);
    s->set_max_request_bytes(4096);
    s->set_max_reply_bytes(65536);
    s->set_depth(16);
    s->set_max_clients(8);
    s->set_clients(2);
    s->set_queued(5);
    s->set_served(1234);
    return grpc::Status::OK;
  }
  grpc::Status ListLmrs(grpc::ServerContext*,
                        const lite::v1::ListLmrsRequest* req,
                        lite::v1::ListLmrsResponse* resp) override {
    absl::MutexLock lock(&mu);
    last_lmrs = *req;
    lite::v1::Lmr* l = resp->add_lmrs();
    l->set_lmr_id((uint64_t{2} << 32) | 1);
    l->set_name("db/table");
    l->set_home_node_id(2);
    l->set_size_bytes(uint64_t{64} << 20);
    l->set_owner_uid(1000);
    l->set_owner_gid(100);
    l->set_mode(0640);
    l->set_epoch(12);
    l->set_origin(lite::v1::LMR_ORIGIN_ALLOCATED);
    // Sent although the manager must not: litectl drops them.
    l->mutable_chunks()->Add()->set_address(kChunkAddress);
    l->mutable_chunks(0)->set_length_bytes(uint64_t{64} << 20);
    l->set_memory_key(kKey);
    l->set_read_key(kKey);
    l->set_state(lite::v1::LMR_STATE_LIVE);
    resp->set_revision(41);
    lite::v1::Lmr* freed = resp->add_lmrs();
    *freed = *l;
    freed->set_lmr_id((uint64_t{2} << 32) | 2);
    freed->set_state(lite::v1::LMR_STATE_RELEASING);
    freed->set_revokes_pending(2);
    return grpc::Status::OK;
  }
  grpc::Status ListGrants(grpc::ServerContext*,
                          const lite::v1::ListGrantsRequest*,
                          lite::v1::ListGrantsResponse* resp) override {
    lite::v1::Grant* g = resp->add_grants();
    g->set_grant_id((uint64_t{1} << 32) | 7);
    g->set_lmr_id((uint64_t{2} << 32) | 1);
    g->set_lmr_name("db/table");
    g->set_home_node_id(2);
    g->set_holder_node_id(1);
    g->mutable_access()->set_read(true);
    g->set_size_bytes(uint64_t{64} << 20);
    g->mutable_chunks()->Add()->set_address(kChunkAddress);
    g->mutable_chunks(0)->set_length_bytes(uint64_t{64} << 20);
    g->set_memory_key(kKey);
    resp->set_revision(42);
    return grpc::Status::OK;
  }
  grpc::Status DrainNode(grpc::ServerContext*,
                         const lite::v1::DrainNodeRequest* req,
                         lite::v1::DrainNodeResponse* resp) override {
    absl::MutexLock lock(&mu);
    last_drain = *req;
    if (req->node_name() == "ghost") {
      return grpc::Status(grpc::NOT_FOUND, "no node named 'ghost'\nat all");
    }
    if (req->node_name() == "evil") {
      return grpc::Status(grpc::NOT_FOUND,
                          absl::StrCat("no node named '", kEscReason, "'"));
    }
    *resp->mutable_member() = Node(req->node_id() ? req->node_id() : 1, "x");
    resp->mutable_member()->set_draining(!req->cancel());
    return grpc::Status::OK;
  }
  // Events 1..3 are MemberJoined, 4 a MemberFailed with kEscReason, 5 an
  // LmrAdded with a key and chunks; from since_revision + 1. The history
  // starts at 1: since 0 is from the start here, a real manager's "now".
  grpc::Status Watch(grpc::ServerContext* ctx,
                     const lite::v1::WatchRequest* req,
                     grpc::ServerWriter<lite::v1::Event>* writer) override {
    {
      absl::MutexLock lock(&mu);
      last_watch = *req;
    }
    if (req->since_revision() == 99) {
      return grpc::Status(grpc::OUT_OF_RANGE,
                          "revision 99 is older than the history");
    }
    if (req->since_revision() == 96) {
      // A node suspected, then recovered.
      lite::v1::Event e;
      e.set_sequence(97);
      auto* s = e.mutable_member_suspected();
      s->set_node_id(2);
      s->set_node_name("beta");
      s->set_incarnation(4);
      s->set_reason("no heartbeat for 1250 ms (lease 1000 ms); asking 2 peers");
      writer->Write(e);
      e.Clear();
      e.set_sequence(98);
      auto* r = e.mutable_member_recovered();
      r->set_node_id(2);
      r->set_node_name("beta");
      r->set_incarnation(4);
      r->set_suspected_ms(4500);
      writer->Write(e);
      while (!ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
      return grpc::Status::OK;
    }
    if (req->since_revision() == 98) {
      // One event, then the manager gives up on a slow watcher.
      lite::v1::Event e;
      e.set_sequence(99);
      *e.mutable_member_joined()->mutable_member() = Node(1, "n");
      writer->Write(e);
      return grpc::Status(grpc::RESOURCE_EXHAUSTED, "the watcher fell behind");
    }
    for (uint64_t seq = req->since_revision() + 1; seq <= 5; ++seq) {
      lite::v1::Event e;
      e.set_sequence(seq);
      e.set_time_unix_ms(1700000000000);
      if (seq <= 3) {
        *e.mutable_member_joined()->mutable_member() = Node(seq, "n");
      } else if (seq == 4) {
        lite::v1::MemberFailed* f = e.mutable_member_failed();
        f->set_node_id(2);
        f->set_node_name("beta");
        f->set_cause(lite::v1::FAILURE_CAUSE_EVICTED);
        f->set_reason(kEscReason);
      } else {
        lite::v1::Lmr* l = e.mutable_lmr_added()->mutable_lmr();
        l->set_lmr_id((uint64_t{2} << 32) | 3);
        l->set_name("scratch");
        l->set_home_node_id(2);
        l->set_size_bytes(4096);
        l->mutable_chunks()->Add()->set_address(kChunkAddress);
        l->mutable_chunks(0)->set_length_bytes(4096);
        l->set_memory_key(kKey);
        l->set_read_key(kKey);
      }
      if (!writer->Write(e)) break;
    }
    // Then nothing more until the client goes away.
    while (!ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status::OK;
  }

  absl::Mutex mu;
  lite::v1::ListLmrsRequest last_lmrs ABSL_GUARDED_BY(mu);
  lite::v1::ListServicesRequest last_services ABSL_GUARDED_BY(mu);
  lite::v1::DrainNodeRequest last_drain ABSL_GUARDED_BY(mu);
  lite::v1::WatchRequest last_watch ABSL_GUARDED_BY(mu);
  // ListNodes adds a node whose name is kEscReason.
  bool hostile ABSL_GUARDED_BY(mu) = false;
  // ListNodes lists alpha SUSPECT for 12 s.
  bool suspect ABSL_GUARDED_BY(mu) = false;
};

class CannedAgent final : public lite::v1::NodeAgent::Service {
  grpc::Status GetStatus(grpc::ServerContext*,
                         const lite::v1::GetStatusRequest*,
                         lite::v1::GetStatusResponse* resp) override {
    resp->set_node_name("alpha");
    resp->set_node_id(1);
    resp->set_manager_connection_state(
        lite::v1::MANAGER_CONNECTION_STATE_CONNECTED);
    return grpc::Status::OK;
  }
};

class LitectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                       &port_);
    b.RegisterService(&manager_);
    b.RegisterService(&agent_);
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port_);
  }
  void TearDown() override { server_->Shutdown(); }

  // Runs litectl with --manager pointing here unless with_manager is false.
  int Run(std::vector<std::string> args, bool with_manager = true,
          Environment env = {}) {
    if (with_manager) args.insert(args.begin(), {"--manager", address_});
    // These canned servers are plaintext; tls_test.cc covers TLS.
    args.insert(args.begin(), "--insecure");
    out_.str("");
    err_.str("");
    return RunLitectl(args, env, out_, err_, &interrupt_);
  }

  CannedManager manager_;
  CannedAgent agent_;
  int port_ = 0;
  std::string address_;
  std::unique_ptr<grpc::Server> server_;
  std::ostringstream out_, err_;
  Interrupt interrupt_;
};

TEST_F(LitectlTest, NodesTableFollowsPages) {
  ASSERT_EQ(Run({"nodes"}), 0) << err_.str();
  const std::string out = out_.str();
  EXPECT_TRUE(absl::StartsWith(out, "ID  NAME   STATE   INCARNATION")) << out;
  EXPECT_TRUE(absl::StrContains(out, "alpha  ALIVE")) << out;
  EXPECT_TRUE(absl::StrContains(out, "beta   FAILED")) << out;
  EXPECT_EQ(err_.str(), "");
}

TEST_F(LitectlTest, NodesTableShowsSuspectNodes) {
  {
    absl::MutexLock lock(&manager_.mu);
    manager_.suspect = true;
  }
  ASSERT_EQ(Run({"nodes"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr("alpha  SUSPECT (12"))
      << out_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr("beta   FAILED")) << out_.str();
}

TEST_F(LitectlTest, WatchShowsSuspicionAndRecovery) {
  ASSERT_EQ(Run({"watch", "--since", "96", "--count", "2"}), 0) << err_.str();
  EXPECT_THAT(out_.str(),
              ::testing::HasSubstr(
                  "MemberSuspected    node beta (2) incarnation 4: no "
                  "heartbeat for 1250 ms (lease 1000 ms); asking 2 peers\n"))
      << out_.str();
  EXPECT_THAT(out_.str(),
              ::testing::HasSubstr("MemberRecovered    node beta (2) "
                                   "incarnation 4, after "))
      << out_.str();
}

TEST_F(LitectlTest, NodesJsonHasEveryNode) {
  ASSERT_EQ(Run({"nodes", "-o", "json"}), 0) << err_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "\"node_name\": \"alpha\""));
  EXPECT_TRUE(absl::StrContains(out_.str(), "\"node_name\": \"beta\""));
  EXPECT_TRUE(
      absl::StrContains(out_.str(), "\"state\": \"NODE_STATE_FAILED\""));
}

TEST_F(LitectlTest, ServicesShowNodeNamesModeAndCountsAndFilter) {
  ASSERT_EQ(Run({"services", "--node", "2"}), 0) << err_.str();
  EXPECT_TRUE(absl::StrContains(
      out_.str(),
      "0x200000003  kv/get  beta(2)  7     1000:100  0711  4 KiB    64 KiB  "
      "   16     2/8      5       1234"))
      << out_.str();
  {
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_services.node_id(), 2u);
  }
  EXPECT_EQ(Run({"services", "--node", "nosuch"}), 2);
}

TEST_F(LitectlTest, LmrsShowHumanUnitsAndFilter) {
  ASSERT_EQ(Run({"lmrs", "--home", "2"}), 0) << err_.str();
  EXPECT_TRUE(absl::StrContains(
      out_.str(),
      "0x200000001  db/table  beta(2)  64 MiB  1000:100  0640  "
      "allocated  12     "))
      << out_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "  live\n")) << out_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "  releasing (2 acks)\n"))
      << out_.str();
  absl::MutexLock lock(&manager_.mu);
  EXPECT_EQ(manager_.last_lmrs.home_node_id(), 2u);
}

TEST_F(LitectlTest, ErrorsAreOneLineWithTheCode) {
  EXPECT_EQ(Run({"drain", "ghost"}), 1);
  EXPECT_EQ(err_.str(), "litectl: NOT_FOUND: no node named 'ghost' at all\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(LitectlTest, DrainByIdWithUndo) {
  ASSERT_EQ(Run({"drain", "--id", "0x2", "--undo"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "node x (id 2) is in service\n");
  absl::MutexLock lock(&manager_.mu);
  EXPECT_EQ(manager_.last_drain.node_id(), 2u);
  EXPECT_TRUE(manager_.last_drain.node_name().empty());
  EXPECT_TRUE(manager_.last_drain.cancel());
}

TEST_F(LitectlTest, NodesByNameOrId) {
  // A positional of digits is an id, anything else a name.
  ASSERT_EQ(Run({"drain", "2"}), 0) << err_.str();
  {
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_drain.node_id(), 2u);
    EXPECT_TRUE(manager_.last_drain.node_name().empty());
  }
  ASSERT_EQ(Run({"drain", "beta"}), 0) << err_.str();
  {
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_drain.node_id(), 0u);
    EXPECT_EQ(manager_.last_drain.node_name(), "beta");
  }
  // Filters look names up in ListNodes.
  ASSERT_EQ(Run({"lmrs", "--home", "beta"}), 0) << err_.str();
  {
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_lmrs.home_node_id(), 2u);
  }
  EXPECT_EQ(Run({"lmrs", "--home", "gamma"}), 2);
  EXPECT_EQ(err_.str(),
            "litectl: INVALID_ARGUMENT: --home: no node is named 'gamma' "
            "(litectl nodes lists them; all digits is an id) (see 'litectl "
            "lmrs --help')\n");
  EXPECT_EQ(Run({"drain", "0"}), 2);
  EXPECT_EQ(Run({"lmrs", "--home", "0"}), 2);
}

TEST_F(LitectlTest, WatchNamesNodesFirst) {
  ASSERT_EQ(Run({"watch", "--count", "1"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr(
                              "MemberJoined       node n (1) incarnation 11 "
                              "at 10.0.0.1:7471"));
}

TEST_F(LitectlTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({"drain"}), 2);
  EXPECT_TRUE(absl::StartsWith(err_.str(), "litectl: INVALID_ARGUMENT: "));
  EXPECT_EQ(Run({"drain", "a", "--id", "1"}), 2);
  EXPECT_EQ(Run({"drain", "a", "b"}), 2);
  EXPECT_EQ(Run({"lmrs", "--home", "zero"}), 2);
  EXPECT_EQ(Run({"nodes", "--timeout", "soon"}), 2);
  EXPECT_EQ(Run({"nodes", "-o", "xml"}), 2);
  EXPECT_EQ(Run({"frobnicate"}), 2);
  EXPECT_EQ(Run({}), 2);
  const std::string err = err_.str();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST_F(LitectlTest, HelpEverywhere) {
  ASSERT_EQ(Run({"--help"}), 0);
  EXPECT_TRUE(absl::StrContains(out_.str(), "Commands:"));
  for (const Command& c : Commands()) {
    ASSERT_EQ(Run({c.name, "--help"}), 0) << c.name;
    EXPECT_TRUE(absl::StartsWith(out_.str(), "Usage: litectl " + c.name))
        << out_.str();
    ASSERT_EQ(Run({"help", c.name}), 0) << c.name;
  }
}

TEST_F(LitectlTest, WatchStreamsEventsUntilCount) {
  ASSERT_EQ(Run({"watch", "--count", "2"}), 0) << err_.str();
  std::vector<std::string> lines = absl::StrSplit(out_.str(), '\n');
  ASSERT_EQ(lines.size(), 3u);  // Two lines and the empty tail.
  EXPECT_TRUE(absl::StartsWith(lines[0],
                               "1      2023-11-14T22:13:20.000Z  "
                               "MemberJoined"))
      << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "2 ")) << lines[1];
  ASSERT_EQ(Run({"watch", "--count", "1", "-o", "json"}), 0) << err_.str();
  EXPECT_TRUE(absl::StartsWith(out_.str(), "{\"sequence\":\"1\""))
      << out_.str();
}

TEST_F(LitectlTest, ManagerFlagWinsOverTheEnvironment) {
  // The environment names a dead port, the flag the live server.
  Environment env{.lite_manager = "127.0.0.1:1"};
  EXPECT_EQ(Run({"--manager", address_, "nodes"}, false, env), 0);
  EXPECT_EQ(Run({"nodes", "--timeout", "2s"}, false, env), 1);
  EXPECT_TRUE(
      absl::StartsWith(err_.str(), "litectl: UNAVAILABLE: 127.0.0.1:1:"))
      << err_.str();
  env.lite_manager = address_;
  EXPECT_EQ(Run({"nodes"}, false, env), 0) << err_.str();
}

TEST_F(LitectlTest, AgentStatusAndHealth) {
  ASSERT_EQ(Run({"agent", "status", "--agent", address_}), 0) << err_.str();
  EXPECT_TRUE(absl::StrContains(out_.str(), "connection      CONNECTED"))
      << out_.str();
  EXPECT_EQ(Run({"agent", "bogus", "--agent", address_}), 2);
  ASSERT_EQ(Run({"health"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "SERVING\n");
  EXPECT_EQ(Run({"health", "--service", "no.such.Service"}), 1);
  EXPECT_TRUE(absl::StartsWith(err_.str(), "litectl: NOT_FOUND: "))
      << err_.str();
}

TEST_F(LitectlTest, NoKeyOrChunkAddressInAnyOutput) {
  for (const std::string& command : {"lmrs", "grants"}) {
    for (const std::string& format : {"table", "json"}) {
      ASSERT_EQ(Run({command, "-o", format}), 0) << err_.str();
      EXPECT_THAT(out_.str(), ::testing::HasSubstr("db/table"));
      ExpectNoKeyOrAddress(out_.str());
    }
  }
  for (const std::string& format : {"table", "json"}) {
    ASSERT_EQ(Run({"watch", "--since", "4", "--count", "1", "-o", format}), 0)
        << err_.str();
    EXPECT_THAT(out_.str(), ::testing::HasSubstr("scratch"));
    ExpectNoKeyOrAddress(out_.str());
  }
}

TEST_F(LitectlTest, ListingsInJsonCarryTheirRevision) {
  ASSERT_EQ(Run({"lmrs", "-o", "json"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr("\"revision\": \"41\""));
  ASSERT_EQ(Run({"grants", "-o", "json"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr("\"revision\": \"42\""));
  // Two pages: the first page's, so that a watch from it misses nothing.
  ASSERT_EQ(Run({"nodes", "-o", "json"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr("\"event_sequence\": \"40\""));
}

TEST_F(LitectlTest, WatchSinceResumes) {
  ASSERT_EQ(Run({"watch", "--since", "2", "--count", "1"}), 0) << err_.str();
  {
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_watch.since_revision(), 2u);
  }
  // Each line starts with the revision to resume from.
  EXPECT_TRUE(absl::StartsWith(out_.str(), "3      ")) << out_.str();
  ASSERT_EQ(Run({"watch", "--count", "1"}), 0) << err_.str();
  absl::MutexLock lock(&manager_.mu);
  EXPECT_EQ(manager_.last_watch.since_revision(), 0u);
}

TEST_F(LitectlTest, WatchSinceRefusesBadValues) {
  for (const std::string& bad :
       {"", "-1", "x", "1k", "0x10", " 5", "5 ", "18446744073709551616",
        "99999999999999999999999"}) {
    {
      absl::MutexLock lock(&manager_.mu);
      manager_.last_watch.set_since_revision(12345);
    }
    EXPECT_EQ(Run({"watch", "--since", bad, "--count", "1"}), 2) << bad;
    EXPECT_TRUE(
        absl::StartsWith(err_.str(), "litectl: INVALID_ARGUMENT: --since: '"))
        << err_.str();
    EXPECT_EQ(out_.str(), "");
    // Refused before any call.
    absl::MutexLock lock(&manager_.mu);
    EXPECT_EQ(manager_.last_watch.since_revision(), 12345u) << bad;
  }
  // The largest revision is a revision.
  EXPECT_EQ(Run({"watch", "--since", "18446744073709551615", "--count", "1"}),
            0)
      << err_.str();
}

TEST_F(LitectlTest, WatchSinceTooOldIsExplained) {
  EXPECT_EQ(Run({"watch", "--since", "99"}), 1);
  EXPECT_EQ(err_.str(),
            "litectl: OUT_OF_RANGE: revision 99 is older than the history "
            "(the manager's event history no longer has revision 99: list "
            "again, e.g. 'litectl nodes -o json', then watch --since the "
            "listing's revision)\n");
}

TEST_F(LitectlTest, AWatchThatEndsSaysWhereToResume) {
  EXPECT_EQ(Run({"watch", "--since", "98"}), 1);
  EXPECT_TRUE(absl::StartsWith(out_.str(), "99 ")) << out_.str();
  EXPECT_EQ(err_.str(),
            "litectl: RESOURCE_EXHAUSTED: the watcher fell behind (last "
            "revision seen 99: resume with 'litectl watch --since 99')\n");
}

TEST_F(LitectlTest, EscapeSequencesArePrintedInert) {
  ASSERT_EQ(Run({"watch", "--since", "3", "--count", "1"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr(absl::StrCat(
                              "MemberFailed       node beta (2) incarnation "
                              "0 EVICTED: ",
                              kEscReasonShown, "\n")));
  EXPECT_FALSE(absl::StrContains(out_.str(), "\x1b")) << out_.str();
  EXPECT_FALSE(absl::StrContains(out_.str(), "\xc2\x9b")) << out_.str();
  // JSON stays JSON: the writer escapes the controls itself.
  ASSERT_EQ(Run({"watch", "--since", "3", "--count", "1", "-o", "json"}), 0)
      << err_.str();
  EXPECT_THAT(out_.str(),
              ::testing::HasSubstr("\"reason\":\"\\u001b[2J\\u001b[H"));
  EXPECT_FALSE(absl::StrContains(out_.str(), "\x1b")) << out_.str();
  EXPECT_FALSE(absl::StrContains(out_.str(), "\xc2\x9b")) << out_.str();

  {
    absl::MutexLock lock(&manager_.mu);
    manager_.hostile = true;
  }
  ASSERT_EQ(Run({"nodes"}), 0) << err_.str();
  EXPECT_THAT(out_.str(), ::testing::HasSubstr(absl::StrCat(
                              "3   ", kEscReasonShown, "  ALIVE")));
  EXPECT_FALSE(absl::StrContains(out_.str(), "\x1b")) << out_.str();
  EXPECT_FALSE(absl::StrContains(out_.str(), "\xc2\x9b")) << out_.str();
  // Other commands name nodes from the same listing.
  ASSERT_EQ(Run({"lmrs", "--home", "3"}), 0) << err_.str();
  EXPECT_FALSE(absl::StrContains(out_.str(), "\x1b")) << out_.str();
}

TEST_F(LitectlTest, ServerErrorMessagesArePrintedInert) {
  EXPECT_EQ(Run({"drain", "evil"}), 1);
  EXPECT_EQ(err_.str(), absl::StrCat("litectl: NOT_FOUND: no node named '",
                                     kEscReasonShown, "'\n"));
}

}  // namespace
}  // namespace lite::litectl
