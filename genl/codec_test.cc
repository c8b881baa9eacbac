// Decoding lite.ko's messages and errors, without the kernel: messages are
// built here with libnl the way the module lays them out.
#include "genl/codec.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "genl/errors.h"
#include "genl/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {
namespace {

using ::lite_testing::StatusIs;

using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

// A genl error: the errno it carries and the status code that errno maps to.
MATCHER_P(FailsWith, err,
          absl::StrCat("fails with errno ", strerrorname_np(err))) {
  const absl::Status& status = ::lite_testing::internal::GetStatus(arg);
  *result_listener << "whose status is " << status << ", errno "
                   << ErrnoOf(status);
  return ErrnoOf(status) == err &&
         ::testing::Matches(StatusIs(absl::ErrnoToStatusCode(err)))(status);
}

MsgPtr NewMessage(uint8_t cmd, size_t size = 0) {
  MsgPtr msg(size ? nlmsg_alloc_size(size) : nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 0, 0, /*family=*/42, 0, 0, cmd, LITE_GENL_VERSION);
  return msg;
}

void PutPeer(nl_msg* msg, uint32_t id, uint64_t incarnation, const char* addr) {
  nla_put_u32(msg, LITE_ATTR_NODE_ID, id);
  nla_put_u64(msg, LITE_ATTR_INCARNATION, incarnation);
  nla_put_u32(msg, LITE_ATTR_IPV4_ADDR, ParseIPv4(addr)->s_addr);
  nla_put_u32(msg, LITE_ATTR_PEER_STATE, LITE_PEER_CONNECTED);
  nla_put_u32(msg, LITE_ATTR_QPS_CONNECTED, 2);
}

TEST(DecodeTest, Peer) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 0x1234567890ULL, "10.211.0.13");
  nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
  auto peer = DecodePeer(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->node_id, 3u);
  EXPECT_EQ(peer->incarnation, 0x1234567890ULL);
  EXPECT_EQ(FormatIPv4(peer->addr), "10.211.0.13");
  EXPECT_STREQ(PeerStateName(peer->state), "connected");
  EXPECT_STREQ(PeerRoleName(peer->role), "acceptor");
  EXPECT_EQ(peer->qps_connected, 2u);
}

TEST(DecodeTest, PeerWithoutRoleIsAnError) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 1, "10.211.0.13");
  auto peer = DecodePeer(nlmsg_hdr(msg.get()));
  EXPECT_THAT(peer, FailsWith(EBADMSG));
  EXPECT_EQ(ErrnoOf(peer.status()), EBADMSG);
}

TEST(DecodeTest, FailedEventCarriesIndexAndReason) {
  MsgPtr msg = NewMessage(LITE_CMD_EVENT_PEER_FAILED);
  PutPeer(msg.get(), 2, 7, "10.211.0.12");
  nla_put_u32(msg.get(), LITE_ATTR_QP_INDEX, 1);
  nla_put_u32(msg.get(), LITE_ATTR_REASON, ECONNRESET);
  auto event = DecodeEvent(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->type, EventType::kPeerFailed);
  EXPECT_EQ(event->node_id, 2u);
  EXPECT_EQ(event->incarnation, 7u);
  ASSERT_TRUE(event->qp_index.has_value());
  EXPECT_EQ(*event->qp_index, 1u);
  ASSERT_TRUE(event->reason.has_value());
  EXPECT_EQ(*event->reason, static_cast<uint32_t>(ECONNRESET));
}

TEST(DecodeTest, UnknownAttributesFromANewerModuleAreIgnored) {
  MsgPtr msg = NewMessage(LITE_CMD_EVENT_PEER_CONNECTED);
  PutPeer(msg.get(), 2, 7, "10.211.0.12");
  nla_put_u32(msg.get(), LITE_ATTR_MAX + 5, 99);
  auto event = DecodeEvent(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->type, EventType::kPeerConnected);
  EXPECT_FALSE(event->reason.has_value());
}

TEST(DecodeTest, ShortAttributeIsRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_EVENT_PEER_CONNECTED);
  PutPeer(msg.get(), 2, 7, "10.211.0.12");
  nla_put_u8(msg.get(), LITE_ATTR_QP_INDEX, 1);  // u32 expected
  EXPECT_THAT(DecodeEvent(nlmsg_hdr(msg.get())), FailsWith(EIO));
}

TEST(DecodeTest, NodeWithoutIdentity) {
  MsgPtr msg = NewMessage(LITE_CMD_NODE_GET);
  nla_put_u16(msg.get(), LITE_ATTR_CM_PORT, 18600);
  nla_put_u32(msg.get(), LITE_ATTR_QPS_PER_PEER, 2);
  nla_put_u32(msg.get(), LITE_ATTR_NUM_PEERS, 0);
  auto node = DecodeNode(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->cm_port, 18600);
  EXPECT_FALSE(node->node_id.has_value());
  EXPECT_FALSE(node->agent_portid.has_value());
}

// An NLMSG_ERROR as the kernel sends it with NETLINK_EXT_ACK and
// NETLINK_CAP_ACK: the error, the request's header, then the TLVs.
std::vector<char> ErrorMessage(int err, const char* text) {
  size_t text_len = std::strlen(text) + 1;
  size_t tlv_len = NLA_HDRLEN + NLA_ALIGN(text_len);
  std::vector<char> buf(NLMSG_LENGTH(sizeof(nlmsgerr)) + tlv_len);
  auto* hdr = reinterpret_cast<nlmsghdr*>(buf.data());
  hdr->nlmsg_len = buf.size();
  hdr->nlmsg_type = NLMSG_ERROR;
  hdr->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
  auto* e = static_cast<nlmsgerr*>(NLMSG_DATA(hdr));
  e->error = -err;
  e->msg.nlmsg_len = NLMSG_HDRLEN + 64;  // capped: not included
  auto* tlv =
      reinterpret_cast<nlattr*>(buf.data() + NLMSG_LENGTH(sizeof(nlmsgerr)));
  tlv->nla_type = NLMSGERR_ATTR_MSG;
  tlv->nla_len = NLA_HDRLEN + text_len;
  std::memcpy(reinterpret_cast<char*>(tlv) + NLA_HDRLEN, text, text_len);
  return buf;
}

