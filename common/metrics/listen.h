// --metrics_listen: where a daemon serves its Prometheus metrics.
#ifndef LITE_COMMON_METRICS_LISTEN_H_
#define LITE_COMMON_METRICS_LISTEN_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace lite::metrics {

// The daemons' defaults (docs/metrics.md): loopback only, since the
// endpoint has no TLS and no authentication. An operator who scrapes from
// another host sets an address Prometheus can reach and firewalls it.
inline constexpr char kManagerMetricsListen[] = "127.0.0.1:9742";
inline constexpr char kAgentMetricsListen[] = "127.0.0.1:9743";

// OK for "" (no endpoint) and for HOST:PORT with HOST an IPv4 address,
// [IPv6 address] or "localhost" and PORT 0..65535 (0: any free port, for
// tests; see --metrics_port_file). Otherwise INVALID_ARGUMENT naming `flag`
// and the accepted forms. The HTTP server (civetweb) takes nothing else
// (its own suffixes such as "s" for TLS included), so the error comes at
// start, not as a server that never answers.
absl::Status ValidateMetricsListen(absl::string_view flag,
                                   absl::string_view value);

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_LISTEN_H_
