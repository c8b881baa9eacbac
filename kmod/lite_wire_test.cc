// The connection private data (lite_wire.h), built and checked on the host
// with the same code lite.ko runs: every field an acceptor or initiator
// refuses, and what it answers.
#include "kmod/lite_wire.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace {

constexpr lite_cm_node kInitiator = {2, 1002};
constexpr lite_cm_node kAcceptor = {5, 5005};
constexpr uint16_t kQps = 2;

lite_cm_req Request(uint16_t index = 1) {
  lite_cm_req req;
  lite_cm_fill_req(&req, &kInitiator, &kAcceptor, index, kQps);
  return req;
}

int Check(const lite_cm_req& req, size_t len = sizeof(lite_cm_req),
          const lite_cm_node* self = &kAcceptor, uint16_t qps = kQps) {
  lite_cm_node src = {};
  uint16_t index = 0;
  return lite_cm_check_req(&req, len, self, qps, &src, &index);
}

TEST(WireTest, SizesFitRdmaCmPrivateData) {
  EXPECT_EQ(sizeof(lite_cm_req), 40u);  // of the 56 bytes a REQ leaves
  EXPECT_EQ(sizeof(lite_cm_rep), 24u);
  EXPECT_EQ(sizeof(lite_cm_rej), 24u);
}

TEST(WireTest, RequestIsBigEndian) {
  lite_cm_req req = Request();
  const auto* bytes = reinterpret_cast<const unsigned char*>(&req);
  EXPECT_EQ(std::memcmp(bytes, "LITE", 4), 0);
  EXPECT_EQ(bytes[5], LITE_CM_VERSION);
  EXPECT_EQ(bytes[7], 1);  // qp_index
}

TEST(WireTest, ValidRequestYieldsInitiatorAndIndex) {
  lite_cm_req req = Request(1);
  lite_cm_node src = {};
  uint16_t index = 9;
  ASSERT_EQ(lite_cm_check_req(&req, 56, &kAcceptor, kQps, &src, &index), 0);
  EXPECT_EQ(src.id, kInitiator.id);
  EXPECT_EQ(src.incarnation, kInitiator.incarnation);
  EXPECT_EQ(index, 1);
}

TEST(WireTest, MalformedRequestsAreBad) {
  lite_cm_req req = Request();
  EXPECT_EQ(lite_cm_check_req(nullptr, 0, &kAcceptor, kQps, nullptr, nullptr),
            LITE_REJ_BAD_REQUEST);
  EXPECT_EQ(Check(req, sizeof(req) - 1), LITE_REJ_BAD_REQUEST);
  req.magic ^= 1;
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
  req = Request();
  req.version = cpu_to_be16(LITE_CM_VERSION + 1);
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
  req = Request();
  req.reserved0 = cpu_to_be16(1);
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
  req = Request();
  req.reserved1 = cpu_to_be32(1);
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
  req = Request();
  req.src_node_id = 0;
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
  req = Request();
  req.src_incarnation = 0;
  EXPECT_EQ(Check(req), LITE_REJ_BAD_REQUEST);
}

TEST(WireTest, AcceptorWithoutIdentityIsNotReady) {
  EXPECT_EQ(Check(Request(), sizeof(lite_cm_req), nullptr), LITE_REJ_NOT_READY);
}

TEST(WireTest, RequestForAnotherNodeOrIncarnation) {
  lite_cm_node other_node = {6, kAcceptor.incarnation};
  lite_cm_node restarted = {kAcceptor.id, kAcceptor.incarnation + 1};
  EXPECT_EQ(Check(Request(), sizeof(lite_cm_req), &other_node),
            LITE_REJ_WRONG_NODE);
  EXPECT_EQ(Check(Request(), sizeof(lite_cm_req), &restarted),
            LITE_REJ_WRONG_NODE);
}

TEST(WireTest, OnlyTheSmallerIdInitiates) {
  lite_cm_node small = {1, 77};
  lite_cm_node big = {9, 99};
  lite_cm_req req;
  lite_cm_fill_req(&req, &big, &small, 0, kQps);
  EXPECT_EQ(Check(req, sizeof(req), &small), LITE_REJ_ROLE);
  lite_cm_fill_req(&req, &small, &small, 0, kQps);  // itself
  EXPECT_EQ(Check(req, sizeof(req), &small), LITE_REJ_ROLE);
}

TEST(WireTest, QueuePairCountsMustAgree) {
  EXPECT_EQ(Check(Request(0), sizeof(lite_cm_req), &kAcceptor, 3),
            LITE_REJ_PARAMS);
  EXPECT_EQ(Check(Request(kQps)), LITE_REJ_PARAMS);
  EXPECT_EQ(Check(Request(kQps - 1)), 0);
}

TEST(WireTest, ReplyChecks) {
  lite_cm_rep rep;
  lite_cm_fill_rep(&rep, &kAcceptor, 1);
  EXPECT_EQ(lite_cm_check_rep(&rep, 196, &kAcceptor, 1), 0);
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep) - 1, &kAcceptor, 1), -EPROTO);
  EXPECT_EQ(lite_cm_check_rep(nullptr, 0, &kAcceptor, 1), -EPROTO);
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep), &kAcceptor, 0), -EPROTO);
  lite_cm_node restarted = {kAcceptor.id, kAcceptor.incarnation + 1};
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep), &restarted, 1), -ESTALE);
  rep.reserved = cpu_to_be32(1);
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep), &kAcceptor, 1), -EPROTO);
}

TEST(WireTest, RejectReasons) {
  lite_cm_rej rej;
  lite_cm_fill_rej(&rej, &kAcceptor, LITE_REJ_UNKNOWN_PEER);
  EXPECT_EQ(lite_cm_rej_reason(&rej, 148), LITE_REJ_UNKNOWN_PEER);
  EXPECT_EQ(lite_cm_rej_reason(&rej, sizeof(rej) - 1), 0);
  EXPECT_EQ(lite_cm_rej_reason(nullptr, 0), 0);
  rej.magic = 0;
  EXPECT_EQ(lite_cm_rej_reason(&rej, sizeof(rej)), 0);

  for (int r : {LITE_REJ_NOT_READY, LITE_REJ_UNKNOWN_PEER, LITE_REJ_NEWER,
                LITE_REJ_NO_RESOURCES}) {
    EXPECT_TRUE(lite_cm_rej_is_transient(r)) << r;
  }
  for (int r : {LITE_REJ_BAD_REQUEST, LITE_REJ_WRONG_NODE, LITE_REJ_STALE,
                LITE_REJ_PARAMS, LITE_REJ_ROLE, LITE_REJ_ADDRESS}) {
    EXPECT_FALSE(lite_cm_rej_is_transient(r)) << r;
  }
}

}  // namespace
