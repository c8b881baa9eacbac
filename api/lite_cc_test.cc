// Unit tests of libLITE's C++ layer: errno -> absl::Status mapping, RAII of
// sessions and LMR handles, against the fake device (no lite.ko needed).
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/fake_device.h"
#include "api/lite.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::testing {
namespace {

using ::testing::HasSubstr;

TEST(ErrnoToCodeTest, DocumentedTable) {
  struct Row {
    int err;
    absl::StatusCode code;
  };
  const Row rows[] = {
      {0, absl::StatusCode::kOk},
      {ENOENT, absl::StatusCode::kNotFound},
      {EACCES, absl::StatusCode::kPermissionDenied},
      {EEXIST, absl::StatusCode::kAlreadyExists},
      {EINVAL, absl::StatusCode::kInvalidArgument},
      {EFAULT, absl::StatusCode::kInvalidArgument},
      {EBADF, absl::StatusCode::kFailedPrecondition},
      {EPERM, absl::StatusCode::kFailedPrecondition},
      {EPROTO, absl::StatusCode::kFailedPrecondition},
      {ESTALE, absl::StatusCode::kAborted},
      {EHOSTDOWN, absl::StatusCode::kUnavailable},
      {ENOTCONN, absl::StatusCode::kUnavailable},
      {EAGAIN, absl::StatusCode::kUnavailable},
      {ETIMEDOUT, absl::StatusCode::kDeadlineExceeded},
      {ENOSPC, absl::StatusCode::kResourceExhausted},
      {ENOMEM, absl::StatusCode::kResourceExhausted},
      {EMFILE, absl::StatusCode::kResourceExhausted},
      {EDQUOT, absl::StatusCode::kResourceExhausted},
      {ENOTTY, absl::StatusCode::kUnimplemented},
      {EOPNOTSUPP, absl::StatusCode::kUnimplemented},
      {EINTR, absl::StatusCode::kCancelled},
      {EIO, absl::StatusCode::kInternal},
      {EXDEV, absl::StatusCode::kUnknown},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(ErrnoToCode(r.err), r.code) << lite_errno_name(r.err);
    EXPECT_EQ(ErrnoToCode(-r.err), r.code) << lite_errno_name(r.err);
  }
}

TEST(ErrnoToStatusTest, TextAndPayload) {
  absl::Status s = ErrnoToStatus(-EACCES, "map \"kv\"", "mode 0640");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "map \"kv\": Permission denied (EACCES): mode 0640");
  EXPECT_EQ(StatusErrno(s), EACCES);
  EXPECT_EQ(ErrnoToStatus(ESTALE, "read").message(),
            "read: Stale file handle (ESTALE)");
  EXPECT_TRUE(ErrnoToStatus(0, "x", "y").ok());
  EXPECT_EQ(StatusErrno(absl::InternalError("other")), absl::nullopt);
}

TEST(LiteOpenTest, MissingDeviceIsNotFoundWithAHint) {
  absl::StatusOr<Lite> l = Lite::Open("/nonexistent/lite-test/dev/lite");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(l.status().message(), HasSubstr("is lite.ko loaded?"));
  EXPECT_EQ(StatusErrno(l.status()), ENOENT);
}

TEST(LiteOpenTest, NotALiteDeviceIsUnimplemented) {
  absl::StatusOr<Lite> l = Lite::Open("/dev/null");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(l.status().message(), HasSubstr("not a LITE device"));
}

class CppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.set_handler(
        [this](unsigned long req, void* data) { return Handle(req, data); });
    lite_ctx* ctx = nullptr;
    ASSERT_EQ(dev_.Open(&ctx), 0);
    lite_.emplace(Lite::Adopt(ctx));
  }

  int Handle(unsigned long req, void* data) {
    switch (req) {
      case LITE_IOC_MAP: {
        auto* m = static_cast<struct lite_map*>(data);
        if (std::string(m->name) == "secret") {
          std::strcpy(m->message, "uid 1000 has no read access (mode 0600)");
          return -EACCES;
        }
        m->handle = ++next_handle_;
        m->size_bytes = 8192;
        m->home_node_id = 2;
        m->lmr_id = 5;
        return 0;
      }
      case LITE_IOC_UNMAP:
        unmapped_.push_back(static_cast<struct lite_unmap*>(data)->handle);
        return 0;
      case LITE_IOC_FAA:
        static_cast<lite_atomic*>(data)->result = 41;
        return 0;
      case LITE_IOC_READ:
        return -EHOSTDOWN;
      case LITE_IOC_NODE: {
        auto* n = static_cast<lite_node_info*>(data);
        n->node_id = 1;
        n->incarnation = 9;
        n->num_members = 20;  // more than the first try's array
        auto* m = reinterpret_cast<lite_member*>(n->members);
        for (uint32_t i = 0; i < n->max_members && i < 20; ++i) {
          m[i] = lite_member{i + 1, LITE_PEER_CONNECTED, 9};
        }
        return 0;
      }
      case LITE_IOC_FREE:
        return 0;
    }
    return -ENOTTY;
  }

  FakeDevice dev_;
  absl::optional<Lite> lite_;
  uint64_t next_handle_ = 100;
  std::vector<uint64_t> unmapped_;
};

