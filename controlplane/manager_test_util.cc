#include "controlplane/manager_test_util.h"

#include "absl/strings/str_cat.h"

namespace lite::controlplane::testing {

lite::v1::NodeCaller TestNode::caller() const {
  lite::v1::NodeCaller caller;
  caller.set_node_id(id);
  caller.set_incarnation(incarnation);
  return caller;
}

lite::v1::Credentials Creds(uint32_t uid, uint32_t gid, uint32_t pid) {
  lite::v1::Credentials creds;
  creds.set_uid(uid);
  creds.set_gid(gid);
  creds.set_pid(pid);
  return creds;
}

lite::v1::Access Access(bool read, bool write) {
  lite::v1::Access access;
  access.set_read(read);
  access.set_write(write);
  return access;
}

ManagerTest::ManagerTest() { Restart(TestOptions()); }

ManagerOptions ManagerTest::TestOptions() {
  ManagerOptions options;
  options.lease = absl::Seconds(1);
  options.recovery_window = absl::ZeroDuration();
  options.request_timeout = absl::Seconds(5);
  options.session_queue_limit = 1000;
  options.pair_key = "test cluster key, 32 bytes long.";
  return options;
}

void ManagerTest::Restart(ManagerOptions options,
                          std::unique_ptr<Store> store) {
  if (state_ != nullptr) state_->Shutdown();
  if (store == nullptr) store = std::make_unique<MemoryStore>();
  state_ = std::make_unique<ManagerState>(options, &clock_, std::move(store));
}

lite::v1::JoinRequest ManagerTest::JoinRequestFor(const std::string& name,
                                                  int address_index) const {
  lite::v1::JoinRequest request;
  request.set_node_name(name);
  request.set_rdma_address(absl::StrCat("10.0.0.", address_index, ":7471"));
  return request;
}

lite::v1::JoinRequest ManagerTest::RestoreRequestFor(
    const std::string& name, int address_index, uint32_t id,
    uint64_t incarnation) const {
  lite::v1::JoinRequest request = JoinRequestFor(name, address_index);
  request.mutable_restore()->set_node_id(id);
  request.mutable_restore()->set_incarnation(incarnation);
  request.mutable_restore()->set_token(
      state_->pair_secrets().IdentityToken(name, PairEnd{id, incarnation}));
  return request;
}

lite::v1::JoinResponse ManagerTest::JoinOnly(const std::string& name,
                                             int address_index) {
  absl::StatusOr<lite::v1::JoinResponse> joined =
      state_->Join(JoinRequestFor(name, address_index));
  EXPECT_TRUE(joined.ok()) << joined.status();
  return joined.ok() ? *joined : lite::v1::JoinResponse();
}

TestNode ManagerTest::JoinAndOpen(const std::string& name, int address_index) {
  const lite::v1::JoinResponse joined = JoinOnly(name, address_index);
  lite::v1::Heartbeat first;
  first.set_node_id(joined.node_id());
  first.set_incarnation(joined.incarnation());
  first.set_heartbeat_seq(1);
  absl::StatusOr<OpenedSession> opened = state_->OpenSession(first);
  EXPECT_TRUE(opened.ok()) << opened.status();
  TestNode node;
  node.id = joined.node_id();
  node.incarnation = joined.incarnation();
  node.name = name;
  node.join = joined;
  if (opened.ok()) node.outbox = opened->outbox;
  return node;
}

lite::v1::Lmr ManagerTest::Register(const TestNode& home,
                                    const std::string& name, uint32_t mode,
                                    const lite::v1::Credentials& owner,
                                    uint64_t size) {
  lite::v1::RegisterLmrRequest request;
  *request.mutable_caller() = home.caller();
  *request.mutable_owner() = owner;
  request.set_name(name);
  request.set_size_bytes(size);
  request.set_mode(mode);
  AddRegisteredMemory(&request, size);
  absl::StatusOr<lite::v1::RegisterLmrResponse> registered =
      state_->RegisterLmr(request);
  EXPECT_TRUE(registered.ok()) << registered.status();
  return registered.ok() ? registered->lmr() : lite::v1::Lmr();
}

void ManagerTest::AddRegisteredMemory(lite::v1::RegisterLmrRequest* request,
                                      uint64_t size) {
  auto* chunk = request->add_chunks();
  chunk->set_address(0x10000);
  chunk->set_length_bytes(size);
  request->set_memory_key(0xabc);
}

lite::v1::Grant ManagerTest::Map(const TestNode& holder,
                                 const std::string& name,
                                 const lite::v1::Credentials& requester,
                                 bool read, bool write) {
  lite::v1::MapLmrRequest request;
  *request.mutable_caller() = holder.caller();
  *request.mutable_requester() = requester;
  request.set_name(name);
  *request.mutable_access() = Access(read, write);
  absl::StatusOr<lite::v1::MapLmrResponse> mapped = state_->MapLmr(request);
  EXPECT_TRUE(mapped.ok()) << mapped.status();
  return mapped.ok() ? mapped->grant() : lite::v1::Grant();
}

void ManagerTest::Beat(const TestNode& node) {
  lite::v1::Heartbeat heartbeat;
  heartbeat.set_node_id(node.id);
  heartbeat.set_incarnation(node.incarnation);
  heartbeat.set_heartbeat_seq(2);
  absl::Status status = state_->Heartbeat(node.binding(), heartbeat);
  EXPECT_TRUE(status.ok()) << status;
}

std::vector<lite::v1::ManagerMessage> ManagerTest::Drain(Outbox& outbox) {
  std::vector<lite::v1::ManagerMessage> out;
  while (true) {
    Outbox::Next next = outbox.Pop();
    if (next.message == nullptr) break;
    out.push_back(next.message->message());
  }
  return out;
}

std::vector<lite::v1::Event> ManagerTest::DrainEvents(Outbox& outbox) {
  std::vector<lite::v1::Event> out;
  for (const lite::v1::ManagerMessage& message : Drain(outbox)) {
    if (message.has_event()) out.push_back(message.event());
  }
  return out;
}

std::vector<lite::v1::ManagerMessage> ManagerTest::DrainSession(
    const TestNode& node, bool batched) {
  const SessionRecipient recipient{.self = {node.id, node.incarnation},
                                   .secrets = &state_->pair_secrets()};
  std::vector<lite::v1::ManagerMessage> out;
  while (true) {
    // What StreamPump<>::WriteNextLocked does, with the same functions.
    Outbox::Batch next = node.outbox->PopEvents(batched ? 1024 : 1, 1 << 18);
    if (next.messages.empty()) break;
    std::string wire = next.messages.size() > 1
                           ? EventBatchWire(next.messages)
                           : next.messages.front()->SessionWire();
    wire += PeerSecretsWire(next.messages, recipient);
    lite::v1::ManagerMessage message;
    EXPECT_TRUE(message.ParseFromString(wire));
    out.push_back(std::move(message));
  }
  return out;
}

std::optional<absl::Status> ManagerTest::CloseStatus(Outbox& outbox) {
  Drain(outbox);
  return outbox.Pop().closed;
}

std::string ManagerTest::Snapshot() const {
  std::string out;
  lite::v1::ListNodesRequest nodes_request;
  nodes_request.set_page_size(10000);
  absl::StatusOr<lite::v1::ListNodesResponse> nodes =
      state_->ListNodes(nodes_request);
  absl::StrAppend(&out, "nodes: ",
                  nodes.ok() ? nodes->DebugString() : nodes.status().ToString(),
                  "\n");
  lite::v1::ListLmrsRequest lmrs_request;
  lmrs_request.set_page_size(10000);
  absl::StatusOr<lite::v1::ListLmrsResponse> lmrs =
      state_->ListLmrs(lmrs_request);
  absl::StrAppend(&out, "lmrs: ",
                  lmrs.ok() ? lmrs->DebugString() : lmrs.status().ToString(),
                  "\n");
  lite::v1::ListGrantsRequest grants_request;
  grants_request.set_page_size(10000);
  absl::StatusOr<lite::v1::ListGrantsResponse> grants =
      state_->ListGrants(grants_request);
  absl::StrAppend(
      &out, "grants: ",
      grants.ok() ? grants->DebugString() : grants.status().ToString(), "\n");
  const ManagerCounters counters = state_->counters();
  absl::StrAppend(&out, "events: ", state_->last_event_sequence(),
                  " joins: ", counters.joins, " failures: ", counters.failures,
                  " grants_issued: ", counters.grants_issued,
                  " grants_revoked: ", counters.grants_revoked,
                  " alive: ", counters.nodes_alive,
                  " sessions: ", counters.sessions_open, "\n");
  return out;
}

}  // namespace lite::controlplane::testing
