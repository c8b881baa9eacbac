#include "common/units/units.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lite::units {
namespace {

// Decimal or 0x hex, digits only: SimpleAtoi alone would take a sign and
// blanks, SimpleHexAtoi a second "0x".
bool ReadNumber(absl::string_view text, uint64_t* value) {
  if (absl::StartsWithIgnoreCase(text, "0x")) {
    absl::string_view hex = text.substr(2);
    for (char c : hex) {
      if (!absl::ascii_isxdigit(c)) return false;
    }
    return !hex.empty() && absl::SimpleHexAtoi(hex, value);
  }
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return !text.empty() && absl::SimpleAtoi(text, value);
}

absl::Status NotASize(absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s' is not a size (a number with an optional K, M, G or T, e.g. "
      "4096, 64K, 1GiB; or 0x hex)",
      text));
}

}  // namespace

absl::StatusOr<uint64_t> ParseNumber(absl::string_view text, uint64_t max) {
  uint64_t value = 0;
  if (!ReadNumber(text, &value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not a non-negative number (decimal or 0x hex)", text));
  }
  if (value > max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is more than %u", text, max));
  }
  return value;
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
        break;
      default:
        return NotASize(text);
    }
    // After K..T: nothing, B or iB. After B: nothing.
    absl::string_view rest = suffix.substr(1);
    const bool rest_ok =
        rest.empty() || (shift != 0 && (absl::EqualsIgnoreCase(rest, "B") ||
                                        absl::EqualsIgnoreCase(rest, "iB")));
    if (!rest_ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s': unknown size suffix '%s' (K, M, G or T, optionally with B "
          "or iB)",
          text, suffix));
    }
  }
  uint64_t value = 0;
  if (!ReadNumber(text.substr(0, digits), &value)) return NotASize(text);
  if (value > (UINT64_MAX >> shift)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' does not fit in 64 bits", text));
  }
  return value << shift;
}

absl::StatusOr<uint64_t> ParseId(absl::string_view what, absl::string_view text,
                                 uint64_t max) {
  uint64_t value = 0;
  if (!ReadNumber(text, &value) || value == 0 || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s' is not an id (a number 1..%u, decimal or 0x-hex)", what, text,
        max));
  }
  return value;
}

absl::StatusOr<uint32_t> ParseMode(absl::string_view text, uint32_t max) {
  uint32_t mode = 0;
  bool ok = !text.empty() && text.size() <= 5;
  for (char c : text) {
    if (c < '0' || c > '7') ok = false;
    if (ok) mode = mode * 8 + (c - '0');
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is not an octal mode like 0640 (0..%04o)", text, max));
  }
  if (mode > max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("mode '%s' is more than %04o", text, max));
  }
  return mode;
}

std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B",   "KiB", "MiB",
                                           "GiB", "TiB", "PiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  // Whole numbers without a decimal; others with one (rounded down so that
  // a size just under a unit does not print as the unit).
  const uint64_t scale = uint64_t{1} << (10 * unit);
  if (bytes % scale == 0) return absl::StrCat(bytes / scale, " ", kUnits[unit]);
  const double tenths = static_cast<double>(static_cast<uint64_t>(value * 10));
  return absl::StrFormat("%.1f %s", tenths / 10, kUnits[unit]);
}

}  // namespace lite::units
