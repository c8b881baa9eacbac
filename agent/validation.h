// Checks of the agent's own configuration, with the same rules the manager
// applies (proto/lite/v1), so that a bad flag fails at startup with a clear
// message instead of as an endless series of rejected Joins. Names follow
// the shared rule in common/names/names.h.
#ifndef LITE_AGENT_VALIDATION_H_
#define LITE_AGENT_VALIDATION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::agent {

// "IPv4:port" or "[IPv6]:port" with port 1..65535.
absl::Status ValidateRdmaAddress(absl::string_view address);

// "host:port" for a gRPC listener or target: a non-empty host (name, IPv4 or
// [IPv6]) and a port 0..65535 (0 only when allow_port_zero).
absl::Status ValidateHostPort(absl::string_view what, absl::string_view address,
                              bool allow_port_zero);

// A size in bytes as every LITE tool reads it (common/units: "4096", "64K",
// "1GiB", 0x hex), and > 0.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

}  // namespace lite::agent

#endif  // LITE_AGENT_VALIDATION_H_
