// NetlinkModule's RPC conversions (netlink_rpc.cc) and their errno
// mapping, without lite.ko.
#include "agent/netlink_rpc.h"

#include <cerrno>

#include "agent/netlink_module.h"
#include "gtest/gtest.h"

namespace lite::agent {
namespace {

genl::UpcallRequest Base(genl::UpcallKind kind) {
  genl::UpcallRequest r;
  r.upcall_id = 9;
  r.kind = kind;
  r.uid = 1000;
  r.gid = 100;
  r.pid = 4242;
  r.groups = {100, 2000};
  return r;
}

TEST(RpcUpcallTest, EveryRpcKindFromTheKernel) {
  genl::UpcallRequest r = Base(genl::UpcallKind::kRpcRegister);
  r.name = "echo";
  r.mode = 0751;
  r.port = 3;
  r.max_request = 100;
  r.max_reply = 200;
  r.depth = 16;
  r.max_clients = 2;
  absl::StatusOr<Upcall> u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->credentials.groups_size(), 2);
  const auto& reg = std::get<RpcRegisterUpcall>(u->request);
  EXPECT_EQ(reg.name, "echo");
  EXPECT_EQ(reg.mode, 0751u);
  EXPECT_EQ(reg.port, 3u);
  EXPECT_EQ(reg.max_request_bytes, 100u);
  EXPECT_EQ(reg.max_reply_bytes, 200u);
  EXPECT_EQ(reg.depth, 16u);
  EXPECT_EQ(reg.max_clients, 2u);

  r = Base(genl::UpcallKind::kRpcUnregister);
  r.service_id = 0x100000003ULL;
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(std::get<RpcUnregisterUpcall>(u->request).service_id,
            0x100000003ULL);

  r = Base(genl::UpcallKind::kRpcOpen);
  r.name = "echo";
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(std::get<RpcOpenUpcall>(u->request).name, "echo");

  r = Base(genl::UpcallKind::kRpcBind);
  r.service_id = 0x200000007ULL;
  r.rpc_addr = 0xab000;
  r.memory_key = 0x31;
  r.slot_bytes = 128;
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  const auto& bind = std::get<RpcBindUpcall>(u->request);
  EXPECT_EQ(bind.service_id, 0x200000007ULL);
  EXPECT_EQ(bind.reply_address, 0xab000u);
  EXPECT_EQ(bind.reply_key, 0x31u);
  EXPECT_EQ(bind.reply_slot_bytes, 128u);

  r = Base(static_cast<genl::UpcallKind>(99));
  EXPECT_EQ(UpcallFromGenl(r).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RpcCompletionTest, EachAnswerGoesToItsAttributes) {
  UpcallReply reply;
  reply.upcall_id = 5;
  reply.service_id = 0x100000003ULL;
  absl::StatusOr<genl::UpcallCompletion> c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->error, 0u);
  EXPECT_EQ(c->service_id, 0x100000003ULL);
  EXPECT_FALSE(c->service.has_value());

  reply = UpcallReply{.upcall_id = 6};
  lite::v1::Service s;
  s.set_service_id(0x200000007ULL);
  s.set_node_id(2);
  s.set_port(5);
  s.set_max_request_bytes(64);
  s.set_max_reply_bytes(128);
  s.set_depth(8);
  s.set_owner_uid(1);  // not lite.ko's business
  reply.service = s;
  c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->service.has_value());
  EXPECT_EQ(c->service->service_id, 0x200000007ULL);
  EXPECT_EQ(c->service->node_id, 2u);
  EXPECT_EQ(c->service->port, 5u);
  EXPECT_EQ(c->service->max_request, 64u);
  EXPECT_EQ(c->service->max_reply, 128u);
  EXPECT_EQ(c->service->depth, 8u);
  EXPECT_FALSE(c->service_id.has_value());

  reply = UpcallReply{.upcall_id = 7};
  lite::v1::BoundServiceRing ring;
  ring.set_ring_address(0x5000);
  ring.set_ring_key(0x66);
  ring.set_depth(8);
  ring.set_slot_bytes(64);
  reply.ring = ring;
  c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->ring.has_value());
  EXPECT_EQ(
      *c->ring,
      (genl::RpcRing{
          .addr = 0x5000, .memory_key = 0x66, .depth = 8, .slot_bytes = 64}));
  // Two answers at once, an open's service without its node, id 0.
  reply.service_id = 1;
  EXPECT_FALSE(CompletionFromReply(reply).ok());
  reply = UpcallReply{.upcall_id = 8};
  s.set_node_id(0);
  reply.service = s;
  EXPECT_FALSE(CompletionFromReply(reply).ok());
  reply = UpcallReply{.upcall_id = 8, .service_id = 0};
  EXPECT_FALSE(CompletionFromReply(reply).ok());
}

