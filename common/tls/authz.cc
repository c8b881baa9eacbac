#include "common/tls/authz.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

namespace {

// What a file holds line by line: the table of its valid lines, the names
// its invalid lines start with, and the first error.
struct Parsed {
  RoleTable table;
  absl::flat_hash_set<std::string> names_on_bad_lines;
  absl::Status error;
};

Parsed ParseLines(absl::string_view text, absl::string_view origin) {
  Parsed parsed;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    auto bad = [&](const std::string& what) {
      parsed.names_on_bad_lines.insert(std::string(words[0]));
      if (!parsed.error.ok()) return;
      parsed.error = absl::InvalidArgumentError(
          absl::StrCat(origin, ":", number, ": ", what,
                       "; each line is `NAME ROLE` with ROLE one of manager, "
                       "node, operator (`#` starts a comment)"));
    };
    if (words.size() != 2) {
      bad(absl::StrCat("expected 2 words, found ", words.size()));
      continue;
    }
    const absl::string_view name = words[0];
    if (name.size() > kMaxNameLength) {
      bad(absl::StrCat("name of ", name.size(), " characters (at most ",
                       kMaxNameLength, ")"));
      continue;
    }
    bool name_ok = true;
    for (size_t i = 0; i < name.size() && name_ok; ++i) {
      if (!NameChar(name[i])) {
        bad(absl::StrCat(
            "name \"", absl::CHexEscape(name), "\" has character 0x",
            absl::Hex(static_cast<unsigned char>(name[i]), absl::kZeroPad2),
            " at offset ", i, " (letters, digits, . - _ @ only)"));
        name_ok = false;
      }
    }
    if (!name_ok) continue;
    Role role;
    if (!ParseRole(words[1], &role)) {
      bad(absl::StrCat("unknown role \"", absl::CHexEscape(words[1]), "\""));
      continue;
    }
    parsed.table[std::string(name)] |= static_cast<unsigned>(role);
  }
  return parsed;
}

// The table a rejected edit leaves: nothing added, but every role the
// valid lines no longer give is withdrawn, unless an invalid line names
// the same name (its intent is unknown, so its old roles stay).
RoleTable WithdrawOnly(const RoleTable& old, const Parsed& edit,
                       std::vector<std::string>* withdrawn) {
  RoleTable kept;
  for (const auto& [name, roles] : old) {
    unsigned now = roles;
    if (!edit.names_on_bad_lines.contains(name)) {
      auto it = edit.table.find(name);
      now &= it == edit.table.end() ? 0u : it->second;
    }
    if (now != roles) withdrawn->push_back(name);
    if (now != 0) kept[name] = now;
  }
  return kept;
}

}  // namespace

absl::StatusOr<RoleTable> ParseAuthz(absl::string_view text,
                                     absl::string_view origin) {
  Parsed parsed = ParseLines(text, origin);
  if (!parsed.error.ok()) return parsed.error;
  return std::move(parsed.table);
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
  authz->file_state_.generation = 1;
  authz->file_state_.names = authz->table_.size();
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
    // moment, and an empty table would end every session at once.
    if (stamp_.size != -2) {
      LITE_LOG_ERROR("authz file %s: %s; keeping the roles read before", path_,
                     std::strerror(errno));
      file_state_.valid = false;
      file_state_.error =
          absl::StrCat("cannot read ", path_, ": ", std::strerror(errno));
    }
    stamp_.size = -2;
    return;
  }
  const FileStamp stamp{st.st_ino, st.st_size, MtimeNs(st)};
  if (stamp == stamp_) return;
  absl::StatusOr<FileRead> read = ReadAuthzFile(path_);
  // Remember what we saw either way, so that a bad edit is logged once and
  // the next edit is read.
  stamp_ = read.ok()
               ? FileStamp{read->st.st_ino, read->st.st_size, MtimeNs(read->st)}
               : stamp;
  if (!read.ok()) {
    LITE_LOG_ERROR("%s; keeping the roles read before",
                   read.status().message());
    file_state_.valid = false;
    file_state_.error = std::string(read.status().message());
    return;
  }
  Parsed parsed = ParseLines(read->text, path_);
  ++file_state_.generation;
  if (!parsed.error.ok()) {
    std::vector<std::string> withdrawn;
    table_ = WithdrawOnly(table_, parsed, &withdrawn);
    LITE_LOG_ERROR(
        "authz file changed but is not valid: %s; no role added, %s",
        parsed.error.message(),
        withdrawn.empty()
            ? std::string("none withdrawn")
            : absl::StrCat("withdrawn from the names it no longer lists: ",
                           absl::StrJoin(withdrawn, ", ")));
    file_state_.valid = false;
    file_state_.error = std::string(parsed.error.message());
    file_state_.names = table_.size();
    return;
  }
  table_ = std::move(parsed.table);
  file_state_.valid = true;
  file_state_.error.clear();
  file_state_.names = table_.size();
  LITE_LOG_INFO("authz file %s re-read: %d names", path_, table_.size());
}

