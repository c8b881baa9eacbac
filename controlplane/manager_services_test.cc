// ManagerState RPC services: registration (checks, unique names and ports,
// ids, restore), the execute-bit check of OpenService, unregistering only
// one's own, the end of a node's services with it, heartbeat stats, and the
// operators' listing. Every rejected call changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controlplane/lmr_test_fixture.h"
#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

class ServiceTest : public LmrTest {
 protected:
  lite::v1::RegisterServiceRequest RegisterRequest(const TestNode& node,
                                                   const std::string& name,
                                                   uint32_t port,
                                                   uint32_t mode = 0711) {
    lite::v1::RegisterServiceRequest r;
    *r.mutable_caller() = node.caller();
    *r.mutable_owner() = Creds(1000, 100, 4242);
    r.set_name(name);
    r.set_mode(mode);
    r.set_port(port);
    r.set_max_request_bytes(4096);
    r.set_max_reply_bytes(4096);
    r.set_depth(16);
    r.set_max_clients(16);
    return r;
  }
  lite::v1::Service RegisterOk(const lite::v1::RegisterServiceRequest& r) {
    absl::StatusOr<lite::v1::RegisterServiceResponse> response =
        state_->RegisterService(r);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->service() : lite::v1::Service();
  }
  absl::StatusCode Open(const TestNode& node, const std::string& name,
                        const lite::v1::Credentials& requester) {
    lite::v1::OpenServiceRequest r;
    *r.mutable_caller() = node.caller();
    *r.mutable_requester() = requester;
    r.set_name(name);
    return state_->OpenService(r).status().code();
  }
  std::vector<lite::v1::Service> List(uint32_t node_id = 0) {
    lite::v1::ListServicesRequest r;
    r.set_node_id(node_id);
    absl::StatusOr<lite::v1::ListServicesResponse> response =
        state_->ListServices(r);
    EXPECT_TRUE(response.ok()) << response.status();
    return {response->services().begin(), response->services().end()};
  }
};

TEST_F(ServiceTest, RegisterRecordsTheServiceOnTheCallersNodeAndAnnouncesIt) {
  const lite::v1::Service s = RegisterOk(RegisterRequest(a_, "echo", 7));
  EXPECT_EQ(s.service_id() >> 32, a_.id);
  EXPECT_EQ(s.service_id() & 0xffffffff, 1u);
  EXPECT_EQ(s.node_id(), a_.id);
  EXPECT_EQ(s.node_incarnation(), a_.incarnation);
  EXPECT_EQ(s.port(), 7u);
  EXPECT_EQ(s.owner_uid(), 1000u);
  EXPECT_EQ(s.owner_gid(), 100u);
  EXPECT_EQ(s.owner_pid(), 4242u);
  EXPECT_EQ(s.mode(), 0711u);
  EXPECT_EQ(s.depth(), 16u);
  const std::vector<Event> events = DrainEvents(*b_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].service_added().service().name(), "echo");
  // The next one on the node gets the next id.
  EXPECT_EQ(RegisterOk(RegisterRequest(a_, "echo2", 8)).service_id(),
            s.service_id() + 1);
}

TEST_F(ServiceTest, BadFieldsAreRefusedAndChangeNothing) {
  RegisterOk(RegisterRequest(a_, "taken", 1));
  DrainAll();
  const std::string before = Snapshot();
  struct Case {
    const char* what;
    void (*mutate)(lite::v1::RegisterServiceRequest*);
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"bad name", [](auto* r) { r->set_name("-bad"); },
       absl::StatusCode::kInvalidArgument},
      {"mode", [](auto* r) { r->set_mode(01000); },
       absl::StatusCode::kInvalidArgument},
      {"port 0", [](auto* r) { r->set_port(0); },
       absl::StatusCode::kInvalidArgument},
      {"port over", [](auto* r) { r->set_port(16384); },
       absl::StatusCode::kInvalidArgument},
      {"request size", [](auto* r) { r->set_max_request_bytes((1 << 20) + 1); },
       absl::StatusCode::kInvalidArgument},
      {"reply size", [](auto* r) { r->set_max_reply_bytes((1 << 20) + 1); },
       absl::StatusCode::kInvalidArgument},
      {"depth 0", [](auto* r) { r->set_depth(0); },
       absl::StatusCode::kInvalidArgument},
      {"depth over", [](auto* r) { r->set_depth(1025); },
       absl::StatusCode::kInvalidArgument},
      {"clients 0", [](auto* r) { r->set_max_clients(0); },
       absl::StatusCode::kInvalidArgument},
      {"clients over", [](auto* r) { r->set_max_clients(1026); },
       absl::StatusCode::kInvalidArgument},
      {"owner uid -1", [](auto* r) { r->mutable_owner()->set_uid(~0u); },
       absl::StatusCode::kInvalidArgument},
      {"restore zero sequence",
       [](auto* r) { r->set_restore_service_id(uint64_t{1} << 32); },
       absl::StatusCode::kInvalidArgument},
      {"name taken", [](auto* r) { r->set_name("taken"); },
       absl::StatusCode::kAlreadyExists},
      {"port taken", [](auto* r) { r->set_port(1); },
       absl::StatusCode::kAlreadyExists},
      {"stale caller",
       [](auto* r) {
         r->mutable_caller()->set_incarnation(r->caller().incarnation() + 9);
       },
       absl::StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    lite::v1::RegisterServiceRequest r = RegisterRequest(a_, "fresh", 2);
    c.mutate(&r);
    EXPECT_EQ(state_->RegisterService(r).status().code(), c.code) << c.what;
    EXPECT_EQ(Snapshot(), before) << c.what;
  }
  // A port is per node: another node may use port 1.
  RegisterOk(RegisterRequest(b_, "on-beta", 1));
}

