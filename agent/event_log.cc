#include "agent/event_log.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "google/protobuf/util/json_util.h"

namespace lite::agent {

absl::StatusOr<std::unique_ptr<EventLog>> EventLog::Open(
    const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot open event log '%s': %s", path, std::strerror(errno)));
  }
  return std::unique_ptr<EventLog>(new EventLog(path, f));
}

EventLog::~EventLog() {
  absl::MutexLock lock(&mu_);
  std::fclose(file_);
}

void EventLog::Append(const lite::v1::Event& event) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(event, &json, options)
           .ok()) {
    LITE_LOG_ERROR("event log: cannot encode event %u as JSON",
                   event.sequence());
    return;
  }
  json.push_back('\n');
  absl::MutexLock lock(&mu_);
  const bool ok =
      std::fwrite(json.data(), 1, json.size(), file_) == json.size() &&
      std::fflush(file_) == 0;
  if (!ok && !failing_) {
    LITE_LOG_ERROR("event log '%s': write failed: %s", path_,
                   std::strerror(errno));
  }
  failing_ = !ok;
}

}  // namespace lite::agent
