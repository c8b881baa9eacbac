// Host integration: a table of bad inputs to the running manager, each
// answered with its exact gRPC status code (as proto/lite/v1/manager.proto
// specifies), through direct gRPC calls and through litectl. Every bad
// request is one field away from a request shown to succeed (the "ok"
// rows), so each code is caused by the field the row names.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using grpc::StatusCode;

struct Case {
  std::string what;
  std::function<grpc::Status()> call;
  StatusCode want;
};

std::string CodeName(StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

class BadInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // No recovery phase: RestoreGrant is refused from the start.
    ASSERT_TRUE(
        cluster_.StartManager({.lease_ms = 1000, .recovery_window_ms = 0})
            .ok());
    ASSERT_TRUE(cluster_.StartAgent("n1", 1, {.fake_lmrs = "buf1=1M"}).ok());
    ASSERT_TRUE(cluster_.StartAgent("n2", 2, {.fake_memory = "256M"}).ok());
    auto n1 = cluster_.WaitConnected("n1");
    auto n2 = cluster_.WaitConnected("n2");
    ASSERT_TRUE(n1.ok() && n2.ok());
    n1_.set_node_id(n1->node_id());
    n1_.set_incarnation(n1->incarnation());
    n2_id_ = n2->node_id();
    ASSERT_TRUE(Eventually(
        [&] {
          auto lmrs = cluster_.Lmrs();
          return lmrs.ok() && lmrs->size() == 1;
        },
        kStartTimeout));
    owner_ = cluster_.Lmrs()->at(0).owner_uid();
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  // Node calls present node certificate `as_` (n1 unless a row says).
  lite::v1::ClusterManager::Stub* mgr() {
    return cluster_.manager_stub_as(as_);
  }

  // The application's credentials: the fake's applications run as the
  // agent's uid/gid, which owns buf1.
  lite::v1::Credentials Owner() const {
    lite::v1::Credentials c;
    c.set_uid(owner_);
    c.set_gid(owner_);
    c.set_pid(4242);
    return c;
  }
  lite::v1::Credentials Stranger() const {
    lite::v1::Credentials c;
    c.set_uid(owner_ + 1000);
    c.set_gid(owner_ + 1000);
    c.set_pid(4243);
    return c;
  }

  lite::v1::ClusterOperator::Stub* ops() { return cluster_.operator_stub(); }
  lite::v1::ClusterManager::Stub* StubFor(lite::v1::ClusterManager::Stub*) {
    return mgr();
  }
  lite::v1::ClusterOperator::Stub* StubFor(lite::v1::ClusterOperator::Stub*) {
    return ops();
  }

  // One unary call on the node service or the operator service, by method.
  template <typename Stub, typename Req, typename Resp>
  grpc::Status Call(grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                 const Req&, Resp*),
                    const Req& req, Resp* resp = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    Resp local;
    Stub* stub = StubFor(static_cast<Stub*>(nullptr));
    return (stub->*method)(&ctx, req, resp != nullptr ? resp : &local);
  }

  // Call() presenting node certificate `name`.
  template <typename Stub, typename Req, typename Resp>
  grpc::Status CallAs(const std::string& name,
                      grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                   const Req&, Resp*),
                      const Req& req, Resp* resp = nullptr) {
    as_ = name;
    grpc::Status status = Call(method, req, resp);
    as_ = "n1";
    return status;
  }

  // What an unknown caller node id gets: over TLS the certificate (n1's)
  // may not act for it, without TLS the manager does not know it.
  StatusCode UnknownCaller() const {
    return cluster_.tls() ? StatusCode::PERMISSION_DENIED
                          : StatusCode::NOT_FOUND;
  }

  // Opens a Session, sends `first`, and returns how the manager ended it.
  grpc::Status SessionWith(const lite::v1::AgentMessage& first) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    auto stream = mgr()->Session(&ctx);
    stream->Write(first);
    lite::v1::ManagerMessage msg;
    int read = 0;
    // A refused session ends before sending anything; bound it anyway.
    while (stream->Read(&msg) && ++read < 1000) {
    }
    return stream->Finish();
  }

  lite::v1::RegisterLmrRequest GoodRegister(const std::string& name) const {
    lite::v1::RegisterLmrRequest r;
    *r.mutable_caller() = n1_;
    *r.mutable_owner() = Owner();
    r.set_name(name);
    r.set_size_bytes(8192);
    r.set_mode(0600);
    auto* c = r.add_chunks();
    c->set_address(0x10000);
    c->set_length_bytes(8192);
    r.set_memory_key(7);
    return r;
  }

  lite::v1::AllocLmrRequest GoodAlloc(const std::string& name) const {
    lite::v1::AllocLmrRequest r;
    *r.mutable_caller() = n1_;
    *r.mutable_owner() = Owner();
    r.set_name(name);
    r.set_size_bytes(1 << 20);
    r.set_mode(0600);
    r.set_home_node_id(n2_id_);
    return r;
  }

  lite::v1::MapLmrRequest GoodMap() const {
    lite::v1::MapLmrRequest r;
    *r.mutable_caller() = n1_;
    *r.mutable_requester() = Owner();
    r.set_name("buf1");
    r.mutable_access()->set_read(true);
    return r;
  }

  lite::v1::NodeCaller Stale() const {
    lite::v1::NodeCaller c = n1_;
    c.set_incarnation(n1_.incarnation() + 1000);
    return c;
  }

  void RunTable(const std::vector<Case>& cases) {
    std::cout << absl::StrFormat("%-62s %-20s %s\n", "input", "expected",
                                 "got");
    for (const Case& c : cases) {
      grpc::Status s = c.call();
      std::cout << absl::StrFormat(
          "%-62s %-20s %s%s\n", c.what, CodeName(c.want),
          CodeName(s.error_code()),
          s.error_code() == c.want ? "" : "  <-- WRONG");
      EXPECT_EQ(s.error_code(), c.want)
          << c.what << ": got " << CodeName(s.error_code()) << " \""
          << s.error_message() << "\"";
      if (c.want != StatusCode::OK) {
        EXPECT_FALSE(s.error_message().empty()) << c.what << ": no message";
      }
    }
  }

  Cluster cluster_;
  std::string as_ = "n1";
  lite::v1::NodeCaller n1_;
  uint32_t n2_id_ = 0;
  uint32_t owner_ = 0;
};

