#include "controlplane/validation.h"

#include <arpa/inet.h>

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/names/names.h"
#include "common/text/inert.h"

namespace lite::controlplane {
namespace {

// The value as a person would want to see it in an error: quoted, and cut
// short so that a huge bad value does not make a huge message.
std::string Quote(absl::string_view value) {
  constexpr size_t kShown = 80;
  std::string shown(value.substr(0, kShown));
  for (char& c : shown) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) c = '?';
  }
  if (value.size() > kShown) absl::StrAppend(&shown, "...");
  return absl::StrCat("\"", shown, "\"");
}

}  // namespace

absl::StatusOr<std::string> CanonicalRdmaAddress(absl::string_view field,
                                                 absl::string_view address) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", Quote(address), " ", why,
                     "; expected \"IPv4:port\" or \"[IPv6]:port\", e.g. "
                     "\"10.0.0.2:7471\" or \"[fd00::2]:7471\""));
  };
  if (address.empty()) return bad("is empty");
  absl::string_view host;
  absl::string_view port_text;
  bool ipv6 = false;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) return bad("has no closing ']'");
    host = address.substr(1, close - 1);
    absl::string_view rest = address.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return bad("has no port");
    port_text = rest.substr(1);
    ipv6 = true;
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return bad("has no port");
    host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
    if (host.find(':') != absl::string_view::npos) {
      return bad("looks like an IPv6 address without brackets");
    }
  }
  uint32_t port = 0;
  if (port_text.empty() || !absl::SimpleAtoi(port_text, &port) ||
      port_text.find_first_not_of("0123456789") != absl::string_view::npos ||
      port < 1 || port > 65535) {
    return bad("has an invalid port (1..65535)");
  }
  const std::string host_str(host);
  char canonical[INET6_ADDRSTRLEN] = {};
  if (ipv6) {
    in6_addr a6;
    if (inet_pton(AF_INET6, host_str.c_str(), &a6) != 1) {
      return bad("has an invalid IPv6 address");
    }
    inet_ntop(AF_INET6, &a6, canonical, sizeof(canonical));
    return absl::StrCat("[", canonical, "]:", port);
  }
  in_addr a4;
  if (inet_pton(AF_INET, host_str.c_str(), &a4) != 1) {
    return bad("has an invalid IPv4 address (host names are not accepted)");
  }
  inet_ntop(AF_INET, &a4, canonical, sizeof(canonical));
  return absl::StrCat(canonical, ":", port);
}

absl::Status ValidateMode(absl::string_view field, uint32_t mode) {
  if ((mode & ~kModeMask) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s 0%o has bits outside 0666 (0%o); LMR modes only have read and "
        "write bits for owner, group and other",
        field, mode, mode & ~kModeMask));
  }
  return absl::OkStatus();
}

