#include "common/text/inert.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace lite::text {
namespace {

// Unicode general category Cf (format characters; Unicode 15), and the two
// line-break characters U+2028 and U+2029 (Zl, Zp). They print nothing
// themselves but change what is around them: the bidi overrides and
// isolates (U+202A..202E, U+2066..2069) reorder a line, zero-width ones
// (U+200B..200D, U+2060, U+FEFF) hide inside a name, tags (U+E0020..E007F)
// carry text the eye does not see (review cp-2026-11-28 L7).
struct Range {
  uint32_t first, last;
};
constexpr Range kInvisible[] = {
    {0xAD, 0xAD},       {0x600, 0x605},     {0x61C, 0x61C},
    {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},
    {0x8E2, 0x8E2},     {0x180E, 0x180E},   {0x200B, 0x200F},
    {0x2028, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
    {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
};

bool Invisible(uint32_t cp) {
  for (const Range& r : kInvisible) {
    if (cp >= r.first && cp <= r.last) return true;
  }
  return false;
}

// Length of the printable UTF-8 character at @s[pos], or 0 when the byte
// there starts a control, DEL, or no valid (shortest-form, non-surrogate,
// <= U+10FFFF) sequence. Follows RFC 3629's table of well-formed sequences,
// so an overlong form (C0 AF for '/') or an encoded surrogate (ED A0 80)
// never decodes.
size_t PrintableAt(std::string_view s, size_t pos) {
  const auto byte = [&](size_t i) -> uint8_t {
    return static_cast<uint8_t>(s[pos + i]);
  };
  const size_t left = s.size() - pos;
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return (b0 >= 0x20 && b0 != 0x7F) ? 1 : 0;
  // Second-byte bounds per lead byte (RFC 3629, section 4); the later
  // bytes are always 80..BF.
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b0 == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;  // 80..C1 (continuation or overlong lead), F5..FF
  }
  if (left < len) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  // C1 controls U+0080..U+009F are C2 80..C2 9F: terminals that decode
  // UTF-8 act on them (U+009B is CSI).
  if (b0 == 0xC2 && byte(1) <= 0x9F) return 0;
  uint32_t cp = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (byte(i) & 0x3F);
  if (Invisible(cp)) return 0;
  return len;
}

// This abseil's string_view is its own type, not std::string_view.
absl::string_view Absl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace

absl::Status ValidateInertText(std::string_view field, std::string_view value,
                               size_t max_bytes) {
  if (value.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Absl(field), " is ", value.size(), " bytes long, at most ",
                     max_bytes, " are accepted"));
  }
  for (size_t pos = 0; pos < value.size();) {
    const size_t n = PrintableAt(value, pos);
    if (n == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          Absl(field), ": byte ", pos, " (0x",
          absl::Hex(uint32_t{static_cast<uint8_t>(value[pos])},
                    absl::kZeroPad2),
          ") is a control character, starts an invisible format character "
          "(bidi, zero-width) or is not valid UTF-8; printable UTF-8 text "
          "without tabs or newlines is accepted"));
    }
    pos += n;
  }
  return absl::OkStatus();
}

std::string EscapeForTerminal(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (size_t pos = 0; pos < value.size();) {
    if (value[pos] == '\\') {
      out += "\\\\";
      ++pos;
      continue;
    }
    const size_t n = PrintableAt(value, pos);
    if (n > 0) {
      out.append(value.substr(pos, n));
      pos += n;
      continue;
    }
    // One byte at a time: the next byte may start a valid character again.
    const auto b = static_cast<uint8_t>(value[pos]);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
    ++pos;
  }
  return out;
}

}  // namespace lite::text