TEST(RpcCompletionTest, BindRefusalIsEusersOtherwiseTheStatusErrno) {
  UpcallReply reply{.upcall_id = 5,
                    .status = absl::ResourceExhaustedError("rings taken"),
                    .error_errno = EUSERS};
  absl::StatusOr<genl::UpcallCompletion> c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->error, static_cast<uint32_t>(EUSERS));
  EXPECT_EQ(c->message, "rings taken");
  reply.error_errno = 0;
  c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->error, static_cast<uint32_t>(ENOSPC));
  // The override never turns a success into a failure.
  reply = UpcallReply{.upcall_id = 5, .error_errno = EUSERS};
  reply.service_id = 3;
  c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->error, 0u);
}

TEST(RpcErrnoTest, RpcBindRefusalsAsModuleCodes) {
  // As the manager passes them on: NOT_FOUND, RESOURCE_EXHAUSTED,
  // UNAVAILABLE, FAILED_PRECONDITION.
  EXPECT_EQ(ErrnoToModuleCode(ENOENT), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoToModuleCode(EUSERS), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoToModuleCode(EHOSTDOWN), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoToModuleCode(ESTALE), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToModuleCode(EINTR), absl::StatusCode::kCancelled);
}

TEST(RpcConversionTest, BindRequestRingAndServiceEntry) {
  lite::v1::BindServiceRing b;
  b.set_service_id(0x100000003ULL);
  b.set_port(3);
  b.set_client_node_id(2);
  b.set_client_incarnation(77);
  b.set_reply_address(0xcc000);
  b.set_reply_key(0x12);
  b.set_reply_slot_bytes(256);
  const genl::RpcBindRequest r = RpcBindFromProto(b);
  EXPECT_EQ(r.service_id, 0x100000003ULL);
  EXPECT_EQ(r.port, 3u);
  EXPECT_EQ(r.client_node_id, 2u);
  EXPECT_EQ(r.client_incarnation, 77u);
  EXPECT_EQ(r.reply_addr, 0xcc000u);
  EXPECT_EQ(r.reply_key, 0x12u);
  EXPECT_EQ(r.reply_slot_bytes, 256u);

  const lite::v1::BoundServiceRing ring = RingFromGenl(
      {.addr = 0x4000, .memory_key = 9, .depth = 16, .slot_bytes = 4096});
  EXPECT_EQ(ring.ring_address(), 0x4000u);
  EXPECT_EQ(ring.ring_key(), 9u);
  EXPECT_EQ(ring.depth(), 16u);
  EXPECT_EQ(ring.slot_bytes(), 4096u);

  genl::ServiceInfo info{.service_id = 0x100000003ULL,
                         .name = "echo",
                         .port = 3,
                         .uid = 1000,
                         .gid = 100,
                         .pid = 4242,
                         .mode = 0711,
                         .max_request = 512,
                         .max_reply = 1024,
                         .depth = 32,
                         .max_clients = 4,
                         .clients = 2,
                         .queued = 5,
                         .served = 99,
                         .closing = true};
  const ServedService s = ServiceFromGenl(info, 1);
  EXPECT_EQ(s.service.service_id(), 0x100000003ULL);
  EXPECT_EQ(s.service.name(), "echo");
  EXPECT_EQ(s.service.node_id(), 1u);
  EXPECT_EQ(s.service.port(), 3u);
  EXPECT_EQ(s.service.owner_uid(), 1000u);
  EXPECT_EQ(s.service.owner_gid(), 100u);
  EXPECT_EQ(s.service.owner_pid(), 4242u);
  EXPECT_EQ(s.service.mode(), 0711u);
  EXPECT_EQ(s.service.max_request_bytes(), 512u);
  EXPECT_EQ(s.service.max_reply_bytes(), 1024u);
  EXPECT_EQ(s.service.depth(), 32u);
  EXPECT_EQ(s.service.max_clients(), 4u);
  EXPECT_EQ(s.service.clients(), 2u);
  EXPECT_EQ(s.service.queued(), 5u);
  EXPECT_EQ(s.service.served(), 99u);
  EXPECT_TRUE(s.closing);
}

}  // namespace
}  // namespace lite::agent
