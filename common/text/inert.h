// Free text that is inert on a terminal and in a log line.
//
// Names, reasons and details travel from one node to the manager and from
// the manager to every operator's terminal. A string that carries an escape
// sequence (ESC [ ... , OSC 52 to the clipboard, a C1 CSI) or a newline
// rewrites what the operator sees, or forges a log line. The manager refuses
// such text where it enters (ValidateInertText), and the tools escape what
// they print anyway (EscapeForTerminal): an older or a hostile manager may
// still send it.
#ifndef LITE_COMMON_TEXT_INERT_H_
#define LITE_COMMON_TEXT_INERT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace lite::text {

// OK when @value is at most @max_bytes bytes of valid UTF-8 (shortest form,
// no surrogates, nothing past U+10FFFF) with no C0 control (U+0000..U+001F:
// TAB, LF and ESC included), no DEL (U+007F), no C1 control
// (U+0080..U+009F), no format character (Unicode category Cf: bidi
// overrides and isolates, zero-width spaces and joiners, soft hyphen, tags)
// and no line or paragraph separator (U+2028, U+2029). INVALID_ARGUMENT
// otherwise, with a message that names
// @field and the offset of the first bad byte (never the value itself,
// which is what the caller must not print).
absl::Status ValidateInertText(std::string_view field, std::string_view value,
                               size_t max_bytes);

// @value as one printable line: every byte of a C0 or C1 control, DEL, a
// format character or separator as above, or invalid UTF-8 becomes \xNN
// (upper-case hex; U+202E is \xE2\x80\xAE), a backslash becomes \\ (so
// the output reads back unambiguously), and valid printable UTF-8 is kept.
// Text that passes ValidateInertText and has no backslash comes back as is.
std::string EscapeForTerminal(std::string_view value);

}  // namespace lite::text

#endif  // LITE_COMMON_TEXT_INERT_H_
