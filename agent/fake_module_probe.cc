// FakeModule's LITE_CMD_PEER_PROBE: whether a peer's "kernel" acknowledges,
// as the test says (SetPeerUnreachable, unreachable_file), and held probes
// for tests of a probe that takes lite.ko's whole bound.
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/fake_module.h"

namespace lite::agent {

absl::StatusOr<lite::v1::ProbedPeer> FakeModule::ProbePeer(
    uint32_t node_id, uint64_t incarnation) {
  if (node_id == 0 || incarnation == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbePeer needs a node id and an incarnation, got %u/%u", node_id,
        incarnation));
  }
  const absl::Time start = absl::Now();
  Peer peer;
  bool unreachable = false;
  {
    absl::MutexLock lock(&mu_);
    RecordCall(absl::StrFormat("ProbePeer %u %u", node_id, incarnation));
    auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !probes_held_ || closed_;
    };
    if (!released()) {
      ++held_probes_;
      mu_.Await(absl::Condition(&released));
      --held_probes_;
    }
    auto it = peers_.find(node_id);
    if (it == peers_.end()) {
      return absl::NotFoundError(absl::StrFormat(
          "node %u is not a peer of this node's lite.ko: no such peer",
          node_id));
    }
    peer = it->second;
    unreachable = unreachable_.contains(node_id);
  }
  if (unreachable || ListedUnreachable(peer)) {
    return absl::UnavailableError(absl::StrFormat(
        "node %u did not acknowledge this node's probe (EHOSTDOWN: its RC "
        "connections ran out of retries, or none is connected): the peer "
        "did not acknowledge, or has no connected QP",
        node_id));
  }
  if (peer.incarnation != incarnation) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "node %u: this node's lite.ko holds incarnation %u of it, not the "
        "incarnation %u asked about",
        node_id, peer.incarnation, incarnation));
  }
  lite::v1::ProbedPeer out;
  out.set_incarnation(peer.incarnation);
  out.set_round_trip_ns(
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - start)));
  return out;
}

bool FakeModule::ListedUnreachable(const Peer& peer) const {
  if (options_.unreachable_file.empty()) return false;
  std::ifstream in(options_.unreachable_file);
  if (!in) return false;  // No file: nobody is gone.
  std::string line;
  while (std::getline(in, line)) {
    const std::string::size_type hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    for (absl::string_view token :
         absl::StrSplit(line, absl::ByAnyChar(" \t,\r"), absl::SkipEmpty())) {
      uint32_t id = 0;
      if (absl::SimpleAtoi(token, &id)) {
        if (id == peer.node_id) return true;
      } else if (!peer.name.empty() && token == peer.name) {
        return true;
      }
    }
  }
  return false;
}

void FakeModule::SetPeerUnreachable(uint32_t node_id, bool unreachable) {
  absl::MutexLock lock(&mu_);
  if (unreachable) {
    unreachable_.insert(node_id);
  } else {
    unreachable_.erase(node_id);
  }
}

void FakeModule::HoldProbes() {
  absl::MutexLock lock(&mu_);
  probes_held_ = true;
}

void FakeModule::ReleaseProbes() {
  absl::MutexLock lock(&mu_);
  probes_held_ = false;
}

bool FakeModule::AwaitHeldProbes(int count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return held_probes_ >= count;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

}  // namespace lite::agent
