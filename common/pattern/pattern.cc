#include "common/pattern/pattern.h"

#include <algorithm>
#include <cstring>

namespace lite::pattern {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void FillPattern(uint64_t seed, uint64_t start, absl::Span<uint8_t> out) {
  size_t i = 0;
  uint64_t pos = start;
  while (i < out.size()) {
    const uint64_t word = SplitMix64(seed + pos / 8);
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<uint8_t>(word >> (8 * b));
    }
    const size_t in_word = pos % 8;
    const size_t n = std::min<size_t>(8 - in_word, out.size() - i);
    std::memcpy(out.data() + i, bytes + in_word, n);
    i += n;
    pos += n;
  }
}

uint64_t Fnv1a64(absl::Span<const uint8_t> data, uint64_t hash) {
  for (uint8_t b : data) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace lite::pattern
