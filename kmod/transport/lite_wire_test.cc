// The connection private data (lite_wire.h), built and checked on the host
// with the same code lite.ko runs: every field an acceptor or initiator
// refuses, and what it answers. Version 2's MACs are computed with
// OpenSSL's HMAC-SHA256 here and with the kernel crypto API in lite.ko.
#include "kmod/transport/lite_wire.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

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

// ---- version 2: the authenticated exchange ----

using Secret = std::array<uint8_t, LITE_CM_SECRET_LEN>;

Secret MakeSecret(uint8_t first) {
  Secret s;
  for (size_t i = 0; i < s.size(); i++) s[i] = static_cast<uint8_t>(first + i);
  return s;
}

const Secret kSecret = MakeSecret(0);
const Secret kOtherSecret = MakeSecret(1);

// lite_cm_mac_fn over OpenSSL: HMAC-SHA256 with the 32-byte secret at @key.
int OpenSslMac(void* key, const void* data, size_t len, u8* mac) {
  unsigned char full[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key, LITE_CM_SECRET_LEN,
            static_cast<const unsigned char*>(data), len, full, &n) ||
      n != 32) {
    return -EIO;
  }
  std::memcpy(mac, full, LITE_CM_MAC_LEN);
  return 0;
}

int FailingMac(void*, const void*, size_t, u8*) { return -ENOMEM; }

void* Key(const Secret& s) { return const_cast<uint8_t*>(s.data()); }

constexpr uint64_t kNonce = 0x0102030405060708ULL;
constexpr uint64_t kChallenge = 0x1122334455667788ULL;
constexpr uint64_t kNow = 1000000;

lite_cm_req2 Request2(uint64_t challenge = kChallenge,
                      const Secret& secret = kSecret, uint8_t index = 1,
                      const lite_cm_node& src = kInitiator,
                      const lite_cm_node& dst = kAcceptor) {
  lite_cm_req2 req;
  EXPECT_EQ(lite_cm_fill_req2(&req, &src, &dst, index, kQps, kNonce,
                              challenge, OpenSslMac, Key(secret)),
            0);
  return req;
}

int Check2(const void* data, size_t len = sizeof(lite_cm_req2),
           const lite_cm_node* self = &kAcceptor,
           lite_cm_req2_info* out = nullptr) {
  lite_cm_req2_info info = {};
  return lite_cm_check_req2(data, len, self, kQps, out ? out : &info);
}

// The acceptor's whole pipeline for a second request: checks, the
// challenge it issued, the MAC.
int Accept2(const lite_cm_req2& req, lite_cm_challenge* table,
            uint64_t now = kNow, const Secret& secret = kSecret,
            const lite_cm_node& self = kAcceptor) {
  lite_cm_req2_info info = {};
  int why = lite_cm_check_req2(&req, sizeof(req), &self, kQps, &info);
  if (why) return why;
  if (!info.challenge) return LITE_REJ_CHALLENGE;
  lite_cm_challenge* c = &table[info.qp_index];
  if (!lite_cm_challenge_matches(c, info.challenge, now)) return LITE_REJ_AUTH;
  why = lite_cm_verify_req2(&req, &self, OpenSslMac, Key(secret));
  if (!why) lite_cm_challenge_consume(c);
  return why;
}

TEST(WireV2Test, SizesFitRdmaCmPrivateData) {
  EXPECT_EQ(sizeof(lite_cm_req2), 56u);  // all of a REQ's 56 bytes
  EXPECT_EQ(sizeof(lite_cm_rep2), 56u);  // of 196
  EXPECT_EQ(sizeof(lite_cm_rej2), 32u);  // of 148
  EXPECT_EQ(LITE_CM_REQ_MAC_INPUT, 61u);
  EXPECT_EQ(LITE_CM_REP_MAC_INPUT, 65u);
}

