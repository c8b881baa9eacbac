#include "agent/fake_spec.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/validation.h"
#include "common/names/names.h"
#include "common/status/macros.h"

namespace lite::agent {
namespace {

// Octal digits only, at most 4 of them.
bool ParseOctalMode(absl::string_view text, uint32_t* mode) {
  if (text.empty() || text.size() > 4) return false;
  *mode = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return false;
    *mode = *mode * 8 + static_cast<uint32_t>(c - '0');
  }
  return true;
}

absl::Status SplitEntry(absl::string_view flag, absl::string_view entry,
                        absl::string_view* name, absl::string_view* value) {
  size_t eq = entry.find('=');
  if (eq == entry.npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s entry '%s' is not NAME=VALUE", flag, entry));
  }
  *name = entry.substr(0, eq);
  *value = entry.substr(eq + 1);
  if (absl::Status s = names::ValidateLmrName("LMR name", *name); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s: %s", flag, s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<FakeLmrSpec>> ParseFakeLmrs(absl::string_view text) {
  std::vector<FakeLmrSpec> out;
  if (text.empty()) return out;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    absl::string_view name, value;
    LITE_RETURN_IF_ERROR(SplitEntry("fake_lmrs", entry, &name, &value));
    FakeLmrSpec spec;
    spec.name = std::string(name);
    absl::string_view size_text = value;
    if (size_t at = value.find('@'); at != value.npos) {
      size_text = value.substr(0, at);
      absl::string_view mode_text = value.substr(at + 1);
      uint32_t mode = 0;
      if (!ParseOctalMode(mode_text, &mode) || (mode & ~0666u) != 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--fake_lmrs entry '%s': mode '%s' is not an octal subset of 0666",
            entry, mode_text));
      }
      spec.mode = mode;
    }
    absl::StatusOr<uint64_t> size = ParseSize(size_text);
    if (!size.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--fake_lmrs entry '%s': %s", entry, size.status().message()));
    }
    spec.size_bytes = *size;
    for (const FakeLmrSpec& other : out) {
      if (other.name == spec.name) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--fake_lmrs names '%s' twice", spec.name));
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

absl::StatusOr<std::vector<FakeMapSpec>> ParseFakeMaps(absl::string_view text) {
  std::vector<FakeMapSpec> out;
  if (text.empty()) return out;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    absl::string_view name, value;
    LITE_RETURN_IF_ERROR(SplitEntry("fake_maps", entry, &name, &value));
    FakeMapSpec spec;
    spec.name = std::string(name);
    if (value == "r") {
      spec.read = true;
    } else if (value == "w") {
      spec.write = true;
    } else if (value == "rw") {
      spec.read = spec.write = true;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--fake_maps entry '%s': access '%s' is not r, w or rw", entry,
          value));
    }
    out.push_back(std::move(spec));
  }
  return out;
}

absl::StatusOr<std::vector<FakeServiceSpec>> ParseFakeServices(
    absl::string_view text) {
  std::vector<FakeServiceSpec> out;
  if (text.empty()) return out;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    absl::string_view name, value;
    LITE_RETURN_IF_ERROR(SplitEntry("fake_services", entry, &name, &value));
    FakeServiceSpec spec;
    spec.name = std::string(name);
    if (!ParseOctalMode(value, &spec.mode) || (spec.mode & ~0777u) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--fake_services entry '%s': mode '%s' is not an octal subset of "
          "0777",
          entry, value));
    }
    for (const FakeServiceSpec& other : out) {
      if (other.name == spec.name) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--fake_services names '%s' twice", spec.name));
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseFakeOpens(
    absl::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    if (absl::Status s = names::ValidateLmrName("service name", name);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--fake_opens: %s", s.message()));
    }
    out.emplace_back(name);
  }
  return out;
}

}  // namespace lite::agent
