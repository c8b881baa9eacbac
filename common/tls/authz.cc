#include "common/tls/authz.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/log/log.h"
#include "common/tls/identity.h"

namespace lite::tls {
namespace {

// X.509's upper bound for a CN.
constexpr size_t kMaxNameLength = 64;

bool NameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '-' || c == '_' || c == '@';
}

bool ParseRole(absl::string_view text, Role* role) {
  for (Role r : {Role::kManager, Role::kNode, Role::kOperator}) {
    if (text == RoleName(r)) {
      *role = r;
      return true;
    }
  }
  return false;
}

struct FileRead {
  std::string text;
  struct stat st;
};

absl::StatusOr<FileRead> ReadAuthzFile(const std::string& path) {
  FileRead read;
  if (stat(path.c_str(), &read.st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read the authz file ", path,
                                            ": ", std::strerror(errno)));
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the authz file ", path));
  }
  read.text = text.str();
  return read;
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
         st.st_mtim.tv_nsec;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kManager:
      return "manager";
    case Role::kNode:
      return "node";
    case Role::kOperator:
      return "operator";
  }
  return "?";
}

absl::StatusOr<RoleTable> ParseAuthz(absl::string_view text,
                                     absl::string_view origin) {
  RoleTable table;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    auto error = [&](const std::string& what) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ":", number, ": ", what,
                       "; each line is `NAME ROLE` with ROLE one of manager, "
                       "node, operator (`#` starts a comment)"));
    };
    if (words.size() != 2) {
      return error(absl::StrCat("expected 2 words, found ", words.size()));
    }
    const absl::string_view name = words[0];
    if (name.size() > kMaxNameLength) {
      return error(absl::StrCat("name of ", name.size(),
                                " characters (at most ", kMaxNameLength, ")"));
    }
    for (size_t i = 0; i < name.size(); ++i) {
      if (!NameChar(name[i])) {
        return error(absl::StrCat(
            "name \"", absl::CHexEscape(name), "\" has character 0x",
            absl::Hex(static_cast<unsigned char>(name[i]), absl::kZeroPad2),
            " at offset ", i, " (letters, digits, . - _ @ only)"));
      }
    }
    Role role;
    if (!ParseRole(words[1], &role)) {
      return error(
          absl::StrCat("unknown role \"", absl::CHexEscape(words[1]), "\""));
    }
    table[std::string(name)] |= static_cast<unsigned>(role);
  }
  return table;
}

absl::StatusOr<std::unique_ptr<Authz>> Authz::Load(
    const std::string& path, absl::Duration check_interval) {
  absl::StatusOr<FileRead> read = ReadAuthzFile(path);
  if (!read.ok()) return read.status();
  absl::StatusOr<RoleTable> table = ParseAuthz(read->text, path);
  if (!table.ok()) return table.status();
  std::unique_ptr<Authz> authz(new Authz(path, check_interval, false));
  absl::MutexLock lock(&authz->mu_);
  authz->table_ = *std::move(table);
  authz->stamp_ = {read->st.st_ino, read->st.st_size, MtimeNs(read->st)};
  authz->last_check_ = absl::Now();
  return authz;
}

std::unique_ptr<Authz> Authz::Insecure() {
  return std::unique_ptr<Authz>(new Authz("", absl::ZeroDuration(), true));
}

void Authz::MaybeReloadLocked() const {
  const absl::Time now = absl::Now();
  if (now - last_check_ < check_interval_) return;
  last_check_ = now;
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    // Keep the roles we have: a file being replaced may be missing for a
    // moment, and an empty table would lock every node out.
    if (stamp_.size != -2) {
      LITE_LOG_ERROR("authz file %s: %s; keeping the roles read before", path_,
                     std::strerror(errno));
    }
    stamp_.size = -2;
    return;
  }
  const FileStamp stamp{st.st_ino, st.st_size, MtimeNs(st)};
  if (stamp == stamp_) return;
  absl::StatusOr<FileRead> read = ReadAuthzFile(path_);
  absl::StatusOr<RoleTable> table =
      read.ok() ? ParseAuthz(read->text, path_)
                : absl::StatusOr<RoleTable>(read.status());
  // Remember what we saw either way, so that a bad edit is logged once and
  // the next edit is read.
  stamp_ = read.ok()
               ? FileStamp{read->st.st_ino, read->st.st_size, MtimeNs(read->st)}
               : stamp;
  if (!table.ok()) {
    LITE_LOG_ERROR(
        "authz file changed but is not valid, keeping the roles "
        "read before: %s",
        table.status().message());
    return;
  }
  table_ = *std::move(table);
  LITE_LOG_INFO("authz file %s re-read: %d names", path_, table_.size());
}

absl::Status Authz::Require(const grpc::AuthContext& context, Role role,
                            std::string* name) const {
  if (insecure_) {
    if (name != nullptr) *name = "(insecure)";
    return absl::OkStatus();
  }
  const std::optional<std::string> peer = PeerName(context);
  if (!peer.has_value()) {
    if (name != nullptr) *name = "(unauthenticated)";
    return absl::UnauthenticatedError(absl::StrCat(
        "this call needs a client certificate signed by the cluster CA with "
        "role ",
        RoleName(role), "; none was presented"));
  }
  if (name != nullptr) *name = *peer;
  unsigned roles = 0;
  {
    absl::MutexLock lock(&mu_);
    MaybeReloadLocked();
    auto it = table_.find(*peer);
    if (it != table_.end()) roles = it->second;
  }
  if ((roles & static_cast<unsigned>(role)) == 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("certificate \"", absl::CHexEscape(*peer), "\" ",
                     roles == 0 ? "has no role in the authz file"
                                : "lacks the role this call needs",
                     "; it needs role ", RoleName(role)));
  }
  return absl::OkStatus();
}

}  // namespace lite::tls