TEST(WireV2Test, RequestLayoutByteByByte) {
  lite_cm_req2 req = Request2();
  const auto* b = reinterpret_cast<const unsigned char*>(&req);
  const unsigned char want[40] = {
      'L', 'I', 'T', 'E',                      // magic
      2,                                       // version
      1,                                       // qp_index
      2,                                       // qps_per_peer
      0,                                       // flags
      0, 0, 0, 2,                              // src_node_id
      0, 0, 0, 5,                              // dst_node_id
      0, 0, 0, 0, 0, 0, 0x03, 0xea,            // src_incarnation 1002
      1, 2, 3, 4, 5, 6, 7, 8,                  // nonce
      0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,  // challenge
  };
  EXPECT_EQ(std::memcmp(b, want, sizeof(want)), 0);
}

// Pinned: HMAC-SHA256(00 01 .. 1f, "LITE-REQ\0" || bytes 0..39 ||
// be32 5 || be64 5005)[0..15], computed independently (Python's hmac).
TEST(WireV2Test, RequestMacIsPinned) {
  lite_cm_req2 req = Request2();
  const unsigned char want[16] = {0x6b, 0x17, 0xf3, 0x7d, 0x0d, 0x16,
                                  0xa1, 0x63, 0x97, 0xd8, 0xe4, 0xc8,
                                  0xc0, 0x61, 0x1b, 0xc3};
  EXPECT_EQ(std::memcmp(req.mac, want, sizeof(want)), 0);
}

TEST(WireV2Test, ReplyMacIsPinned) {
  lite_cm_req2 req = Request2();
  lite_cm_rep2 rep;
  ASSERT_EQ(lite_cm_fill_rep2(&rep, &kAcceptor, &req, OpenSslMac,
                              Key(kSecret)),
            0);
  const unsigned char want[16] = {0x43, 0x54, 0x0c, 0x3a, 0xa9, 0xfc,
                                  0xa2, 0xf6, 0x12, 0x67, 0x95, 0x8b,
                                  0x5e, 0xf1, 0x7d, 0x77};
  EXPECT_EQ(std::memcmp(rep.mac, want, sizeof(want)), 0);
}

TEST(WireV2Test, FirstRequestHasNoMacAndGetsAChallenge) {
  lite_cm_req2 req = Request2(0);
  const uint8_t zero[LITE_CM_MAC_LEN] = {};
  EXPECT_EQ(std::memcmp(req.mac, zero, sizeof(zero)), 0);
  lite_cm_challenge table[kQps] = {};
  EXPECT_EQ(Accept2(req, table), LITE_REJ_CHALLENGE);
}

TEST(WireV2Test, ValidRequestIsAccepted) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_req2_info info = {};
  lite_cm_req2 first = Request2(0);
  ASSERT_EQ(Check2(&first, sizeof(first), &kAcceptor, &info), 0);
  EXPECT_EQ(info.src.id, kInitiator.id);
  EXPECT_EQ(info.src.incarnation, kInitiator.incarnation);
  EXPECT_EQ(info.qp_index, 1);
  EXPECT_EQ(info.challenge, 0u);

  uint64_t c = lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(c, kChallenge);
  EXPECT_EQ(Accept2(Request2(c), table, kNow + 1), 0);
}

TEST(WireV2Test, LoopbackRequestPassesTheWireChecks) {
  lite_cm_req2 req = Request2(0, kSecret, 0, kAcceptor, kAcceptor);
  EXPECT_EQ(Check2(&req), 0);
}

TEST(WireV2Test, WrongKeyFailsAuthentication) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(kChallenge, kOtherSecret), table),
            LITE_REJ_AUTH);
  // And the acceptor with the other key refuses the right request.
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(), table, kNow, kOtherSecret), LITE_REJ_AUTH);
}

