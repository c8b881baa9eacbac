// LITE's naming rules and lite.ko's size limits for C++ code: the cluster
// manager, the agent and the tools. One implementation (name_rules.c, shared
// with libLITE's C API), so that a name the manager accepts is one lite.ko
// and every agent accept, and the limits are the uapi's.
//
// This library is the one sanctioned bridge from the kernel's ABI header
// (kmod/include/uapi/lite.h) to the manager: the manager links it, never the
// header itself, which this header does not include.
#ifndef LITE_COMMON_NAMES_NAMES_H_
#define LITE_COMMON_NAMES_NAMES_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace lite::names {

// lite.ko's limits. Constant-initialized: safe to read from any static
// initializer (flag defaults).
extern const size_t kMaxLmrNameLength;     // LITE_NAME_MAX: 128
extern const size_t kMaxNodeNameLength;    // LITE_NODE_NAME_MAX: 64
extern const uint64_t kMaxLmrSizeBytes;    // LITE_LMR_SIZE_MAX: 64 GiB
extern const int kMaxLmrChunks;            // LITE_CHUNKS_MAX: 4096
extern const int kMaxSupplementaryGroups;  // LITE_GROUPS_MAX: 256

// 1..kMaxLmrNameLength characters from [A-Za-z0-9._:/-], the first a letter
// or digit. INVALID_ARGUMENT otherwise, with a message that names @field,
// the bad value and what would be accepted.
absl::Status ValidateLmrName(absl::string_view field, absl::string_view name);

// 1..kMaxNodeNameLength characters from [a-z0-9._-] (lower case only), the
// first a letter or digit, the last not '.'; errors as above.
absl::Status ValidateNodeName(absl::string_view field, absl::string_view name);

}  // namespace lite::names

#endif  // LITE_COMMON_NAMES_NAMES_H_
