// litemgr: LITE's cluster manager daemon. Serves lite.v1.ClusterManager,
// lite.v1.ClusterOperator and the standard gRPC health service over mutual
// TLS (or plaintext with --insecure); logs to stderr; exits cleanly on
// SIGTERM or SIGINT. See docs/controlplane.md and docs/security.md.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc/keepalive.h"
#include "common/grpc/server_limits.h"
#include "common/log/log.h"
#include "common/metrics/listen.h"
#include "common/metrics/rpc_metrics.h"
#include "common/metrics/server.h"
#include "common/names/names.h"
#include "common/systemd/notify.h"
#include "common/tls/authz.h"
#include "common/tls/credentials.h"
#include "controlplane/authz_metrics.h"
#include "controlplane/clock.h"
#include "controlplane/lease_timer.h"
#include "controlplane/limit_flags.h"
#include "controlplane/manager_metrics.h"
#include "controlplane/manager_state.h"
#include "controlplane/memory_store.h"
#include "controlplane/operator_service.h"
#include "controlplane/pair_secrets.h"
#include "controlplane/service.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:7420",
          "Address to serve on, host:port; port 0 picks a free port (see "
          "--port_file).");
ABSL_FLAG(std::string, port_file, "",
          "If set, write the port actually bound to this file once serving "
          "(for tests and scripts that listen on port 0).");
ABSL_FLAG(int64_t, lease_ms, 1000,
          "Lease: a node with no heartbeat for this long is declared failed.");
ABSL_FLAG(int64_t, suspect_max_ms, 30000,
          "A node whose lease runs out while peers with open sessions can be "
          "asked is SUSPECT, not failed: its peers probe its lite.ko, and it "
          "stays SUSPECT (its LMRs and grants kept, new maps into it "
          "UNAVAILABLE) while one still reaches it, for at most this long; "
          "0: no SUSPECT state, a lease that runs out fails the node. "
          "Default 30 s, the time the HTTP/2 keepalive gives a frozen agent's "
          "session anyway. 0..3600000, counted from the lease's end.");
ABSL_FLAG(int32_t, heartbeats_per_lease, 4,
          "Agents are told to heartbeat every lease_ms / this.");
ABSL_FLAG(int64_t, session_queue_limit, 16384,
          "Messages a session or watcher may fall behind before it is closed "
          "(RESOURCE_EXHAUSTED; the node is declared failed).");
ABSL_FLAG(int64_t, request_timeout_ms, 5000,
          "How long AllocLmr waits for the home node's agent.");
ABSL_FLAG(int64_t, free_fence_timeout_ms, 60000,
          "The fenced free: how long a freed LMR waits for every holder of "
          "a grant into it to acknowledge its revocation (or fail) before "
          "its home is told to quarantine the memory instead of freeing it; "
          "1..86400000.");
ABSL_FLAG(int64_t, recovery_window_ms, 5000,
          "After a start with no state: how long agents may restore grants "
          "before orphans are revoked and RecoveryComplete is announced. 0 "
          "disables recovery.");
ABSL_FLAG(uint64_t, max_lmr_size_bytes, lite::names::kMaxLmrSizeBytes,
          "Largest LMR the manager accepts; at most lite.ko's limit for one "
          "LMR (LITE_LMR_SIZE_MAX, 64 GiB), the default.");
ABSL_FLAG(int32_t, max_lmr_chunks, lite::names::kMaxLmrChunks,
          "Most chunks one LMR may have (at most lite.ko's LITE_CHUNKS_MAX).");
ABSL_FLAG(std::string, pair_key_file, "",
          "The cluster key every pair secret is derived from: 32 random "
          "bytes, raw or as 64 hex digits (openssl rand -hex 32), in a file "
          "of mode 0600 or 0400. With it a restarted manager hands out the "
          "same pair secrets; without it each start draws a new key.");
ABSL_FLAG(std::string, tls_cert, "",
          "The manager's certificate (PEM; cmd/litecerts DIR manager). Its "
          "name is what agents and litectl expect (--manager_tls_name, "
          "default litemgr).");
ABSL_FLAG(std::string, tls_key, "", "The private key of --tls_cert (PEM).");
ABSL_FLAG(std::string, tls_ca, "",
          "The cluster CA (PEM): callers' certificates must be signed by it.");
ABSL_FLAG(std::string, authz, "",
          "The roles file: `NAME ROLE` per line (ROLE manager, node or "
          "operator; cmd/litecerts appends to DIR/authz). Re-read when it "
          "changes. Required with TLS.");
ABSL_FLAG(absl::Duration, tls_reload_interval,
          lite::tls::kDefaultReloadInterval,
          "How often the TLS files are read again, so that renewed "
          "certificates are served without a restart (at least 1s).");
