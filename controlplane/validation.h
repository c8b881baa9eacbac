// Field validation for lite.v1 requests. Every function returns OK or an
// INVALID_ARGUMENT status whose message names the field, the bad value and
// what would be accepted, so that a person can fix the call. Names follow
// the rule every component shares: common/names/names.h.
#ifndef LITE_CONTROLPLANE_VALIDATION_H_
#define LITE_CONTROLPLANE_VALIDATION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lite/v1/manager.pb.h"
#include "lite/v1/types.pb.h"

namespace lite::controlplane {

// Free text from the wire (reasons, details, an agent's error message) must
// be inert: valid UTF-8 without control characters (common/text/inert.h),
// at most this many bytes; an agent's NodeRequestResult.status_message at
// most kMaxAgentMessageLength.
inline constexpr size_t kMaxReasonLength = 256;
inline constexpr size_t kMaxAgentMessageLength = 1024;
inline constexpr uint32_t kModeMask = 0666;
inline constexpr int32_t kDefaultPageSize = 1000;
inline constexpr int32_t kMaxPageSize = 10000;

// "IPv4:port" or "[IPv6]:port", port 1..65535. Returns the address in a
// canonical form (so "[::1]:1" and "[0::1]:1" compare equal).
absl::StatusOr<std::string> CanonicalRdmaAddress(absl::string_view field,
                                                 absl::string_view address);

// A subset of 0666.
absl::Status ValidateMode(absl::string_view field, uint32_t mode);

// uid and gid not (uint32_t)-1, pid > 0.
absl::Status ValidateCredentials(absl::string_view field,
                                 const lite::v1::Credentials& creds);

// At least one of read / write.
absl::Status ValidateAccess(absl::string_view field,
                            const lite::v1::Access& access);

// 1..max_chunks chunks, each > 0 bytes, adding up to size_bytes exactly
// without overflow.
absl::Status ValidateChunks(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<lite::v1::LmrChunk>& chunks,
    uint64_t size_bytes, int max_chunks);

// > 0 and <= max.
absl::Status ValidateSize(absl::string_view field, uint64_t size_bytes,
                          uint64_t max_size_bytes);

// Paging: page_size 0 -> default; 1..kMaxPageSize otherwise. page_token is
// empty (start) or the decimal id to continue after.
struct Page {
  int32_t size = kDefaultPageSize;
  uint64_t after_id = 0;
};
absl::StatusOr<Page> ParsePage(int32_t page_size, absl::string_view page_token);

// A PeerFailureReport from node `reporter`: node_id and incarnation not 0,
// node_id not the reporter's own, reason_errno 1..4095, detail at most
// kMaxReasonLength bytes of inert text.
absl::Status ValidatePeerFailureReport(const lite::v1::PeerFailureReport& r,
                                       uint32_t reporter);

// A GrantRevokeAck on the session of (node_id, incarnation): grant_id's
// holder part (high 32 bits) is node_id, holder_incarnation is incarnation.
absl::Status ValidateGrantRevokeAck(const lite::v1::GrantRevokeAck& ack,
                                    uint32_t node_id, uint64_t incarnation);

// An LmrLost's fields: lmr_id not 0, reason_errno 1..4095, detail at most
// kMaxReasonLength bytes of inert text. (Whose LMR it is, is the state
// machine's check: PERMISSION_DENIED.)
absl::Status ValidateLmrLost(const lite::v1::LmrLost& lost);

// A NodeRequestResult's free text: status_message inert, at most
// kMaxAgentMessageLength bytes.
absl::Status ValidateNodeRequestResult(const lite::v1::NodeRequestResult& r);

// The token a response carries to continue after last_id.
std::string PageToken(uint64_t last_id);

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_VALIDATION_H_
