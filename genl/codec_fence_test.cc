// The fenced free's messages: LMR_FREE with LITE_ATTR_QUARANTINE, and the
// LMR_LOST event, built and parsed without the kernel.
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cerrno>
#include <memory>
#include <variant>

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

}  // namespace
}  // namespace lite::genl
