// The RPC messages of lite.ko's family (issue #11), without the kernel:
// messages built with libnl the way lite.ko lays them out, and the encoders'
// requests parsed back.
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>

#include "genl/codec.h"
#include "genl/errors.h"
#include "genl/types.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite.h"
#include "kmod/include/uapi/lite_rpc.h"

namespace lite::genl {
namespace {

using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

MsgPtr NewMessage(uint8_t cmd) {
  MsgPtr msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 0, 0, /*family=*/42, 0, 0, cmd, LITE_GENL_VERSION);
  return msg;
}

struct Parsed {
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
};

Parsed ParseRequest(nl_msg* msg) {
  Parsed p;
  EXPECT_EQ(genlmsg_parse(nlmsg_hdr(msg), 0, p.tb, LITE_ATTR_MAX, nullptr), 0);
  return p;
}

void PutUpcallHeader(nl_msg* msg, uint64_t id, uint32_t kind) {
  nla_put_u64(msg, LITE_ATTR_UPCALL_ID, id);
  nla_put_u32(msg, LITE_ATTR_UPCALL_KIND, kind);
  nla_put_u32(msg, LITE_ATTR_UID, 1000);
  nla_put_u32(msg, LITE_ATTR_GID, 100);
  nla_put_u32(msg, LITE_ATTR_PID, 777);
  const uint32_t groups[] = {100};
  nla_put(msg, LITE_ATTR_GROUPS, sizeof(groups), groups);
}

// An RPC_REGISTER upcall with every attribute, then @change on top.
MsgPtr RegisterUpcall(const std::function<void(nl_msg*)>& change = {}) {
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
  PutUpcallHeader(msg.get(), 9, LITE_UPCALL_RPC_REGISTER);
  nla_put_string(msg.get(), LITE_ATTR_NAME, "echo");
  nla_put_u32(msg.get(), LITE_ATTR_MODE, 0751);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_PORT, 3);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_REQUEST, 4096);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_REPLY, 0);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_DEPTH, 16);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_CLIENTS, 4);
  if (change) change(msg.get());
  return msg;
}

TEST(RpcUpcallTest, RegisterCarriesTheService) {
  MsgPtr msg = RegisterUpcall();
  auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->kind, UpcallKind::kRpcRegister);
  EXPECT_STREQ(UpcallKindName(u->kind), "rpc_register");
  EXPECT_EQ(u->name, "echo");
  EXPECT_EQ(u->mode, 0751u);  // the x bits pass
  EXPECT_EQ(u->port, 3u);
  EXPECT_EQ(u->max_request, 4096u);
  EXPECT_EQ(u->max_reply, 0u);
  EXPECT_EQ(u->depth, 16u);
  EXPECT_EQ(u->max_clients, 4u);
}

TEST(RpcUpcallTest, RegisterOutOfRangeIsRejected) {
  // Later attributes of the same type win in nla_parse: each case
  // overrides one value with a bad one.
  const std::function<void(nl_msg*)> bad[] = {
      [](nl_msg* m) { nla_put_u32(m, LITE_ATTR_MODE, 01777); },
      [](nl_msg* m) { nla_put_u32(m, LITE_ATTR_RPC_PORT, 0); },
      [](nl_msg* m) {
        nla_put_u32(m, LITE_ATTR_RPC_PORT, LITE_RPC_PORT_MAX + 1);
      },
      [](nl_msg* m) {
        nla_put_u32(m, LITE_ATTR_RPC_MAX_REQUEST, LITE_RPC_MSG_MAX + 1);
      },
      [](nl_msg* m) {
        nla_put_u32(m, LITE_ATTR_RPC_MAX_REPLY, LITE_RPC_MSG_MAX + 1);
      },
      [](nl_msg* m) { nla_put_u32(m, LITE_ATTR_RPC_DEPTH, 0); },
      [](nl_msg* m) {
        nla_put_u32(m, LITE_ATTR_RPC_DEPTH, LITE_RPC_DEPTH_MAX + 1);
      },
      [](nl_msg* m) { nla_put_u32(m, LITE_ATTR_RPC_MAX_CLIENTS, 0); },
      [](nl_msg* m) {
        nla_put_u32(m, LITE_ATTR_RPC_MAX_CLIENTS, LITE_RPC_CLIENTS_MAX + 1);
      },
  };
  for (size_t i = 0; i < std::size(bad); ++i) {
    MsgPtr msg = RegisterUpcall(bad[i]);
    EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG)
        << "case " << i;
  }
  // Missing: a register without a port.
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
  PutUpcallHeader(msg.get(), 9, LITE_UPCALL_RPC_REGISTER);
  nla_put_string(msg.get(), LITE_ATTR_NAME, "echo");
  nla_put_u32(msg.get(), LITE_ATTR_MODE, 0700);
  EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG);
}

