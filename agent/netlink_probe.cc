// NetlinkModule::ProbePeer: lite.ko's LITE_CMD_PEER_PROBE, and how its
// answer becomes the Module's (ProbeAnswer, exposed for tests). Kept apart
// from netlink_module.cc, which holds the rest of the module.
#include <cerrno>

#include "absl/strings/str_format.h"
#include "agent/netlink_module.h"

namespace lite::agent {

absl::StatusOr<lite::v1::ProbedPeer> ProbeAnswer(
    uint32_t node_id, uint64_t incarnation,
    const absl::StatusOr<genl::ProbeResult>& probe) {
  if (!probe.ok()) {
    const absl::Status& s = probe.status();
    const int err = genl::ErrnoOf(s);
    switch (err) {
      case EHOSTDOWN:
        return absl::UnavailableError(absl::StrFormat(
            "node %u did not acknowledge this node's probe (EHOSTDOWN: its "
            "RC connections ran out of retries, or none is connected): %s",
            node_id, s.message()));
      case ENOENT:
        return absl::NotFoundError(
            absl::StrFormat("node %u is not a peer of this node's lite.ko: %s",
                            node_id, s.message()));
      default: {
        const absl::StatusCode code = err ? ErrnoToModuleCode(err) : s.code();
        return absl::Status(
            code, absl::StrFormat("probing node %u: %s", node_id, s.message()));
      }
    }
  }
  // lite.ko probes whichever incarnation of the peer it holds and names it.
  if (probe->incarnation != incarnation) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "node %u: this node's lite.ko holds incarnation %u of it, not the "
        "incarnation %u asked about",
        node_id, probe->incarnation, incarnation));
  }
  lite::v1::ProbedPeer out;
  out.set_incarnation(probe->incarnation);
  out.set_round_trip_ns(probe->round_trip_ns);
  return out;
}

absl::StatusOr<lite::v1::ProbedPeer> NetlinkModule::ProbePeer(
    uint32_t node_id, uint64_t incarnation) {
  if (node_id == 0 || incarnation == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbePeer needs a node id and an incarnation, got %u/%u", node_id,
        incarnation));
  }
  return ProbeAnswer(node_id, incarnation, client_->ProbePeer(node_id));
}

}  // namespace lite::agent
