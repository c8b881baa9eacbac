// Roles: which certificate names may call which service. The authz file
// (litemgr --authz, liteagent --authz; tools/litecerts appends to it) holds
// one `NAME ROLE` per line, ROLE one of manager, node, operator; `#` starts
// a comment, blank lines are ignored, a name may have several roles. The
// file is re-read when it changes (checked at most once a second), so a
// certificate issued or withdrawn takes effect without a restart; a bad
// edit is logged and the previous table kept. docs/security.md.
#ifndef LITE_COMMON_TLS_AUTHZ_H_
#define LITE_COMMON_TLS_AUTHZ_H_

#include <grpcpp/security/auth_context.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace lite::tls {

enum class Role : unsigned { kManager = 1, kNode = 2, kOperator = 4 };

// "manager", "node", "operator".
absl::string_view RoleName(Role role);

// Name -> its roles (a bit set of Role).
using RoleTable = absl::flat_hash_map<std::string, unsigned>;

// Parses an authz file's text; `origin` (the path) prefixes errors, which
// name the line: "authz:3: unknown role 'admin'; ...".
absl::StatusOr<RoleTable> ParseAuthz(absl::string_view text,
                                     absl::string_view origin);

class Authz {
 public:
  // Reads `path` now (an error names the file and line) and re-reads it
  // when its modification time, size or inode change, looking at most once
  // per `check_interval`.
  static absl::StatusOr<std::unique_ptr<Authz>> Load(
      const std::string& path,
      absl::Duration check_interval = absl::Seconds(1));
  // --insecure: every check passes, the caller named "(insecure)".
  static std::unique_ptr<Authz> Insecure();

  // OK when the peer presented a certificate the TLS layer verified and its
  // name has `role`; sets *name (if not null) to that name either way when
  // known. UNAUTHENTICATED without a verified certificate;
  // PERMISSION_DENIED when the name lacks the role (the message names the
  // certificate and the role it needs).
  absl::Status Require(const grpc::AuthContext& context, Role role,
                       std::string* name) const;

  bool insecure() const { return insecure_; }

 private:
  Authz(std::string path, absl::Duration check_interval, bool insecure)
      : path_(std::move(path)),
        check_interval_(check_interval),
        insecure_(insecure) {}

  // Re-reads the file if it changed and the interval has passed.
  void MaybeReloadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct FileStamp {
    ino_t inode = 0;
    off_t size = -1;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp& o) const {
      return inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
    }
  };

  const std::string path_;
  const absl::Duration check_interval_;
  const bool insecure_;
  mutable absl::Mutex mu_;
  mutable RoleTable table_ ABSL_GUARDED_BY(mu_);
  mutable FileStamp stamp_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time last_check_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::tls

#endif  // LITE_COMMON_TLS_AUTHZ_H_
