#include "controlplane/manager_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lite::controlplane {

std::string NodeLabel(const lite::v1::Member& member) {
  return absl::StrCat("node ", member.node_id(), " ('", member.node_name(),
                      "')");
}

std::string NodeStateName(lite::v1::NodeState state) {
  switch (state) {
    case lite::v1::NODE_STATE_ALIVE:
      return "ALIVE";
    case lite::v1::NODE_STATE_LEFT:
      return "LEFT";
    case lite::v1::NODE_STATE_FAILED:
      return "FAILED";
    default:
      return "UNSPECIFIED";
  }
}

absl::Status StaleIncarnationError(const lite::v1::Member& node,
                                   uint64_t claimed,
                                   uint64_t live_incarnation) {
  const std::string now =
      live_incarnation != 0
          ? absl::StrCat("the node is ALIVE as incarnation ", live_incarnation)
          : absl::StrCat("the node is ", NodeStateName(node.state()),
                         " (last incarnation ", node.incarnation(), ")");
  return absl::FailedPreconditionError(
      absl::StrCat(NodeLabel(node), " incarnation ", claimed,
                   " is stale: ", now, "; Join again"));
}

absl::Status StaleIncarnationError(uint32_t node_id,
                                   const std::optional<lite::v1::Member>& node,
                                   uint64_t claimed,
                                   uint64_t live_incarnation) {
  if (node.has_value()) {
    return StaleIncarnationError(*node, claimed, live_incarnation);
  }
  return absl::FailedPreconditionError(
      absl::StrCat("node ", node_id, " incarnation ", claimed,
                   " is stale: the node departed and its record is forgotten "
                   "(--max_departed_records); Join again"));
}

std::string IdHex(uint64_t id) { return absl::StrFormat("0x%016x", id); }

lite::v1::Lmr WithoutKey(lite::v1::Lmr lmr) {
  lmr.clear_chunks();
  lmr.clear_memory_key();
  lmr.clear_read_key();
  return lmr;
}

lite::v1::Grant WithoutKey(lite::v1::Grant grant) {
  grant.clear_chunks();
  grant.clear_memory_key();
  return grant;
}

uint32_t GrantKey(const lite::v1::Lmr& lmr, const lite::v1::Access& access) {
  if (!access.write() && lmr.read_key() != 0) return lmr.read_key();
  return lmr.memory_key();
}

absl::StatusCode AgentCode(int32_t code) {
  if (code < 1 || code > 16) return absl::StatusCode::kUnknown;
  return static_cast<absl::StatusCode>(code);
}

absl::Status Exhausted(absl::string_view what, int64_t limit,
                       absl::string_view flag, absl::string_view advice) {
  return absl::ResourceExhaustedError(absl::StrCat(
      what, ": the limit is ", limit, " (--", flag, "); ", advice));
}

std::string LmrText(uint64_t lmr_id) {
  return absl::StrCat("LMR ", IdHex(lmr_id));
}

std::string LmrLabel(const lite::v1::Lmr& lmr) {
  return absl::StrCat("LMR '", lmr.name(), "' (", IdHex(lmr.lmr_id()), ")");
}

std::string NodeText(const Store& store, uint32_t node_id) {
  std::optional<lite::v1::Member> member = store.GetNode(node_id);
  return member ? NodeLabel(*member) : absl::StrCat("node ", node_id);
}

}  // namespace lite::controlplane
