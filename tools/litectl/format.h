// How litectl shows things to people: aligned tables and human units.
#ifndef LITE_TOOLS_LITECTL_FORMAT_H_
#define LITE_TOOLS_LITECTL_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::litectl {

// Left-aligned columns separated by two spaces, a header row first, no
// trailing blanks. Rows shorter than the header are padded with "".
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void AddRow(std::vector<std::string> cells);
  std::string Render() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// 512 B, 4 KiB, 1.5 MiB, 64 GiB: binary units, at most one decimal.
std::string HumanBytes(uint64_t bytes);

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

// Newlines and tabs become spaces, so an error stays one line.
std::string OneLine(absl::string_view text);

// An id given by a person: decimal or 0x-hex, > 0, at most max.
absl::StatusOr<uint64_t> ParseId(absl::string_view what, absl::string_view text,
                                 uint64_t max);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_FORMAT_H_
