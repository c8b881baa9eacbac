// The NetlinkModule's errno mapping (netlink_module.h): lite.ko's errno to
// the Module's status codes, and an upcall answer's status to the errno the
// application gets. Kept apart from netlink_module.cc, which holds the
// module itself.
#include <cerrno>

#include "agent/netlink_module.h"

namespace lite::agent {

absl::StatusCode ErrnoToModuleCode(int err) {
  switch (err) {
    case 0:
      return absl::StatusCode::kOk;
    case ENOENT:
      return absl::StatusCode::kNotFound;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case ENOSPC:
    case ENOMEM:
    case EMFILE:
    case ENOBUFS:
    case EUSERS:  // RPC_BIND: every ring of the service is taken
      return absl::StatusCode::kResourceExhausted;
    case EINVAL:
    case ERANGE:
    case EMSGSIZE:
      return absl::StatusCode::kInvalidArgument;
    case EBUSY:
    case ENXIO:
    case ENOTCONN:
    case ENODEV:
    case ESTALE:
    case EADDRNOTAVAIL:
    case EADDRINUSE:
      return absl::StatusCode::kFailedPrecondition;
    case EPERM:
    case EACCES:
      return absl::StatusCode::kPermissionDenied;
    case ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case EHOSTDOWN:
    case EAGAIN:
    case ECONNRESET:
      return absl::StatusCode::kUnavailable;
    case EINTR:
    case ECANCELED:
      return absl::StatusCode::kCancelled;
    case EOPNOTSUPP:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

int StatusToErrno(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 0;
    case absl::StatusCode::kNotFound:
      return ENOENT;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return EACCES;
    case absl::StatusCode::kAlreadyExists:
      return EEXIST;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return EINVAL;
    case absl::StatusCode::kResourceExhausted:
      return ENOSPC;
    case absl::StatusCode::kUnavailable:
      return EAGAIN;
    case absl::StatusCode::kDeadlineExceeded:
      return ETIMEDOUT;
    case absl::StatusCode::kFailedPrecondition:
      return EPERM;
    case absl::StatusCode::kCancelled:
      return EINTR;
    case absl::StatusCode::kAborted:
      // The grant was revoked before it could be installed.
      return ESTALE;
    case absl::StatusCode::kUnimplemented:
      return EOPNOTSUPP;
    default:
      return EIO;
  }
}

}  // namespace lite::agent
