// Minimal stderr logging for liteagent. Debian's Abseil (20220623) predates
// absl/log, so the agent uses this: one line per message with a UTC
// timestamp, the level and the text, written with a single fwrite so lines
// from different threads do not interleave.
#ifndef LITE_AGENT_LOG_H_
#define LITE_AGENT_LOG_H_

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace lite::agent {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped. Default kInfo.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();

// "debug", "info", "warning", "error" -> level; false for anything else.
bool ParseLogLevel(absl::string_view text, LogLevel* level);

// Writes one line to stderr.
void LogLine(LogLevel level, absl::string_view text);

template <typename... Args>
void Log(LogLevel level, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  if (level < MinLogLevel()) return;
  LogLine(level, absl::StrFormat(format, args...));
}

}  // namespace lite::agent

#define AGENT_LOG_DEBUG(...) \
  ::lite::agent::Log(::lite::agent::LogLevel::kDebug, __VA_ARGS__)
#define AGENT_LOG_INFO(...) \
  ::lite::agent::Log(::lite::agent::LogLevel::kInfo, __VA_ARGS__)
#define AGENT_LOG_WARNING(...) \
  ::lite::agent::Log(::lite::agent::LogLevel::kWarning, __VA_ARGS__)
#define AGENT_LOG_ERROR(...) \
  ::lite::agent::Log(::lite::agent::LogLevel::kError, __VA_ARGS__)

#endif  // LITE_AGENT_LOG_H_
