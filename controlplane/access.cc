#include "controlplane/access.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/names/names.h"

namespace lite::controlplane {

std::string ModeString(uint32_t mode) {
  std::string out;
  for (int shift : {6, 3, 0}) {
    out += (mode >> shift) & 4 ? 'r' : '-';
    out += (mode >> shift) & 2 ? 'w' : '-';
    out += '-';
  }
  return out;
}

namespace {

// Which class of `mode` applies to `requester` for an object owned by
// owner_uid/owner_gid: its shift (6 owner, 3 group, 0 other) and name, or
// PERMISSION_DENIED when truncated groups leave the class unknown.
absl::Status AccessClass(const std::string& what, uint32_t owner_uid,
                         uint32_t owner_gid,
                         const lite::v1::Credentials& requester, int* shift,
                         const char** class_name) {
  const auto& groups = requester.groups();
  const bool in_group =
      requester.gid() == owner_gid ||
      std::find(groups.begin(), groups.end(), owner_gid) != groups.end();
  if (requester.uid() == owner_uid) {
    *shift = 6;
    *class_name = "owner";
  } else if (in_group) {
    *shift = 3;
    *class_name = "group";
  } else if (requester.groups_truncated()) {
    // "other" might allow more than the group class the caller may be in.
    return absl::PermissionDeniedError(absl::StrFormat(
        "uid %d gid %d may not use %s: it is owned by uid %d gid %d, the "
        "caller has more than %d supplementary groups and gid %d is not "
        "among those sent, so whether the group class (which may allow less "
        "than other) applies is unknown",
        requester.uid(), requester.gid(), what, owner_uid, owner_gid,
        names::kMaxSupplementaryGroups, owner_gid));
  } else {
    *shift = 0;
    *class_name = "other";
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAccess(const std::string& what, uint32_t mode,
                         uint32_t owner_uid, uint32_t owner_gid,
                         const lite::v1::Credentials& requester,
                         const lite::v1::Access& access) {
  int shift;
  const char* class_name;
  if (absl::Status s = AccessClass(what, owner_uid, owner_gid, requester,
                                   &shift, &class_name);
      !s.ok()) {
    return s;
  }
  const uint32_t bits = (mode >> shift) & 7;
  const bool read_ok = !access.read() || (bits & 4) != 0;
  const bool write_ok = !access.write() || (bits & 2) != 0;
  if (read_ok && write_ok) return absl::OkStatus();
  std::string wanted;
  if (!read_ok) wanted = "read";
  if (!write_ok)
    absl::StrAppend(&wanted, wanted.empty() ? "" : " and ", "write");
  return absl::PermissionDeniedError(absl::StrFormat(
      "uid %d gid %d may not %s %s: it is owned by uid %d gid %d with mode "
      "0%03o (%s), and the %s class allows %s",
      requester.uid(), requester.gid(), wanted, what, owner_uid, owner_gid,
      mode, ModeString(mode), class_name,
      bits & 6 ? ModeString(bits).substr(6, 2) : "nothing"));
}

absl::Status CheckExecuteAccess(const std::string& what, uint32_t mode,
                                uint32_t owner_uid, uint32_t owner_gid,
                                const lite::v1::Credentials& requester) {
  int shift;
  const char* class_name;
  if (absl::Status s = AccessClass(what, owner_uid, owner_gid, requester,
                                   &shift, &class_name);
      !s.ok()) {
    return s;
  }
  if ((mode >> shift) & 1) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrFormat(
      "uid %d gid %d may not call %s: it is owned by uid %d gid %d with mode "
      "0%03o, and the %s class has no x bit",
      requester.uid(), requester.gid(), what, owner_uid, owner_gid, mode,
      class_name));
}

}  // namespace lite::controlplane
