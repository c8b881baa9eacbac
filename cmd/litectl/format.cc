#include "cmd/litectl/format.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/text/inert.h"

namespace lite::litectl {

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

std::string Inert(absl::string_view text) {
  return text::EscapeForTerminal(std::string_view(text.data(), text.size()));
}

void AddInertRow(cli::Table& table, std::vector<std::string> cells) {
  for (std::string& cell : cells) cell = Inert(cell);
  table.AddRow(std::move(cells));
}

}  // namespace lite::litectl
