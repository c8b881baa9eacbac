// Orders grant installs against grant revocations.
//
// A map upcall gets its grant from MapLmr on an upcall worker, while the
// session thread may apply a GrantRevoked for that very grant (or a rejoin
// that ends the incarnation holding it) before the worker hands the grant to
// the module. Without ordering, lite.ko would install a grant that is already
// dead. Both sides go through this gate: a revocation of a grant the module
// does not hold yet is remembered, and an install of a remembered or
// previous-incarnation grant is refused.
#ifndef LITE_AGENT_GRANT_GATE_H_
#define LITE_AGENT_GRANT_GATE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "agent/module.h"
#include "lite/v1/types.pb.h"

namespace lite::agent {

class GrantGate {
 public:
  explicit GrantGate(Module* module) : module_(module) {}

  // GrantRevoked for this node: revokes it in the module, or remembers it if
  // the module does not hold it (yet). Returns whether the module held it.
  absl::StatusOr<bool> Revoke(uint64_t grant_id);
  // Remembers the grant as revoked, so that no install of it runs from now
  // on, without calling the module (the Revoker does, off the session
  // thread).
  void Mark(uint64_t grant_id);

  // LmrRemoved with revokes_grants: no grant into `lmr_id` is installed
  // from now on (a MapLmr answer still on its way to lite.ko was revoked by
  // that event). A refused install of such a grant goes to the refusal
  // sink, with `ack` (release_follows: the manager waits for its ack).
  void MarkLmr(uint64_t lmr_id, bool ack);
  using RefusalSink =
      std::function<void(const lite::v1::Grant& grant, bool ack)>;
  // Called without the gate's lock held; nullptr for none.
  void SetRefusalSink(RefusalSink sink);

  // A new incarnation of this node: revokes, in the module, every grant not
  // held by (node_id, incarnation), because the manager dropped them. Returns
  // how many were revoked.
  absl::StatusOr<int> SetHolder(uint32_t node_id, uint64_t incarnation);

  // Runs `install` (which hands the grant to the module) unless the grant was
  // revoked already or belongs to another holder incarnation, in which case
  // it returns ABORTED and does not run it. Returns install's status.
  absl::Status Install(const lite::v1::Grant& grant,
                       const std::function<absl::Status()>& install);

 private:
  static constexpr size_t kRememberRevoked = 4096;
  void RememberLocked(uint64_t grant_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status InstallLocked(const lite::v1::Grant& grant,
                             const std::function<absl::Status()>& install)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Module* const module_;
  absl::Mutex mu_;
  uint32_t node_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t incarnation_ ABSL_GUARDED_BY(mu_) = 0;
  // Revoked grants the module did not hold; bounded, oldest forgotten first.
  std::set<uint64_t> revoked_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> revoked_order_ ABSL_GUARDED_BY(mu_);
  // LMRs whose grants were all revoked (-> ack), bounded the same way.
  std::map<uint64_t, bool> revoked_lmrs_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> revoked_lmrs_order_ ABSL_GUARDED_BY(mu_);
  RefusalSink refusal_sink_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::agent

#endif  // LITE_AGENT_GRANT_GATE_H_
