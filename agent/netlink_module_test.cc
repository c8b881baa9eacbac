// NetlinkModule's conversions and error mapping, without lite.ko. The
// module itself runs against lite.ko in the VM cluster.
#include "agent/netlink_module.h"

#include <cerrno>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite.h"

namespace lite::agent {
namespace {

TEST(ErrnoMappingTest, KernelErrnoToModuleCode) {
  EXPECT_EQ(ErrnoToModuleCode(ENOENT), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoToModuleCode(EEXIST), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrnoToModuleCode(ENOSPC), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoToModuleCode(ENOMEM), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoToModuleCode(EINVAL), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrnoToModuleCode(EBUSY), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToModuleCode(ENXIO), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrnoToModuleCode(EPERM), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoToModuleCode(ETIMEDOUT), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ErrnoToModuleCode(EHOSTDOWN), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoToModuleCode(EIO), absl::StatusCode::kInternal);
}

TEST(ErrnoMappingTest, ReplyStatusToApplicationErrno) {
  EXPECT_EQ(StatusToErrno(absl::OkStatus()), 0);
  EXPECT_EQ(StatusToErrno(absl::NotFoundError("")), ENOENT);
  EXPECT_EQ(StatusToErrno(absl::PermissionDeniedError("")), EACCES);
  EXPECT_EQ(StatusToErrno(absl::AlreadyExistsError("")), EEXIST);
  EXPECT_EQ(StatusToErrno(absl::InvalidArgumentError("")), EINVAL);
  EXPECT_EQ(StatusToErrno(absl::ResourceExhaustedError("")), ENOSPC);
  EXPECT_EQ(StatusToErrno(absl::UnavailableError("")), EAGAIN);
  EXPECT_EQ(StatusToErrno(absl::DeadlineExceededError("")), ETIMEDOUT);
  EXPECT_EQ(StatusToErrno(absl::FailedPreconditionError("")), EPERM);
  EXPECT_EQ(StatusToErrno(absl::CancelledError("")), EINTR);
  EXPECT_EQ(StatusToErrno(absl::AbortedError("")), ESTALE);
  EXPECT_EQ(StatusToErrno(absl::InternalError("")), EIO);
}

TEST(RdmaAddressTest, IPv4AndPortOnly) {
  in_addr addr;
  uint16_t port = 0;
  ASSERT_TRUE(ParseRdmaAddress("10.211.0.11:18600", &addr, &port).ok());
  EXPECT_EQ(genl::FormatIPv4(addr), "10.211.0.11");
  EXPECT_EQ(port, 18600);
  for (const char* bad :
       {"10.211.0.11", "10.211.0.11:0", "10.211.0.11:65536", "[::1]:18600",
        "host:18600", ":18600", "10.211.0.11:x", ""}) {
    EXPECT_EQ(ParseRdmaAddress(bad, &addr, &port).code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(UpcallTest, EveryKindFromTheKernel) {
  genl::UpcallRequest r;
  r.upcall_id = 9;
  r.uid = 1000;
  r.gid = 100;
  r.pid = 4242;
  r.groups = {100, 2000, 3000};
  r.groups_truncated = true;
  r.kind = genl::UpcallKind::kAlloc;
  r.name = "buf";
  r.size = 1 << 20;
  r.mode = 0640;
  r.home_node_id = 3;
  absl::StatusOr<Upcall> u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->upcall_id, 9u);
  EXPECT_EQ(u->credentials.uid(), 1000u);
  EXPECT_EQ(u->credentials.gid(), 100u);
  EXPECT_EQ(u->credentials.pid(), 4242u);
  EXPECT_THAT(u->credentials.groups(), ::testing::ElementsAre(100, 2000, 3000));
  EXPECT_TRUE(u->credentials.groups_truncated());
  const auto* alloc = std::get_if<AllocUpcall>(&u->request);
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ(alloc->name, "buf");
  EXPECT_EQ(alloc->size_bytes, 1u << 20);
  EXPECT_EQ(alloc->mode, 0640u);
  EXPECT_EQ(alloc->home_node_id, 3u);

  r.kind = genl::UpcallKind::kMap;
  r.access = LITE_ACCESS_WRITE;
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  const auto* map = std::get_if<MapUpcall>(&u->request);
  ASSERT_NE(map, nullptr);
  EXPECT_FALSE(map->read);
  EXPECT_TRUE(map->write);

  r.kind = genl::UpcallKind::kUnmap;
  r.grant_id = 0x200000001ULL;
  r.groups.clear();
  r.groups_truncated = false;
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->credentials.groups().empty());
  EXPECT_FALSE(u->credentials.groups_truncated());
  ASSERT_TRUE(std::holds_alternative<UnmapUpcall>(u->request));
  EXPECT_EQ(std::get<UnmapUpcall>(u->request).grant_id, 0x200000001ULL);

  r.kind = genl::UpcallKind::kFree;
  u = UpcallFromGenl(r);
  ASSERT_TRUE(u.ok());
  ASSERT_TRUE(std::holds_alternative<FreeUpcall>(u->request));

  r.kind = static_cast<genl::UpcallKind>(77);
  EXPECT_FALSE(UpcallFromGenl(r).ok());
}

lite::v1::Grant SampleGrant() {
  lite::v1::Grant g;
  g.set_grant_id(0x200000007ULL);
  g.set_lmr_id(0x300000001ULL);
  g.set_lmr_name("buf");
  g.set_home_node_id(3);
  g.set_holder_node_id(2);
  g.set_holder_incarnation(55);
  g.mutable_requester()->set_uid(1000);
  g.mutable_requester()->set_gid(100);
  g.mutable_requester()->set_pid(4242);
  g.mutable_access()->set_read(true);
  g.set_epoch(8);
  g.set_size_bytes(8192);
  auto* c = g.add_chunks();
  c->set_address(0x1000);
  c->set_length_bytes(4096);
  c = g.add_chunks();
  c->set_address(0x9000);
  c->set_length_bytes(4096);
  g.set_memory_key(0x77);
  g.set_granted_at_unix_ms(1700000000000);
  return g;
}

TEST(CompletionTest, MapSuccessCarriesTheGrant) {
  UpcallReply reply;
  reply.upcall_id = 5;
  reply.grant = SampleGrant();
  absl::StatusOr<genl::UpcallCompletion> c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->upcall_id, 5u);
  EXPECT_EQ(c->error, 0u);
  EXPECT_FALSE(c->lmr_id.has_value());
  ASSERT_TRUE(c->grant.has_value());
  EXPECT_EQ(c->grant->grant_id, 0x200000007ULL);
  EXPECT_EQ(c->grant->access, static_cast<uint32_t>(LITE_ACCESS_READ));
  EXPECT_EQ(c->grant->home_node_id, 3u);
  EXPECT_EQ(c->grant->holder_incarnation, 55u);
  EXPECT_EQ(c->grant->size, 8192u);
  ASSERT_EQ(c->grant->chunks.size(), 2u);
  EXPECT_EQ(c->grant->chunks[1].addr, 0x9000u);
  EXPECT_EQ(c->grant->granted_at_ms, 1700000000000);
}

TEST(CompletionTest, AllocSuccessCarriesTheLmrId) {
  UpcallReply reply;
  reply.upcall_id = 6;
  reply.lmr.emplace();
  reply.lmr->set_lmr_id(0x100000002ULL);
  absl::StatusOr<genl::UpcallCompletion> c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->lmr_id.has_value());
  EXPECT_EQ(*c->lmr_id, 0x100000002ULL);