TEST_F(ServiceTest, OpenChecksTheExecuteBitByClass) {
  RegisterOk(RegisterRequest(a_, "owner-only", 1, 0700));
  RegisterOk(RegisterRequest(a_, "group", 2, 0710));
  RegisterOk(RegisterRequest(a_, "everyone", 3, 0711));
  RegisterOk(RegisterRequest(a_, "rw-no-x", 4, 0666));
  const auto owner = Creds(1000, 100);
  const auto group_member = Creds(2000, 100);
  lite::v1::Credentials supplementary = Creds(2000, 7);
  supplementary.add_groups(100);
  const auto other = Creds(3000, 300);
  const auto root = Creds(0, 0);
  EXPECT_EQ(Open(b_, "owner-only", owner), absl::StatusCode::kOk);
  EXPECT_EQ(Open(b_, "owner-only", group_member),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Open(b_, "owner-only", root), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Open(b_, "group", group_member), absl::StatusCode::kOk);
  EXPECT_EQ(Open(b_, "group", supplementary), absl::StatusCode::kOk);
  EXPECT_EQ(Open(b_, "group", other), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Open(c_, "everyone", other), absl::StatusCode::kOk);
  // r and w do not let anyone call.
  EXPECT_EQ(Open(c_, "rw-no-x", owner), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Open(c_, "missing", owner), absl::StatusCode::kNotFound);
  EXPECT_EQ(Open(c_, "bad name!", owner), absl::StatusCode::kInvalidArgument);
  // The server's own node may call it too (loopback).
  EXPECT_EQ(Open(a_, "everyone", other), absl::StatusCode::kOk);

  lite::v1::OpenServiceRequest r;
  *r.mutable_caller() = b_.caller();
  *r.mutable_requester() = group_member;
  r.set_name("owner-only");
  absl::Status denied = state_->OpenService(r).status();
  EXPECT_THAT(denied.message(), HasSubstr("no x bit"));
  r.set_name("everyone");
  absl::StatusOr<lite::v1::OpenServiceResponse> opened = state_->OpenService(r);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->service().node_id(), a_.id);
  EXPECT_EQ(opened->service().port(), 3u);
}

TEST_F(ServiceTest, OnlyTheServersNodeUnregistersIt) {
  const lite::v1::Service s = RegisterOk(RegisterRequest(a_, "svc", 5));
  DrainAll();
  lite::v1::UnregisterServiceRequest r;
  *r.mutable_caller() = b_.caller();
  r.set_service_id(s.service_id());
  const std::string before = Snapshot();
  EXPECT_EQ(state_->UnregisterService(r).status().code(),
            absl::StatusCode::kPermissionDenied);
  r.set_service_id(0);
  EXPECT_EQ(state_->UnregisterService(r).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Snapshot(), before);
  *r.mutable_caller() = a_.caller();
  r.set_service_id(s.service_id());
  ASSERT_TRUE(state_->UnregisterService(r).ok());
  const std::vector<Event> events = DrainEvents(*c_.outbox);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].service_removed().service_id(), s.service_id());
  EXPECT_EQ(events[0].service_removed().cause(),
            lite::v1::SERVICE_REMOVAL_CAUSE_UNREGISTERED);
  EXPECT_EQ(state_->UnregisterService(r).status().code(),
            absl::StatusCode::kNotFound);
  // Name and port are free again; the id is not reused.
  const lite::v1::Service again = RegisterOk(RegisterRequest(a_, "svc", 5));
  EXPECT_GT(again.service_id(), s.service_id());
  EXPECT_EQ(Open(b_, "svc", Creds(1, 1)), absl::StatusCode::kOk);
}

