// The RPC immediate (lite_rpc_imm.h), encoded and decoded on the host with
// the code lite.ko runs: every field round-trips at its limits, fields never
// bleed into each other, and what a receiver must drop is refused.
#include "kmod/rpc/lite_rpc_imm.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace {

lite_rpc_imm Imm(uint8_t kind, uint16_t port, uint8_t code, uint16_t slot) {
  lite_rpc_imm m{};
  m.kind = kind;
  m.port = port;
  m.code = code;
  m.slot = slot;
  return m;
}

TEST(RpcImmTest, LayoutIsKindPortCodeSlot) {
  lite_rpc_imm m = Imm(LITE_RPC_KIND_REPLY, 0x1234, 1, 0xabc);
  EXPECT_EQ(lite_rpc_imm_encode(&m), (2u << 30) | (0x1234u << 16) |
                                         (1u << 12) | 0xabcu);
}

TEST(RpcImmTest, EveryPortAndSlotRoundTrips) {
  for (uint32_t port = 1; port <= LITE_RPC_IMM_PORT_MAX; port += 97) {
    for (uint32_t slot = 0; slot < LITE_RPC_IMM_SLOTS; slot += 61) {
      for (uint8_t kind : {LITE_RPC_KIND_CALL, LITE_RPC_KIND_MSG}) {
        lite_rpc_imm in = Imm(kind, port, 0, slot), out{};
        ASSERT_TRUE(lite_rpc_imm_decode(lite_rpc_imm_encode(&in), &out));
        EXPECT_EQ(out.kind, kind);
        EXPECT_EQ(out.port, port);
        EXPECT_EQ(out.slot, slot);
        EXPECT_EQ(out.code, 0);
      }
    }
  }
}

TEST(RpcImmTest, LimitsRoundTrip) {
  lite_rpc_imm in = Imm(LITE_RPC_KIND_REPLY, LITE_RPC_IMM_PORT_MAX,
                        LITE_RPC_STATUS_REFUSED, LITE_RPC_IMM_SLOTS - 1);
  lite_rpc_imm out{};
  ASSERT_TRUE(lite_rpc_imm_decode(lite_rpc_imm_encode(&in), &out));
  EXPECT_EQ(out.port, LITE_RPC_IMM_PORT_MAX);
  EXPECT_EQ(out.slot, LITE_RPC_IMM_SLOTS - 1);
  EXPECT_EQ(out.code, LITE_RPC_STATUS_REFUSED);
  // The port's 14 bits are the node's port space in the uapi.
  EXPECT_EQ(LITE_RPC_IMM_PORT_MAX, (1u << LITE_RPC_IMM_PORT_BITS) - 1);
  EXPECT_EQ(LITE_RPC_IMM_SLOTS, 1u << LITE_RPC_IMM_SLOT_BITS);
  EXPECT_EQ(LITE_RPC_IMM_PORT_MAX, 16383u);
}

TEST(RpcImmTest, PortZeroIsDropped) {
  lite_rpc_imm out{};
  for (uint8_t kind = 0; kind < 4; ++kind) {
    lite_rpc_imm in = Imm(kind, 0, 0, 0);
    EXPECT_FALSE(lite_rpc_imm_decode(lite_rpc_imm_encode(&in), &out));
  }
}

TEST(RpcImmTest, RequestsCarryNoCode) {
  lite_rpc_imm out{};
  for (uint8_t code = 1; code < 16; ++code) {
    lite_rpc_imm call = Imm(LITE_RPC_KIND_CALL, 7, code, 3);
    lite_rpc_imm msg = Imm(LITE_RPC_KIND_MSG, 7, code, 3);
    EXPECT_FALSE(lite_rpc_imm_decode(lite_rpc_imm_encode(&call), &out));
    EXPECT_FALSE(lite_rpc_imm_decode(lite_rpc_imm_encode(&msg), &out));
  }
}

TEST(RpcImmTest, RepliesCarryOnlyKnownStatus) {
  lite_rpc_imm out{};
  for (uint8_t code = 0; code < 16; ++code) {
    lite_rpc_imm in = Imm(LITE_RPC_KIND_REPLY, 9, code, 5);
    EXPECT_EQ(lite_rpc_imm_decode(lite_rpc_imm_encode(&in), &out),
              code < __LITE_RPC_STATUS_MAX)
        << int(code);
  }
}

TEST(RpcImmTest, ControlCodes) {
  lite_rpc_imm out{};
  lite_rpc_imm credit = Imm(LITE_RPC_KIND_CTRL, 9, LITE_RPC_CTRL_CREDIT, 77);
  ASSERT_TRUE(lite_rpc_imm_decode(lite_rpc_imm_encode(&credit), &out));
  EXPECT_EQ(out.slot, 77);
  for (uint8_t code : {LITE_RPC_CTRL_GONE, LITE_RPC_CTRL_RELEASED}) {
    lite_rpc_imm ok = Imm(LITE_RPC_KIND_CTRL, 9, code, 0);
    lite_rpc_imm with_slot = Imm(LITE_RPC_KIND_CTRL, 9, code, 1);
    EXPECT_TRUE(lite_rpc_imm_decode(lite_rpc_imm_encode(&ok), &out));
    EXPECT_FALSE(lite_rpc_imm_decode(lite_rpc_imm_encode(&with_slot), &out));
  }
  for (uint8_t code : {0, 4, 15}) {
    lite_rpc_imm bad = Imm(LITE_RPC_KIND_CTRL, 9, code, 0);
    EXPECT_FALSE(lite_rpc_imm_decode(lite_rpc_imm_encode(&bad), &out))
        << int(code);
  }
}

}  // namespace
