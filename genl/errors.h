// Errors of the genl library. Every failure is an absl::Status whose code
// follows the errno (absl::ErrnoToStatusCode) and which carries the errno
// itself as a payload, so callers that need the kernel's exact answer (the
// agent hands it to applications) read it back with ErrnoOf().
#ifndef LITE_GENL_ERRORS_H_
#define LITE_GENL_ERRORS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace lite::genl {

// The errno a failed call carries (the kernel's, or a local one), 0 if none.
int ErrnoOf(const absl::Status& status);

// "<strerror> (<ENAME>)[: detail]" with @err attached.
absl::Status ErrnoStatus(int err, absl::string_view detail = {});

// A libnl error (a negative NLE_* code) as the nearest errno, with libnl's
// text after @what.
absl::Status LibnlStatus(int nl_err, absl::string_view what);

// EBADMSG: lite.ko sent something the uapi does not allow.
absl::Status BadMessage(absl::string_view what);

// EINVAL: a request outside the uapi's ranges, refused before it is sent.
absl::Status InvalidRequest(absl::string_view what);

}  // namespace lite::genl

#endif  // LITE_GENL_ERRORS_H_