TEST_F(ServiceTest, ANodesServicesEndWithIt) {
  const lite::v1::Service s = RegisterOk(RegisterRequest(a_, "dies", 1));
  RegisterOk(RegisterRequest(b_, "lives", 1));
  DrainAll();
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(a_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  bool removed = false;
  for (const Event& e : DrainEvents(*b_.outbox)) {
    if (e.has_service_removed()) {
      EXPECT_EQ(e.service_removed().service_id(), s.service_id());
      EXPECT_EQ(e.service_removed().cause(),
                lite::v1::SERVICE_REMOVAL_CAUSE_NODE_ENDED);
      removed = true;
    }
  }
  EXPECT_TRUE(removed);
  EXPECT_EQ(Open(c_, "dies", Creds(1000, 100)), absl::StatusCode::kNotFound);
  const std::vector<lite::v1::Service> left = List();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].name(), "lives");
}

TEST_F(ServiceTest, RestoreKeepsTheIdAndIsIdempotent) {
  lite::v1::RegisterServiceRequest r = RegisterRequest(a_, "kept", 9);
  r.set_restore_service_id((static_cast<uint64_t>(a_.id) << 32) | 41);
  EXPECT_EQ(RegisterOk(r).service_id(), r.restore_service_id());
  // The same again (a retried restore) is the same service.
  EXPECT_EQ(RegisterOk(r).service_id(), r.restore_service_id());
  EXPECT_EQ(List().size(), 1u);
  // The id with other attributes is taken.
  r.set_mode(0700);
  EXPECT_EQ(state_->RegisterService(r).status().code(),
            absl::StatusCode::kAlreadyExists);
  // Another node's id is not the caller's to restore.
  lite::v1::RegisterServiceRequest foreign = RegisterRequest(b_, "x", 9);
  foreign.set_restore_service_id((static_cast<uint64_t>(a_.id) << 32) | 50);
  EXPECT_EQ(state_->RegisterService(foreign).status().code(),
            absl::StatusCode::kPermissionDenied);
  // New ids on the node come after the restored one.
  EXPECT_GT(RegisterOk(RegisterRequest(a_, "new", 10)).service_id(),
            (static_cast<uint64_t>(a_.id) << 32) | 41);
}

TEST_F(ServiceTest, DrainingNodeTakesNoNewService) {
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(a_.id);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  EXPECT_EQ(
      state_->RegisterService(RegisterRequest(a_, "no", 1)).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST_F(ServiceTest, HeartbeatStatsShowInTheListingForTheNodesOwnServices) {
  const lite::v1::Service s = RegisterOk(RegisterRequest(a_, "counted", 1));
  const lite::v1::Service t = RegisterOk(RegisterRequest(b_, "beta-svc", 1));
  lite::v1::Heartbeat beat;
  beat.set_node_id(a_.id);
  beat.set_incarnation(a_.incarnation);
  beat.set_heartbeat_seq(2);
  auto* stats = beat.add_service_stats();
  stats->set_service_id(s.service_id());
  stats->set_clients(2);
  stats->set_queued(3);
  stats->set_served(44);
  // Another node's service in a's heartbeat is ignored.
  auto* foreign = beat.add_service_stats();
  foreign->set_service_id(t.service_id());
  foreign->set_served(999);
  ASSERT_TRUE(state_->Heartbeat(a_.binding(), beat).ok());
  const std::vector<lite::v1::Service> on_a = List(a_.id);
  ASSERT_EQ(on_a.size(), 1u);
  EXPECT_EQ(on_a[0].clients(), 2u);
  EXPECT_EQ(on_a[0].queued(), 3u);
  EXPECT_EQ(on_a[0].served(), 44u);
  const std::vector<lite::v1::Service> on_b = List(b_.id);
  ASSERT_EQ(on_b.size(), 1u);
  EXPECT_EQ(on_b[0].served(), 0u);
}

TEST_F(ServiceTest, ListingPages) {
  for (int i = 0; i < 5; ++i) {
    RegisterOk(RegisterRequest(a_, "s" + std::to_string(i), i + 1));
  }
  lite::v1::ListServicesRequest r;
  r.set_page_size(2);
  std::vector<std::string> names;
  for (int pages = 0; pages < 10; ++pages) {
    absl::StatusOr<lite::v1::ListServicesResponse> page =
        state_->ListServices(r);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& s : page->services()) names.push_back(s.name());
    if (page->next_page_token().empty()) break;
    r.set_page_token(page->next_page_token());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("s0", "s1", "s2", "s3", "s4"));
  r.set_page_token("garbage");
  EXPECT_EQ(state_->ListServices(r).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lite::controlplane::testing