TEST(WireV2Test, WrongIdentityFailsAuthentication) {
  lite_cm_challenge table[kQps] = {};
  // Another source id or incarnation than the one signed.
  for (int field = 0; field < 2; field++) {
    lite_cm_req2 req = Request2();
    if (field == 0) {
      req.src_node_id = cpu_to_be32(kInitiator.id - 1);
    } else {
      req.src_incarnation = cpu_to_be64(kInitiator.incarnation + 1);
    }
    lite_cm_challenge_issue(&table[1], kChallenge, kNow);
    EXPECT_EQ(Accept2(req, table), LITE_REJ_AUTH) << field;
  }
  // Signed for another acceptor id: its wire check refuses it first, and
  // the MAC would not match either.
  lite_cm_node other = {kAcceptor.id + 1, kAcceptor.incarnation};
  lite_cm_req2 req = Request2(kChallenge, kSecret, 1, kInitiator, other);
  EXPECT_EQ(Check2(&req), LITE_REJ_WRONG_NODE);
  req.dst_node_id = cpu_to_be32(kAcceptor.id);
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(req, table), LITE_REJ_AUTH);
  // Meant for an older incarnation of the acceptor: the incarnation is not
  // on the wire, only under the MAC.
  lite_cm_node old_self = {kAcceptor.id, kAcceptor.incarnation - 1};
  req = Request2(kChallenge, kSecret, 1, kInitiator, old_self);
  EXPECT_EQ(Check2(&req), 0);
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(req, table), LITE_REJ_AUTH);
}

TEST(WireV2Test, EveryBitOfASignedRequestMatters) {
  lite_cm_challenge table[kQps] = {};
  const lite_cm_req2 good = Request2();
  for (size_t byte = 0; byte < sizeof(good); byte++) {
    for (int bit = 0; bit < 8; bit++) {
      lite_cm_req2 req = good;
      reinterpret_cast<uint8_t*>(&req)[byte] ^= 1 << bit;
      lite_cm_challenge_issue(&table[0], kChallenge, kNow);
      lite_cm_challenge_issue(&table[1], kChallenge, kNow);
      EXPECT_NE(Accept2(req, table), 0) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(WireV2Test, ReplayedChallengeIsRefused) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  lite_cm_req2 req = Request2();
  EXPECT_EQ(Accept2(req, table), 0);
  EXPECT_EQ(Accept2(req, table), LITE_REJ_AUTH);  // the same request again
}

// Review 2026-11-28 L4: a forged answer (another challenge, or the right
// one without the pair's secret) must not void the challenge the real
// initiator is answering; only a verified answer consumes it.
TEST(WireV2Test, ForgedAnswersDoNotConsumeTheChallenge) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(kChallenge + 1), table), LITE_REJ_AUTH);
  EXPECT_EQ(Accept2(Request2(kChallenge, kOtherSecret), table),
            LITE_REJ_AUTH);
  EXPECT_EQ(Accept2(Request2(), table, kNow + 1), 0);
  // Used by the verified answer: the same answer again finds none.
  EXPECT_EQ(Accept2(Request2(), table, kNow + 2), LITE_REJ_AUTH);
}

TEST(WireV2Test, ChallengeIsPerQueuePair) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_challenge_issue(&table[0], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(kChallenge, kSecret, 1), table), LITE_REJ_AUTH);
  EXPECT_EQ(Accept2(Request2(kChallenge, kSecret, 0), table), 0);
}

// Review 2026-11-28 L4: forged first requests, however many, get the
// challenge already outstanding and leave it answerable; a new one comes
// only once it has expired (or was used).
TEST(WireV2Test, FirstRequestsGetTheOutstandingChallenge) {
  lite_cm_challenge table[kQps] = {};
  EXPECT_EQ(lite_cm_challenge_for_first(&table[1], kChallenge, kNow),
            kChallenge);
  for (uint64_t i = 1; i <= 100; i++) {
    EXPECT_EQ(lite_cm_challenge_for_first(&table[1], kChallenge + i, kNow + i),
              kChallenge);
  }
  EXPECT_EQ(Accept2(Request2(kChallenge), table, kNow + 101), 0);
  EXPECT_EQ(lite_cm_challenge_for_first(&table[1], kChallenge + 1, kNow + 102),
            kChallenge + 1);
  EXPECT_EQ(lite_cm_challenge_for_first(
                &table[1], kChallenge + 2,
                kNow + 102 + LITE_CM_CHALLENGE_TTL_MS),
            kChallenge + 2);
  EXPECT_EQ(Accept2(Request2(kChallenge + 1), table,
                    kNow + 103 + LITE_CM_CHALLENGE_TTL_MS),
            LITE_REJ_AUTH);
}