TEST(DecodeErrorTest, ErrnoAndExtAckMessage) {
  auto buf = ErrorMessage(EEXIST, "another peer has this address");
  absl::Status s = DecodeError(reinterpret_cast<nlmsghdr*>(buf.data()));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrnoOf(s), EEXIST);
  EXPECT_EQ(s.message(), "File exists (EEXIST): another peer has this address");
}

TEST(DecodeErrorTest, ZeroIsAnAck) {
  auto buf = ErrorMessage(0, "");
  EXPECT_TRUE(DecodeError(reinterpret_cast<nlmsghdr*>(buf.data())).ok());
}

TEST(ParseIPv4Test, AcceptsDottedQuadOnly) {
  EXPECT_TRUE(ParseIPv4("10.211.0.11").ok());
  EXPECT_THAT(ParseIPv4("10.211.0"), FailsWith(EINVAL));
  EXPECT_THAT(ParseIPv4("10.211.0.256"), FailsWith(EINVAL));
  EXPECT_THAT(ParseIPv4("::1"), FailsWith(EINVAL));
  EXPECT_EQ(ErrnoOf(ParseIPv4("x").status()), EINVAL);
}

// ---- LMRs, grants, upcalls ----

// Chunks as lite.ko nests them: LITE_ATTR_CHUNKS { LITE_ATTR_CHUNK { ADDR,
// LENGTH } ... }, with NLA_F_NESTED as the kernel's nla_nest_start sets it;
// a new LITE_ATTR_CHUNKS every @per_nest chunks (an attribute's length is
// 16 bits: 4096 chunks do not fit in one).
void PutChunks(nl_msg* msg, const std::vector<Chunk>& chunks,
               size_t per_nest = 1000) {
  for (size_t i = 0; i < chunks.size() || i == 0; i += per_nest) {
    nlattr* all = nla_nest_start(msg, LITE_ATTR_CHUNKS | NLA_F_NESTED);
    ASSERT_NE(all, nullptr);
    for (size_t j = i; j < std::min(chunks.size(), i + per_nest); ++j) {
      nlattr* one = nla_nest_start(msg, LITE_ATTR_CHUNK | NLA_F_NESTED);
      ASSERT_NE(one, nullptr);
      ASSERT_EQ(nla_put_u64(msg, LITE_CHUNK_ATTR_ADDR, chunks[j].addr), 0);
      ASSERT_EQ(nla_put_u64(msg, LITE_CHUNK_ATTR_LENGTH, chunks[j].length), 0);
      nla_nest_end(msg, one);
    }
    ASSERT_EQ(nla_nest_end(msg, all), 0);
  }
}

std::vector<Chunk> Chunks(size_t n, uint64_t length) {
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < n; ++i) {
    chunks.push_back({0xffff880000000000ULL + i * length, length});
  }
  return chunks;
}

void PutLmr(nl_msg* msg, uint64_t size, const std::vector<Chunk>& chunks) {
  nla_put_u64(msg, LITE_ATTR_LMR_ID, 0x300000001ULL);
  nla_put_string(msg, LITE_ATTR_NAME, "buf");
  nla_put_u64(msg, LITE_ATTR_SIZE, size);
  nla_put_u32(msg, LITE_ATTR_UID, 1000);
  nla_put_u32(msg, LITE_ATTR_GID, 100);
  nla_put_u32(msg, LITE_ATTR_MODE, 0640);
  nla_put_u64(msg, LITE_ATTR_EPOCH, 9);
  nla_put_u32(msg, LITE_ATTR_MEMORY_KEY, 0x1234);
  PutChunks(msg, chunks);
}

TEST(DecodeLmrTest, AllFields) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(msg.get(), 3 << 20, {{0x1000, 1 << 20}, {0x900000, 2 << 20}});
  auto lmr = DecodeLmr(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(lmr.ok()) << lmr.status();
  EXPECT_EQ(lmr->lmr_id, 0x300000001ULL);
  EXPECT_EQ(lmr->name, "buf");
  EXPECT_EQ(lmr->size, 3u << 20);
  EXPECT_EQ(lmr->uid, 1000u);
  EXPECT_EQ(lmr->gid, 100u);
  EXPECT_EQ(lmr->mode, 0640u);
  EXPECT_EQ(lmr->epoch, 9u);
  EXPECT_EQ(lmr->memory_key, 0x1234u);
  EXPECT_EQ(lmr->read_key, 0u);
  EXPECT_EQ(lmr->chunks,
            (std::vector<Chunk>{{0x1000, 1 << 20}, {0x900000, 2 << 20}}));
  MsgPtr with_read = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(with_read.get(), 4096, {{0x1000, 4096}});
  nla_put_u32(with_read.get(), LITE_ATTR_READ_KEY, 0x1235);
  lmr = DecodeLmr(nlmsg_hdr(with_read.get()));
  ASSERT_TRUE(lmr.ok()) << lmr.status();
  EXPECT_EQ(lmr->read_key, 0x1235u);
}

