// How litectl shows things to people beyond common/cli's tables and
// common/units' sizes: ages, durations, modes, ids and times.
#ifndef LITE_TOOLS_LITECTL_FORMAT_H_
#define LITE_TOOLS_LITECTL_FORMAT_H_

#include <cstdint>
#include <string>

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

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_FORMAT_H_