TEST(RpcUpcallTest, UnregisterOpenAndBind) {
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 10, LITE_UPCALL_RPC_UNREGISTER);
    nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 0x200000001ULL);
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->kind, UpcallKind::kRpcUnregister);
    EXPECT_EQ(u->service_id, 0x200000001ULL);
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 11, LITE_UPCALL_RPC_OPEN);
    nla_put_string(msg.get(), LITE_ATTR_NAME, "echo");
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->kind, UpcallKind::kRpcOpen);
    EXPECT_EQ(u->name, "echo");
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 12, LITE_UPCALL_RPC_BIND);
    nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 0x200000001ULL);
    nla_put_u64(msg.get(), LITE_ATTR_RPC_ADDR, 0xabc000);
    nla_put_u32(msg.get(), LITE_ATTR_MEMORY_KEY, 0x77);
    nla_put_u32(msg.get(), LITE_ATTR_RPC_SLOT_BYTES, 128);
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->kind, UpcallKind::kRpcBind);
    EXPECT_EQ(u->service_id, 0x200000001ULL);
    EXPECT_EQ(u->rpc_addr, 0xabc000u);
    EXPECT_EQ(u->memory_key, 0x77u);
    EXPECT_EQ(u->slot_bytes, 128u);
  }
}

TEST(RpcUpcallTest, MalformedUnregisterOpenAndBindAreRejected) {
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);  // service id 0
    PutUpcallHeader(msg.get(), 10, LITE_UPCALL_RPC_UNREGISTER);
    nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 0);
    EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG);
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);  // no name
    PutUpcallHeader(msg.get(), 11, LITE_UPCALL_RPC_OPEN);
    EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG);
  }
  for (uint32_t slot : {0u, 32u, 100u, LITE_RPC_MSG_MAX + 64}) {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);  // slot bytes out of range
    PutUpcallHeader(msg.get(), 12, LITE_UPCALL_RPC_BIND);
    nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 1);
    nla_put_u64(msg.get(), LITE_ATTR_RPC_ADDR, 0xabc000);
    nla_put_u32(msg.get(), LITE_ATTR_MEMORY_KEY, 0x77);
    nla_put_u32(msg.get(), LITE_ATTR_RPC_SLOT_BYTES, slot);
    EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG)
        << slot;
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);  // no key
    PutUpcallHeader(msg.get(), 12, LITE_UPCALL_RPC_BIND);
    nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 1);
    nla_put_u64(msg.get(), LITE_ATTR_RPC_ADDR, 0xabc000);
    nla_put_u32(msg.get(), LITE_ATTR_RPC_SLOT_BYTES, 64);
    EXPECT_EQ(ErrnoOf(DecodeUpcall(nlmsg_hdr(msg.get())).status()), EBADMSG);
  }
}

