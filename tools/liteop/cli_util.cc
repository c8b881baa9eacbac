#include "tools/liteop/cli_util.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace lite::cli {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

absl::StatusOr<uint64_t> ParseNumber(absl::string_view text) {
  uint64_t v = 0;
  bool ok = false;
  if (absl::StartsWithIgnoreCase(text, "0x")) {
    ok = text.size() > 2 && absl::SimpleHexAtoi(text.substr(2), &v);
  } else {
    ok = !text.empty() && absl::ascii_isdigit(text[0]) &&
         absl::SimpleAtoi(text, &v);
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is not a non-negative number", text));
  }
  return v;
}

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  size_t digits = 0;
  if (absl::StartsWithIgnoreCase(text, "0x")) {
    digits = text.size();  // hex takes no suffix
  } else {
    while (digits < text.size() && absl::ascii_isdigit(text[digits])) ++digits;
  }
  absl::string_view suffix = text.substr(digits);
  int shift = 0;
  if (!suffix.empty()) {
    switch (absl::ascii_toupper(suffix[0])) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'B':
        shift = 0;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "'%s' is not a size (a number with an optional K, M, G or T)",
            text));
    }
    absl::string_view rest = suffix.substr(1);
    if (shift != 0 && !rest.empty() && !absl::EqualsIgnoreCase(rest, "B") &&
        !absl::EqualsIgnoreCase(rest, "iB")) {
      return absl::InvalidArgumentError(
          absl::StrFormat("'%s': unknown size suffix '%s'", text, suffix));
    }
    if (shift == 0 && !rest.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("'%s': unknown size suffix '%s'", text, suffix));
    }
  }
  absl::StatusOr<uint64_t> v = ParseNumber(text.substr(0, digits));
  if (!v.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a size (a number with an optional K, M, G or T)", text));
  }
  if (shift && *v > (UINT64_MAX >> shift)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' does not fit in 64 bits", text));
  }
  return *v << shift;
}

absl::StatusOr<uint32_t> ParseMode(absl::string_view text) {
  uint32_t mode = 0;
  if (text.empty() || text.size() > 4) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is not an octal mode like 0640", text));
  }
  for (char c : text) {
    if (c < '0' || c > '7') {
      return absl::InvalidArgumentError(
          absl::StrFormat("'%s' is not an octal mode like 0640", text));
    }
    mode = mode * 8 + (c - '0');
  }
  if (mode > 0777) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mode '%s' is more than 0777", text));
  }
  return mode;
}

void FillPattern(uint64_t seed, uint64_t start, absl::Span<uint8_t> out) {
  size_t i = 0;
  uint64_t pos = start;
  while (i < out.size()) {
    uint64_t word = SplitMix64(seed + pos / 8);
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b)
      bytes[b] = static_cast<uint8_t>(word >> (8 * b));
    size_t in_word = pos % 8;
    size_t n = std::min<size_t>(8 - in_word, out.size() - i);
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

std::string HumanBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrFormat("%u %s", bytes, kUnits[unit]);
}

}  // namespace lite::cli