TEST_F(BadInputsTest, EachBadInputGetsItsExactCode) {
  using S = lite::v1::ClusterManager::Stub;
  using O = lite::v1::ClusterOperator::Stub;
  std::vector<Case> cases;
  auto add = [&](std::string what, std::function<grpc::Status()> call,
                 StatusCode want) {
    cases.push_back({std::move(what), std::move(call), want});
  };

  // ---- Join ----
  auto join = [this](std::string name, std::string address,
                     lite::v1::NodeIdentity* restore = nullptr) {
    lite::v1::JoinRequest r;
    r.set_node_name(std::move(name));
    r.set_rdma_address(std::move(address));
    if (restore != nullptr) *r.mutable_restore() = *restore;
    // Over TLS a node joins as its certificate's name: x1 has one; a
    // malformed name cannot, and n1's certificate gets the name's error.
    return CallAs(r.node_name() == "x1" ? "x1" : "n1", &S::Join, r);
  };
  add(
      "Join: empty node_name", [&] { return join("", "127.0.0.1:17900"); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: node_name '-lead'",
      [&] { return join("-lead", "127.0.0.1:17900"); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: node_name of 65 characters",
      [&] { return join(std::string(65, 'a'), "127.0.0.1:17900"); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: rdma_address without port",
      [&] { return join("x1", "127.0.0.1"); }, StatusCode::INVALID_ARGUMENT);
  add(
      "Join: rdma_address port 0", [&] { return join("x1", "127.0.0.1:0"); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: rdma_address 'host:7471'", [&] { return join("x1", "host:7471"); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: restore with node_id 0",
      [&] {
        lite::v1::NodeIdentity id;
        id.set_incarnation(3);
        return join("x1", "127.0.0.1:17900", &id);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Join: n1's rdma_address under another name",
      [&] { return join("x1", "127.0.0.1:17001"); },
      StatusCode::ALREADY_EXISTS);
  // A node that joins and leaves: LEFT, for the Evict row below.
  add(
      "ok: Join 'gone' then Leave",
      [&] {
        lite::v1::JoinRequest r;
        r.set_node_name("gone");
        r.set_rdma_address("127.0.0.1:17901");
        lite::v1::JoinResponse resp;
        grpc::Status s = CallAs("gone", &S::Join, r, &resp);
        if (!s.ok()) return s;
        lite::v1::LeaveRequest leave;
        leave.mutable_caller()->set_node_id(resp.node_id());
        leave.mutable_caller()->set_incarnation(resp.incarnation());
        return CallAs("gone", &S::Leave, leave);
      },
      StatusCode::OK);

  // ---- Leave ----
  add(
      "Leave: caller ids 0",
      [&] { return Call(&S::Leave, lite::v1::LeaveRequest()); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Leave: unknown node id 999",
      [&] {
        lite::v1::LeaveRequest r;
        r.mutable_caller()->set_node_id(999);
        r.mutable_caller()->set_incarnation(1);
        return Call(&S::Leave, r);
      },
      UnknownCaller());
  add(
      "Leave: n1 with a stale incarnation",
      [&] {
        lite::v1::LeaveRequest r;
        *r.mutable_caller() = Stale();
        return Call(&S::Leave, r);
      },
      StatusCode::FAILED_PRECONDITION);

  // ---- Session ----
  add(
      "Session: first message is not a Heartbeat",
      [&] {
        lite::v1::AgentMessage m;
        m.mutable_result()->set_request_id(1);
        return SessionWith(m);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "Session: heartbeat for unknown node 999",
      [&] {
        lite::v1::AgentMessage m;
        m.mutable_heartbeat()->set_node_id(999);
        m.mutable_heartbeat()->set_incarnation(1);
        m.mutable_heartbeat()->set_heartbeat_seq(1);
        return SessionWith(m);
      },
      UnknownCaller());
  add(
      "Session: n1 with a stale incarnation",
      [&] {
        lite::v1::AgentMessage m;
        m.mutable_heartbeat()->set_node_id(n1_.node_id());
        m.mutable_heartbeat()->set_incarnation(Stale().incarnation());
        m.mutable_heartbeat()->set_heartbeat_seq(1);
        return SessionWith(m);
      },
      StatusCode::FAILED_PRECONDITION);
  add(
      "Session: a second session for n1 (its agent has one)",
      [&] {
        lite::v1::AgentMessage m;
        m.mutable_heartbeat()->set_node_id(n1_.node_id());
        m.mutable_heartbeat()->set_incarnation(n1_.incarnation());
        m.mutable_heartbeat()->set_heartbeat_seq(1);
        return SessionWith(m);
      },
      StatusCode::FAILED_PRECONDITION);

  // ---- RegisterLmr ----
  auto reg = [&](std::function<void(lite::v1::RegisterLmrRequest&)> edit) {
    lite::v1::RegisterLmrRequest r = GoodRegister("fresh");
    edit(r);
    return Call(&S::RegisterLmr, r);
  };
  add(
      "RegisterLmr: name 'has space'",
      [&] { return reg([](auto& r) { r.set_name("has space"); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: size 0",
      [&] {
        return reg([](auto& r) {
          r.set_size_bytes(0);
          r.clear_chunks();
        });
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: mode 0777",
      [&] { return reg([](auto& r) { r.set_mode(0777); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: chunks add up to less than size",
      [&] { return reg([](auto& r) { r.set_size_bytes(16384); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: no chunks",
      [&] { return reg([](auto& r) { r.clear_chunks(); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: uid (uid_t)-1",
      [&] { return reg([](auto& r) { r.mutable_owner()->set_uid(~0u); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: pid 0",
      [&] { return reg([](auto& r) { r.mutable_owner()->set_pid(0); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "RegisterLmr: name taken (buf1)",
      [&] { return reg([](auto& r) { r.set_name("buf1"); }); },
      StatusCode::ALREADY_EXISTS);
  add(
      "RegisterLmr: lmr_id whose home part is n2",
      [&] {
        return reg([&](auto& r) {
          r.set_lmr_id((uint64_t{n2_id_} << 32) | 77);
          r.set_origin(lite::v1::LMR_ORIGIN_REGISTERED);
        });
      },
      StatusCode::PERMISSION_DENIED);
  // Review cp M2: outside recovery, made-up ids (fresh names each time)
  // escaped every limit and DrainNode; only an id the manager issued and no
  // longer holds comes back.
  add(
      "RegisterLmr: an lmr_id the manager never issued",
      [&] {
        return reg([&](auto& r) {
          r.set_lmr_id((uint64_t{n1_.node_id()} << 32) | 0x7fffffff);
          r.set_name("made-up");
        });
      },
      StatusCode::FAILED_PRECONDITION);
  add(
      "RegisterLmr: unknown caller node 999",
      [&] {
        return reg([](auto& r) { r.mutable_caller()->set_node_id(999); });
      },
      UnknownCaller());
  add(
      "RegisterLmr: stale caller incarnation",
      [&] { return reg([&](auto& r) { *r.mutable_caller() = Stale(); }); },
      StatusCode::FAILED_PRECONDITION);
  add(
      "ok: RegisterLmr 'fresh'", [&] { return reg([](auto&) {}); },
      StatusCode::OK);
  add(
      "RegisterLmr: 'fresh' again (name taken)",
      [&] { return reg([](auto&) {}); }, StatusCode::ALREADY_EXISTS);

  // ---- MapLmr / UnmapLmr ----
  auto map = [&](std::function<void(lite::v1::MapLmrRequest&)> edit) {
    lite::v1::MapLmrRequest r = GoodMap();
    edit(r);
    return Call(&S::MapLmr, r);
  };
  add(
      "MapLmr: no access asked",
      [&] { return map([](auto& r) { r.clear_access(); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "MapLmr: unknown LMR name",
      [&] { return map([](auto& r) { r.set_name("nope"); }); },
      StatusCode::NOT_FOUND);
  add(
      "MapLmr: mode 0600 denies another uid and gid",
      [&] {
        return map([&](auto& r) { *r.mutable_requester() = Stranger(); });
      },
      StatusCode::PERMISSION_DENIED);
  add(
      "MapLmr: stale caller incarnation",
      [&] { return map([&](auto& r) { *r.mutable_caller() = Stale(); }); },
      StatusCode::FAILED_PRECONDITION);
  lite::v1::MapLmrResponse mapped;
  add(
      "ok: MapLmr buf1 read by its owner",
      [&] { return Call(&S::MapLmr, GoodMap(), &mapped); }, StatusCode::OK);
  add(
      "UnmapLmr: grant id 0",
      [&] {
        lite::v1::UnmapLmrRequest r;
        *r.mutable_caller() = n1_;
        return Call(&S::UnmapLmr, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "UnmapLmr: unknown grant",
      [&] {
        lite::v1::UnmapLmrRequest r;
        *r.mutable_caller() = n1_;
        r.set_grant_id((uint64_t{n1_.node_id()} << 32) | 0xfffff);
        return Call(&S::UnmapLmr, r);
      },
      StatusCode::NOT_FOUND);
  add(
      "UnmapLmr: the grant, by another node (n2)",
      [&] {
        lite::v1::UnmapLmrRequest r;
        auto st = cluster_.AgentStatus("n2");
        r.mutable_caller()->set_node_id(st->node_id());
        r.mutable_caller()->set_incarnation(st->incarnation());
        r.set_grant_id(mapped.grant().grant_id());
        // n2's own certificate: the manager's holder check, not TLS's.
        return CallAs("n2", &S::UnmapLmr, r);
      },
      StatusCode::PERMISSION_DENIED);
  add(
      "ok: UnmapLmr the grant",
      [&] {
        lite::v1::UnmapLmrRequest r;
        *r.mutable_caller() = n1_;
        r.set_grant_id(mapped.grant().grant_id());
        return Call(&S::UnmapLmr, r);
      },
      StatusCode::OK);

  // ---- RestoreGrant (no recovery in progress) ----
  add(
      "RestoreGrant: the manager is not recovering",
      [&] {
        lite::v1::RestoreGrantRequest r;
        *r.mutable_caller() = n1_;
        *r.mutable_grant() = mapped.grant();
        return Call(&S::RestoreGrant, r);
      },
      StatusCode::FAILED_PRECONDITION);

  // ---- FreeLmr ----
  auto free_lmr = [&](const std::string& name,
                      const lite::v1::Credentials& who) {
    lite::v1::FreeLmrRequest r;
    *r.mutable_caller() = n1_;
    *r.mutable_requester() = who;
    r.set_name(name);
    return Call(&S::FreeLmr, r);
  };
  add(
      "FreeLmr: not the owner", [&] { return free_lmr("fresh", Stranger()); },
      StatusCode::PERMISSION_DENIED);
  add(
      "FreeLmr: unknown name", [&] { return free_lmr("nope", Owner()); },
      StatusCode::NOT_FOUND);
  add(
      "FreeLmr: bad name", [&] { return free_lmr("a b", Owner()); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "ok: FreeLmr 'fresh' by its owner",
      [&] { return free_lmr("fresh", Owner()); }, StatusCode::OK);

  // ---- AllocLmr (through n2's agent and its fake module) ----
  auto alloc = [&](std::function<void(lite::v1::AllocLmrRequest&)> edit) {
    lite::v1::AllocLmrRequest r = GoodAlloc("alloc1");
    edit(r);
    return Call(&S::AllocLmr, r);
  };
  add(
      "AllocLmr: unknown home node 999",
      [&] { return alloc([](auto& r) { r.set_home_node_id(999); }); },
      StatusCode::NOT_FOUND);
  add(
      "AllocLmr: name taken (buf1)",
      [&] { return alloc([](auto& r) { r.set_name("buf1"); }); },
      StatusCode::ALREADY_EXISTS);
  add(
      "AllocLmr: size 0",
      [&] { return alloc([](auto& r) { r.set_size_bytes(0); }); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "AllocLmr: more than the home's memory (512M of 256M)",
      [&] {
        return alloc([](auto& r) { r.set_size_bytes(uint64_t{512} << 20); });
      },
      StatusCode::RESOURCE_EXHAUSTED);
  add(
      "ok: AllocLmr 1 MiB on n2", [&] { return alloc([](auto&) {}); },
      StatusCode::OK);
  add(
      "ok: DrainNode n2",
      [&] {
        lite::v1::DrainNodeRequest r;
        r.set_node_name("n2");
        return Call(&O::DrainNode, r);
      },
      StatusCode::OK);
  add(
      "AllocLmr: home is draining",
      [&] { return alloc([](auto& r) { r.set_name("alloc2"); }); },
      StatusCode::FAILED_PRECONDITION);

  // ---- Listings and operators ----
  add(
      "ListNodes: page_size -1",
      [&] {
        lite::v1::ListNodesRequest r;
        r.set_page_size(-1);
        return Call(&O::ListNodes, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "ListNodes: page_size 10001",
      [&] {
        lite::v1::ListNodesRequest r;
        r.set_page_size(10001);
        return Call(&O::ListNodes, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "ListLmrs: garbage page_token",
      [&] {
        lite::v1::ListLmrsRequest r;
        r.set_page_token("not-a-token");
        return Call(&O::ListLmrs, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "DrainNode: neither id nor name",
      [&] { return Call(&O::DrainNode, lite::v1::DrainNodeRequest()); },
      StatusCode::INVALID_ARGUMENT);
  add(
      "DrainNode: both id and name",
      [&] {
        lite::v1::DrainNodeRequest r;
        r.set_node_id(n1_.node_id());
        r.set_node_name("n1");
        return Call(&O::DrainNode, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "DrainNode: unknown name",
      [&] {
        lite::v1::DrainNodeRequest r;
        r.set_node_name("ghost");
        return Call(&O::DrainNode, r);
      },
      StatusCode::NOT_FOUND);
  add(
      "EvictNode: reason of 257 characters",
      [&] {
        lite::v1::EvictNodeRequest r;
        r.set_node_name("n2");
        r.set_reason(std::string(257, 'r'));
        return Call(&O::EvictNode, r);
      },
      StatusCode::INVALID_ARGUMENT);
  add(
      "EvictNode: a node that left",
      [&] {
        lite::v1::EvictNodeRequest r;
        r.set_node_name("gone");
        return Call(&O::EvictNode, r);
      },
      StatusCode::FAILED_PRECONDITION);
  add(
      "EvictNode: unknown id 999",
      [&] {
        lite::v1::EvictNodeRequest r;
        r.set_node_id(999);
        return Call(&O::EvictNode, r);
      },
      StatusCode::NOT_FOUND);

  RunTable(cases);
}

TEST_F(BadInputsTest, LitectlReportsEachCodeOnOneLine) {
  struct CtlCase {
    std::vector<std::string> args;
    int exit_code;
    std::string prefix;
  };
  const std::vector<CtlCase> cases = {
      {{"drain", "ghost"}, 1, "litectl: NOT_FOUND: "},
      {{"drain", "--id", "999", "--undo"}, 1, "litectl: NOT_FOUND: "},
      {{"evict", "--id", "999"}, 1, "litectl: NOT_FOUND: "},
      {{"evict", "n2", "--reason", std::string(300, 'x')},
       1,
       "litectl: INVALID_ARGUMENT: "},
      {{"lmrs", "--home", "0"}, 2, "litectl: INVALID_ARGUMENT: "},
      {{"grants", "--lmr", "x"}, 2, "litectl: INVALID_ARGUMENT: "},
      {{"drain"}, 2, "litectl: INVALID_ARGUMENT: "},
      {{"nodes", "--page"}, 2, "litectl: INVALID_ARGUMENT: "},
      {{"health", "--service", "no.such.Service"}, 1, "litectl: NOT_FOUND: "},
  };
  for (const CtlCase& c : cases) {
    CtlResult r = cluster_.Litectl(c.args);
    const std::string what = absl::StrJoin(c.args, " ");
    std::cout << absl::StrFormat("litectl %-40.40s exit %d  %s", what,
                                 r.exit_code, r.err);
    EXPECT_EQ(r.exit_code, c.exit_code) << what << ": " << r.err;
    EXPECT_TRUE(absl::StartsWith(r.err, c.prefix)) << what << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
        << what << ": not one line: " << r.err;
    EXPECT_EQ(r.out, "") << what;
  }
  // And the happy path prints, exits 0 and writes nothing on stderr.
  CtlResult ok = cluster_.Litectl({"health"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "SERVING\n");
  EXPECT_EQ(ok.err, "");
  // (The evict with a bad reason must not have evicted anything.)
  auto n2 = cluster_.AgentStatus("n2");
  ASSERT_TRUE(n2.ok());
  EXPECT_EQ(n2->reconnects(), 0u);
}

}  // namespace
}  // namespace lite::hosttest