TEST(RpcCompletionTest, EachAnswerCarriesItsAttributes) {
  {
    UpcallCompletion c{.upcall_id = 1, .service_id = 0x200000001ULL};
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
    ASSERT_TRUE(EncodeUpcallCompletion(msg.get(), c).ok());
    Parsed p = ParseRequest(msg.get());
    ASSERT_NE(p.tb[LITE_ATTR_SERVICE_ID], nullptr);
    EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_SERVICE_ID]), 0x200000001ULL);
    EXPECT_EQ(p.tb[LITE_ATTR_RPC_PORT], nullptr);
  }
  {
    UpcallCompletion c{.upcall_id = 2,
                       .service = RpcServiceAddress{.service_id = 5,
                                                    .node_id = 2,
                                                    .port = 3,
                                                    .max_request = 64,
                                                    .max_reply = 128,
                                                    .depth = 8}};
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
    ASSERT_TRUE(EncodeUpcallCompletion(msg.get(), c).ok());
    Parsed p = ParseRequest(msg.get());
    EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_SERVICE_ID]), 5u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_NODE_ID]), 2u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_PORT]), 3u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_MAX_REQUEST]), 64u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_MAX_REPLY]), 128u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_DEPTH]), 8u);
  }
  {
    UpcallCompletion c{
        .upcall_id = 3,
        .ring = RpcRing{
            .addr = 0x1000, .memory_key = 9, .depth = 8, .slot_bytes = 4096}};
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
    ASSERT_TRUE(EncodeUpcallCompletion(msg.get(), c).ok());
    Parsed p = ParseRequest(msg.get());
    EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_RPC_ADDR]), 0x1000u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_MEMORY_KEY]), 9u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_DEPTH]), 8u);
    EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_SLOT_BYTES]), 4096u);
  }
}

TEST(RpcCompletionTest, RejectsWhatTheUapiDoesNotAllow) {
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
  UpcallCompletion c{.upcall_id = 1, .service_id = 0};
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
  c.service_id = 5;
  c.ring = RpcRing{.depth = 8, .slot_bytes = 64};  // two answers
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
  c = UpcallCompletion{.upcall_id = 1, .error = ENOENT, .service_id = 5};
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
  const RpcServiceAddress good{.service_id = 5,
                               .node_id = 2,
                               .port = 3,
                               .max_request = 64,
                               .max_reply = 64,
                               .depth = 8};
  RpcServiceAddress bad[] = {good, good, good, good};
  bad[0].node_id = 0;
  bad[1].port = LITE_RPC_PORT_MAX + 1;
  bad[2].depth = 0;
  bad[3].max_reply = LITE_RPC_MSG_MAX + 1;
  for (const RpcServiceAddress& s : bad) {
    c = UpcallCompletion{.upcall_id = 1, .service = s};
    EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
  }
  c = UpcallCompletion{.upcall_id = 1,
                       .ring = RpcRing{.depth = 8, .slot_bytes = 65}};
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
}

TEST(RpcBindTest, EncodesEveryAttributeAndValidates) {
  const RpcBindRequest good{.service_id = 0x200000001ULL,
                            .port = 3,
                            .client_node_id = 4,
                            .client_incarnation = 77,
                            .reply_addr = 0xfeed000,
                            .reply_key = 0x55,
                            .reply_slot_bytes = 192};
  MsgPtr msg = NewMessage(LITE_CMD_RPC_BIND);
  ASSERT_TRUE(EncodeRpcBind(msg.get(), good).ok());
  Parsed p = ParseRequest(msg.get());
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_SERVICE_ID]), good.service_id);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_PORT]), 3u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_NODE_ID]), 4u);
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_INCARNATION]), 77u);
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_RPC_ADDR]), 0xfeed000u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_MEMORY_KEY]), 0x55u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_RPC_SLOT_BYTES]), 192u);
  RpcBindRequest bad[] = {good, good, good, good, good};
  bad[0].service_id = 0;
  bad[1].port = 0;
  bad[2].client_node_id = 0;
  bad[3].client_incarnation = 0;
  bad[4].reply_slot_bytes = 100;
  for (const RpcBindRequest& r : bad) {
    MsgPtr m = NewMessage(LITE_CMD_RPC_BIND);
    EXPECT_EQ(ErrnoOf(EncodeRpcBind(m.get(), r)), EINVAL);
  }
}

