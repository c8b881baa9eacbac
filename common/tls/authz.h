// Roles: which certificate names may call which service. The authz file
// (litemgr --authz, liteagent --authz; cmd/litecerts appends to it) holds
// one `NAME ROLE` per line, ROLE one of manager, node, operator; `#` starts
// a comment, blank lines are ignored, a name may have several roles. The
// file is re-read when it changes (checked at most once a second), so a
// certificate issued or withdrawn takes effect without a restart.
//
// Withdrawal reaches open streams: litemgr holds (Hold) a role for each
// Session and Watch, and while anything is held the file is looked at every
// check interval whether or not calls arrive; a stream whose name lost the
// role, or whose certificate's notAfter passed, is ended.
//
// A bad edit grants nothing new but still withdraws: the names it no longer
// lists on a valid line (and on no invalid one) lose the roles they had,
// everything else keeps the previous table, and the error is logged and kept
// for file_state(). A missing or unreadable file keeps the previous table
// (a file being replaced may be missing for a moment, and an empty table
// would end every node's session at once). docs/security.md.
#ifndef LITE_COMMON_TLS_AUTHZ_H_
#define LITE_COMMON_TLS_AUTHZ_H_

#include <grpcpp/security/auth_context.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

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

  // Whether `name` has `role` now (the file re-read first if due).
  bool Allows(const std::string& name, Role role) const;

  // A stream's hold on `role` for certificate `name`. While held, `on_end`
  // is called once, from the authz's own thread (and the hold is gone),
  // when a look at the file finds that `name` lost `role` (PERMISSION_DENIED)
  // or when `not_after` has passed (UNAUTHENTICATED). PERMISSION_DENIED and
  // no hold when the name lacks the role already. `on_end` must not call
  // Hold or Release. Under --insecure nothing is ever ended.
  using EndFn = std::function<void(const absl::Status& why)>;
  absl::StatusOr<uint64_t> Hold(const std::string& name, Role role,
                                absl::Time not_after, EndFn on_end) const;
  // Ends the hold: when Release returns, its on_end is not running and
  // never will. Unknown ids (already ended) are ignored.
  void Release(uint64_t hold) const;
  size_t holds() const;

  // What the last look at the file found, for logs and metrics: how many
  // times a table was applied (the first load is 1), whether the file read
  // then was valid, and its error if not.
  struct FileState {
    uint64_t generation = 0;
    bool valid = true;
    std::string error;
    size_t names = 0;
  };
  FileState file_state() const;

  ~Authz();

 private:
  Authz(std::string path, absl::Duration check_interval, bool insecure)
      : path_(std::move(path)),
        check_interval_(check_interval),
        insecure_(insecure) {}

  // Re-reads the file if it changed and the interval has passed.
  void MaybeReloadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The holder thread: every check interval, ends the holds that lapsed.
  void HoldLoop() const;
  void SweepHoldsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(holds_mu_);

  struct HoldEntry {
    std::string name;
    Role role;
    absl::Time not_after;
    EndFn on_end;
  };

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
  mutable FileState file_state_ ABSL_GUARDED_BY(mu_);

  // Lock order: holds_mu_, then mu_.
  mutable absl::Mutex holds_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::flat_hash_map<uint64_t, HoldEntry> holds_
      ABSL_GUARDED_BY(holds_mu_);
  mutable uint64_t next_hold_ ABSL_GUARDED_BY(holds_mu_) = 1;
  mutable bool stopping_ ABSL_GUARDED_BY(holds_mu_) = false;
  mutable std::thread holder_ ABSL_GUARDED_BY(holds_mu_);  // first Hold
};

}  // namespace lite::tls

#endif  // LITE_COMMON_TLS_AUTHZ_H_
