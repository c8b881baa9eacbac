// Decoding lite.ko's messages and errors, without the kernel: messages are
// built here with libnl the way the module lays them out.
#include "tools/litenl/lite_genl.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

void PutPeer(nl_msg* msg, uint32_t id, uint64_t incarnation,
             const char* addr) {
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
  EXPECT_FALSE(peer.ok());
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
  EXPECT_FALSE(DecodeEvent(nlmsg_hdr(msg.get())).ok());
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
  auto* tlv = reinterpret_cast<nlattr*>(buf.data() +
                                        NLMSG_LENGTH(sizeof(nlmsgerr)));
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
  EXPECT_FALSE(ParseIPv4("10.211.0").ok());
  EXPECT_FALSE(ParseIPv4("10.211.0.256").ok());
  EXPECT_FALSE(ParseIPv4("::1").ok());
  EXPECT_EQ(ErrnoOf(ParseIPv4("x").status()), EINVAL);
}

}  // namespace
}  // namespace lite::genl
