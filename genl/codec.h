// The codec of lite.ko's generic netlink family: the attribute policy,
// decoders for what lite.ko sends (replies, dump entries, upcalls, events,
// errors) and encoders for the attributes of each request. Pure functions
// over netlink messages, no socket: the Client (client.h) sends and receives,
// and the tests here build messages the way lite.ko lays them out.
//
// Decoders check the command, that every required attribute is there, and
// the values' ranges (chunk counts and lengths, ids not 0, names); what the
// uapi does not allow is EBADMSG. Encoders check what the uapi allows before
// anything is sent: InvalidArgument (EINVAL) for a value out of range,
// EMSGSIZE if the message is too small. Errors carry their errno (errors.h).
//
// libnl stays an implementation detail: the message types are only declared.
#ifndef LITE_GENL_CODEC_H_
#define LITE_GENL_CODEC_H_

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "genl/types.h"

struct nl_msg;
struct nlmsghdr;

namespace lite::genl {

// ---- Decoders: a whole netlink message of the family ----

absl::StatusOr<PeerInfo> DecodePeer(const nlmsghdr* msg);      // PEER_GET
absl::StatusOr<NodeInfo> DecodeNode(const nlmsghdr* msg);      // NODE_GET
absl::StatusOr<ProbeResult> DecodeProbe(const nlmsghdr* msg);  // PEER_PROBE
absl::StatusOr<Event> DecodeEvent(const nlmsghdr* msg);        // EVENT_PEER_*
absl::StatusOr<LmrLostEvent> DecodeLmrLost(const nlmsghdr* msg);
// LMR_ALLOC's reply. Chunk lists: LITE_ATTR_CHUNKS may come more than once
// in a message (one attribute holds at most 64 KiB, ~1800 chunks); the
// chunks are all of them in order. The encoders below put at most 2048
// chunks in one.
absl::StatusOr<LmrMemory> DecodeLmrMemory(const nlmsghdr* msg);
// LMR_GET and GRANT_GET entries. lite.ko continues an entry whose chunks do
// not fit in one dump message in the next ones (same attributes, the
// following chunks): with @partial, the chunks may add up to less than the
// size, and Merge*Part() puts the pieces together.
absl::StatusOr<LmrInfo> DecodeLmr(const nlmsghdr* msg, bool partial = false);
absl::StatusOr<GrantInfo> DecodeGrant(const nlmsghdr* msg,
                                      bool partial = false);
// Appends @part to @entries, or its chunks to the last entry if that is the
// same LMR (grant) and still lacks chunks. EBADMSG if an entry ends early
// or a continuation does not match.
absl::Status MergeLmrPart(std::vector<LmrInfo>* lmrs, LmrInfo part);
absl::Status MergeGrantPart(std::vector<GrantInfo>* grants, GrantInfo part);
// After the last part of a dump: EBADMSG if the last entry lacks chunks.
absl::Status CheckDumpComplete(const std::vector<LmrInfo>& lmrs);
absl::Status CheckDumpComplete(const std::vector<GrantInfo>& grants);
absl::StatusOr<UpcallRequest> DecodeUpcall(const nlmsghdr* msg);  // UPCALL
// RPC_BIND's reply: the client's ring (decode_rpc.cc).
absl::StatusOr<RpcRing> DecodeRpcRing(const nlmsghdr* msg);
// One RPC_SERVICE_GET dump entry.
absl::StatusOr<ServiceInfo> DecodeService(const nlmsghdr* msg);
// An upcall or an event.
absl::StatusOr<Notification> DecodeNotification(const nlmsghdr* msg);
// Whether a message of the family (by its command) is one lite.ko sends
// unasked: an upcall or an event. False for a truncated header.
bool IsNotification(const nlmsghdr* msg);
// The error of an NLMSG_ERROR message: errno and extended-ack message.
absl::Status DecodeError(const nlmsghdr* msg);

// ---- Encoders: the attributes of a request, appended to @msg (after its
// generic netlink header) ----

// NODE_SET and PEER_ADD: a node's id, incarnation and RDMA address, and its
// name unless @name is empty (a node name: common/names/names.h).
absl::Status EncodeIdentity(nl_msg* msg, uint32_t node_id, uint64_t incarnation,
                            in_addr addr, absl::string_view name = {});
// PEER_ADD: the pair secret (LITE_PEER_SECRET_LEN bytes, not all zero;
// EINVAL otherwise, without the bytes in the message).
absl::Status EncodePeerSecret(nl_msg* msg, absl::string_view secret);
// PEER_REMOVE: with an incarnation, only a peer that has it goes.
absl::Status EncodePeerRemove(nl_msg* msg, uint32_t node_id,
                              std::optional<uint64_t> incarnation);
absl::Status EncodePeerProbe(nl_msg* msg, uint32_t node_id);
absl::Status EncodeLmrAlloc(nl_msg* msg, const LmrAllocRequest& request);
// With @quarantine, LITE_ATTR_QUARANTINE: the pages are never reused.
absl::Status EncodeLmrFree(nl_msg* msg, uint64_t lmr_id,
                           bool quarantine = false);
// With @releasing, LITE_ATTR_RELEASING (sticky: false leaves it as it is).
absl::Status EncodeLmrUpdate(nl_msg* msg, uint64_t lmr_id,
                             std::optional<uint64_t> new_lmr_id,
                             std::optional<uint64_t> epoch,
                             bool releasing = false);
absl::Status EncodeGrantRevoke(nl_msg* msg, uint64_t grant_id);
// At most one of the success payloads (lmr_id, grant, service_id, service,
// ring), none on failure; the RPC ones checked against the uapi's ranges.
absl::Status EncodeUpcallCompletion(nl_msg* msg, const UpcallCompletion& c);
// RPC_BIND: every field required (ids, port and slot bytes in range).
absl::Status EncodeRpcBind(nl_msg* msg, const RpcBindRequest& request);
// The attributes of a MAP answer (without the GRANT_GET-only ones).
absl::Status EncodeGrant(nl_msg* msg, const GrantInfo& grant);
// Bytes a message for @completion needs (for nlmsg_alloc_size).
size_t UpcallCompletionSize(const UpcallCompletion& completion);
// Test-only extra u32 attributes (see RawAttr), unchecked.
absl::Status EncodeRawAttrs(nl_msg* msg, const std::vector<RawAttr>& attrs);

}  // namespace lite::genl

#endif  // LITE_GENL_CODEC_H_
