// Numbers as people type and read them, the same in every LITE tool and
// daemon: sizes with binary suffixes, ids, plain numbers, octal modes, and
// sizes for humans. Each parser takes the whole text (no blanks, no sign)
// and fails with INVALID_ARGUMENT and a message that quotes the text and
// says what would be accepted; callers prefix the flag's name.
#ifndef LITE_COMMON_UNITS_UNITS_H_
#define LITE_COMMON_UNITS_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::units {

// A non-negative integer: decimal or 0x hex, no suffix, at most `max`.
// Decimal means decimal: "010" is 10, not 8.
absl::StatusOr<uint64_t> ParseNumber(absl::string_view text,
                                     uint64_t max = UINT64_MAX);

// A byte count: decimal with an optional binary suffix K, M, G or T in any
// case, optionally followed by B or iB ("64M", "64m", "64MiB", "64MB" are
// all 67108864; every suffix is a power of 1024), or "8B"; or 0x hex
// without a suffix. 0 is a size: callers that need more refuse it.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

// An id given by a person: decimal or 0x hex, 1..max. `what` names the
// field in the message ("--id '0' is not an id (a number 1..4294967295,
// decimal or 0x-hex)").
absl::StatusOr<uint64_t> ParseId(absl::string_view what, absl::string_view text,
                                 uint64_t max);

// Octal permission bits, "0640" or "640", at most `max`.
absl::StatusOr<uint32_t> ParseMode(absl::string_view text, uint32_t max = 0777);

// 512 B, 4 KiB, 1.5 MiB, 64 GiB: binary units, whole numbers without a
// decimal, others with one (rounded down, so a size just under a unit never
// reads as the unit).
std::string HumanBytes(uint64_t bytes);

}  // namespace lite::units

#endif  // LITE_COMMON_UNITS_UNITS_H_