// The largest LMR lite.ko reports: LITE_CHUNKS_MAX chunks of 4 MiB in one
// message of well over 100 KB.
TEST(DecodeLmrTest, MaximalChunkCountInOneBigMessage) {
  constexpr uint64_t kChunk = 4 << 20;
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET, 256 << 10);
  PutLmr(msg.get(), kChunk * LITE_CHUNKS_MAX, Chunks(LITE_CHUNKS_MAX, kChunk));
  EXPECT_GT(nlmsg_hdr(msg.get())->nlmsg_len, 100u << 10);
  auto lmr = DecodeLmr(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(lmr.ok()) << lmr.status();
  ASSERT_EQ(lmr->chunks.size(), static_cast<size_t>(LITE_CHUNKS_MAX));
  EXPECT_EQ(lmr->chunks.back().addr,
            0xffff880000000000ULL + (LITE_CHUNKS_MAX - 1) * kChunk);
}

// A dump continues an LMR whose chunks do not fit in one message in the
// next ones: the pieces are put back together.
TEST(DecodeLmrTest, DumpPartsAreMerged) {
  std::vector<LmrInfo> lmrs;
  std::vector<Chunk> all = Chunks(5, 4096);
  MsgPtr first = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(first.get(), 5 * 4096, {all.begin(), all.begin() + 3});
  EXPECT_THAT(DecodeLmr(nlmsg_hdr(first.get())),
              FailsWith(EBADMSG));  // not partial
  auto part = DecodeLmr(nlmsg_hdr(first.get()), /*partial=*/true);
  ASSERT_TRUE(part.ok()) << part.status();
  ASSERT_TRUE(MergeLmrPart(&lmrs, *part).ok());
  MsgPtr second = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(second.get(), 5 * 4096, {all.begin() + 3, all.end()});
  part = DecodeLmr(nlmsg_hdr(second.get()), /*partial=*/true);
  ASSERT_TRUE(part.ok()) << part.status();
  ASSERT_TRUE(MergeLmrPart(&lmrs, *part).ok());
  ASSERT_EQ(lmrs.size(), 1u);
  EXPECT_EQ(lmrs[0].chunks, all);
  // Complete now: the same id again is a new entry (not merged).
  ASSERT_TRUE(MergeLmrPart(&lmrs, *part).ok());
  EXPECT_EQ(lmrs.size(), 2u);
}

TEST(DecodeLmrTest, EntryEndingEarlyIsRejected) {
  std::vector<LmrInfo> lmrs;
  MsgPtr first = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(first.get(), 2 * 4096, {{0, 4096}});
  auto part = DecodeLmr(nlmsg_hdr(first.get()), /*partial=*/true);
  ASSERT_TRUE(part.ok());
  ASSERT_TRUE(MergeLmrPart(&lmrs, *part).ok());
  LmrInfo other = *part;
  other.lmr_id += 1;
  EXPECT_EQ(ErrnoOf(MergeLmrPart(&lmrs, other)), EBADMSG);
  // A continuation that overshoots the size.
  LmrInfo over = *part;
  over.chunks = {{0, 8192}};
  EXPECT_EQ(ErrnoOf(MergeLmrPart(&lmrs, over)), EBADMSG);
}

TEST(DecodeLmrTest, TooManyChunksAreRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET, 256 << 10);
  PutLmr(msg.get(), 4096ULL * (LITE_CHUNKS_MAX + 1),
         Chunks(LITE_CHUNKS_MAX + 1, 4096));
  auto lmr = DecodeLmr(nlmsg_hdr(msg.get()));
  EXPECT_EQ(ErrnoOf(lmr.status()), EBADMSG) << lmr.status();
}

TEST(DecodeLmrTest, ChunksNotAddingUpToTheSizeAreRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(msg.get(), 3 << 20, {{0x1000, 1 << 20}});
  auto lmr = DecodeLmr(nlmsg_hdr(msg.get()));
  EXPECT_EQ(ErrnoOf(lmr.status()), EBADMSG);
  EXPECT_NE(lmr.status().message().find("add up"), std::string::npos);
}

TEST(DecodeLmrTest, EmptyOrZeroLengthChunksAreRejected) {
  MsgPtr empty = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(empty.get(), 4096, {});
  EXPECT_THAT(DecodeLmr(nlmsg_hdr(empty.get())), FailsWith(EBADMSG));
  MsgPtr zero = NewMessage(LITE_CMD_LMR_GET);
  PutLmr(zero.get(), 4096, {{0, 4096}, {0x2000, 0}});
  EXPECT_THAT(DecodeLmr(nlmsg_hdr(zero.get())), FailsWith(EBADMSG));
}

TEST(DecodeLmrTest, UnterminatedNameIsRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET);
  nla_put(msg.get(), LITE_ATTR_NAME, 3, "buf");  // no NUL
  PutLmr(msg.get(), 4096, {{0, 4096}});
  EXPECT_THAT(DecodeLmr(nlmsg_hdr(msg.get())), FailsWith(EIO));
}

TEST(DecodeLmrTest, WrongCommandIsRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_GRANT_GET);
  PutLmr(msg.get(), 4096, {{0, 4096}});
  EXPECT_EQ(ErrnoOf(DecodeLmr(nlmsg_hdr(msg.get())).status()), EBADMSG);
}

TEST(DecodeLmrMemoryTest, AllocReply) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_ALLOC);
  nla_put_u32(msg.get(), LITE_ATTR_MEMORY_KEY, 77);
  PutChunks(msg.get(), {{0x10000, 8192}});
  auto memory = DecodeLmrMemory(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->memory_key, 77u);
  EXPECT_EQ(memory->read_key, 0u);  // key_mode=global: none
  EXPECT_EQ(memory->chunks, (std::vector<Chunk>{{0x10000, 8192}}));

  // key_mode=lmr: the read-only region's key too.
  MsgPtr lmr_mode = NewMessage(LITE_CMD_LMR_ALLOC);
  nla_put_u32(lmr_mode.get(), LITE_ATTR_MEMORY_KEY, 77);
  nla_put_u32(lmr_mode.get(), LITE_ATTR_READ_KEY, 78);
  PutChunks(lmr_mode.get(), {{0x10000, 8192}});
  memory = DecodeLmrMemory(nlmsg_hdr(lmr_mode.get()));
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->memory_key, 77u);
  EXPECT_EQ(memory->read_key, 78u);

  MsgPtr no_key = NewMessage(LITE_CMD_LMR_ALLOC);
  PutChunks(no_key.get(), {{0x10000, 8192}});
  EXPECT_THAT(DecodeLmrMemory(nlmsg_hdr(no_key.get())), FailsWith(EBADMSG));
}