  reply.lmr->set_lmr_id(0);
  EXPECT_FALSE(CompletionFromReply(reply).ok());
}

TEST(CompletionTest, FailureCarriesErrnoAndMessageOnly) {
  UpcallReply reply;
  reply.upcall_id = 7;
  reply.status = absl::PermissionDeniedError("mode 0600 denies uid 1001");
  reply.grant = SampleGrant();  // ignored: the status failed
  absl::StatusOr<genl::UpcallCompletion> c = CompletionFromReply(reply);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->error, static_cast<uint32_t>(EACCES));
  EXPECT_EQ(c->message, "mode 0600 denies uid 1001");
  EXPECT_FALSE(c->grant.has_value());
}

TEST(ConversionTest, GrantFromTheKernelRoundTrips) {
  lite::v1::Grant in = SampleGrant();
  UpcallReply reply;
  reply.upcall_id = 1;
  reply.grant = in;
  genl::GrantInfo info = *CompletionFromReply(reply)->grant;
  info.uid = 1000;
  info.gid = 100;
  info.pid = 4242;
  lite::v1::Grant out = GrantFromGenl(info, /*holder_node_id=*/2);
  EXPECT_EQ(out.SerializeAsString(), in.SerializeAsString());
}

TEST(ConversionTest, HostedLmr) {
  genl::LmrInfo info;
  info.lmr_id = 0x200000003ULL;
  info.name = "tbl";
  info.size = 4096;
  info.uid = 1;
  info.gid = 2;
  info.mode = 0600;
  info.epoch = 4;
  info.memory_key = 9;
  info.read_key = 10;
  info.chunks = {{0x5000, 4096}};
  lite::v1::Lmr lmr = LmrFromGenl(info, 2);
  EXPECT_EQ(lmr.lmr_id(), 0x200000003ULL);
  EXPECT_EQ(lmr.home_node_id(), 2u);
  EXPECT_EQ(lmr.owner_uid(), 1u);
  EXPECT_EQ(lmr.owner_gid(), 2u);
  EXPECT_EQ(lmr.mode(), 0600u);
  EXPECT_EQ(lmr.epoch(), 4u);
  EXPECT_EQ(lmr.memory_key(), 9u);
  // Re-registered with both keys after a manager restart (agent_restore.cc).
  EXPECT_EQ(lmr.read_key(), 10u);
  ASSERT_EQ(lmr.chunks_size(), 1);
  EXPECT_EQ(lmr.chunks(0).address(), 0x5000u);
  EXPECT_EQ(lmr.origin(), lite::v1::LMR_ORIGIN_ALLOCATED);
}

