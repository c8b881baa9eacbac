// The fenced free's messages: LMR_FREE with LITE_ATTR_QUARANTINE, the
// LMR_LOST event, and LITE_ATTR_RELEASING in LMR_UPDATE and the LMR_GET dump,
// built and parsed without the kernel.
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "genl/codec.h"
#include "genl/errors.h"
#include "genl/types.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite.h"

namespace lite::genl {
namespace {

using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

MsgPtr NewMessage(uint8_t cmd) {
  MsgPtr msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 0, 0, /*family=*/42, 0, 0, cmd, LITE_GENL_VERSION);
  return msg;
}

// The attribute of @type in a message built by an encoder, or null.
nlattr* Find(nl_msg* msg, int type) {
  return nlmsg_find_attr(nlmsg_hdr(msg), GENL_HDRLEN, type);
}

TEST(FenceCodecTest, LmrFreeCarriesTheQuarantineFlagOnlyWhenAsked) {
  MsgPtr plain = NewMessage(LITE_CMD_LMR_FREE);
  ASSERT_TRUE(EncodeLmrFree(plain.get(), 7, /*quarantine=*/false).ok());
  ASSERT_NE(Find(plain.get(), LITE_ATTR_LMR_ID), nullptr);
  EXPECT_EQ(nla_get_u64(Find(plain.get(), LITE_ATTR_LMR_ID)), 7u);
  EXPECT_EQ(Find(plain.get(), LITE_ATTR_QUARANTINE), nullptr);
  MsgPtr kept = NewMessage(LITE_CMD_LMR_FREE);
  ASSERT_TRUE(EncodeLmrFree(kept.get(), 7, /*quarantine=*/true).ok());
  nlattr* flag = Find(kept.get(), LITE_ATTR_QUARANTINE);
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(nla_len(flag), 0);  // A flag: no payload.
  MsgPtr zero = NewMessage(LITE_CMD_LMR_FREE);
  EXPECT_EQ(ErrnoOf(EncodeLmrFree(zero.get(), 0, true)), EINVAL);
}

TEST(FenceCodecTest, LmrLostIsANotificationWithItsIdAndReason) {
  MsgPtr msg = NewMessage(LITE_CMD_EVENT_LMR_LOST);
  nla_put_u64(msg.get(), LITE_ATTR_LMR_ID, 0x100000003ULL);
  nla_put_u32(msg.get(), LITE_ATTR_REASON, ENODEV);
  EXPECT_TRUE(IsNotification(nlmsg_hdr(msg.get())));
  absl::StatusOr<Notification> n = DecodeNotification(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(n.ok()) << n.status();
  const auto* lost = std::get_if<LmrLostEvent>(&*n);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->lmr_id, 0x100000003ULL);
  EXPECT_EQ(lost->reason, static_cast<uint32_t>(ENODEV));
}

TEST(FenceCodecTest, MalformedLmrLostIsABadMessage) {
  MsgPtr no_reason = NewMessage(LITE_CMD_EVENT_LMR_LOST);
  nla_put_u64(no_reason.get(), LITE_ATTR_LMR_ID, 5);
  EXPECT_EQ(ErrnoOf(DecodeLmrLost(nlmsg_hdr(no_reason.get())).status()),
            EBADMSG);
  MsgPtr zero_id = NewMessage(LITE_CMD_EVENT_LMR_LOST);
  nla_put_u64(zero_id.get(), LITE_ATTR_LMR_ID, 0);
  nla_put_u32(zero_id.get(), LITE_ATTR_REASON, ENODEV);
  EXPECT_EQ(ErrnoOf(DecodeLmrLost(nlmsg_hdr(zero_id.get())).status()), EBADMSG);
  MsgPtr bad_reason = NewMessage(LITE_CMD_EVENT_LMR_LOST);
  nla_put_u64(bad_reason.get(), LITE_ATTR_LMR_ID, 5);
  nla_put_u32(bad_reason.get(), LITE_ATTR_REASON, 0);
  EXPECT_EQ(ErrnoOf(DecodeLmrLost(nlmsg_hdr(bad_reason.get())).status()),
            EBADMSG);
}

TEST(FenceCodecTest, LmrUpdateCarriesTheReleasingFlagOnlyWhenAsked) {
  MsgPtr plain = NewMessage(LITE_CMD_LMR_UPDATE);
  ASSERT_TRUE(EncodeLmrUpdate(plain.get(), 7, std::nullopt, 3).ok());
  EXPECT_EQ(nla_get_u64(Find(plain.get(), LITE_ATTR_EPOCH)), 3u);
  EXPECT_EQ(Find(plain.get(), LITE_ATTR_RELEASING), nullptr);
  MsgPtr freed = NewMessage(LITE_CMD_LMR_UPDATE);
  ASSERT_TRUE(EncodeLmrUpdate(freed.get(), 7, std::nullopt, std::nullopt,
                              /*releasing=*/true)
                  .ok());
  ASSERT_NE(Find(freed.get(), LITE_ATTR_LMR_ID), nullptr);
  EXPECT_EQ(nla_get_u64(Find(freed.get(), LITE_ATTR_LMR_ID)), 7u);
  EXPECT_EQ(Find(freed.get(), LITE_ATTR_EPOCH), nullptr);
  EXPECT_EQ(Find(freed.get(), LITE_ATTR_NEW_LMR_ID), nullptr);
  nlattr* flag = Find(freed.get(), LITE_ATTR_RELEASING);
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(nla_len(flag), 0);  // A flag: no payload.
  MsgPtr zero = NewMessage(LITE_CMD_LMR_UPDATE);
  EXPECT_EQ(ErrnoOf(EncodeLmrUpdate(zero.get(), 0, std::nullopt, std::nullopt,
                                    /*releasing=*/true)),
            EINVAL);
}

// One LMR_GET dump message as lite.ko writes it, with chunks [first, last)
// of four 4 KiB ones.
MsgPtr LmrDumpPart(int first, int last, bool releasing) {
  MsgPtr msg = NewMessage(LITE_CMD_LMR_GET);
  nl_msg* m = msg.get();
  nla_put_u64(m, LITE_ATTR_LMR_ID, 11);
  nla_put_string(m, LITE_ATTR_NAME, "freed");
  nla_put_u64(m, LITE_ATTR_SIZE, 4 * 4096);
  nla_put_u32(m, LITE_ATTR_UID, 0);
  nla_put_u32(m, LITE_ATTR_GID, 0);
  nla_put_u32(m, LITE_ATTR_MODE, 0600);
  nla_put_u64(m, LITE_ATTR_EPOCH, 2);
  nla_put_u32(m, LITE_ATTR_MEMORY_KEY, 0x99);
  if (releasing) nla_put_flag(m, LITE_ATTR_RELEASING);
  nlattr* all = nla_nest_start(m, LITE_ATTR_CHUNKS | NLA_F_NESTED);
  for (int i = first; i < last; ++i) {
    nlattr* one = nla_nest_start(m, LITE_ATTR_CHUNK | NLA_F_NESTED);
    nla_put_u64(m, LITE_CHUNK_ATTR_ADDR, 0x10000 + i * 4096);
    nla_put_u64(m, LITE_CHUNK_ATTR_LENGTH, 4096);
    nla_nest_end(m, one);
  }
  nla_nest_end(m, all);
  return msg;
}

TEST(FenceCodecTest, LmrDumpReportsTheReleasingFlag) {
  absl::StatusOr<LmrInfo> live =
      DecodeLmr(nlmsg_hdr(LmrDumpPart(0, 4, false).get()));
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_FALSE(live->releasing);
  absl::StatusOr<LmrInfo> freed =
      DecodeLmr(nlmsg_hdr(LmrDumpPart(0, 4, true).get()));
  ASSERT_TRUE(freed.ok()) << freed.status();
  EXPECT_TRUE(freed->releasing);
  EXPECT_EQ(freed->lmr_id, 11u);
  EXPECT_EQ(freed->chunks.size(), 4u);
}

// lite.ko drops its lock between dump messages, so an LMR_UPDATE may mark
// the LMR between two parts of it: the merged entry is releasing.
TEST(FenceCodecTest, ReleasingInAContinuedDumpPartMarksTheWholeLmr) {
  std::vector<LmrInfo> lmrs;
  absl::StatusOr<LmrInfo> head =
      DecodeLmr(nlmsg_hdr(LmrDumpPart(0, 2, false).get()), /*partial=*/true);
  ASSERT_TRUE(head.ok()) << head.status();
  ASSERT_TRUE(MergeLmrPart(&lmrs, *head).ok());
  EXPECT_FALSE(lmrs.back().releasing);
  absl::StatusOr<LmrInfo> tail =
      DecodeLmr(nlmsg_hdr(LmrDumpPart(2, 4, true).get()), /*partial=*/true);
  ASSERT_TRUE(tail.ok()) << tail.status();
  ASSERT_TRUE(MergeLmrPart(&lmrs, *tail).ok());
  ASSERT_EQ(lmrs.size(), 1u);
  EXPECT_EQ(lmrs[0].chunks.size(), 4u);
  EXPECT_TRUE(lmrs[0].releasing);
  EXPECT_TRUE(CheckDumpComplete(lmrs).ok());
}

}  // namespace
}  // namespace lite::genl
