// Host integration over mutual TLS (the harness's default): every way in
// without the right certificate is refused with its exact code and changes
// nothing an operator can list; no memory key or chunk address reaches a
// listing, a Watch event or litectl's output; the manager's audit lines
// name the caller. docs/security.md.
//
// Where a refusal happens decides its code: a certificate from another CA,
// expired or not yet valid, and plaintext to the TLS port fail the TLS
// handshake, which the client sees as UNAVAILABLE (the call never reaches
// a service), and so does a TLS client without a certificate; a verified
// certificate without the role, or a node certificate acting for another
// node, PERMISSION_DENIED.
#include <grpcpp/grpcpp.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/host/harness.h"

namespace lite::hosttest {
namespace {

using grpc::StatusCode;

std::string CodeName(StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

void Arm(grpc::ClientContext* context) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.tls());
    // A second operator, in the authz file before the manager reads it.
    ASSERT_TRUE(cluster_.Certificate("operator", "op2").ok());
    ASSERT_TRUE(cluster_.StartManager({}).ok()) << cluster_.Logs();
    ASSERT_TRUE(cluster_.StartAgent("n1", 1, {.fake_lmrs = "buf1=1M"}).ok());
    ASSERT_TRUE(cluster_.StartAgent("n2", 2, {}).ok());
    auto n1 = cluster_.WaitConnected("n1");
    auto n2 = cluster_.WaitConnected("n2");
    ASSERT_TRUE(n1.ok()) << n1.status();
    ASSERT_TRUE(n2.ok()) << n2.status();
    n1_.set_node_id(n1->node_id());
    n1_.set_incarnation(n1->incarnation());
    n2_.set_node_id(n2->node_id());
    n2_.set_incarnation(n2->incarnation());
    ASSERT_TRUE(Eventually(
        [&] {
          auto lmrs = cluster_.Lmrs();
          return lmrs.ok() && lmrs->size() == 1;
        },
        kStartTimeout));
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "process logs:" << cluster_.Logs() << "\n";
  }

  // What an operator can list, without what moves by itself (leases).
  std::string Snapshot() {
    std::string out;
    auto nodes = cluster_.Nodes();
    auto lmrs = cluster_.Lmrs();
    auto grants = cluster_.Grants();
    EXPECT_TRUE(nodes.ok() && lmrs.ok() && grants.ok());
    if (!nodes.ok() || !lmrs.ok() || !grants.ok()) return "listing failed";
    for (lite::v1::Member node : *nodes) {
      node.clear_lease_remaining_ms();
      absl::StrAppend(&out, node.ShortDebugString(), "\n");
    }
    for (const auto& lmr : *lmrs) absl::StrAppend(&out, lmr.ShortDebugString());
    for (const auto& g : *grants) absl::StrAppend(&out, g.ShortDebugString());
    return out;
  }

  // A certificate issued by another CA, or by this one with a validity
  // window, in a directory of its own.
  TlsFiles Foreign(const std::string& dir_name, const std::string& name,
                   const std::vector<std::string>& options) {
    const std::string dir = absl::StrCat(cluster_.dir(), "/", dir_name);
    std::vector<std::string> args = options;
    args.insert(args.end(), {dir, "node", name});
    if (options.empty()) {
      EXPECT_TRUE(Litecerts({dir, "ca"}).ok());
    }
    absl::Status made = Litecerts(args);
    EXPECT_TRUE(made.ok()) << made;
    // The client still trusts the cluster's CA for the manager.
    return {absl::StrCat(dir, "/", name, ".crt"),
            absl::StrCat(dir, "/", name, ".key"), cluster_.Files("n1").ca};
  }

  static grpc::Status Join(lite::v1::ClusterManager::Stub* stub,
                           const std::string& name) {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::JoinRequest request;
    request.set_node_name(name);
    request.set_rdma_address("127.0.0.1:17950");
    lite::v1::JoinResponse response;
    return stub->Join(&context, request, &response);
  }
  static grpc::Status ListNodes(lite::v1::ClusterOperator::Stub* stub) {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::ListNodesResponse response;
    return stub->ListNodes(&context, {}, &response);
  }

  lite::v1::Credentials Owner() const {
    lite::v1::Credentials c;
    c.set_uid(4000);
    c.set_gid(4000);
    c.set_pid(77);
    return c;
  }

  Cluster cluster_;
  lite::v1::NodeCaller n1_;
  lite::v1::NodeCaller n2_;
};

struct Refusal {
  std::string what;
  std::function<grpc::Status()> call;
  StatusCode want;
};

