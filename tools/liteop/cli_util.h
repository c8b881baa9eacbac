// Helpers shared by liteop and lite-bench: numbers with size suffixes, a
// deterministic byte pattern, a checksum, and the one error line format.
#ifndef LITE_TOOLS_LITEOP_CLI_UTIL_H_
#define LITE_TOOLS_LITEOP_CLI_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace lite::cli {

// A non-negative integer: decimal or 0x hex, with an optional binary size
// suffix K, M, G, T (also KB/KiB/k, ...: all powers of 1024). "64M" is
// 67108864. Fails with INVALID_ARGUMENT on anything else or on overflow.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

// A plain unsigned number (decimal or 0x hex), no suffix.
absl::StatusOr<uint64_t> ParseNumber(absl::string_view text);

// Octal mode bits, e.g. "0640" or "640"; at most 0777.
absl::StatusOr<uint32_t> ParseMode(absl::string_view text);

// The test pattern: byte i (counted from the start of the written range) is
// byte (i % 8) of SplitMix64(seed + i / 8), little-endian. Fills `out` as if
// it began at pattern position `start`.
void FillPattern(uint64_t seed, uint64_t start, absl::Span<uint8_t> out);

// FNV-1a, 64 bits. Chain calls through `hash` to checksum in pieces.
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
uint64_t Fnv1a64(absl::Span<const uint8_t> data, uint64_t hash = kFnvOffset);

// "64 MiB", "4 KiB", "100 B": for humans.
std::string HumanBytes(uint64_t bytes);

}  // namespace lite::cli

#endif  // LITE_TOOLS_LITEOP_CLI_UTIL_H_