TEST(WireV2Test, ExpiredChallengeIsRefused) {
  lite_cm_challenge table[kQps] = {};
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(), table, kNow + LITE_CM_CHALLENGE_TTL_MS),
            LITE_REJ_AUTH);
  lite_cm_challenge_issue(&table[1], kChallenge, kNow);
  EXPECT_EQ(Accept2(Request2(), table, kNow + LITE_CM_CHALLENGE_TTL_MS - 1),
            0);
}

TEST(WireV2Test, NeverIssuedChallengeIsRefused) {
  lite_cm_challenge table[kQps] = {};
  EXPECT_EQ(Accept2(Request2(), table), LITE_REJ_AUTH);
  lite_cm_challenge c = {};
  EXPECT_EQ(lite_cm_challenge_issue(&c, 0, kNow), 1u);  // 0 means none
}

TEST(WireV2Test, TruncatedRequestsAreBad) {
  lite_cm_req2 req = Request2();
  for (size_t len = 0; len < sizeof(req); len++) {
    EXPECT_EQ(Check2(&req, len), LITE_REJ_BAD_REQUEST) << len;
  }
  EXPECT_EQ(Check2(nullptr, 0), LITE_REJ_BAD_REQUEST);
  EXPECT_EQ(Check2(&req, sizeof(req)), 0);
  std::vector<uint8_t> padded(56 + 8, 0);  // rdma_cm may pad; extra is ignored
  std::memcpy(padded.data(), &req, sizeof(req));
  EXPECT_EQ(Check2(padded.data(), padded.size()), 0);
}

TEST(WireV2Test, OldVersionIsBadEitherWay) {
  // A version 1 request to a version 2 acceptor.
  lite_cm_req old = Request();
  std::vector<uint8_t> padded(56, 0);  // as rdma_cm delivers it
  std::memcpy(padded.data(), &old, sizeof(old));
  EXPECT_EQ(Check2(padded.data(), padded.size()), LITE_REJ_BAD_REQUEST);
  // A version 2 request to a version 1 acceptor.
  lite_cm_req2 req = Request2(0);
  lite_cm_node src = {};
  uint16_t index = 0;
  EXPECT_EQ(lite_cm_check_req(&req, sizeof(req), &kAcceptor, kQps, &src,
                              &index),
            LITE_REJ_BAD_REQUEST);
}

TEST(WireV2Test, MalformedFieldsAreBad) {
  lite_cm_req2 req = Request2();
  req.magic ^= 1;
  EXPECT_EQ(Check2(&req), LITE_REJ_BAD_REQUEST);
  req = Request2();
  req.flags = 1;
  EXPECT_EQ(Check2(&req), LITE_REJ_BAD_REQUEST);
  req = Request2();
  req.src_node_id = 0;
  EXPECT_EQ(Check2(&req), LITE_REJ_BAD_REQUEST);
  req = Request2();
  req.src_incarnation = 0;
  EXPECT_EQ(Check2(&req), LITE_REJ_BAD_REQUEST);
}

TEST(WireV2Test, WireChecksBeforeTheSecret) {
  lite_cm_req2 req = Request2();
  EXPECT_EQ(Check2(&req, sizeof(req), nullptr), LITE_REJ_NOT_READY);
  lite_cm_node small = {1, 77};
  req = Request2(0, kSecret, 0, kAcceptor, small);
  EXPECT_EQ(Check2(&req, sizeof(req), &small), LITE_REJ_ROLE);
  req = Request2(0, kSecret, kQps);
  EXPECT_EQ(Check2(&req), LITE_REJ_PARAMS);
  req = Request2(0);
  req.qps_per_peer = kQps + 1;
  EXPECT_EQ(Check2(&req), LITE_REJ_PARAMS);
}

TEST(WireV2Test, MacThatCannotBeComputedIsNoResources) {
  lite_cm_req2 req = Request2();
  EXPECT_EQ(lite_cm_verify_req2(&req, &kAcceptor, FailingMac, nullptr),
            LITE_REJ_NO_RESOURCES);
}

