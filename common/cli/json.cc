#include "common/cli/json.h"

#include "absl/strings/str_cat.h"

namespace lite::cli {
namespace {

std::string Scalar(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void Append(const Json& value, std::string* out) {
  if (value.is_object()) {
    out->push_back('{');
    const char* sep = "";
    for (const auto& [key, item] : value.items()) {
      absl::StrAppend(out, sep, Scalar(Json(key)), ": ");
      Append(item, out);
      sep = ", ";
    }
    out->push_back('}');
  } else if (value.is_array()) {
    out->push_back('[');
    const char* sep = "";
    for (const Json& item : value) {
      out->append(sep);
      Append(item, out);
      sep = ", ";
    }
    out->push_back(']');
  } else {
    out->append(Scalar(value));
  }
}

}  // namespace

std::string JsonLine(const Json& value) {
  std::string out;
  Append(value, &out);
  return out;
}

}  // namespace lite::cli
