// ValidateInertText and EscapeForTerminal: the attacks they exist for (ESC
// and OSC sequences, C1 CSI, newlines in log lines), every malformed UTF-8
// class, the size boundary, and an exhaustive comparison of every 1-, 2- and
// 3-byte string (and every 4-byte lead with its valid and invalid
// continuations) against an independent decoder written from the
// definition of a Unicode scalar value.
#include "common/text/inert.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::text {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

absl::Status Check(const std::string& value, size_t max = 1024) {
  return ValidateInertText("reason", value, max);
}

TEST(ValidateInertTextTest, AcceptsPrintableText) {
  EXPECT_THAT(Check(""), IsOk());
  EXPECT_THAT(Check("node2 drained by ops: disk swap"), IsOk());
  EXPECT_THAT(Check(" !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"), IsOk());
  EXPECT_THAT(Check("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), IsOk());
  EXPECT_THAT(Check("\xC2\xA0"), IsOk());          // U+00A0, first after C1
  EXPECT_THAT(Check("\xEF\xBF\xBF"), IsOk());      // U+FFFF
  EXPECT_THAT(Check("\xF4\x8F\xBF\xBF"), IsOk());  // U+10FFFF
}

TEST(ValidateInertTextTest, RefusesEscapeSequences) {
  EXPECT_THAT(Check("\x1b[2J\x1b[Hfake prompt$ "), StatusIs(kInvalid));
  EXPECT_THAT(Check("ok\x1b]52;c;cm0gLXJmIH4=\x07"), StatusIs(kInvalid));
  EXPECT_THAT(Check("\x9b"
                    "31m"),
              StatusIs(kInvalid));  // raw C1 byte
  EXPECT_THAT(Check("\xC2\x9B"
                    "31m"),
              StatusIs(kInvalid));                     // U+009B CSI
  EXPECT_THAT(Check("\xC2\x80"), StatusIs(kInvalid));  // U+0080
  EXPECT_THAT(Check("\xC2\x9F"), StatusIs(kInvalid));  // U+009F
}

TEST(ValidateInertTextTest, RefusesEveryC0AndDel) {
  for (int c = 0; c < 0x20; ++c) {
    EXPECT_THAT(Check(std::string("a") + static_cast<char>(c)),
                StatusIs(kInvalid))
        << c;
  }
  EXPECT_THAT(Check("a\tb"), StatusIs(kInvalid));
  EXPECT_THAT(Check("line\n2026-11-23 forged log line"), StatusIs(kInvalid));
  EXPECT_THAT(Check(std::string("nul\0inside", 10)), StatusIs(kInvalid));
  EXPECT_THAT(Check("\x7f"), StatusIs(kInvalid));
}

TEST(ValidateInertTextTest, RefusesMalformedUtf8) {
  EXPECT_THAT(Check("\x80"), StatusIs(kInvalid));          // lone cont.
  EXPECT_THAT(Check("\xC3"), StatusIs(kInvalid));          // truncated
  EXPECT_THAT(Check("\xE2\x82"), StatusIs(kInvalid));      // truncated
  EXPECT_THAT(Check("\xF0\x9F\x98"), StatusIs(kInvalid));  // truncated
  EXPECT_THAT(Check("\xC3"
                    "A"),
              StatusIs(kInvalid));                             // bad cont.
  EXPECT_THAT(Check("\xC0\xAF"), StatusIs(kInvalid));          // overlong '/'
  EXPECT_THAT(Check("\xC1\xBF"), StatusIs(kInvalid));          // overlong
  EXPECT_THAT(Check("\xE0\x80\xAF"), StatusIs(kInvalid));      // overlong
  EXPECT_THAT(Check("\xE0\x9F\xBF"), StatusIs(kInvalid));      // overlong
  EXPECT_THAT(Check("\xF0\x80\x80\xAF"), StatusIs(kInvalid));  // overlong
  EXPECT_THAT(Check("\xF0\x8F\xBF\xBF"), StatusIs(kInvalid));  // overlong
  EXPECT_THAT(Check("\xED\xA0\x80"), StatusIs(kInvalid));      // U+D800
  EXPECT_THAT(Check("\xED\xBF\xBF"), StatusIs(kInvalid));      // U+DFFF
  EXPECT_THAT(Check("\xED\x9F\xBF"), IsOk());                  // U+D7FF
  EXPECT_THAT(Check("\xEE\x80\x80"), IsOk());                  // U+E000
  EXPECT_THAT(Check("\xF4\x90\x80\x80"), StatusIs(kInvalid));  // U+110000
  EXPECT_THAT(Check("\xF5\x80\x80\x80"), StatusIs(kInvalid));
  EXPECT_THAT(Check("\xFE"), StatusIs(kInvalid));
  EXPECT_THAT(Check("\xFF"), StatusIs(kInvalid));
}

TEST(ValidateInertTextTest, MessageNamesFieldAndFirstBadOffset) {
  const absl::Status s = ValidateInertText("DrainNodeRequest.reason",
                                           "abc\xE2\x82\xAC\x1b[31m", 64);
  EXPECT_THAT(
      s, StatusIs(kInvalid, AllOf(HasSubstr("DrainNodeRequest.reason"),
                                  HasSubstr("byte 6 "), HasSubstr("0x1b"))));
  // The value itself is not echoed: the message is printed and logged.
  EXPECT_THAT(s.message(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(ValidateInertText("f", "\xC3", 64),
              StatusIs(kInvalid, HasSubstr("byte 0 ")));
  EXPECT_THAT(ValidateInertText("f", "ab\xE2\x82", 64),
              StatusIs(kInvalid, HasSubstr("byte 2 ")));
}

TEST(ValidateInertTextTest, SizeBoundary) {
  EXPECT_THAT(ValidateInertText("d", std::string(256, 'x'), 256), IsOk());
  EXPECT_THAT(ValidateInertText("d", std::string(257, 'x'), 256),
              StatusIs(kInvalid, AllOf(HasSubstr("d is 257 bytes"),
                                       HasSubstr("at most 256"))));
  EXPECT_THAT(ValidateInertText("d", "", 0), IsOk());
  EXPECT_THAT(ValidateInertText("d", "x", 0), StatusIs(kInvalid));
  // Bytes, not characters: a 2-byte character needs room for both.
  EXPECT_THAT(ValidateInertText("d", "\xC3\xA9", 2), IsOk());
  EXPECT_THAT(ValidateInertText("d", "\xC3\xA9", 1), StatusIs(kInvalid));
}

TEST(EscapeForTerminalTest, EscapesControlsKeepsText) {
  EXPECT_EQ(EscapeForTerminal(""), "");
  EXPECT_EQ(EscapeForTerminal("plain reason"), "plain reason");
  EXPECT_EQ(EscapeForTerminal("caf\xC3\xA9 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(EscapeForTerminal("\x1b[2Jgone"), "\\x1B[2Jgone");
  EXPECT_EQ(EscapeForTerminal("a\tb\nc\rd"), "a\\x09b\\x0Ac\\x0Dd");
  EXPECT_EQ(EscapeForTerminal(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeForTerminal("\x7f"), "\\x7F");
  EXPECT_EQ(EscapeForTerminal("\x9b"
                              "31m"),
            "\\x9B31m");
  EXPECT_EQ(EscapeForTerminal("\xC2\x9B"
                              "31m"),
            "\\xC2\\x9B31m");
  EXPECT_EQ(EscapeForTerminal("\xC2\xA0"), "\xC2\xA0");
  EXPECT_EQ(EscapeForTerminal("back\\slash"), "back\\\\slash");
  // An escaped escape stays distinguishable from a real one.
  EXPECT_EQ(EscapeForTerminal("\\x1B"), "\\\\x1B");
}

// Bidi overrides and isolates, zero-width and other format characters
// print nothing but change the line: an evict reason "\u202Edeliver" shows
// reversed in litectl watch (review cp-2026-11-28 L7).
TEST(ValidateInertTextTest, RefusesFormatCharacters) {
  for (const char* bad : {
           "\xE2\x80\xAE",      // U+202E RIGHT-TO-LEFT OVERRIDE
           "\xE2\x80\xAA",      // U+202A LEFT-TO-RIGHT EMBEDDING
           "\xE2\x81\xA6",      // U+2066 LEFT-TO-RIGHT ISOLATE
           "\xE2\x81\xA9",      // U+2069 POP DIRECTIONAL ISOLATE
           "\xE2\x80\x8B",      // U+200B ZERO WIDTH SPACE
           "\xE2\x80\x8F",      // U+200F RIGHT-TO-LEFT MARK
           "\xE2\x81\xA0",      // U+2060 WORD JOINER
           "\xEF\xBB\xBF",      // U+FEFF ZERO WIDTH NO-BREAK SPACE
           "\xC2\xAD",          // U+00AD SOFT HYPHEN
           "\xD8\x9C",          // U+061C ARABIC LETTER MARK
           "\xF3\xA0\x80\x81",  // U+E0001 LANGUAGE TAG
           "\xE2\x80\xA8",      // U+2028 LINE SEPARATOR
       }) {
    const std::string text = absl::StrCat("ok ", bad, "evil");
    EXPECT_THAT(Check(text), StatusIs(kInvalid, HasSubstr("byte 3 (0x")))
        << absl::CEscape(text);
  }
  // Neighbours stay accepted: U+2010 HYPHEN, U+2030 PER MILLE, U+00AE.
  EXPECT_THAT(Check("\xE2\x80\x90 \xE2\x80\xB0 \xC2\xAE"), IsOk());
}

TEST(EscapeForTerminalTest, EscapesFormatCharacters) {
  EXPECT_EQ(EscapeForTerminal("pay \xE2\x80\xAEtxt.exe"),
            "pay \\xE2\\x80\\xAEtxt.exe");
  EXPECT_EQ(EscapeForTerminal("n\xE2\x80\x8B"
                              "1"),
            "n\\xE2\\x80\\x8B1");
}

TEST(EscapeForTerminalTest, InvalidUtf8ByteByByte) {
  EXPECT_EQ(EscapeForTerminal("\xC0\xAF"), "\\xC0\\xAF");
  EXPECT_EQ(EscapeForTerminal("\xED\xA0\x80"), "\\xED\\xA0\\x80");
  EXPECT_EQ(EscapeForTerminal("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");
  // A truncated sequence does not swallow the character after it.
  EXPECT_EQ(EscapeForTerminal("\xE2\x82"
                              "A"),
            "\\xE2\\x82A");
  EXPECT_EQ(EscapeForTerminal("\xE2\xC3\xA9"), "\\xE2\xC3\xA9");
  EXPECT_EQ(EscapeForTerminal("\xFF\xFE"), "\\xFF\\xFE");
}

// An independent reading of the definition: decode by bit arithmetic with
// no validity check, then require the shortest form, a scalar value (no
// surrogate, at most U+10FFFF) and no control.
std::optional<size_t> ReferencePrintableLength(const std::string& s) {
  const auto u = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  size_t len;
  uint32_t cp;
  if (u(0) < 0x80) {
    len = 1, cp = u(0);
  } else if ((u(0) & 0xE0) == 0xC0) {
    len = 2, cp = u(0) & 0x1F;
  } else if ((u(0) & 0xF0) == 0xE0) {
    len = 3, cp = u(0) & 0x0F;
  } else if ((u(0) & 0xF8) == 0xF0) {
    len = 4, cp = u(0) & 0x07;
  } else {
    return std::nullopt;
  }
  if (s.size() < len) return std::nullopt;
  for (size_t i = 1; i < len; ++i) {
    if ((u(i) & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (u(i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF) return std::nullopt;
  if (cp >= 0xD800 && cp <= 0xDFFF) return std::nullopt;
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return std::nullopt;
  // Unicode 15's general category Cf, one code point or run per entry as
  // the Unicode Character Database lists them, and U+2028/U+2029.
  static constexpr uint32_t kFormat[][2] = {
      {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
      {0x06DD, 0x06DD},   {0x070F, 0x070F},   {0x0890, 0x0891},
      {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},
      {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
      {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
      {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3},
      {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F},
      {0x2028, 0x2029}};
  for (const auto& r : kFormat) {
    if (cp >= r[0] && cp <= r[1]) return std::nullopt;
  }
  return len;
}

// Whether @s is one printable character (per the reference) and nothing else.
bool ReferenceIsOneCharacter(const std::string& s) {
  const std::optional<size_t> n = ReferencePrintableLength(s);
  return n.has_value() && *n == s.size();
}

std::string HexEscaped(int byte) {
  char buf[8];
  snprintf(buf, sizeof(buf), "\\x%02X", byte);
  return buf;
}

void ExpectAgreesWithReference(const std::string& s) {
  const bool ok = ReferenceIsOneCharacter(s);
  EXPECT_EQ(ValidateInertText("f", s, 4).ok(), ok) << absl::CEscape(s);
  if (ok) {
    EXPECT_EQ(EscapeForTerminal(s), s == "\\" ? "\\\\" : s);
  } else {
    // Something was escaped, and the output is printable ASCII or valid
    // UTF-8 with no control: it passes the validator itself.
    EXPECT_NE(EscapeForTerminal(s), s) << absl::CEscape(s);
    EXPECT_THAT(ValidateInertText("out", EscapeForTerminal(s), 64), IsOk())
        << absl::CEscape(s);
  }
}

TEST(ExhaustiveTest, EveryOneAndTwoByteString) {
  for (int a = 0; a < 256; ++a) {
    ExpectAgreesWithReference(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) {
      // Two bytes are one character, or a valid one followed by another.
      const std::string s{static_cast<char>(a), static_cast<char>(b)};
      const bool ok = ReferenceIsOneCharacter(s) ||
                      (ReferenceIsOneCharacter(s.substr(0, 1)) &&
                       ReferenceIsOneCharacter(s.substr(1)));
      ASSERT_EQ(ValidateInertText("f", s, 2).ok(), ok) << absl::CEscape(s);
    }
  }
}

TEST(ExhaustiveTest, EveryThreeByteSequenceWithA3ByteLead) {
  for (int a = 0xE0; a <= 0xEF; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < 256; ++c) {
        const std::string s{static_cast<char>(a), static_cast<char>(b),
                            static_cast<char>(c)};
        if (ReferenceIsOneCharacter(s)) {
          ASSERT_THAT(ValidateInertText("f", s, 3), IsOk()) << absl::CEscape(s);
          ASSERT_EQ(EscapeForTerminal(s), s);
        } else if ((b & 0xC0) == 0x80 && (c & 0xC0) == 0x80) {
          // Well-shaped but overlong or a surrogate: refused.
          ASSERT_FALSE(ValidateInertText("f", s, 3).ok()) << absl::CEscape(s);
          // The lead byte is escaped, not the start of a character.
          ASSERT_EQ(EscapeForTerminal(s).substr(0, 4), HexEscaped(a))
              << absl::CEscape(s);
        }
      }
    }
  }
}

TEST(ExhaustiveTest, EveryFourByteLeadAndSecondByte) {
  for (int a = 0xF0; a <= 0xFF; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c : {0x80, 0xBF}) {
        for (int d : {0x80, 0xBF, 0x41, 0xC0}) {
          ExpectAgreesWithReference(
              std::string{static_cast<char>(a), static_cast<char>(b),
                          static_cast<char>(c), static_cast<char>(d)});
        }
      }
    }
  }
}

}  // namespace
}  // namespace lite::text