TEST(ConversionTest, PeerFailedEventSaysWhy) {
  genl::Event e;
  e.type = genl::EventType::kPeerFailed;
  e.node_id = 4;
  e.incarnation = 12;
  e.addr = *genl::ParseIPv4("10.211.0.14");
  e.qp_index = 1;
  e.reason = ECONNRESET;
  e.qps_connected = 1;
  PeerConnectionFailed f = FailureFromGenl(e);
  EXPECT_EQ(f.node_id, 4u);
  EXPECT_EQ(f.incarnation, 12u);
  EXPECT_NE(f.reason.find("ECONNRESET"), std::string::npos) << f.reason;
  EXPECT_NE(f.reason.find("10.211.0.14"), std::string::npos) << f.reason;
  e.reason = EKEYREJECTED;
  f = FailureFromGenl(e);
  EXPECT_NE(f.reason.find("(EKEYREJECTED): authentication failed (pair "
                          "secret mismatch or stale incarnation)"),
            std::string::npos)
      << f.reason;
  e.reason = ENOKEY;
  EXPECT_NE(FailureFromGenl(e).reason.find("no pair secret"),
            std::string::npos);
  e.reason = EHOSTDOWN;
  f = FailureFromGenl(e);
  EXPECT_EQ(f.reason_errno, EHOSTDOWN);
  EXPECT_NE(f.reason.find("stopped answering within peer_timeout_ms"),
            std::string::npos)
      << f.reason;
  e.reason.reset();
  EXPECT_EQ(FailureFromGenl(e).reason_errno, 0);
}

// LITE_CMD_PEER_PROBE's answers as the manager's probe_peer expects them
// (manager.proto, ProbePeer).
TEST(ProbeAnswerTest, KernelAnswersToProbeCodes) {
  genl::ProbeResult ack{.node_id = 3, .incarnation = 9, .round_trip_ns = 1234};
  absl::StatusOr<lite::v1::ProbedPeer> ok = ProbeAnswer(3, 9, ack);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->incarnation(), 9u);
  EXPECT_EQ(ok->round_trip_ns(), 1234u);

  absl::StatusOr<lite::v1::ProbedPeer> other = ProbeAnswer(3, 8, ack);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.status().message(),
              ::testing::HasSubstr("holds incarnation 9 of it, not the "
                                   "incarnation 8 asked about"));

  absl::StatusOr<lite::v1::ProbedPeer> down = ProbeAnswer(
      3, 9,
      genl::ErrnoStatus(EHOSTDOWN,
                        "the peer did not acknowledge, or has no connected "
                        "QP"));
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(down.status().message(),
              ::testing::HasSubstr("node 3 did not acknowledge"));
  EXPECT_THAT(down.status().message(),
              ::testing::HasSubstr("has no connected QP"));

  absl::StatusOr<lite::v1::ProbedPeer> unknown =
      ProbeAnswer(3, 9, genl::ErrnoStatus(ENOENT, "no such peer"));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(),
              ::testing::HasSubstr("node 3 is not a peer"));

  // lite.ko's own bound, or the request's: no verdict either way.
  EXPECT_EQ(ProbeAnswer(3, 9, genl::ErrnoStatus(ETIMEDOUT)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(ProbeAnswer(3, 9, genl::ErrnoStatus(EPERM)).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ProbeAnswer(3, 9, genl::ErrnoStatus(EINTR)).status().code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace lite::agent
