#include "controlplane/access.h"

#include <cstdint>
#include <initializer_list>

#include "common/names/names.h"
#include "gtest/gtest.h"

namespace lite::controlplane {
namespace {

constexpr uint32_t kOwnerUid = 1000;
constexpr uint32_t kOwnerGid = 100;

lite::v1::Credentials Who(uint32_t uid, uint32_t gid,
                          std::initializer_list<uint32_t> groups = {},
                          bool truncated = false) {
  lite::v1::Credentials c;
  c.set_uid(uid);
  c.set_gid(gid);
  c.set_pid(42);
  for (uint32_t g : groups) c.add_groups(g);
  c.set_groups_truncated(truncated);
  return c;
}

lite::v1::Access Want(bool read, bool write) {
  lite::v1::Access a;
  a.set_read(read);
  a.set_write(write);
  return a;
}

absl::StatusCode Code(uint32_t mode, const lite::v1::Credentials& who,
                      const lite::v1::Access& access) {
  return CheckAccess("LMR 'x'", mode, kOwnerUid, kOwnerGid, who, access).code();
}

constexpr auto kOk = absl::StatusCode::kOk;
constexpr auto kDenied = absl::StatusCode::kPermissionDenied;

// Each class is chosen by who asks, and only its own bits count.
TEST(CheckAccessTest, EachClassUsesItsOwnBits) {
  const auto rw = Want(true, true);
  const auto r = Want(true, false);
  const auto w = Want(false, true);
  // Owner: 0600 lets the owner do both, the group and others nothing.
  EXPECT_EQ(Code(0600, Who(kOwnerUid, 5), rw), kOk);
  EXPECT_EQ(Code(0060, Who(kOwnerUid, kOwnerGid), r), kDenied);  // owner bits
  // Group by primary gid.
  EXPECT_EQ(Code(0060, Who(2000, kOwnerGid), rw), kOk);
  EXPECT_EQ(Code(0040, Who(2000, kOwnerGid), w), kDenied);
  // Group by a supplementary group.
  EXPECT_EQ(Code(0060, Who(2000, 5, {7, kOwnerGid, 9}), rw), kOk);
  EXPECT_EQ(Code(0060, Who(2000, 5, {7, 9}), r), kDenied);  // other: nothing
  EXPECT_EQ(Code(0040, Who(2000, 5, {kOwnerGid}), w), kDenied);
  // A group member is judged by the group class even when other allows more.
  EXPECT_EQ(Code(0606, Who(2000, 5, {kOwnerGid}), r), kDenied);
  // Other.
  EXPECT_EQ(Code(0004, Who(2000, 5, {7}), r), kOk);
  EXPECT_EQ(Code(0004, Who(2000, 5, {7}), w), kDenied);
}

// Truncated groups: whoever is not placed in the owner or group class is
// refused, even when other would allow it; the owner and a caller known to
// be in the group are judged as before.
TEST(CheckAccessTest, TruncatedGroupsNeverFallToOther) {
  const auto r = Want(true, false);
  EXPECT_EQ(Code(0604, Who(2000, 5, {7}, /*truncated=*/false), r), kOk);
  const absl::Status refused = CheckAccess(
      "LMR 'x'", 0604, kOwnerUid, kOwnerGid, Who(2000, 5, {7}, true), r);
  EXPECT_EQ(refused.code(), kDenied);
  EXPECT_NE(refused.message().find("more than 256 supplementary groups"),
            absl::string_view::npos)
      << refused.message();
  EXPECT_EQ(Code(0604, Who(kOwnerUid, 5, {}, true), r), kOk);
  EXPECT_EQ(Code(0640, Who(2000, 5, {kOwnerGid}, true), r), kOk);
  EXPECT_EQ(Code(0640, Who(2000, kOwnerGid, {}, true), r), kOk);
}

TEST(CheckAccessTest, MessageSaysWhichClassAppliedAndWhatItAllows) {
  const absl::Status denied =
      CheckAccess("LMR 'x'", 0640, kOwnerUid, kOwnerGid,
                  Who(2000, 5, {kOwnerGid}), Want(false, true));
  EXPECT_EQ(denied.message(),
            "uid 2000 gid 5 may not write LMR 'x': it is owned by uid 1000 "
            "gid 100 with mode 0640 (rw-r-----), and the group class allows "
            "r-");
}

}  // namespace
}  // namespace lite::controlplane