absl::Status ValidateCredentials(absl::string_view field,
                                 const lite::v1::Credentials& creds) {
  constexpr uint32_t kInvalidId = 0xFFFFFFFFu;
  if (creds.uid() == kInvalidId) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".uid is 4294967295 ((uid_t)-1), which is not a valid uid"));
  }
  if (creds.gid() == kInvalidId) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".gid is 4294967295 ((gid_t)-1), which is not a valid gid"));
  }
  if (creds.pid() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".pid is 0; pass the requesting process's pid (> 0)"));
  }
  if (creds.groups_size() > names::kMaxSupplementaryGroups) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.groups has %d supplementary groups; at most %d (the rest is said "
        "by groups_truncated)",
        field, creds.groups_size(), names::kMaxSupplementaryGroups));
  }
  for (uint32_t gid : creds.groups()) {
    if (gid == kInvalidId) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".groups has 4294967295 ((gid_t)-1), which is not a group"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAccess(absl::string_view field,
                            const lite::v1::Access& access) {
  if (!access.read() && !access.write()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field,
                     " asks for neither read nor write; set at least "
                     "one"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSize(absl::string_view field, uint64_t size_bytes,
                          uint64_t max_size_bytes) {
  if (size_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is 0; give > 0"));
  }
  if (size_bytes > max_size_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", size_bytes, " exceeds the manager's limit of ",
                     max_size_bytes, " (--max_lmr_size_bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateChunks(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<lite::v1::LmrChunk>& chunks,
    uint64_t size_bytes, int max_chunks) {
  if (chunks.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is empty; give the memory's chunks"));
  }
  if (chunks.size() > max_chunks) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " has ", chunks.size(), " chunks; the limit is ",
                     max_chunks, " (--max_lmr_chunks)"));
  }
  uint64_t total = 0;
  for (int i = 0; i < chunks.size(); ++i) {
    const uint64_t len = chunks[i].length_bytes();
    if (len == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", i, "].length_bytes is 0; give > 0"));
    }
    if (len > size_bytes - total || total > size_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " lengths add up to more than size_bytes ",
                       size_bytes, " (at chunk ", i, ")"));
    }
    total += len;
  }
  if (total != size_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " lengths add up to ", total,
                     " bytes, but size_bytes is ", size_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<Page> ParsePage(int32_t page_size,
                               absl::string_view page_token) {
  Page page;
  if (page_size < 0 || page_size > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size ", page_size, " is out of range; give 0 (",
                     kDefaultPageSize, ") to ", kMaxPageSize));
  }
  if (page_size > 0) page.size = page_size;
  if (!page_token.empty()) {
    if (page_token.find_first_not_of("0123456789") != absl::string_view::npos ||
        !absl::SimpleAtoi(page_token, &page.after_id) || page.after_id == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("page_token ", Quote(page_token),
                       " is not one this manager issued; pass the previous "
                       "response's next_page_token, or empty to start"));
    }
  }
  return page;
}

std::string PageToken(uint64_t last_id) { return absl::StrCat(last_id); }

absl::Status ValidatePeerFailureReport(const lite::v1::PeerFailureReport& r,
                                       uint32_t reporter) {
  if (r.node_id() == 0 || r.incarnation() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "peer_failure names node ", r.node_id(), " incarnation ",
        r.incarnation(), "; both must be the failed peer's, not 0"));
  }
  if (r.node_id() == reporter) {
    return absl::InvalidArgumentError(
        absl::StrCat("peer_failure names the reporting node ", reporter,
                     " itself; a node reports other nodes"));
  }
  // Linux errnos are below 4096 (MAX_ERRNO).
  if (r.reason_errno() <= 0 || r.reason_errno() >= 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("peer_failure.reason_errno ", r.reason_errno(),
                     " is not a positive errno (e.g. EHOSTDOWN)"));
  }
  return text::ValidateInertText("peer_failure.detail", r.detail(),
                                 kMaxReasonLength);
}

absl::Status ValidateGrantRevokeAck(const lite::v1::GrantRevokeAck& ack,
                                    uint32_t node_id, uint64_t incarnation) {
  const uint64_t grant_id = ack.grant_id();
  if (grant_id == 0 || static_cast<uint32_t>(grant_id >> 32) != node_id ||
      static_cast<uint32_t>(grant_id) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grant_revoke_ack.grant_id ", absl::Hex(grant_id, absl::kZeroPad16),
        " is not a grant of node ", node_id,
        " (its high 32 bits name the holder); acknowledge only your own"));
  }
  if (ack.holder_incarnation() != incarnation) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grant_revoke_ack.holder_incarnation is ", ack.holder_incarnation(),
        ", not this session's incarnation ", incarnation,
        "; an ended incarnation's acknowledgements are implied"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLmrLost(const lite::v1::LmrLost& lost) {
  if (lost.lmr_id() == 0) {
    return absl::InvalidArgumentError(
        "lmr_lost.lmr_id is 0; name the LMR lite.ko lost");
  }
  if (lost.reason_errno() <= 0 || lost.reason_errno() >= 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("lmr_lost.reason_errno ", lost.reason_errno(),
                     " is not a positive errno (e.g. ENODEV)"));
  }
  return text::ValidateInertText("lmr_lost.detail", lost.detail(),
                                 kMaxReasonLength);
}

absl::Status ValidateNodeRequestResult(const lite::v1::NodeRequestResult& r) {
  return text::ValidateInertText("result.status_message", r.status_message(),
                                 kMaxAgentMessageLength);
}

}  // namespace lite::controlplane
