// The peers the agent has programmed into the module, with the manager's
// Member record of each. It applies membership changes (from Join's member
// list and from events) to the module and keeps the table equal to what the
// module was told: a peer is in the table only if the module accepted it.
#ifndef LITE_AGENT_PEER_TABLE_H_
#define LITE_AGENT_PEER_TABLE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/module.h"
#include "lite/v1/types.pb.h"

namespace lite::agent {

class PeerTable {
 public:
  explicit PeerTable(Module* module) : module_(module) {}

  // MemberJoined: adds the peer, or replaces it when its incarnation, name or
  // address changed (a new peer); otherwise only refreshes the record.
  absl::Status Upsert(const lite::v1::Member& member);
  // MemberLeft / MemberFailed: removes the peer if it has this incarnation.
  // Returns whether it did; an older incarnation is ignored.
  absl::StatusOr<bool> Remove(uint32_t node_id, uint64_t incarnation);
  // MemberDrainChanged. Unknown peers are ignored.
  void SetDraining(uint32_t node_id, bool draining);
  // After a Join: upserts every member except self_id and, unless
  // keep_missing (the manager is recovering and missing peers may still come
  // back), removes every peer not listed. Returns the first error; applies
  // as much as it can.
  absl::Status Reconcile(const std::vector<lite::v1::Member>& members,
                         uint32_t self_id, bool keep_missing);
  // RecoveryComplete: removes every peer not listed.
  absl::Status RetainOnly(const std::vector<lite::v1::Member>& members);
  // By node id.
  std::vector<lite::v1::Member> List() const;

 private:
  Module* const module_;
  // Serializes changes so that the table and the module agree; readers use
  // it too.
  mutable absl::Mutex mu_;
  std::map<uint32_t, lite::v1::Member> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::agent

#endif  // LITE_AGENT_PEER_TABLE_H_