GrantInfo SampleGrant(size_t chunks = 2) {
  GrantInfo g;
  g.grant_id = 0x200000005ULL;
  g.lmr_id = 0x300000001ULL;
  g.name = "tables/a:1";
  g.home_node_id = 3;
  g.access = LITE_ACCESS_READ | LITE_ACCESS_WRITE;
  g.epoch = 11;
  g.chunks = Chunks(chunks, 1 << 20);
  g.size = chunks * (1 << 20);
  g.memory_key = 0xabcd;
  g.holder_incarnation = 42;
  g.granted_at_ms = 1700000000123;
  return g;
}

TEST(GrantTest, EncodeThenDecodeAsTheKernelReportsIt) {
  GrantInfo in = SampleGrant();
  MsgPtr msg = NewMessage(LITE_CMD_GRANT_GET);
  ASSERT_TRUE(EncodeGrant(msg.get(), in).ok());
  nla_put_u32(msg.get(), LITE_ATTR_UID, 1000);
  nla_put_u32(msg.get(), LITE_ATTR_GID, 100);
  nla_put_u32(msg.get(), LITE_ATTR_PID, 4242);
  nla_put_flag(msg.get(), LITE_ATTR_REVOKED);
  auto out = DecodeGrant(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->grant_id, in.grant_id);
  EXPECT_EQ(out->lmr_id, in.lmr_id);
  EXPECT_EQ(out->name, in.name);
  EXPECT_EQ(out->home_node_id, 3u);
  EXPECT_EQ(out->access, in.access);
  EXPECT_EQ(out->epoch, 11u);
  EXPECT_EQ(out->size, in.size);
  EXPECT_EQ(out->memory_key, in.memory_key);
  EXPECT_EQ(out->chunks, in.chunks);
  EXPECT_EQ(out->holder_incarnation, 42u);
  EXPECT_EQ(out->granted_at_ms, in.granted_at_ms);
  EXPECT_EQ(out->uid, 1000u);
  EXPECT_EQ(out->gid, 100u);
  EXPECT_EQ(out->pid, 4242u);
  EXPECT_TRUE(out->revoked);
}

TEST(GrantTest, GrantGetWithoutRequesterIsRejected) {
  MsgPtr msg = NewMessage(LITE_CMD_GRANT_GET);
  ASSERT_TRUE(EncodeGrant(msg.get(), SampleGrant()).ok());
  EXPECT_THAT(DecodeGrant(nlmsg_hdr(msg.get())), FailsWith(EBADMSG));
}

TEST(GrantTest, EncodeRejectsWhatTheKernelWould) {
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
  GrantInfo g = SampleGrant();
  g.access = 4;
  EXPECT_EQ(ErrnoOf(EncodeGrant(msg.get(), g)), EINVAL);
  g = SampleGrant();
  g.size += 1;  // chunks no longer add up
  EXPECT_EQ(ErrnoOf(EncodeGrant(msg.get(), g)), EINVAL);
  g = SampleGrant();
  g.name = std::string(LITE_NAME_MAX + 1, 'a');
  EXPECT_EQ(ErrnoOf(EncodeGrant(msg.get(), g)), EINVAL);
  g = SampleGrant();
  g.chunks.clear();
  EXPECT_EQ(ErrnoOf(EncodeGrant(msg.get(), g)), EINVAL);
}

// Parses a request the way lite.ko's policy sees it.
struct Parsed {
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
};

Parsed ParseRequest(nl_msg* msg) {
  Parsed p;
  EXPECT_EQ(genlmsg_parse(nlmsg_hdr(msg), 0, p.tb, LITE_ATTR_MAX, nullptr), 0);
  return p;
}

TEST(UpcallCompletionTest, MapAnswerCarriesTheGrantWithNestedFlags) {
  UpcallCompletion c;
  c.upcall_id = 17;
  c.grant = SampleGrant(LITE_CHUNKS_MAX);
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE, UpcallCompletionSize(c));
  absl::Status s = EncodeUpcallCompletion(msg.get(), c);
  ASSERT_TRUE(s.ok()) << s;
  Parsed p = ParseRequest(msg.get());
  ASSERT_NE(p.tb[LITE_ATTR_UPCALL_ID], nullptr);
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_UPCALL_ID]), 17u);
  ASSERT_NE(p.tb[LITE_ATTR_ERRNO], nullptr);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_ERRNO]), 0u);
  EXPECT_EQ(p.tb[LITE_ATTR_MESSAGE], nullptr);
  EXPECT_EQ(p.tb[LITE_ATTR_UID], nullptr);
  ASSERT_NE(p.tb[LITE_ATTR_CHUNKS], nullptr);
  // The kernel's strict validation wants NLA_F_NESTED on nests.
  EXPECT_TRUE(p.tb[LITE_ATTR_CHUNKS]->nla_type & NLA_F_NESTED);
  auto* first = static_cast<nlattr*>(nla_data(p.tb[LITE_ATTR_CHUNKS]));
  EXPECT_TRUE(first->nla_type & NLA_F_NESTED);
  // Same attributes as a GRANT_GET entry: decode them back.
  genlmsghdr* g = static_cast<genlmsghdr*>(nlmsg_data(nlmsg_hdr(msg.get())));
  g->cmd = LITE_CMD_GRANT_GET;
  nla_put_u32(msg.get(), LITE_ATTR_UID, 1);
  nla_put_u32(msg.get(), LITE_ATTR_GID, 1);
  nla_put_u32(msg.get(), LITE_ATTR_PID, 1);
  auto back = DecodeGrant(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->chunks.size(), static_cast<size_t>(LITE_CHUNKS_MAX));
  EXPECT_EQ(back->chunks, c.grant->chunks);
}

