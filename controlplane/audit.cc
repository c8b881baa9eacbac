#include "controlplane/audit.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/log/log.h"

namespace lite::controlplane {
namespace {

// A caller name printed bare when it cannot be mistaken for anything else
// (what tools/litecerts issues), quoted otherwise.
std::string CallerField(absl::string_view caller) {
  if (caller.empty()) return Quoted(caller);
  for (char c : caller) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '-' && c != '_' && c != '@' && c != '(' && c != ')') {
      return Quoted(caller);
    }
  }
  return std::string(caller);
}

}  // namespace

std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CHexEscape(text), "\"");
}

void Audit(absl::string_view caller, absl::string_view method,
           absl::string_view fields, const absl::Status& outcome) {
  LITE_LOG_INFO("audit: %s %s %s -> %s", CallerField(caller), method, fields,
                absl::StatusCodeToString(outcome.code()));
}

}  // namespace lite::controlplane
