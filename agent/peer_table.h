// The peers the agent has programmed into the module, with the manager's
// Member record of each. It applies membership changes (from Join's member
// list and from events) to the module and keeps the table equal to what the
// module was told: a peer is in the table only if the module accepted it.
#ifndef LITE_AGENT_PEER_TABLE_H_
#define LITE_AGENT_PEER_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/module.h"
#include "lite/v1/manager.pb.h"
#include "lite/v1/types.pb.h"

namespace lite::agent {

// Pair secrets from the manager by peer node id (JoinResponse.peer_secrets,
// ManagerMessage.peer_secrets).
using PeerSecrets = absl::flat_hash_map<uint32_t, lite::v1::PeerSecret>;

// The secrets of `in` that are kPairSecretBytes long; *invalid counts the
// others (a manager's bug: dropped, never logged).
PeerSecrets CollectPeerSecrets(
    const google::protobuf::RepeatedPtrField<lite::v1::PeerSecret>& in,
    int* invalid);
// The secret for this member's incarnation; empty if there is none.
std::string SecretFor(const PeerSecrets& secrets,
                      const lite::v1::Member& member);

class PeerTable {
 public:
  explicit PeerTable(Module* module) : module_(module) {}

  // MemberJoined: adds the peer with its pair secret, or replaces it when
  // its incarnation, name or address changed (a new peer); a new secret for
  // the same peer is handed to the module, which replaces only the secret;
  // otherwise only refreshes the record. FAILED_PRECONDITION, and nothing
  // changed, for an older incarnation of the same node (id and name).
  absl::Status Upsert(const lite::v1::Member& member,
                      const std::string& secret = "");
  // MemberLeft / MemberFailed: removes the peer if it has this incarnation.
  // Returns whether it did; an older incarnation is ignored.
  absl::StatusOr<bool> Remove(uint32_t node_id, uint64_t incarnation);
  // MemberDrainChanged. Unknown peers are ignored.
  void SetDraining(uint32_t node_id, bool draining);
  // After a Join: upserts every member except self_id and, unless
  // keep_missing (the manager is recovering and missing peers may still come
  // back), removes every peer not listed. Returns the first error; applies
  // as much as it can.
  // Each member gets its secret from `secrets`.
  absl::Status Reconcile(const std::vector<lite::v1::Member>& members,
                         uint32_t self_id, bool keep_missing,
                         const PeerSecrets& secrets = PeerSecrets());
  // RecoveryComplete: removes every peer not listed.
  absl::Status RetainOnly(const std::vector<lite::v1::Member>& members);
  // By node id. Members only: the secrets stay here and in the module.
  std::vector<lite::v1::Member> List() const;

 private:
  struct Entry {
    lite::v1::Member member;
    // What the module was given with it.
    std::string secret;
  };
  Module* const module_;
  // Serializes changes so that the table and the module agree; readers use
  // it too.
  mutable absl::Mutex mu_;
  std::map<uint32_t, Entry> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::agent

#endif  // LITE_AGENT_PEER_TABLE_H_