TEST(RpcBindTest, DecodesTheRing) {
  MsgPtr msg = NewMessage(LITE_CMD_RPC_BIND);
  nla_put_u64(msg.get(), LITE_ATTR_RPC_ADDR, 0x4000);
  nla_put_u32(msg.get(), LITE_ATTR_MEMORY_KEY, 0x99);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_DEPTH, 16);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_SLOT_BYTES, 4096);
  auto ring = DecodeRpcRing(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_EQ(*ring, (RpcRing{.addr = 0x4000,
                            .memory_key = 0x99,
                            .depth = 16,
                            .slot_bytes = 4096}));
  // A ring over LITE_RPC_RING_MAX cannot be physically contiguous.
  nla_put_u32(msg.get(), LITE_ATTR_RPC_DEPTH, 1024);  // exactly 4 MiB
  EXPECT_TRUE(DecodeRpcRing(nlmsg_hdr(msg.get())).ok());
  nla_put_u32(msg.get(), LITE_ATTR_RPC_SLOT_BYTES, 8192);
  EXPECT_EQ(ErrnoOf(DecodeRpcRing(nlmsg_hdr(msg.get())).status()), EBADMSG);
  MsgPtr wrong = NewMessage(LITE_CMD_RPC_SERVICE_GET);
  EXPECT_EQ(ErrnoOf(DecodeRpcRing(nlmsg_hdr(wrong.get())).status()), EBADMSG);
}

MsgPtr ServiceEntry() {
  MsgPtr msg = NewMessage(LITE_CMD_RPC_SERVICE_GET);
  nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 0x200000001ULL);
  nla_put_string(msg.get(), LITE_ATTR_NAME, "echo");
  nla_put_u32(msg.get(), LITE_ATTR_RPC_PORT, 3);
  nla_put_u32(msg.get(), LITE_ATTR_UID, 1000);
  nla_put_u32(msg.get(), LITE_ATTR_GID, 100);
  nla_put_u32(msg.get(), LITE_ATTR_PID, 4242);
  nla_put_u32(msg.get(), LITE_ATTR_MODE, 0711);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_REQUEST, 512);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_REPLY, 1024);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_DEPTH, 32);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_MAX_CLIENTS, 4);
  nla_put_u32(msg.get(), LITE_ATTR_RPC_CLIENTS, 2);
  nla_put_u64(msg.get(), LITE_ATTR_RPC_QUEUED, 5);
  nla_put_u64(msg.get(), LITE_ATTR_RPC_SERVED, 123456789012ULL);
  return msg;
}

TEST(ServiceDumpTest, DecodesEveryAttribute) {
  MsgPtr msg = ServiceEntry();
  auto s = DecodeService(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->service_id, 0x200000001ULL);
  EXPECT_EQ(s->name, "echo");
  EXPECT_EQ(s->port, 3u);
  EXPECT_EQ(s->uid, 1000u);
  EXPECT_EQ(s->gid, 100u);
  EXPECT_EQ(s->pid, 4242u);
  EXPECT_EQ(s->mode, 0711u);
  EXPECT_EQ(s->max_request, 512u);
  EXPECT_EQ(s->max_reply, 1024u);
  EXPECT_EQ(s->depth, 32u);
  EXPECT_EQ(s->max_clients, 4u);
  EXPECT_EQ(s->clients, 2u);
  EXPECT_EQ(s->queued, 5u);
  EXPECT_EQ(s->served, 123456789012ULL);
  EXPECT_FALSE(s->closing);
  nla_put_flag(msg.get(), LITE_ATTR_RPC_CLOSING);
  s = DecodeService(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->closing);
}

TEST(ServiceDumpTest, MalformedEntriesAreRejected) {
  MsgPtr msg = ServiceEntry();
  nla_put_u32(msg.get(), LITE_ATTR_RPC_CLIENTS, 5);  // over max_clients
  EXPECT_EQ(ErrnoOf(DecodeService(nlmsg_hdr(msg.get())).status()), EBADMSG);
  msg = ServiceEntry();
  nla_put_u64(msg.get(), LITE_ATTR_SERVICE_ID, 0);
  EXPECT_EQ(ErrnoOf(DecodeService(nlmsg_hdr(msg.get())).status()), EBADMSG);
  MsgPtr bare = NewMessage(LITE_CMD_RPC_SERVICE_GET);  // nothing in it
  EXPECT_EQ(ErrnoOf(DecodeService(nlmsg_hdr(bare.get())).status()), EBADMSG);
}

}  // namespace
}  // namespace lite::genl
