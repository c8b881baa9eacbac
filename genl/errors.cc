#include "genl/errors.h"

#include <netlink/errno.h>
#include <netlink/netlink.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lite::genl {
namespace {

constexpr char kErrnoPayload[] = "type.lite/errno";

}  // namespace

absl::Status ErrnoStatus(int err, absl::string_view detail) {
  const char* name = strerrorname_np(err);
  std::string message =
      absl::StrFormat("%s (%s)", std::strerror(err), name ? name : "?");
  if (!detail.empty()) absl::StrAppend(&message, ": ", detail);
  absl::Status status(absl::ErrnoToStatusCode(err), message);
  status.SetPayload(kErrnoPayload, absl::Cord(std::to_string(err)));
  return status;
}

absl::Status LibnlStatus(int nl_err, absl::string_view what) {
  int err = EIO;
  switch (-nl_err) {
    case NLE_AGAIN:
      err = ETIMEDOUT;
      break;
    case NLE_PERM:
      err = EPERM;
      break;
    case NLE_NOMEM:
      err = ENOBUFS;
      break;
    case NLE_OBJ_NOTFOUND:
      err = ENOENT;
      break;
    case NLE_INTR:
      err = EINTR;
      break;
    default:
      break;
  }
  return ErrnoStatus(err, absl::StrCat(what, " (", nl_geterror(nl_err), ")"));
}

absl::Status BadMessage(absl::string_view what) {
  return ErrnoStatus(EBADMSG, absl::StrCat("lite.ko's message: ", what));
}

absl::Status InvalidRequest(absl::string_view what) {
  return ErrnoStatus(EINVAL, what);
}

int ErrnoOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrnoPayload);
  if (!payload) return 0;
  int err = 0;
  std::string text(*payload);
  std::from_chars(text.data(), text.data() + text.size(), err);
  return err;
}

}  // namespace lite::genl
