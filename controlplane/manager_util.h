// Small helpers shared by the manager's state machine and its parts: how
// nodes, LMRs and ids are named in messages, and the one error every stale
// caller gets.
#ifndef LITE_CONTROLPLANE_MANAGER_UTIL_H_
#define LITE_CONTROLPLANE_MANAGER_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "controlplane/store.h"
#include "lite/v1/types.pb.h"

namespace lite::controlplane {

// "node 3 ('alpha')".
std::string NodeLabel(const lite::v1::Member& member);

// "ALIVE", "FAILED", "LEFT".
std::string NodeStateName(lite::v1::NodeState state);

// FAILED_PRECONDITION for a call made with an incarnation that is not the
// node's live one (live_incarnation 0: the node is not alive).
absl::Status StaleIncarnationError(const lite::v1::Member& node,
                                   uint64_t claimed, uint64_t live_incarnation);
// The same for a session of node @node_id whose record may be forgotten
// already (a departed node past --max_departed_records): a late message from
// it is answered, never a crash.
absl::Status StaleIncarnationError(uint32_t node_id,
                                   const std::optional<lite::v1::Member>& node,
                                   uint64_t claimed, uint64_t live_incarnation);

// `lmr` / `grant` without its chunk addresses and memory key. The key and
// addresses travel only where lite.ko needs them (the home's registration,
// a holder's grant: MapLmr, RestoreGrant); listings, events and the
// Register/Alloc answers carry neither (issue #10).
lite::v1::Lmr WithoutKey(lite::v1::Lmr lmr);
lite::v1::Grant WithoutKey(lite::v1::Grant grant);
// The key a grant with @access into @lmr carries: the LMR's read-only key
// (the home's NIC refuses writes with it) for a grant without write access
// when the home reported one (key_mode=lmr), else its memory_key, which
// allows writes (key_mode=global, or a home that predates read keys).
uint32_t GrantKey(const lite::v1::Lmr& lmr, const lite::v1::Access& access);

// "0x0000000300000001": LMR and grant ids in messages, showing both halves.
std::string IdHex(uint64_t id);
// An LMR or grant id: the node it belongs to (its home, or the grant's
// holder) in the high 32 bits, that node's sequence number in the low 32.
inline uint32_t HighHalf(uint64_t id) {
  return static_cast<uint32_t>(id >> 32);
}
inline uint32_t LowHalf(uint64_t id) { return static_cast<uint32_t>(id); }
inline uint64_t MakeId(uint32_t node_id, uint32_t seq) {
  return (uint64_t{node_id} << 32) | seq;
}
// "LMR 0x0000000300000001" and "LMR 'name' (0x0000000300000001)".
std::string LmrText(uint64_t lmr_id);
std::string LmrLabel(const lite::v1::Lmr& lmr);
// "node 3 ('node2')" from `store`'s record of it, "node 3" without one:
// operators know nodes by name, the manager by id.
std::string NodeText(const Store& store, uint32_t node_id);
// RESOURCE_EXHAUSTED "WHAT: the limit is LIMIT (--FLAG); ADVICE": every
// refusal by a --max_* bound names the bound and its flag.
absl::Status Exhausted(absl::string_view what, int64_t limit,
                       absl::string_view flag, absl::string_view advice);
// A status code an agent sent, as a StatusCode (unknown values -> UNKNOWN).
absl::StatusCode AgentCode(int32_t code);

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_MANAGER_UTIL_H_
