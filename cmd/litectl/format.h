// How litectl shows things to people beyond common/cli's tables and
// common/units' sizes: ages, durations, modes, ids and times; and text from
// the wire made inert before it reaches a terminal.
#ifndef LITE_TOOLS_LITECTL_FORMAT_H_
#define LITE_TOOLS_LITECTL_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/cli/table.h"

namespace lite::litectl {

// A past moment relative to now, both in Unix ms: 42s, 5m10s, 3h2m, 4d3h;
// "-" when the moment is 0 (unset).
std::string HumanAge(int64_t then_unix_ms, int64_t now_unix_ms);

// A duration in ms: 850ms, 1.2s, 42s, 5m10s.
std::string HumanMs(int64_t ms);

// Unix permission bits in octal, e.g. 0640.
std::string OctalMode(uint32_t mode);

// Ids are shown in hex: the high 32 bits name a node (0x200000001 is node
// 2's first LMR).
std::string HexId(uint64_t id);

// A Unix-ms timestamp as UTC "2024-05-01T12:00:00.123Z".
std::string UtcTime(int64_t unix_ms);

// Text that came from a server (names, reasons, addresses, messages) as
// printed in table and text output: controls and invalid UTF-8 as \xNN,
// backslash as \\ (common/text EscapeForTerminal). A manager that failed to
// refuse an escape sequence, or a hostile one, cannot clear the screen or
// forge lines. JSON needs none of it: the JSON writer escapes.
std::string Inert(absl::string_view text);

// Adds a row with every cell made Inert: a table shows what servers sent,
// and escaping every cell means no field can be forgotten (cells litectl
// made itself, numbers and enum names, come back unchanged).
void AddInertRow(cli::Table& table, std::vector<std::string> cells);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_FORMAT_H_
