#include "common/metrics/listen.h"

#include <arpa/inet.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace lite::metrics {
namespace {

bool ValidHost(absl::string_view host) {
  if (host == "localhost") return true;
  unsigned char addr[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    const std::string inner(host.substr(1, host.size() - 2));
    return inet_pton(AF_INET6, inner.c_str(), addr) == 1;
  }
  const std::string v4(host);
  return inet_pton(AF_INET, v4.c_str(), addr) == 1;
}

}  // namespace

absl::Status ValidateMetricsListen(absl::string_view flag,
                                   absl::string_view value) {
  if (value.empty()) return absl::OkStatus();
  const size_t colon = value.rfind(':');
  bool ok = colon != absl::string_view::npos && colon + 1 < value.size();
  int port = -1;
  if (ok) {
    const absl::string_view digits = value.substr(colon + 1);
    // SimpleAtoi takes "+1" and " 1"; a port is digits only.
    ok = digits.find_first_not_of("0123456789") == absl::string_view::npos &&
         digits.size() <= 5 && absl::SimpleAtoi(digits, &port) &&
         port <= 65535 && ValidHost(value.substr(0, colon));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s='%s' is not HOST:PORT with HOST an IPv4 address, [IPv6 address] or "
      "localhost and PORT 0..65535 (e.g. 127.0.0.1:9742, 0.0.0.0:9742, "
      "[::1]:9742); empty turns the metrics endpoint off",
      flag, value));
}

}  // namespace lite::metrics
