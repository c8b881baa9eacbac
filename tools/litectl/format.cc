#include "tools/litectl/format.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace lite::litectl {

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), headers_.size()));
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  };
  measure(headers_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string& cell = i < row.size() ? row[i] : "";
      absl::StrAppend(&line, cell);
      if (i + 1 < width.size()) {
        line.append(width[i] - cell.size() + 2, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  };
  emit(headers_);
  for (const auto& row : rows_) emit(row);
  return out;
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

std::string HumanMs(int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return absl::StrCat(ms, "ms");
  if (ms < 10000) return absl::StrFormat("%.1fs", ms / 1000.0);
  const int64_t s = ms / 1000;
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrCat(s / 60, "m", s % 60, "s");
  if (s < 86400) return absl::StrCat(s / 3600, "h", s % 3600 / 60, "m");
  return absl::StrCat(s / 86400, "d", s % 86400 / 3600, "h");
}

std::string HumanAge(int64_t then_unix_ms, int64_t now_unix_ms) {
  if (then_unix_ms <= 0) return "-";
  const int64_t ms = std::max<int64_t>(0, now_unix_ms - then_unix_ms);
  // Ages read best in whole seconds.
  return ms < 60000 ? absl::StrCat(ms / 1000, "s") : HumanMs(ms);
}

std::string OctalMode(uint32_t mode) { return absl::StrFormat("%04o", mode); }

std::string HexId(uint64_t id) { return absl::StrFormat("%#x", id); }

std::string UtcTime(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string OneLine(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

absl::StatusOr<uint64_t> ParseId(absl::string_view what, absl::string_view text,
                                 uint64_t max) {
  uint64_t value = 0;
  bool ok;
  if (absl::StartsWithIgnoreCase(text, "0x")) {
    ok = text.size() > 2 && absl::SimpleHexAtoi(text.substr(2), &value) &&
         absl::ascii_isxdigit(text[2]);
  } else {
    ok = !text.empty() && absl::ascii_isdigit(text[0]) &&
         absl::SimpleAtoi(text, &value);
  }
  if (!ok || value == 0 || value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s' is not an id (a number 1..%u, decimal or 0x-hex)", what, text,
        max));
  }
  return value;
}

}  // namespace lite::litectl