TEST(UpcallCompletionTest, ErrorWithMessageCutToTheBuffer) {
  UpcallCompletion c;
  c.upcall_id = 5;
  c.error = EACCES;
  c.message = std::string(1000, 'x');
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE, UpcallCompletionSize(c));
  ASSERT_TRUE(EncodeUpcallCompletion(msg.get(), c).ok());
  Parsed p = ParseRequest(msg.get());
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_ERRNO]), static_cast<uint32_t>(EACCES));
  ASSERT_NE(p.tb[LITE_ATTR_MESSAGE], nullptr);
  EXPECT_EQ(nla_len(p.tb[LITE_ATTR_MESSAGE]), LITE_MESSAGE_BUF);  // with NUL
  EXPECT_EQ(std::string(nla_get_string(p.tb[LITE_ATTR_MESSAGE])).size(),
            static_cast<size_t>(LITE_MESSAGE_BUF - 1));
}

TEST(UpcallCompletionTest, AllocAnswerCarriesTheLmrId) {
  UpcallCompletion c;
  c.upcall_id = 6;
  c.lmr_id = 0x100000002ULL;
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
  ASSERT_TRUE(EncodeUpcallCompletion(msg.get(), c).ok());
  Parsed p = ParseRequest(msg.get());
  ASSERT_NE(p.tb[LITE_ATTR_LMR_ID], nullptr);
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_LMR_ID]), 0x100000002ULL);
  EXPECT_EQ(p.tb[LITE_ATTR_CHUNKS], nullptr);
}

TEST(UpcallCompletionTest, RejectsOutOfRange) {
  MsgPtr msg = NewMessage(LITE_CMD_UPCALL_COMPLETE);
  UpcallCompletion c;
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);  // id 0
  c.upcall_id = 1;
  c.error = 4096;
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
  c.error = ENOENT;
  c.lmr_id = 7;  // an error carries no result
  EXPECT_EQ(ErrnoOf(EncodeUpcallCompletion(msg.get(), c)), EINVAL);
}

TEST(LmrAllocTest, EncodesEveryAttributeAndValidates) {
  LmrAllocRequest r{.lmr_id = 0x100000001ULL,
                    .name = "buf",
                    .size = 1 << 20,
                    .uid = 1000,
                    .gid = 100,
                    .mode = 0600};
  MsgPtr msg = NewMessage(LITE_CMD_LMR_ALLOC);
  ASSERT_TRUE(EncodeLmrAlloc(msg.get(), r).ok());
  Parsed p = ParseRequest(msg.get());
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_LMR_ID]), r.lmr_id);
  EXPECT_STREQ(nla_get_string(p.tb[LITE_ATTR_NAME]), "buf");
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_SIZE]), r.size);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_UID]), 1000u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_GID]), 100u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_MODE]), 0600u);

  using Mutation = void (*)(LmrAllocRequest&);
  for (Mutation bad :
       {+[](LmrAllocRequest& x) { x.lmr_id = 0; },
        +[](LmrAllocRequest& x) { x.name.clear(); },
        +[](LmrAllocRequest& x) { x.size = 0; },
        +[](LmrAllocRequest& x) { x.size = LITE_LMR_SIZE_MAX + 1; },
        +[](LmrAllocRequest& x) { x.mode = 0700; },
        +[](LmrAllocRequest& x) { x.uid = ~0u; }}) {
    LmrAllocRequest b = r;
    bad(b);
    MsgPtr m = NewMessage(LITE_CMD_LMR_ALLOC);
    EXPECT_EQ(ErrnoOf(EncodeLmrAlloc(m.get(), b)), EINVAL);
  }
}

void PutUpcallHeader(nl_msg* msg, uint64_t id, uint32_t kind) {
  nla_put_u64(msg, LITE_ATTR_UPCALL_ID, id);
  nla_put_u32(msg, LITE_ATTR_UPCALL_KIND, kind);
  nla_put_u32(msg, LITE_ATTR_UID, 1000);
  nla_put_u32(msg, LITE_ATTR_GID, 100);
  nla_put_u32(msg, LITE_ATTR_PID, 777);
  const uint32_t groups[] = {100, 2000};
  nla_put(msg, LITE_ATTR_GROUPS, sizeof(groups), groups);
}

TEST(DecodeUpcallTest, EveryKind) {
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 1, LITE_UPCALL_ALLOC);
    nla_put_string(msg.get(), LITE_ATTR_NAME, "buf");
    nla_put_u64(msg.get(), LITE_ATTR_SIZE, 8192);
    nla_put_u32(msg.get(), LITE_ATTR_MODE, 0644);
    nla_put_u32(msg.get(), LITE_ATTR_NODE_ID, 0);
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->upcall_id, 1u);
    EXPECT_EQ(u->kind, UpcallKind::kAlloc);
    EXPECT_EQ(u->uid, 1000u);
    EXPECT_EQ(u->gid, 100u);
    EXPECT_EQ(u->pid, 777u);
    EXPECT_EQ(u->groups, (std::vector<uint32_t>{100, 2000}));
    EXPECT_FALSE(u->groups_truncated);
    EXPECT_EQ(u->name, "buf");
    EXPECT_EQ(u->size, 8192u);
    EXPECT_EQ(u->mode, 0644u);
    EXPECT_EQ(u->home_node_id, 0u);
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 2, LITE_UPCALL_MAP);
    nla_put_string(msg.get(), LITE_ATTR_NAME, "buf");
    nla_put_u32(msg.get(), LITE_ATTR_ACCESS, LITE_ACCESS_READ);
    auto n = DecodeNotification(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(n.ok()) << n.status();
    const auto* u = std::get_if<UpcallRequest>(&*n);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->kind, UpcallKind::kMap);
    EXPECT_EQ(u->access, static_cast<uint32_t>(LITE_ACCESS_READ));
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 3, LITE_UPCALL_UNMAP);
    nla_put_u64(msg.get(), LITE_ATTR_GRANT_ID, 0x200000001ULL);
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->kind, UpcallKind::kUnmap);
    EXPECT_EQ(u->grant_id, 0x200000001ULL);
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    PutUpcallHeader(msg.get(), 4, LITE_UPCALL_FREE);
    nla_put_string(msg.get(), LITE_ATTR_NAME, "buf");
    auto u = DecodeUpcall(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ(u->kind, UpcallKind::kFree);
    EXPECT_STREQ(UpcallKindName(u->kind), "free");
  }
}

