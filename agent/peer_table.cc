#include "agent/peer_table.h"

#include <set>

#include "absl/strings/str_format.h"
#include "common/log/log.h"

namespace lite::agent {

PeerSecrets CollectPeerSecrets(
    const google::protobuf::RepeatedPtrField<lite::v1::PeerSecret>& in,
    int* invalid) {
  PeerSecrets out;
  out.reserve(in.size());
  for (const lite::v1::PeerSecret& secret : in) {
    if (secret.secret().size() != kPairSecretBytes || secret.node_id() == 0) {
      ++*invalid;
      continue;
    }
    out[secret.node_id()] = secret;
  }
  return out;
}

std::string SecretFor(const PeerSecrets& secrets,
                      const lite::v1::Member& member) {
  auto it = secrets.find(member.node_id());
  if (it == secrets.end() || it->second.incarnation() != member.incarnation()) {
    return std::string();
  }
  return it->second.secret();
}

absl::Status PeerTable::Upsert(const lite::v1::Member& member,
                               const std::string& secret) {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(member.node_id());
  // Only a newer incarnation replaces a node, as in lite.ko: an older one
  // of the same node (a replayed identity, review cp H1) is refused and the
  // peer kept. A different name under the id is another node (ids are
  // handed out again after a manager restart without its key).
  if (it != peers_.end() &&
      it->second.member.node_name() == member.node_name() &&
      member.incarnation() < it->second.member.incarnation()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "peer %u (%s) is incarnation %u here; incarnation %u is older and "
        "does not replace it",
        member.node_id(), member.node_name(), it->second.member.incarnation(),
        member.incarnation()));
  }
  const bool same_peer =
      it != peers_.end() &&
      it->second.member.incarnation() == member.incarnation() &&
      it->second.member.node_name() == member.node_name() &&
      it->second.member.rdma_address() == member.rdma_address();
  // A peer with a secret is not taken back to none: a member that comes
  // again without one (a RecoveryComplete-style refresh) keeps it.
  const bool same_secret =
      same_peer && (secret.empty() || it->second.secret == secret);
  if (!same_peer || !same_secret) {
    // AddPeer replaces a peer with the same id: lite.ko tears down the old
    // incarnation's connections itself, or, for the same peer, replaces
    // only its secret.
    absl::Status s =
        module_->AddPeer(Peer{.node_id = member.node_id(),
                              .incarnation = member.incarnation(),
                              .rdma_address = member.rdma_address(),
                              .name = member.node_name(),
                              .secret = secret});
    if (!s.ok()) {
      // The module keeps what it had, and so does the table.
      return absl::Status(
          s.code(), absl::StrFormat("adding peer %u (%s, incarnation %u): %s",
                                    member.node_id(), member.node_name(),
                                    member.incarnation(), s.message()));
    }
    if (same_peer) {
      LITE_LOG_INFO(
          "peer %u (%s, incarnation %u): pair secret replaced, connections "
          "kept",
          member.node_id(), member.node_name(), member.incarnation());
    }
  }
  Entry& entry = peers_[member.node_id()];
  entry.member = member;
  if (!same_peer || !secret.empty()) entry.secret = secret;
  return absl::OkStatus();
}

absl::StatusOr<bool> PeerTable::Remove(uint32_t node_id, uint64_t incarnation) {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(node_id);
  if (it == peers_.end() || it->second.member.incarnation() != incarnation) {
    return false;
  }
  absl::Status s = module_->RemovePeer(node_id, incarnation);
  // NOT_FOUND: the module no longer has it either; the goal is reached.
  if (!s.ok() && !absl::IsNotFound(s)) {
    return absl::Status(s.code(),
                        absl::StrFormat("removing peer %u (incarnation %u): %s",
                                        node_id, incarnation, s.message()));
  }
  peers_.erase(it);
  return true;
}

void PeerTable::SetDraining(uint32_t node_id, bool draining) {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(node_id);
  if (it != peers_.end()) it->second.member.set_draining(draining);
}

absl::Status PeerTable::Reconcile(const std::vector<lite::v1::Member>& members,
                                  uint32_t self_id, bool keep_missing,
                                  const PeerSecrets& secrets) {
  absl::Status first;
  std::vector<lite::v1::Member> listed;
  for (const lite::v1::Member& m : members) {
    if (m.node_id() == self_id) continue;
    listed.push_back(m);
    if (absl::Status s = Upsert(m, SecretFor(secrets, m));
        !s.ok() && first.ok()) {
      first = s;
    }
  }
  if (!keep_missing) {
    if (absl::Status s = RetainOnly(listed); !s.ok() && first.ok()) first = s;
  }
  return first;
}

absl::Status PeerTable::RetainOnly(
    const std::vector<lite::v1::Member>& members) {
  std::set<uint32_t> keep;
  for (const lite::v1::Member& m : members) keep.insert(m.node_id());
  std::vector<std::pair<uint32_t, uint64_t>> drop;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, entry] : peers_) {
      if (!keep.contains(id)) drop.emplace_back(id, entry.member.incarnation());
    }
  }
  absl::Status first;
  for (const auto& [id, incarnation] : drop) {
    absl::StatusOr<bool> removed = Remove(id, incarnation);
    if (!removed.ok() && first.ok()) first = removed.status();
  }
  return first;
}

std::vector<lite::v1::Member> PeerTable::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<lite::v1::Member> out;
  for (const auto& [id, entry] : peers_) out.push_back(entry.member);
  return out;
}

}  // namespace lite::agent
