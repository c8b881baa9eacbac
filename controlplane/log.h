// Minimal stderr logging for the control plane (litemgr and liteagent).
// Debian's Abseil (20220623) predates absl/log, so daemons use this: one line
// per message, with a UTC timestamp, the level and the text, written with a
// single fwrite so lines from different threads do not interleave.
#ifndef LITE_CONTROLPLANE_LOG_H_
#define LITE_CONTROLPLANE_LOG_H_

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace lite::controlplane {

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

}  // namespace lite::controlplane

#define LITE_LOG_DEBUG(...) \
  ::lite::controlplane::Log(::lite::controlplane::LogLevel::kDebug, __VA_ARGS__)
#define LITE_LOG_INFO(...) \
  ::lite::controlplane::Log(::lite::controlplane::LogLevel::kInfo, __VA_ARGS__)
#define LITE_LOG_WARNING(...)                                         \
  ::lite::controlplane::Log(::lite::controlplane::LogLevel::kWarning, \
                            __VA_ARGS__)
#define LITE_LOG_ERROR(...) \
  ::lite::controlplane::Log(::lite::controlplane::LogLevel::kError, __VA_ARGS__)

#endif  // LITE_CONTROLPLANE_LOG_H_