TEST(DecodeUpcallTest, RejectsMalformed) {
  auto decode = [](auto fill) {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    fill(msg.get());
    return DecodeUpcall(nlmsg_hdr(msg.get())).status();
  };
  // Upcall id 0.
  EXPECT_THAT(decode([](nl_msg* m) {
                PutUpcallHeader(m, 0, LITE_UPCALL_FREE);
                nla_put_string(m, LITE_ATTR_NAME, "buf");
              }),
              FailsWith(EBADMSG));
  // Unknown kind.
  EXPECT_THAT(decode([](nl_msg* m) {
                PutUpcallHeader(m, 1, 99);
                nla_put_string(m, LITE_ATTR_NAME, "buf");
              }),
              FailsWith(EBADMSG));
  // MAP without access, and with unknown access bits.
  EXPECT_THAT(decode([](nl_msg* m) {
                PutUpcallHeader(m, 1, LITE_UPCALL_MAP);
                nla_put_string(m, LITE_ATTR_NAME, "buf");
              }),
              FailsWith(EBADMSG));
  EXPECT_THAT(decode([](nl_msg* m) {
                PutUpcallHeader(m, 1, LITE_UPCALL_MAP);
                nla_put_string(m, LITE_ATTR_NAME, "buf");
                nla_put_u32(m, LITE_ATTR_ACCESS, 8);
              }),
              FailsWith(EBADMSG));
  // ALLOC with a name longer than LITE_NAME_MAX.
  EXPECT_THAT(decode([](nl_msg* m) {
                PutUpcallHeader(m, 1, LITE_UPCALL_ALLOC);
                nla_put_string(m, LITE_ATTR_NAME,
                               std::string(LITE_NAME_MAX + 1, 'a').c_str());
                nla_put_u64(m, LITE_ATTR_SIZE, 1);
                nla_put_u32(m, LITE_ATTR_MODE, 0600);
                nla_put_u32(m, LITE_ATTR_NODE_ID, 0);
              }),
              FailsWith(EBADMSG));
  // No credentials.
  EXPECT_THAT(decode([](nl_msg* m) {
                nla_put_u64(m, LITE_ATTR_UPCALL_ID, 1);
                nla_put_u32(m, LITE_ATTR_UPCALL_KIND, LITE_UPCALL_FREE);
                nla_put_string(m, LITE_ATTR_NAME, "buf");
              }),
              FailsWith(EBADMSG));
}

TEST(DecodeNotificationTest, EventsToo) {
  MsgPtr msg = NewMessage(LITE_CMD_EVENT_PEER_FAILED);
  PutPeer(msg.get(), 2, 7, "10.211.0.12");
  auto n = DecodeNotification(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(n.ok()) << n.status();
  const auto* e = std::get_if<Event>(&*n);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->type, EventType::kPeerFailed);
}

// ---- Node names (LITE_ATTR_NODE_NAME) ----

TEST(NodeNameTest, IdentityCarriesTheNameWhenGiven) {
  in_addr addr = *ParseIPv4("10.211.0.12");
  MsgPtr named = NewMessage(LITE_CMD_PEER_ADD);
  ASSERT_THAT(EncodeIdentity(named.get(), 2, 7, addr, "node-2.rack_a"),
              ::lite_testing::IsOk());
  Parsed p = ParseRequest(named.get());
  ASSERT_NE(p.tb[LITE_ATTR_NODE_NAME], nullptr);
  EXPECT_STREQ(nla_get_string(p.tb[LITE_ATTR_NODE_NAME]), "node-2.rack_a");
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_NODE_ID]), 2u);
  EXPECT_EQ(nla_get_u64(p.tb[LITE_ATTR_INCARNATION]), 7u);
  EXPECT_EQ(nla_get_u32(p.tb[LITE_ATTR_IPV4_ADDR]), addr.s_addr);

  // No name: no attribute, as an agent that predates names sends.
  MsgPtr unnamed = NewMessage(LITE_CMD_NODE_SET);
  ASSERT_THAT(EncodeIdentity(unnamed.get(), 1, 3, addr),
              ::lite_testing::IsOk());
  EXPECT_EQ(ParseRequest(unnamed.get()).tb[LITE_ATTR_NODE_NAME], nullptr);
}

TEST(NodeNameTest, IdentityRefusesWhatLiteKoWould) {
  in_addr addr = *ParseIPv4("10.211.0.12");
  for (const std::string& bad :
       {std::string("a/b"), std::string("-lead"), std::string("has space"),
        std::string(LITE_NODE_NAME_MAX + 1, 'n'),
        std::string("nul\0inside", 10)}) {
    MsgPtr msg = NewMessage(LITE_CMD_PEER_ADD);
    EXPECT_THAT(EncodeIdentity(msg.get(), 2, 7, addr, bad), FailsWith(EINVAL))
        << bad;
  }
  MsgPtr msg = NewMessage(LITE_CMD_PEER_ADD);
  EXPECT_THAT(EncodeIdentity(msg.get(), 2, 7, addr, "a/b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("node name \"a/b\" has "
                                            "character 0x2f at offset 1")));
  const std::string longest(LITE_NODE_NAME_MAX, 'n');
  MsgPtr ok = NewMessage(LITE_CMD_PEER_ADD);
  EXPECT_THAT(EncodeIdentity(ok.get(), 2, 7, addr, longest),
              ::lite_testing::IsOk());
}