TEST_F(CppTest, LmrUnmapsOnceWhenDestroyedAfterMoves) {
  {
    absl::StatusOr<Lmr> a = lite_->Map("kv", kReadWrite);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->handle(), 101u);
    EXPECT_EQ(a->size(), 8192u);
    EXPECT_EQ(a->home_node_id(), 2u);
    EXPECT_EQ(a->access(), static_cast<uint32_t>(kReadWrite));
    Lmr b = std::move(*a);
    EXPECT_FALSE(a->mapped());
    Lmr c = std::move(b);
    EXPECT_TRUE(unmapped_.empty());
    absl::StatusOr<uint64_t> old = c.FetchAdd(0, 1);
    ASSERT_TRUE(old.ok());
    EXPECT_EQ(*old, 41u);
  }
  EXPECT_EQ(unmapped_, std::vector<uint64_t>{101});
}

TEST_F(CppTest, MoveAssignmentUnmapsTheOldHandle) {
  absl::StatusOr<Lmr> a = lite_->Map("kv", kRead);
  absl::StatusOr<Lmr> b = lite_->Map("kv", kRead);
  ASSERT_TRUE(a.ok() && b.ok());
  *a = std::move(*b);
  EXPECT_EQ(unmapped_, std::vector<uint64_t>{101});
  EXPECT_EQ(a->handle(), 102u);
}

TEST_F(CppTest, UnmappedLmrFailsWithoutAnIoctl) {
  absl::StatusOr<Lmr> a = lite_->Map("kv", kReadWrite);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->Unmap().ok());
  int reads = dev_.calls(LITE_IOC_READ);
  uint8_t buf[8];
  absl::Status s = a->Read(0, absl::MakeSpan(buf));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("not mapped"));
  EXPECT_EQ(dev_.calls(LITE_IOC_READ), reads);
  EXPECT_TRUE(a->Unmap().ok());  // again: nothing to do
  EXPECT_EQ(unmapped_.size(), 1u);
}

TEST_F(CppTest, MapDeniedCarriesTheManagersMessage) {
  absl::StatusOr<Lmr> a = lite_->Map("secret", kRead);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(a.status().message(),
            "map \"secret\": Permission denied (EACCES): uid 1000 has no read "
            "access (mode 0600)");
}

TEST_F(CppTest, NameWithNulIsRejected) {
  absl::StatusOr<Lmr> a = lite_->Map(absl::string_view("kv\0x", 4), kRead);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dev_.calls(LITE_IOC_MAP), 0);
  EXPECT_EQ(lite_->Free(absl::string_view("kv\0", 3)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dev_.calls(LITE_IOC_FREE), 0);
}

TEST_F(CppTest, OperationErrorIsMapped) {
  absl::StatusOr<Lmr> a = lite_->Map("kv", kRead);
  ASSERT_TRUE(a.ok());
  std::vector<uint8_t> buf(64);
  absl::Status s = a->Read(8, absl::MakeSpan(buf));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "read \"kv\": Host is down (EHOSTDOWN)");
  lite_rw rw = dev_.last<lite_rw>(LITE_IOC_READ);
  EXPECT_EQ(rw.length, 64u);
  EXPECT_EQ(rw.offset, 8u);
  EXPECT_EQ(rw.handle, 101u);
}

TEST_F(CppTest, NodeGrowsTheMemberArray) {
  absl::StatusOr<NodeInfo> n = lite_->Node();
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->node_id, 1u);
  EXPECT_EQ(n->incarnation, 9u);
  ASSERT_EQ(n->members.size(), 20u);
  EXPECT_EQ(n->members[19].node_id, 20u);
}

TEST_F(CppTest, NodeIdAndNodeName) {
  dev_.set_nodes({{1, "node1"}, {3, "node2"}, {4, ""}});
  EXPECT_EQ(*lite_->NodeId("node2"), 3u);
  EXPECT_EQ(*lite_->NodeName(3), "node2");
  EXPECT_EQ(*lite_->NodeName(4), "");

  absl::StatusOr<uint32_t> none = lite_->NodeId("node9");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(),
            "node \"node9\": No such file or directory (ENOENT): neither "
            "this node nor any peer is named \"node9\"");
  EXPECT_EQ(StatusErrno(none.status()), ENOENT);

  absl::StatusOr<std::string> gone = lite_->NodeName(7);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(gone.status().message(), HasSubstr("node 7: "));

  const int before = dev_.calls(LITE_IOC_NODE_LOOKUP);
  absl::StatusOr<uint32_t> bad = lite_->NodeId("a/b");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lite_->NodeId(absl::string_view("node1\0x", 7)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(dev_.calls(LITE_IOC_NODE_LOOKUP), before);
}

TEST_F(CppTest, NodeLookupBeforeTheAgentIsUnavailable) {
  dev_.set_nodes({{1, "node1"}}, /*identity_set=*/false);
  EXPECT_EQ(lite_->NodeId("node1").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(lite_->NodeName(1).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(CppTest, CopyBetweenSessionsIsRefused) {
  FakeDevice other_dev;
  other_dev.set_handler([](unsigned long, void* data) {
    static_cast<struct lite_map*>(data)->handle = 1;
    return 0;
  });
  lite_ctx* ctx = nullptr;
  ASSERT_EQ(other_dev.Open(&ctx), 0);
  Lite other = Lite::Adopt(ctx);
  absl::StatusOr<Lmr> src = other.Map("a", kRead);
  absl::StatusOr<Lmr> dst = lite_->Map("b", kWrite);
  ASSERT_TRUE(src.ok() && dst.ok());
  absl::Status s = dst->CopyFrom(0, *src, 0, 8);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("same Lite"));
  EXPECT_EQ(dev_.calls(LITE_IOC_MEMCPY), 0);
}

}  // namespace
}  // namespace lite::testing
