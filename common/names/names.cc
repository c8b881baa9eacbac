#include "common/names/names.h"

#include <string>

#include "common/names/name_rules.h"
#include "kmod/include/uapi/lite.h"

namespace lite::names {

const size_t kMaxLmrNameLength = LITE_NAME_MAX;
const size_t kMaxNodeNameLength = LITE_NODE_NAME_MAX;
const uint64_t kMaxLmrSizeBytes = LITE_LMR_SIZE_MAX;
const int kMaxLmrChunks = LITE_CHUNKS_MAX;
const int kMaxSupplementaryGroups = LITE_GROUPS_MAX;

namespace {

absl::Status Check(lite_name_kind kind, absl::string_view field,
                   absl::string_view name) {
  // Room for the field, an 80-character quote and the rule.
  char message[512];
  const std::string field_text(field);
  if (lite_name_check(kind, field_text.c_str(), name.data(), name.size(),
                      message, sizeof(message)) == 0) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::Status ValidateLmrName(absl::string_view field, absl::string_view name) {
  return Check(LITE_NAME_KIND_LMR, field, name);
}

absl::Status ValidateNodeName(absl::string_view field, absl::string_view name) {
  return Check(LITE_NAME_KIND_NODE, field, name);
}

}  // namespace lite::names