TEST(NodeNameTest, NodeAndPeersReportTheirNames) {
  MsgPtr node_msg = NewMessage(LITE_CMD_NODE_GET);
  nla_put_u16(node_msg.get(), LITE_ATTR_CM_PORT, 18600);
  nla_put_u32(node_msg.get(), LITE_ATTR_QPS_PER_PEER, 2);
  nla_put_u32(node_msg.get(), LITE_ATTR_NUM_PEERS, 1);
  nla_put_u32(node_msg.get(), LITE_ATTR_NODE_ID, 1);
  nla_put_u64(node_msg.get(), LITE_ATTR_INCARNATION, 4);
  nla_put_u32(node_msg.get(), LITE_ATTR_IPV4_ADDR,
              ParseIPv4("10.211.0.11")->s_addr);
  nla_put_string(node_msg.get(), LITE_ATTR_NODE_NAME, "node1");
  auto node = DecodeNode(nlmsg_hdr(node_msg.get()));
  ASSERT_THAT(node, ::lite_testing::IsOk());
  EXPECT_EQ(node->name, "node1");

  MsgPtr peer_msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(peer_msg.get(), 2, 7, "10.211.0.12");
  nla_put_u32(peer_msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_INITIATOR);
  nla_put_string(peer_msg.get(), LITE_ATTR_NODE_NAME, "node2");
  auto peer = DecodePeer(nlmsg_hdr(peer_msg.get()));
  ASSERT_THAT(peer, ::lite_testing::IsOk());
  EXPECT_EQ(peer->name, "node2");
}

TEST(NodeNameTest, UnnamedNodesAndPeersHaveNoName) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 1, "10.211.0.13");
  nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
  auto peer = DecodePeer(nlmsg_hdr(msg.get()));
  ASSERT_THAT(peer, ::lite_testing::IsOk());
  EXPECT_EQ(peer->name, "");
}

TEST(NodeNameTest, MalformedNamesFromLiteKoAreRejected) {
  auto peer_with_name = [](const void* data, int len) {
    MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
    PutPeer(msg.get(), 3, 1, "10.211.0.13");
    nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
    nla_put(msg.get(), LITE_ATTR_NODE_NAME, len, data);
    return DecodePeer(nlmsg_hdr(msg.get())).status();
  };
  // Longer than LITE_NODE_NAME_MAX (but within the policy's buffer).
  const std::string too_long(LITE_NODE_NAME_MAX + 1, 'n');
  EXPECT_THAT(peer_with_name(too_long.c_str(), too_long.size() + 1),
              FailsWith(EBADMSG));
  // Empty.
  EXPECT_THAT(peer_with_name("", 1), FailsWith(EBADMSG));
  // Not NUL-terminated: libnl's string policy refuses it.
  EXPECT_THAT(peer_with_name("abc", 3), FailsWith(EIO));
}

// ---- Peer authentication (issue #16) ----

TEST(PeerSecretTest, PeerAddCarriesTheSecretAfterTheIdentity) {
  const std::string secret(LITE_PEER_SECRET_LEN, '\x5a');
  in_addr addr = *ParseIPv4("10.211.0.12");
  MsgPtr msg = NewMessage(LITE_CMD_PEER_ADD);
  ASSERT_TRUE(EncodeIdentity(msg.get(), 2, 7, addr, "node2").ok());
  ASSERT_TRUE(EncodePeerSecret(msg.get(), secret).ok());
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
  ASSERT_EQ(genlmsg_parse(nlmsg_hdr(msg.get()), 0, tb, LITE_ATTR_MAX, nullptr),
            0);
  ASSERT_NE(tb[LITE_ATTR_PEER_SECRET], nullptr);
  ASSERT_EQ(nla_len(tb[LITE_ATTR_PEER_SECRET]), LITE_PEER_SECRET_LEN);
  EXPECT_EQ(
      std::string(static_cast<const char*>(nla_data(tb[LITE_ATTR_PEER_SECRET])),
                  LITE_PEER_SECRET_LEN),
      secret);
  EXPECT_EQ(nla_get_u32(tb[LITE_ATTR_NODE_ID]), 2u);
}

TEST(PeerSecretTest, RefusesWhatLiteKoWouldWithoutShowingIt) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_ADD);
  for (const std::string& bad :
       {std::string(), std::string(31, 'a'), std::string(33, 'a'),
        std::string(LITE_PEER_SECRET_LEN, '\0')}) {
    absl::Status s = EncodePeerSecret(msg.get(), bad);
    EXPECT_THAT(s, FailsWith(EINVAL)) << bad.size();
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("32 bytes"));
    if (!bad.empty() && bad[0] == 'a') {
      EXPECT_THAT(std::string(s.message()),
                  ::testing::Not(::testing::HasSubstr("aaaa")));
    }
  }
}

TEST(PeerRefusalTest, PeerGetReportsTheLastRefusal) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 9, "10.211.0.13");
  nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_INITIATOR);
  nla_put_u32(msg.get(), LITE_ATTR_PEER_REFUSALS, 4);
  nla_put_u32(msg.get(), LITE_ATTR_PEER_LAST_REFUSAL, LITE_REFUSAL_AUTH);
  nla_put_u32(msg.get(), LITE_ATTR_PEER_REFUSED_BY, LITE_REFUSED_BY_PEER);
  auto peer = DecodePeer(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->refusals, 4u);
  ASSERT_TRUE(peer->last_refusal.has_value());
  EXPECT_EQ(*peer->last_refusal, uint32_t{LITE_REFUSAL_AUTH});
  EXPECT_STREQ(RefusalName(*peer->last_refusal),
               "authentication failed (pair secret mismatch or stale "
               "incarnation)");
  ASSERT_TRUE(peer->refused_by.has_value());
  EXPECT_STREQ(RefusedByName(*peer->refused_by), "the peer");
}