lite_cm_rep2 Reply2(const lite_cm_req2& req, const Secret& secret = kSecret,
                    const lite_cm_node& self = kAcceptor) {
  lite_cm_rep2 rep;
  EXPECT_EQ(lite_cm_fill_rep2(&rep, &self, &req, OpenSslMac, Key(secret)), 0);
  return rep;
}

int CheckRep2(const lite_cm_rep2& rep, const lite_cm_req2& sent,
              const Secret& secret = kSecret, size_t len = 196) {
  return lite_cm_check_rep2(&rep, len, &kAcceptor, &sent, OpenSslMac,
                            Key(secret));
}

TEST(WireV2Test, ValidReplyIsAccepted) {
  lite_cm_req2 req = Request2();
  lite_cm_rep2 rep = Reply2(req);
  const auto* b = reinterpret_cast<const unsigned char*>(&rep);
  EXPECT_EQ(b[4], LITE_CM_VERSION_AUTH);
  EXPECT_EQ(b[5], 1);  // qp_index
  EXPECT_EQ(CheckRep2(rep, req), 0);
}

TEST(WireV2Test, ReplyWithBadMacIsRejected) {
  lite_cm_req2 req = Request2();
  lite_cm_rep2 rep = Reply2(req);
  rep.mac[0] ^= 1;
  EXPECT_EQ(CheckRep2(rep, req), -EKEYREJECTED);
  EXPECT_EQ(CheckRep2(Reply2(req, kOtherSecret), req), -EKEYREJECTED);
  EXPECT_EQ(CheckRep2(Reply2(req), req, kOtherSecret), -EKEYREJECTED);
  EXPECT_EQ(lite_cm_check_rep2(&rep, sizeof(rep), &kAcceptor, &req,
                               FailingMac, nullptr),
            -EKEYREJECTED);
}

TEST(WireV2Test, ReplyToAnotherRequestIsRejected) {
  lite_cm_req2 req = Request2();
  // Another nonce or challenge: the reply to some other request.
  lite_cm_req2 other = req;
  other.nonce = cpu_to_be64(kNonce + 1);
  EXPECT_EQ(CheckRep2(Reply2(other), req), -EPROTO);
  other = Request2(kChallenge + 1);
  EXPECT_EQ(CheckRep2(Reply2(other), req), -EPROTO);
  // Another QP.
  other = Request2(kChallenge, kSecret, 0);
  EXPECT_EQ(CheckRep2(Reply2(other), req), -EPROTO);
  // The same nonce and challenge but another request (its MAC differs):
  // the reply's MAC covers the request's.
  other = Request2();
  other.mac[3] ^= 0x40;
  EXPECT_EQ(CheckRep2(Reply2(other), req), -EKEYREJECTED);
}

TEST(WireV2Test, ReplyFromAnotherNodeOrIncarnationIsStale) {
  lite_cm_req2 req = Request2();
  lite_cm_node restarted = {kAcceptor.id, kAcceptor.incarnation + 1};
  EXPECT_EQ(CheckRep2(Reply2(req, kSecret, restarted), req), -ESTALE);
}

TEST(WireV2Test, MalformedRepliesAreProtocolErrors) {
  lite_cm_req2 req = Request2();
  lite_cm_rep2 rep = Reply2(req);
  for (size_t len = 0; len < sizeof(rep); len++) {
    EXPECT_EQ(CheckRep2(rep, req, kSecret, len), -EPROTO) << len;
  }
  EXPECT_EQ(lite_cm_check_rep2(nullptr, 0, &kAcceptor, &req, OpenSslMac,
                               Key(kSecret)),
            -EPROTO);
  rep.reserved = cpu_to_be32(1);
  EXPECT_EQ(CheckRep2(rep, req), -EPROTO);
  rep = Reply2(req);
  rep.flags = cpu_to_be16(1);
  EXPECT_EQ(CheckRep2(rep, req), -EPROTO);
  rep = Reply2(req);
  rep.version = LITE_CM_VERSION;
  EXPECT_EQ(CheckRep2(rep, req), -EPROTO);
  // A version 1 reply.
  lite_cm_rep old;
  lite_cm_fill_rep(&old, &kAcceptor, 1);
  EXPECT_EQ(lite_cm_check_rep2(&old, 196, &kAcceptor, &req, OpenSslMac,
                               Key(kSecret)),
            -EPROTO);
}

