// The test data pattern and checksum that liteop writes and verifies and
// lite-bench shares: deterministic bytes any other implementation can
// reproduce (liteop_test.sh checks values computed in Python).
#ifndef LITE_COMMON_PATTERN_PATTERN_H_
#define LITE_COMMON_PATTERN_PATTERN_H_

#include <cstdint>

#include "absl/types/span.h"

namespace lite::pattern {

// Byte i (counted from the start of the written range) is byte (i % 8) of
// SplitMix64(seed + i / 8), little-endian. Fills `out` as if it began at
// pattern position `start`, so a range can be filled in pieces.
void FillPattern(uint64_t seed, uint64_t start, absl::Span<uint8_t> out);

// FNV-1a, 64 bits. Chain calls through `hash` to checksum in pieces.
inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
uint64_t Fnv1a64(absl::Span<const uint8_t> data, uint64_t hash = kFnvOffset);

}  // namespace lite::pattern

#endif  // LITE_COMMON_PATTERN_PATTERN_H_