TEST(PeerRefusalTest, AbsentFromALiteKoWithoutPeerAuthentication) {
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 9, "10.211.0.13");
  nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
  auto peer = DecodePeer(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->refusals, 0u);
  EXPECT_FALSE(peer->last_refusal.has_value());
  EXPECT_FALSE(peer->refused_by.has_value());
}

TEST(PeerRefusalTest, EveryReasonHasWordsAndNewerOnesAreUnknown) {
  for (uint32_t r : {LITE_REFUSAL_BAD_REQUEST, LITE_REFUSAL_WRONG_NODE,
                     LITE_REFUSAL_STALE, LITE_REFUSAL_PARAMS, LITE_REFUSAL_ROLE,
                     LITE_REFUSAL_ADDRESS, LITE_REFUSAL_AUTH, LITE_REFUSAL_PORT,
                     LITE_REFUSAL_NO_KEY, LITE_REFUSAL_REPLY_AUTH}) {
    EXPECT_STRNE(RefusalName(r), "unknown reason") << r;
  }
  EXPECT_STREQ(RefusalName(99), "unknown reason");
  EXPECT_STREQ(RefusedByName(LITE_REFUSED_BY_NODE), "this node");
  EXPECT_STREQ(RefusedByName(7), "unknown");
  // A newer reason decodes (and is called unknown), it is not an error.
  MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
  PutPeer(msg.get(), 3, 9, "10.211.0.13");
  nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
  nla_put_u32(msg.get(), LITE_ATTR_PEER_LAST_REFUSAL, 99);
  EXPECT_TRUE(DecodePeer(nlmsg_hdr(msg.get())).ok());
}

TEST(PeerRefusalTest, MalformedRefusalsAreRejected) {
  {
    MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
    PutPeer(msg.get(), 3, 9, "10.211.0.13");
    nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
    nla_put_u32(msg.get(), LITE_ATTR_PEER_LAST_REFUSAL, 0);
    EXPECT_THAT(DecodePeer(nlmsg_hdr(msg.get())), FailsWith(EBADMSG));
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
    PutPeer(msg.get(), 3, 9, "10.211.0.13");
    nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
    nla_put_u32(msg.get(), LITE_ATTR_PEER_REFUSED_BY, LITE_REFUSED_BY_PEER);
    EXPECT_THAT(DecodePeer(nlmsg_hdr(msg.get())), FailsWith(EBADMSG));
  }
  {
    MsgPtr msg = NewMessage(LITE_CMD_PEER_GET);
    PutPeer(msg.get(), 3, 9, "10.211.0.13");
    nla_put_u32(msg.get(), LITE_ATTR_PEER_ROLE, LITE_PEER_ROLE_ACCEPTOR);
    nla_put_u16(msg.get(), LITE_ATTR_PEER_REFUSALS, 1);  // u32 expected
    EXPECT_THAT(DecodePeer(nlmsg_hdr(msg.get())), FailsWith(EIO));
  }
}

// The caller's groups: none, the most lite.ko sends with the truncated flag,
// and every malformed list refused (the agent would otherwise speak for a
// caller with groups it does not have).
TEST(DecodeUpcallTest, SupplementaryGroups) {
  auto upcall = [](const void* groups, int len, bool truncated) {
    MsgPtr msg = NewMessage(LITE_CMD_UPCALL);
    nla_put_u64(msg.get(), LITE_ATTR_UPCALL_ID, 9);
    nla_put_u32(msg.get(), LITE_ATTR_UPCALL_KIND, LITE_UPCALL_FREE);
    nla_put_u32(msg.get(), LITE_ATTR_UID, 1000);
    nla_put_u32(msg.get(), LITE_ATTR_GID, 100);
    nla_put_u32(msg.get(), LITE_ATTR_PID, 777);
    if (len >= 0) nla_put(msg.get(), LITE_ATTR_GROUPS, len, groups);
    if (truncated) nla_put_flag(msg.get(), LITE_ATTR_GROUPS_TRUNCATED);
    nla_put_string(msg.get(), LITE_ATTR_NAME, "buf");
    return DecodeUpcall(nlmsg_hdr(msg.get()));
  };
  auto none = upcall(nullptr, 0, false);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->groups.empty());
  EXPECT_FALSE(none->groups_truncated);

  std::vector<uint32_t> most(LITE_GROUPS_MAX);
  for (size_t i = 0; i < most.size(); ++i) most[i] = 5000 + i;
  auto full = upcall(most.data(), most.size() * 4, true);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->groups, most);
  EXPECT_TRUE(full->groups_truncated);

  EXPECT_EQ(ErrnoOf(upcall(nullptr, -1, false).status()), EBADMSG);  // none
  std::vector<uint32_t> too_many(LITE_GROUPS_MAX + 1, 7);
  EXPECT_EQ(
      ErrnoOf(upcall(too_many.data(), too_many.size() * 4, false).status()),
      EBADMSG);
  const uint32_t ragged[] = {1, 2};
  EXPECT_EQ(ErrnoOf(upcall(ragged, 6, false).status()), EBADMSG);
  const uint32_t invalid[] = {100, UINT32_MAX};
  EXPECT_EQ(ErrnoOf(upcall(invalid, sizeof(invalid), false).status()), EBADMSG);
}

}  // namespace
}  // namespace lite::genl