TEST(WireV2Test, RejectsCarryReasonAndChallenge) {
  lite_cm_rej2 rej;
  lite_cm_fill_rej2(&rej, &kAcceptor, LITE_REJ_CHALLENGE, kChallenge);
  EXPECT_EQ(lite_cm_rej_reason(&rej, 148), LITE_REJ_CHALLENGE);
  EXPECT_EQ(lite_cm_rej_challenge(&rej, 148), kChallenge);
  EXPECT_EQ(lite_cm_rej_challenge(&rej, sizeof(rej) - 1), 0u);
  EXPECT_EQ(lite_cm_rej_challenge(nullptr, 0), 0u);
  lite_cm_fill_rej2(&rej, &kAcceptor, LITE_REJ_AUTH, kChallenge);
  EXPECT_EQ(lite_cm_rej_reason(&rej, sizeof(rej)), LITE_REJ_AUTH);
  EXPECT_EQ(lite_cm_rej_challenge(&rej, sizeof(rej)), 0u);  // not a challenge
  // A version 1 reject's reason reads the same way.
  lite_cm_rej old;
  lite_cm_fill_rej(&old, &kAcceptor, LITE_REJ_PORT);
  EXPECT_EQ(lite_cm_rej_reason(&old, sizeof(old)), LITE_REJ_PORT);
  EXPECT_EQ(lite_cm_rej_challenge(&old, sizeof(old)), 0u);

  for (int r : {LITE_REJ_CHALLENGE, LITE_REJ_AUTH, LITE_REJ_PORT,
                LITE_REJ_NO_KEY}) {
    EXPECT_FALSE(lite_cm_rej_is_transient(r)) << r;
    EXPECT_STRNE(lite_cm_rej_reason_name(r), "unknown reason") << r;
  }
}

TEST(WireTest, NoAtomicsFlagTravelsBothWays) {
  lite_cm_node lacking = kInitiator;
  lacking.flags = LITE_CM_NO_ATOMICS;
  lite_cm_req req;
  lite_cm_fill_req(&req, &lacking, &kAcceptor, 1, kQps);
  lite_cm_node src = {};
  uint16_t index = 0;
  ASSERT_EQ(lite_cm_check_req(&req, sizeof(req), &kAcceptor, kQps, &src,
                              &index),
            0);
  EXPECT_EQ(src.flags, LITE_CM_NO_ATOMICS);
  EXPECT_EQ(lite_cm_req_flags(&req, false), LITE_CM_NO_ATOMICS);
  // A node with atomics sends what older nodes sent: zeros.
  EXPECT_EQ(Request(1).reserved0, 0);

  lite_cm_node home = kAcceptor;
  home.flags = LITE_CM_NO_ATOMICS;
  lite_cm_rep rep;
  lite_cm_fill_rep(&rep, &home, 1);
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep), &kAcceptor, 1), 0);
  EXPECT_EQ(lite_cm_rep_flags(&rep, false), LITE_CM_NO_ATOMICS);
  rep.reserved |= cpu_to_be32(1);  // an unknown bit is still refused
  EXPECT_EQ(lite_cm_check_rep(&rep, sizeof(rep), &kAcceptor, 1), -EPROTO);

  lite_cm_req2 req2 = Request2();
  lite_cm_rep2 rep2;
  ASSERT_EQ(
      lite_cm_fill_rep2(&rep2, &home, &req2, OpenSslMac, Key(kSecret)), 0);
  EXPECT_EQ(lite_cm_check_rep2(&rep2, sizeof(rep2), &kAcceptor, &req2,
                               OpenSslMac, Key(kSecret)),
            0);
  EXPECT_EQ(lite_cm_rep_flags(&rep2, true), LITE_CM_NO_ATOMICS);
  // The flag is signed: flipping it breaks the MAC.
  rep2.flags = 0;
  EXPECT_EQ(lite_cm_check_rep2(&rep2, sizeof(rep2), &kAcceptor, &req2,
                               OpenSslMac, Key(kSecret)),
            -EKEYREJECTED);
}

}  // namespace

