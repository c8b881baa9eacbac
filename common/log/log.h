// Minimal stderr logging for LITE's daemons (litemgr and liteagent) and the
// libraries they share. Debian's Abseil (20220623) predates absl/log, so
// daemons use this: one line per message, with a UTC timestamp, the level
// and the text, written with a single fwrite so lines from different threads
// do not interleave.
//
//   LITE_LOG_INFO("node %u joined as %s", node_id, name);
#ifndef LITE_COMMON_LOG_LOG_H_
#define LITE_COMMON_LOG_LOG_H_

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace lite::logging {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// "debug", "info", "warning", "error" -> level; false for anything else.
bool ParseLogLevel(absl::string_view text, LogLevel* level);

// Messages below this level are dropped. Default kInfo.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();

// Writes one line to stderr.
void LogLine(LogLevel level, absl::string_view text);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  if (level < MinLogLevel()) return;
  LogLine(level, absl::StrFormat(format, args...));
}

}  // namespace lite::logging

#define LITE_LOG_DEBUG(...) \
  ::lite::logging::Log(::lite::logging::LogLevel::kDebug, __VA_ARGS__)
#define LITE_LOG_INFO(...) \
  ::lite::logging::Log(::lite::logging::LogLevel::kInfo, __VA_ARGS__)
#define LITE_LOG_WARNING(...) \
  ::lite::logging::Log(::lite::logging::LogLevel::kWarning, __VA_ARGS__)
#define LITE_LOG_ERROR(...) \
  ::lite::logging::Log(::lite::logging::LogLevel::kError, __VA_ARGS__)

#endif  // LITE_COMMON_LOG_LOG_H_
