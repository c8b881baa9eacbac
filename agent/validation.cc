#include "agent/validation.h"

#include <arpa/inet.h>

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/status/macros.h"
#include "common/units/units.h"

namespace lite::agent {
namespace {

// Splits "host:port" / "[v6]:port"; host keeps no brackets.
absl::Status SplitHostPort(absl::string_view what, absl::string_view address,
                           absl::string_view* host, uint32_t* port,
                           bool* bracketed) {
  size_t colon;
  *bracketed = !address.empty() && address[0] == '[';
  if (*bracketed) {
    size_t close = address.find(']');
    if (close == address.npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s '%s' is not \"[IPv6]:port\"", what, address));
    }
    *host = address.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = address.rfind(':');
    if (colon == address.npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s '%s' has no ':port'", what, address));
    }
    *host = address.substr(0, colon);
  }
  absl::string_view port_text = address.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      !absl::SimpleAtoi(port_text, port) || *port > 65535 ||
      !absl::ascii_isdigit(port_text[0])) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s '%s': port '%s' is not a number 0..65535", what,
                        address, port_text));
  }
  if (host->empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s '%s' has no host", what, address));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRdmaAddress(absl::string_view address) {
  absl::string_view host;
  uint32_t port;
  bool bracketed;
  LITE_RETURN_IF_ERROR(
      SplitHostPort("RDMA address", address, &host, &port, &bracketed));
  std::string host_str(host);
  unsigned char buf[16];
  const int family = bracketed ? AF_INET6 : AF_INET;
  if (inet_pton(family, host_str.c_str(), buf) != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("RDMA address '%s': '%s' is not an %s address", address,
                        host, bracketed ? "IPv6" : "IPv4"));
  }
  if (port == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("RDMA address '%s': port must be 1..65535", address));
  }
  return absl::OkStatus();
}

absl::Status ValidateHostPort(absl::string_view what, absl::string_view address,
                              bool allow_port_zero) {
  absl::string_view host;
  uint32_t port;
  bool bracketed;
  LITE_RETURN_IF_ERROR(SplitHostPort(what, address, &host, &port, &bracketed));
  if (port == 0 && !allow_port_zero) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s '%s': port must be 1..65535", what, address));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  LITE_ASSIGN_OR_RETURN(uint64_t value, units::ParseSize(text));
  if (value == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("size '%s' must be > 0", text));
  }
  return value;
}

}  // namespace lite::agent