TEST_F(TlsTest, EveryWrongCertificateIsRefusedAndChangesNothing) {
  const TlsFiles other_ca = Foreign("other-ca", "n1", {});
  const std::string ca = cluster_.cert_dir();
  const TlsFiles expired =
      Foreign("expired", "n1",
              {"--ca", ca, "--not-before", "20200101000000Z", "--not-after",
               "20210101000000Z"});
  const TlsFiles not_yet =
      Foreign("not-yet", "n1",
              {"--ca", ca, "--not-before", "20990101000000Z", "--not-after",
               "20991231000000Z"});
  const TlsFiles no_cert{"", "", cluster_.Files("n1").ca};
  auto n1 = [&] { return cluster_.manager_stub_as("n1"); };
  auto as_node = cluster_.NewOperatorStub(cluster_.Files("n1"));
  auto as_operator = cluster_.NewManagerStub(cluster_.Files("op2"));

  const std::string before = Snapshot();
  std::vector<Refusal> refusals = {
      {"another CA's n1 joins as n1",
       [&] { return Join(cluster_.NewManagerStub(other_ca).get(), "n1"); },
       StatusCode::UNAVAILABLE},
      {"an expired n1 joins as n1",
       [&] { return Join(cluster_.NewManagerStub(expired).get(), "n1"); },
       StatusCode::UNAVAILABLE},
      {"a not-yet-valid n1 joins as n1",
       [&] { return Join(cluster_.NewManagerStub(not_yet).get(), "n1"); },
       StatusCode::UNAVAILABLE},
      {"another CA's n1 lists nodes",
       [&] { return ListNodes(cluster_.NewOperatorStub(other_ca).get()); },
       StatusCode::UNAVAILABLE},
      {"plaintext Join to the TLS port",
       [&] { return Join(cluster_.NewManagerStub(std::nullopt).get(), "n1"); },
       StatusCode::UNAVAILABLE},
      {"plaintext ListNodes to the TLS port",
       [&] { return ListNodes(cluster_.NewOperatorStub(std::nullopt).get()); },
       StatusCode::UNAVAILABLE},
      {"no client certificate: Join as n1",
       [&] { return Join(cluster_.NewManagerStub(no_cert).get(), "n1"); },
       StatusCode::UNAVAILABLE},
      {"no client certificate: ListNodes",
       [&] { return ListNodes(cluster_.NewOperatorStub(no_cert).get()); },
       StatusCode::UNAVAILABLE},
      {"n1's certificate joins as n2 (would supersede it)",
       [&] { return Join(n1(), "n2"); }, StatusCode::PERMISSION_DENIED},
      {"n1's certificate joins as a new node 'fake'",
       [&] { return Join(n1(), "fake"); }, StatusCode::PERMISSION_DENIED},
      {"n1's certificate leaves as n2",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::LeaveRequest request;
         *request.mutable_caller() = n2_;
         lite::v1::LeaveResponse response;
         return n1()->Leave(&context, request, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate maps buf1 as n2",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::MapLmrRequest request;
         *request.mutable_caller() = n2_;
         *request.mutable_requester() = Owner();
         request.set_name("buf1");
         request.mutable_access()->set_read(true);
         lite::v1::MapLmrResponse response;
         return n1()->MapLmr(&context, request, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate allocates on n2's behalf",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::AllocLmrRequest request;
         *request.mutable_caller() = n2_;
         *request.mutable_owner() = Owner();
         request.set_name("forged");
         request.set_size_bytes(4096);
         request.set_mode(0600);
         lite::v1::AllocLmrResponse response;
         return n1()->AllocLmr(&context, request, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate opens a session as n2",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         auto stream = n1()->Session(&context);
         lite::v1::AgentMessage first;
         first.mutable_heartbeat()->set_node_id(n2_.node_id());
         first.mutable_heartbeat()->set_incarnation(n2_.incarnation());
         first.mutable_heartbeat()->set_heartbeat_seq(1);
         stream->Write(first);
         lite::v1::ManagerMessage message;
         while (stream->Read(&message)) {
         }
         return stream->Finish();
       },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate lists nodes (an operator RPC)",
       [&] { return ListNodes(as_node.get()); }, StatusCode::PERMISSION_DENIED},
      {"n1's certificate evicts n2 (an operator RPC)",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::EvictNodeRequest request;
         request.set_node_id(n2_.node_id());
         request.set_reason("mine");
         lite::v1::EvictNodeResponse response;
         return as_node->EvictNode(&context, request, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate drains n2 (an operator RPC)",
       [&] {
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::DrainNodeRequest request;
         request.set_node_id(n2_.node_id());
         lite::v1::DrainNodeResponse response;
         return as_node->DrainNode(&context, request, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"an operator certificate joins as itself",
       [&] { return Join(as_operator.get(), "op2"); },
       StatusCode::PERMISSION_DENIED},
      {"n1's certificate asks n2's agent (an operator service)",
       [&] {
         // The agents' NodeAgent service needs role operator too.
         auto stub = lite::v1::NodeAgent::NewStub(
             DialChannel(cluster_.agent_port("n2"),
                         ClientCredentials(cluster_.Files("n1")), "n2"));
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::GetStatusResponse response;
         return stub->GetStatus(&context, {}, &response);
       },
       StatusCode::PERMISSION_DENIED},
      {"no client certificate asks n2's agent",
       [&] {
         auto stub = lite::v1::NodeAgent::NewStub(DialChannel(
             cluster_.agent_port("n2"), ClientCredentials(no_cert), "n2"));
         grpc::ClientContext context;
         Arm(&context);
         lite::v1::GetStatusResponse response;
         return stub->GetStatus(&context, {}, &response);
       },
       StatusCode::UNAVAILABLE},
  };
  std::cout << absl::StrFormat("%-55s %-18s %s\n", "caller", "expected", "got");
  for (const Refusal& r : refusals) {
    const grpc::Status s = r.call();
    std::cout << absl::StrFormat("%-55s %-18s %s%s\n", r.what, CodeName(r.want),
                                 CodeName(s.error_code()),
                                 s.error_code() == r.want ? "" : "  <-- WRONG");
    EXPECT_EQ(s.error_code(), r.want)
        << r.what << ": got " << CodeName(s.error_code()) << " \""
        << s.error_message() << "\"";
  }
  EXPECT_EQ(Snapshot(), before);
  // Both agents are still connected as themselves.
  EXPECT_TRUE(cluster_.WaitConnected("n1", absl::Seconds(2)).ok());
  EXPECT_TRUE(cluster_.WaitConnected("n2", absl::Seconds(2)).ok());
}

TEST_F(TlsTest, NoKeyOrAddressInListingsEventsOrLitectl) {
  ASSERT_TRUE(cluster_.StartWatch().ok());
  // The watch is registered once it prints an event: toggle n1's drain mark
  // until a MemberDrainChanged shows (then n1 is back in service).
  auto drain = [&](bool cancel) {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::DrainNodeRequest request;
    request.set_node_id(n1_.node_id());
    request.set_cancel(cancel);
    lite::v1::DrainNodeResponse response;
    return cluster_.operator_stub()->DrainNode(&context, request, &response);
  };
  ASSERT_TRUE(Eventually(
      [&] {
        EXPECT_TRUE(drain(false).ok());
        EXPECT_TRUE(drain(true).ok());
        return absl::StrContains(
            ReadFile(absl::StrCat(cluster_.dir(), "/watch.jsonl")),
            "member_drain_changed");
      },
      absl::Seconds(10), absl::Milliseconds(200)));
  // An LMR allocated on n2 for n1, then mapped by n1 for reading: the fake
  // module's keys (0x117e read-write, 0x117f read-only) and chunk addresses
  // (from 0x7f0000000000) are now in the manager's registry, and the
  // read-only key in the grant n1 received (review cp L13).
  {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::AllocLmrRequest request;
    *request.mutable_caller() = n1_;
    *request.mutable_owner() = Owner();
    request.set_name("secret");
    request.set_size_bytes(1 << 20);
    request.set_mode(0600);
    request.set_home_node_id(n2_.node_id());
    lite::v1::AllocLmrResponse response;
    grpc::Status s =
        cluster_.manager_stub()->AllocLmr(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  lite::v1::MapLmrResponse mapped;
  {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::MapLmrRequest request;
    *request.mutable_caller() = n1_;
    *request.mutable_requester() = Owner();
    request.set_name("secret");
    request.mutable_access()->set_read(true);
    grpc::Status s =
        cluster_.manager_stub()->MapLmr(&context, request, &mapped);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  // The holder's own response carries them (the one authenticated path),
  // so the strings below are the real ones.
  ASSERT_GT(mapped.grant().chunks_size(), 0);
  const std::string key_hex =
      absl::StrFormat("%x", mapped.grant().memory_key());
  const std::string address_hex =
      absl::StrFormat("%x", mapped.grant().chunks(0).address());
  const std::string address_dec =
      absl::StrCat(mapped.grant().chunks(0).address());
  ASSERT_EQ(key_hex, "117f");
  const std::string rw_key_hex = "117e";
  ASSERT_TRUE(absl::StartsWith(address_hex, "7f"));

  auto leaks = [&](const std::string& what, const std::string& text) {
    // An empty field names nothing: JSON that prints defaults may show
    // "memory_key": 0 and "chunks": [] (a JSON number starting with 0 is 0).
    const std::string lower = absl::StrReplaceAll(absl::AsciiStrToLower(text),
                                                  {{"\"memory_key\": 0", ""},
                                                   {"\"memory_key\":0", ""},
                                                   {"\"read_key\": 0", ""},
                                                   {"\"read_key\":0", ""},
                                                   {"\"chunks\": []", ""},
                                                   {"\"chunks\":[]", ""}});
    for (const std::string& needle :
         {std::string("memory_key"), std::string("memorykey"),
          std::string("read_key"), std::string("readkey"),
          std::string("chunks"), std::string("\"address\""), key_hex,
          absl::StrCat("0x", key_hex), rw_key_hex,
          absl::StrCat("0x", rw_key_hex), address_hex, address_dec}) {
      EXPECT_FALSE(absl::StrContains(lower, needle))
          << what << " carries \"" << needle << "\":\n"
          << text;
    }
  };
  auto lmrs = cluster_.Lmrs();
  auto grants = cluster_.Grants();
  ASSERT_TRUE(lmrs.ok() && grants.ok());
  ASSERT_EQ(lmrs->size(), 2u);
  ASSERT_EQ(grants->size(), 1u);
  for (const auto& lmr : *lmrs) leaks("ListLmrs", lmr.DebugString());
  for (const auto& grant : *grants) leaks("ListGrants", grant.DebugString());
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"lmrs"},
                                             {"-o", "json", "lmrs"},
                                             {"grants"},
                                             {"-o", "json", "grants"},
                                             {"nodes"},
                                             {"-o", "json", "nodes"}}) {
    CtlResult r = cluster_.Litectl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    leaks(absl::StrCat("litectl ", absl::StrJoin(args, " ")), r.out + r.err);
  }
  ASSERT_TRUE(Eventually(
      [&] {
        auto events = cluster_.WatchedEvents();
        if (!events.ok()) return false;
        for (const auto& e : *events) {
          if (e.has_lmr_added() && e.lmr_added().lmr().name() == "secret") {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(10)))
      << ReadFile(absl::StrCat(cluster_.dir(), "/watch.jsonl"));
  leaks("litectl watch -o json",
        ReadFile(absl::StrCat(cluster_.dir(), "/watch.jsonl")));
}

TEST_F(TlsTest, AuditLinesNameTheCaller) {
  EXPECT_EQ(Join(cluster_.manager_stub_as("n1"), "n2").error_code(),
            StatusCode::PERMISSION_DENIED);
  {
    grpc::ClientContext context;
    Arm(&context);
    lite::v1::DrainNodeRequest request;
    request.set_node_id(n2_.node_id());
    lite::v1::DrainNodeResponse response;
    ASSERT_TRUE(
        cluster_.operator_stub()->DrainNode(&context, request, &response).ok());
  }
  // Whether the manager accepts this reason is another matter (free text
  // is validated); either way the audit line shows it escaped.
  cluster_.Litectl({"evict", "n2", "--reason", "bye\x1b[2J"});
  const std::string log = ReadFile(cluster_.manager()->stderr_path());
  // The agents' own joins, under their certificates' names.
  EXPECT_TRUE(absl::StrContains(log, "audit: n1 Join node_name=\"n1\" -> OK"))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "audit: n2 Join node_name=\"n2\" -> OK"));
  EXPECT_TRUE(absl::StrContains(
      log, "audit: n1 Join node_name=\"n2\" -> PERMISSION_DENIED"));
  EXPECT_TRUE(absl::StrContains(log, absl::StrCat("audit: ops DrainNode node=",
                                                  n2_.node_id(), " -> OK")));
  // The reason escaped: no terminal escape reaches the log.
  EXPECT_TRUE(absl::StrContains(
      log, "audit: ops EvictNode node_name=\"n2\" reason=\"bye\\x1b[2J\" -> "))
      << log;
  EXPECT_FALSE(absl::StrContains(log, "\x1b"));
}

}  // namespace
}  // namespace lite::hosttest