ABSL_FLAG(bool, insecure, false,
          "Plaintext gRPC without certificates or roles: every caller may do "
          "everything. Only on a trusted, isolated network; warned at every "
          "start.");
ABSL_FLAG(std::string, metrics_listen, lite::metrics::kManagerMetricsListen,
          "Where to serve Prometheus metrics over HTTP (GET /metrics; "
          "docs/metrics.md), host:port; port 0 picks a free port (see "
          "--metrics_port_file); empty: no metrics endpoint. Plain HTTP "
          "without authentication: loopback by default.");
ABSL_FLAG(std::string, metrics_port_file, "",
          "If set, write the metrics port actually bound to this file once "
          "serving (for tests and scripts that pass port 0).");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error.");
ABSL_FLAG(int64_t, shutdown_grace_ms, 2000,
          "On SIGTERM, how long in-flight RPCs get before they are cancelled.");

namespace lite::controlplane {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "litemgr: %s\n", message.c_str());
  return 2;
}

int Main() {
  const std::string level = absl::GetFlag(FLAGS_log_level);
  logging::LogLevel min_level;
  if (!logging::ParseLogLevel(level, &min_level)) {
    return Fail(absl::StrCat("--log_level=", level,
                             " is not one of debug, info, warning, error"));
  }
  logging::SetMinLogLevel(min_level);
  ManagerOptions options;
  if (absl::Status limits = ApplyLimitFlags(&options); !limits.ok()) {
    return Fail(std::string(limits.message()));
  }
  if (absl::GetFlag(FLAGS_lease_ms) < 10) {
    return Fail("--lease_ms must be at least 10");
  }
  options.lease = absl::Milliseconds(absl::GetFlag(FLAGS_lease_ms));
  // Counted from the lease's end, so any length works with any lease (one
  // shorter than a probe round ends the first round early).
  const int64_t suspect_max_ms = absl::GetFlag(FLAGS_suspect_max_ms);
  if (suspect_max_ms < 0 || suspect_max_ms > 3600000) {
    return Fail(
        absl::StrCat("--suspect_max_ms must be 0 (no SUSPECT state) "
                     "to 3600000, not ",
                     suspect_max_ms));
  }
  options.suspect_max = absl::Milliseconds(suspect_max_ms);
  if (absl::GetFlag(FLAGS_heartbeats_per_lease) < 2) {
    return Fail("--heartbeats_per_lease must be at least 2");
  }
  options.heartbeats_per_lease = absl::GetFlag(FLAGS_heartbeats_per_lease);
  if (absl::GetFlag(FLAGS_session_queue_limit) < 16) {
    return Fail("--session_queue_limit must be at least 16");
  }
  options.session_queue_limit = absl::GetFlag(FLAGS_session_queue_limit);
  if (absl::Status bursts = CheckBurstLimits(options); !bursts.ok()) {
    return Fail(std::string(bursts.message()));
  }
  if (absl::GetFlag(FLAGS_request_timeout_ms) < 1) {
    return Fail("--request_timeout_ms must be positive");
  }
  options.request_timeout =
      absl::Milliseconds(absl::GetFlag(FLAGS_request_timeout_ms));
  // A day: a fence longer than that only keeps freed memory out of use.
  constexpr int64_t kMaxFenceMs = 86400000;
  if (absl::GetFlag(FLAGS_free_fence_timeout_ms) < 1 ||
      absl::GetFlag(FLAGS_free_fence_timeout_ms) > kMaxFenceMs) {
    return Fail(absl::StrCat("--free_fence_timeout_ms must be 1..", kMaxFenceMs,
                             ", not ",
                             absl::GetFlag(FLAGS_free_fence_timeout_ms)));
  }
  options.free_fence_timeout =
      absl::Milliseconds(absl::GetFlag(FLAGS_free_fence_timeout_ms));
  if (absl::GetFlag(FLAGS_recovery_window_ms) < 0) {
    return Fail("--recovery_window_ms must not be negative");
  }
  options.recovery_window =
      absl::Milliseconds(absl::GetFlag(FLAGS_recovery_window_ms));
  if (absl::GetFlag(FLAGS_max_lmr_size_bytes) == 0) {
    return Fail("--max_lmr_size_bytes must be positive");
  }
  // A larger limit would let the manager create LMRs that no node's lite.ko
  // can allocate.
  if (absl::GetFlag(FLAGS_max_lmr_size_bytes) > names::kMaxLmrSizeBytes) {
    return Fail(absl::StrFormat(
        "--max_lmr_size_bytes=%u is larger than lite.ko's limit for one LMR, "
        "%u bytes (64 GiB, LITE_LMR_SIZE_MAX)",
        absl::GetFlag(FLAGS_max_lmr_size_bytes), names::kMaxLmrSizeBytes));
  }
  options.max_lmr_size_bytes = absl::GetFlag(FLAGS_max_lmr_size_bytes);
  if (absl::GetFlag(FLAGS_max_lmr_chunks) < 1 ||
      absl::GetFlag(FLAGS_max_lmr_chunks) > names::kMaxLmrChunks) {
    return Fail(absl::StrFormat(
        "--max_lmr_chunks=%d is out of range: 1..%d (lite.ko's "
        "LITE_CHUNKS_MAX; a grant with more chunks cannot be installed)",
        absl::GetFlag(FLAGS_max_lmr_chunks), names::kMaxLmrChunks));
  }
  options.max_lmr_chunks = absl::GetFlag(FLAGS_max_lmr_chunks);
  const std::string pair_key_file = absl::GetFlag(FLAGS_pair_key_file);
  if (!pair_key_file.empty()) {
    absl::StatusOr<std::string> key = PairSecrets::LoadKeyFile(pair_key_file);
    if (!key.ok()) {
      return Fail(absl::StrCat("--pair_key_file: ", key.status().message()));
    }
    options.pair_key = *std::move(key);
  }

  const std::string metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  if (absl::Status s =
          metrics::ValidateMetricsListen("--metrics_listen", metrics_listen);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }

  const tls::TlsFiles tls_files{.cert = absl::GetFlag(FLAGS_tls_cert),
                                .key = absl::GetFlag(FLAGS_tls_key),
                                .ca = absl::GetFlag(FLAGS_tls_ca)};
  const bool insecure = absl::GetFlag(FLAGS_insecure);
  const std::string authz_file = absl::GetFlag(FLAGS_authz);
  const absl::Duration reload = absl::GetFlag(FLAGS_tls_reload_interval);
  if (absl::Status s = tls::CheckServerTlsFlags(tls_files, insecure, authz_file,
                                                reload, "litemgr");
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  std::shared_ptr<grpc::ServerCredentials> server_credentials;
  std::unique_ptr<tls::Authz> authz;
  std::string tls_summary;
  if (insecure) {
    server_credentials = grpc::InsecureServerCredentials();
    authz = tls::Authz::Insecure();
    tls_summary = "PLAINTEXT (--insecure)";
  } else {
    absl::StatusOr<tls::CertificateInfo> info = tls::CheckFiles(tls_files);
    if (!info.ok()) return Fail(std::string(info.status().message()));
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
        tls::ServerCredentials(tls_files, reload);
    if (!creds.ok()) return Fail(std::string(creds.status().message()));
    server_credentials = *std::move(creds);
    absl::StatusOr<std::unique_ptr<tls::Authz>> loaded =
        tls::Authz::Load(authz_file);
    if (!loaded.ok()) {
      return Fail(absl::StrCat("--authz: ", loaded.status().message()));
    }
    authz = *std::move(loaded);
    tls_summary = absl::StrFormat(
        "mutual TLS as %s (certificate until %s, reloaded every %s), CA %s, "
        "roles from %s",
        info->name, absl::FormatTime(info->not_after),
        absl::FormatDuration(reload), tls_files.ca, authz_file);
  }

  // Signals are taken synchronously by this thread; block them before any
  // other thread exists so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  RealClock clock;
  ManagerState state(options, &clock, std::make_unique<MemoryStore>());
  // The state holds the key now; this copy is wiped (review cp L14).
  PairSecrets::Wipe(&options.pair_key);
  ClusterManagerService service(&state, authz.get());
  ClusterOperatorService operator_service(&state, authz.get());

  // Every RPC counted by method and code, without touching a handler.
  absl::StatusOr<std::shared_ptr<metrics::RpcMetrics>> rpc_metrics =
      metrics::RpcMetrics::Create(
          "lite_manager_rpc_calls_total",
          "RPCs litemgr finished, by service, method and status code",
          {lite::v1::ClusterManager::service_full_name(),
           lite::v1::ClusterOperator::service_full_name()});
  if (!rpc_metrics.ok()) return Fail(rpc_metrics.status().ToString());
  // Before the gRPC server: a metrics address that cannot be served is a
  // configuration error to stop on, not to find out about later.
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> started =
        metrics::MetricsServer::Start(
            metrics_listen,
            {std::make_shared<ManagerMetrics>(&state),
             std::make_shared<AuthzMetrics>(authz.get()), *rpc_metrics});
    if (!started.ok()) return Fail(std::string(started.status().message()));
    metrics_server = *std::move(started);
    const std::string metrics_port_file =
        absl::GetFlag(FLAGS_metrics_port_file);
    if (!metrics_port_file.empty()) {
      std::ofstream out(metrics_port_file, std::ios::trunc);
      out << metrics_server->port() << "\n";
      if (!out.good()) {
        return Fail(absl::StrCat("cannot write --metrics_port_file ",
                                 metrics_port_file));
      }
    }
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  ApplyServerLimits(&builder);
  // Streams per connection, handshake timeout, gRPC's memory (L6).
  ApplyConnectionLimits(&builder, kManagerServerLimits);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back((*rpc_metrics)->NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), server_credentials,
                           &port);
  builder.RegisterService(&service);
  builder.RegisterService(&operator_service);
  // Pings every client's connection: a half-open one (its agent or
  // litectl watch gone without a close) ends in 30 s, with its session or
  // watch slot.
  ServerKeepalive(&builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return Fail(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen),
                             " (address in use, or not a local address?)"));
  }
  server->GetHealthCheckService()->SetServingStatus(
      lite::v1::ClusterManager::service_full_name(), true);
  server->GetHealthCheckService()->SetServingStatus(
      lite::v1::ClusterOperator::service_full_name(), true);
  LeaseTimer timer(&state);

  const std::string port_file = absl::GetFlag(FLAGS_port_file);
  if (!port_file.empty()) {
    std::ofstream out(port_file, std::ios::trunc);
    out << port << "\n";
    if (!out.good()) {
      server->Shutdown();
      return Fail(absl::StrCat("cannot write --port_file ", port_file));
    }
  }
  if (insecure) LITE_LOG_WARNING("%s", tls::InsecureWarning("litemgr"));
  LITE_LOG_INFO("%s",
                metrics_server == nullptr
                    ? std::string("no metrics endpoint (--metrics_listen "
                                  "is empty)")
                    : absl::StrFormat("metrics on http://%s/metrics "
                                      "(port %d)",
                                      metrics_listen, metrics_server->port()));
  LITE_LOG_INFO(
      "litemgr serving on %s (port %d, %s): lease %d ms, heartbeat every %d "
      "ms, "
      "session queue %d, request timeout %d ms, free fence %d ms, recovery "
      "window %d ms; pair secrets from %s",
      absl::GetFlag(FLAGS_listen), port, tls_summary,
      absl::GetFlag(FLAGS_lease_ms),
      absl::GetFlag(FLAGS_lease_ms) / options.heartbeats_per_lease,
      options.session_queue_limit, absl::GetFlag(FLAGS_request_timeout_ms),
      absl::GetFlag(FLAGS_free_fence_timeout_ms),
      absl::GetFlag(FLAGS_recovery_window_ms),
      pair_key_file.empty()
          ? std::string("a key drawn at this start (--pair_key_file unset)")
          : absl::StrCat("the key in ", pair_key_file));

  lite::systemd::NotifyReady(absl::StrFormat("serving on %s (port %d, %s)",
                                             absl::GetFlag(FLAGS_listen), port,
                                             tls_summary));

  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  LITE_LOG_INFO("signal %d: shutting down", signal_number);
  lite::systemd::NotifyStopping();
  server->GetHealthCheckService()->SetServingStatus(false);
  state.Shutdown();  // Ends sessions, watches and pending AllocLmr calls.
  timer.Stop();
  server->Shutdown(absl::ToChronoTime(
      absl::Now() +
      absl::Milliseconds(absl::GetFlag(FLAGS_shutdown_grace_ms))));
  server->Wait();
  const ManagerCounters counters = state.counters();
  LITE_LOG_INFO(
      "stopped: %d joins, %d heartbeats, %d events, %d failures (%d on peer "
      "reports), %d grants issued, %d peer failure reports (%d ignored); "
      "fenced free: %d LMRs released (%d quarantined), %d still releasing, "
      "%d revoke acks (%d implied by a holder's end)",
      counters.joins, counters.heartbeats, counters.events, counters.failures,
      counters.peer_report_failures, counters.grants_issued,
      counters.peer_reports, counters.peer_reports_ignored,
      counters.lmrs_released, counters.lmrs_quarantined,
      counters.lmrs_releasing, counters.revoke_acks,
      counters.revoke_acks_implied);
  return 0;
}

}  // namespace
}  // namespace lite::controlplane

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "LITE cluster manager: membership, leases, failure notification, LMR "
      "registry and map grants over gRPC (lite.v1.ClusterManager).\n"
      "Usage: litemgr --tls_cert=F --tls_key=F --tls_ca=F --authz=F "
      "[--listen=0.0.0.0:7420] [--lease_ms=1000] ...\n"
      "       litemgr --insecure ...   (plaintext: trusted networks only)");
  // --help lists the limits too (limit_flags.cc), not only this file's flags.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "controlplane/litemgr_main.") ||
           absl::StrContains(file, "controlplane/limit_flags.");
  };
  absl::SetFlagsUsageConfig(usage_config);
  absl::ParseCommandLine(argc, argv);
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles,
  // which costs more than the manager's own work with thousands of sessions
  // (one Mutex each). The lock order is fixed by design (see manager_state.h).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return lite::controlplane::Main();
}
