// --event_log: appends every event the agent applied, one JSON object per
// line (proto field names), in the order applied. Operators get an audit
// trail; host tests compare the sequences different agents saw.
#ifndef LITE_AGENT_EVENT_LOG_H_
#define LITE_AGENT_EVENT_LOG_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lite/v1/manager.pb.h"

namespace lite::agent {

class EventLog {
 public:
  // Opens (creating or appending to) path.
  static absl::StatusOr<std::unique_ptr<EventLog>> Open(
      const std::string& path);
  ~EventLog();

  // Writes and flushes one line; a failed write is reported once per
  // failure streak and otherwise ignored (the log is not the source of truth).
  void Append(const lite::v1::Event& event);

 private:
  EventLog(std::string path, std::FILE* file)
      : path_(std::move(path)), file_(file) {}

  const std::string path_;
  absl::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_);
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_EVENT_LOG_H_