Authz::~Authz() {
  {
    absl::MutexLock lock(&holds_mu_);
    stopping_ = true;
  }
  // holder_ is only started under holds_mu_ and never after stopping_.
  std::thread holder;
  {
    absl::MutexLock lock(&holds_mu_);
    holder.swap(holder_);
  }
  if (holder.joinable()) holder.join();
}

bool Authz::Allows(const std::string& name, Role role) const {
  if (insecure_) return true;
  absl::MutexLock lock(&mu_);
  MaybeReloadLocked();
  auto it = table_.find(name);
  return it != table_.end() && (it->second & static_cast<unsigned>(role)) != 0;
}

absl::StatusOr<uint64_t> Authz::Hold(const std::string& name, Role role,
                                     absl::Time not_after, EndFn on_end) const {
  if (insecure_) return 0;
  absl::MutexLock lock(&holds_mu_);
  if (!Allows(name, role)) {
    return absl::PermissionDeniedError(
        absl::StrCat("certificate \"", absl::CHexEscape(name),
                     "\" no longer has role ", RoleName(role)));
  }
  const uint64_t id = next_hold_++;
  holds_.emplace(id, HoldEntry{name, role, not_after, std::move(on_end)});
  if (!holder_.joinable() && !stopping_) {
    holder_ = std::thread([this] { HoldLoop(); });
  }
  return id;
}

void Authz::Release(uint64_t hold) const {
  if (hold == 0) return;
  absl::MutexLock lock(&holds_mu_);
  holds_.erase(hold);
}

size_t Authz::holds() const {
  absl::MutexLock lock(&holds_mu_);
  return holds_.size();
}

Authz::FileState Authz::file_state() const {
  absl::MutexLock lock(&mu_);
  return file_state_;
}

void Authz::HoldLoop() const {
  // Not faster than 50 ms, whatever the interval (tests use zero).
  const absl::Duration period =
      std::max(check_interval_, absl::Milliseconds(50));
  absl::MutexLock lock(&holds_mu_);
  while (!stopping_) {
    holds_mu_.AwaitWithTimeout(absl::Condition(&stopping_), period);
    if (stopping_) break;
    SweepHoldsLocked();
  }
}

void Authz::SweepHoldsLocked() const {
  if (holds_.empty()) return;
  const absl::Time now = absl::Now();
  std::vector<std::pair<uint64_t, absl::Status>> ended;
  {
    absl::MutexLock lock(&mu_);
    MaybeReloadLocked();
    for (const auto& [id, hold] : holds_) {
      auto it = table_.find(hold.name);
      const bool has = it != table_.end() &&
                       (it->second & static_cast<unsigned>(hold.role)) != 0;
      if (!has) {
        ended.emplace_back(
            id, absl::PermissionDeniedError(
                    absl::StrCat("certificate \"", absl::CHexEscape(hold.name),
                                 "\" no longer has role ", RoleName(hold.role),
                                 " in the authz file: access withdrawn")));
      } else if (now >= hold.not_after) {
        ended.emplace_back(
            id, absl::UnauthenticatedError(absl::StrCat(
                    "certificate \"", absl::CHexEscape(hold.name),
                    "\" expired at ", absl::FormatTime(hold.not_after),
                    "; reconnect with a renewed one")));
      }
    }
  }
  for (auto& [id, why] : ended) {
    auto it = holds_.find(id);
    EndFn on_end = std::move(it->second.on_end);
    holds_.erase(it);
    LITE_LOG_WARNING("ending a stream: %s", why.message());
    on_end(why);
  }
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
