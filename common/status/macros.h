// Early-return helpers for absl::Status, as in Google's codebase and
// absl/status/status_macros.h (Debian's Abseil 20220623 does not ship them).
// The LITE_ prefix keeps a later Abseil a rename:
//
//   LITE_RETURN_IF_ERROR(Validate(request));
//   LITE_ASSIGN_OR_RETURN(Record record, store.Get(id));
//
// Each evaluates its expression once. LITE_ASSIGN_OR_RETURN declares a
// variable named after the line, so use it at most once per line.
#ifndef LITE_COMMON_STATUS_MACROS_H_
#define LITE_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define LITE_RETURN_IF_ERROR(expr)                                \
  do {                                                            \
    if (absl::Status lite_status_ = (expr); !lite_status_.ok()) { \
      return lite_status_;                                        \
    }                                                             \
  } while (0)

#define LITE_STATUS_CONCAT_INNER(a, b) a##b
#define LITE_STATUS_CONCAT(a, b) LITE_STATUS_CONCAT_INNER(a, b)

#define LITE_ASSIGN_OR_RETURN(lhs, expr)                                   \
  LITE_ASSIGN_OR_RETURN_IMPL(LITE_STATUS_CONCAT(lite_statusor_, __LINE__), \
                             lhs, expr)

#define LITE_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()

#endif  // LITE_COMMON_STATUS_MACROS_H_
