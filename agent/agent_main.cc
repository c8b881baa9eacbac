// The body of every liteagent binary: LITE's per-node agent. Joins the
// cluster manager (litemgr), keeps the node's session alive, programs lite.ko
// through the module interface, answers applications' upcalls, and serves
// lite.v1.NodeAgent and the gRPC health service for operators, over mutual
// TLS with the node's certificate (or plaintext with --insecure). See
// docs/agent.md and docs/security.md.
#include "agent/agent_main.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/agent_metrics.h"
#include "agent/event_log.h"
#include "agent/netlink_module.h"
#include "agent/node_agent_service.h"
#include "agent/validation.h"
#include "common/grpc/keepalive.h"
#include "common/grpc/server_limits.h"
#include "common/log/log.h"
#include "common/metrics/listen.h"
#include "common/metrics/rpc_metrics.h"
#include "common/metrics/server.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "common/systemd/notify.h"
#include "common/tls/authz.h"
#include "common/tls/credentials.h"

ABSL_FLAG(std::string, manager, "127.0.0.1:7420",
          "the cluster manager (litemgr) to join, host:port");
ABSL_FLAG(std::string, node_name, "",
          "this node's name in the cluster, 1..64 of [A-Za-z0-9._-] "
          "(default: the host name)");
ABSL_FLAG(std::string, rdma_address, "",
          "required: where this node's lite.ko accepts rdma_cm connections, "
          "\"IPv4:port\" or \"[IPv6]:port\"");
ABSL_FLAG(std::string, listen, "127.0.0.1:7421",
          "where to serve lite.v1.NodeAgent and grpc.health.v1, host:port "
          "(port 0: pick a free port; see --port_file)");
ABSL_FLAG(std::string, port_file, "",
          "if set, write the bound NodeAgent port to this file once serving");
ABSL_FLAG(std::string, metrics_listen, lite::metrics::kAgentMetricsListen,
          "where to serve Prometheus metrics over HTTP (GET /metrics; "
          "docs/metrics.md), host:port; port 0: pick a free port (see "
          "--metrics_port_file); empty: no metrics endpoint. Plain HTTP "
          "without authentication: loopback by default");
ABSL_FLAG(std::string, metrics_port_file, "",
          "if set, write the bound metrics port to this file once serving");
ABSL_FLAG(std::string, module, "netlink",
          "how to reach lite.ko: 'netlink' (the real module over its generic "
          "netlink family; needs lite.ko loaded and CAP_NET_ADMIN); "
          "liteagent_fake also offers 'fake' (an in-process test double with "
          "no RDMA, for host tests and laptops)");
ABSL_FLAG(absl::Duration, module_timeout, absl::Seconds(10),
          "--module=netlink: bound of each request to lite.ko");
ABSL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(5),
          "deadline of each call to the manager");
ABSL_FLAG(absl::Duration, backoff_initial, absl::Milliseconds(100),
          "first wait before joining again when the manager is unreachable");
ABSL_FLAG(absl::Duration, backoff_max, absl::Seconds(5),
          "longest wait between Joins (doubling from --backoff_initial, with "
          "jitter)");
ABSL_FLAG(absl::Duration, upcall_timeout, absl::Seconds(10),
          "how long an application's request may wait, including while the "
          "manager is unreachable");
ABSL_FLAG(int32_t, upcall_workers, 4,
          "threads answering application requests in parallel, 1..64");
ABSL_FLAG(absl::Duration, leave_grace, absl::Seconds(2),
          "on SIGTERM: how long to wait for the manager to end the session "
          "after Leave");
ABSL_FLAG(std::string, event_log, "",
          "if set, append every applied event to this file, one JSON object "
          "per line");
ABSL_FLAG(std::string, tls_cert, "",
          "this node's certificate (PEM; cmd/litecerts DIR node NAME): its "
          "name is the node's identity and must be --node_name (the default "
          "--node_name with TLS)");
ABSL_FLAG(std::string, tls_key, "", "the private key of --tls_cert (PEM)");
ABSL_FLAG(std::string, tls_ca, "",
          "the cluster CA (PEM): the manager's and operators' certificates "
          "must be signed by it");
ABSL_FLAG(std::string, authz, "",
          "the roles file (`NAME ROLE` lines, as cmd/litecerts writes "
          "DIR/authz): NodeAgent calls need role operator; required with TLS");
ABSL_FLAG(std::string, manager_tls_name, "litemgr",
          "the name the manager's certificate must carry");
ABSL_FLAG(absl::Duration, tls_reload_interval,
          lite::tls::kDefaultReloadInterval,
          "how often the TLS files are read again, so that a renewed "
          "certificate is used without a restart (at least 1s)");
ABSL_FLAG(bool, insecure, false,
          "plaintext gRPC without certificates: the manager cannot tell this "
          "node from an impostor and anyone may call NodeAgent; only on a "
          "trusted, isolated network; warned at every start");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning or error");

namespace lite::agent {
namespace {

const ModuleChoice* FindModule(const AgentMainOptions& options,
                               absl::string_view name) {
  for (const ModuleChoice& m : options.modules) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

absl::Status Positive(absl::string_view flag, absl::Duration d) {
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s must be a positive, finite duration (e.g. 500ms, 5s)", flag,
        absl::FormatDuration(d)));
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentMainConfig> ReadFlags(const AgentMainOptions& options) {
  AgentMainConfig c;
  lite::logging::LogLevel level;
  if (!lite::logging::ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--log_level='%s' is not debug, info, warning or error",
                        absl::GetFlag(FLAGS_log_level)));
  }
  lite::logging::SetMinLogLevel(level);

  c.module = absl::GetFlag(FLAGS_module);
  if (FindModule(options, c.module) == nullptr) {
    std::vector<std::string> offered;
    for (const ModuleChoice& m : options.modules) {
      offered.push_back(absl::StrFormat("'%s' (%s)", m.name, m.summary));
    }
    std::string message =
        absl::StrFormat("--module='%s' is unknown: %s", c.module,
                        absl::StrJoin(offered, " or "));
    if (!options.other_modules.empty()) {
      absl::StrAppend(&message, "; ", options.other_modules);
    }
    return absl::InvalidArgumentError(message);
  }
  c.module_timeout = absl::GetFlag(FLAGS_module_timeout);
  LITE_RETURN_IF_ERROR(Positive("module_timeout", c.module_timeout));

  c.tls = {.cert = absl::GetFlag(FLAGS_tls_cert),
           .key = absl::GetFlag(FLAGS_tls_key),
           .ca = absl::GetFlag(FLAGS_tls_ca)};
  c.insecure = absl::GetFlag(FLAGS_insecure);
  c.authz = absl::GetFlag(FLAGS_authz);
  c.manager_tls_name = absl::GetFlag(FLAGS_manager_tls_name);
  c.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  LITE_RETURN_IF_ERROR(tls::CheckServerTlsFlags(
      c.tls, c.insecure, c.authz, c.tls_reload_interval, options.program));
  std::string cert_name;
  if (!c.insecure) {
    if (c.manager_tls_name.empty()) {
      return absl::InvalidArgumentError("--manager_tls_name is empty");
    }
    LITE_ASSIGN_OR_RETURN(tls::CertificateInfo info, tls::CheckFiles(c.tls));
    cert_name = info.name;
  }

  c.agent.node_name = absl::GetFlag(FLAGS_node_name);
  // The certificate is the node's identity: the manager lets it act only
  // for the node it names, so a different --node_name could never join.
  if (!cert_name.empty()) {
    if (c.agent.node_name.empty()) c.agent.node_name = cert_name;
    if (c.agent.node_name != cert_name) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--node_name=%s but --tls_cert %s is the certificate of '%s': a "
          "node joins only under its certificate's name",
          c.agent.node_name, c.tls.cert, cert_name));
    }
  }
  if (c.agent.node_name.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--node_name is empty and the host name cannot be read: %s",
          std::strerror(errno)));
    }
    c.agent.node_name = host;
  }
  LITE_RETURN_IF_ERROR(
      names::ValidateNodeName("--node_name", c.agent.node_name));
  c.agent.rdma_address = absl::GetFlag(FLAGS_rdma_address);
  if (c.agent.rdma_address.empty()) {
    return absl::InvalidArgumentError(
        "--rdma_address is required (where lite.ko accepts rdma_cm "
        "connections: this node's IPv4 address on its RDMA netdev and "
        "lite.ko's cm_port, e.g. 10.211.0.11:18600)");
  }
  if (absl::Status s = ValidateRdmaAddress(c.agent.rdma_address); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rdma_address: ", s.message()));
  }
  c.agent.manager_address = absl::GetFlag(FLAGS_manager);
  LITE_RETURN_IF_ERROR(ValidateHostPort("--manager", c.agent.manager_address,
                                        /*allow_port_zero=*/false));
  c.listen = absl::GetFlag(FLAGS_listen);
  LITE_RETURN_IF_ERROR(
      ValidateHostPort("--listen", c.listen, /*allow_port_zero=*/true));
  c.port_file = absl::GetFlag(FLAGS_port_file);
  c.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  LITE_RETURN_IF_ERROR(
      metrics::ValidateMetricsListen("--metrics_listen", c.metrics_listen));
  c.metrics_port_file = absl::GetFlag(FLAGS_metrics_port_file);
  c.event_log = absl::GetFlag(FLAGS_event_log);

  c.agent.rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  c.agent.backoff_initial = absl::GetFlag(FLAGS_backoff_initial);
  c.agent.backoff_max = absl::GetFlag(FLAGS_backoff_max);
  c.agent.leave_grace = absl::GetFlag(FLAGS_leave_grace);
  c.agent.upcalls.upcall_timeout = absl::GetFlag(FLAGS_upcall_timeout);
  for (const auto& [flag, d] :
       {std::pair<absl::string_view, absl::Duration>{"rpc_timeout",
                                                     c.agent.rpc_timeout},
        {"backoff_initial", c.agent.backoff_initial},
        {"backoff_max", c.agent.backoff_max},
        {"leave_grace", c.agent.leave_grace},
        {"upcall_timeout", c.agent.upcalls.upcall_timeout}}) {
    LITE_RETURN_IF_ERROR(Positive(flag, d));
  }
  if (c.agent.backoff_initial > c.agent.backoff_max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--backoff_initial=%s is longer than --backoff_max=%s",
                        absl::FormatDuration(c.agent.backoff_initial),
                        absl::FormatDuration(c.agent.backoff_max)));
  }
  c.agent.upcalls.workers = absl::GetFlag(FLAGS_upcall_workers);
  if (c.agent.upcalls.workers < 1 || c.agent.upcalls.workers > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--upcall_workers=%d must be 1..64", c.agent.upcalls.workers));
  }

  if (options.check_flags) LITE_RETURN_IF_ERROR(options.check_flags(c.module));
  return c;
}

// Writes the port to path atomically (tmp + rename), so a reader never sees
// a partial number. `flag` names the file in errors.
absl::Status WritePortFile(absl::string_view flag, const std::string& path,
                           int port) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot write '%s': %s", flag, tmp, std::strerror(errno)));
  }
  const std::string text = absl::StrCat(port, "\n");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str())) {
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot write '%s': %s", flag, path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

int AgentMain(int argc, char** argv, const AgentMainOptions& options) {
  const char* program = options.program.c_str();
  absl::SetProgramUsageMessage(options.usage);
  // The flags live here (and liteagent_fake's own in its main file), not
  // only in the binary's main file, where --help would look by default.
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "agent/agent_main.") ||
           absl::StrContains(file, "agent/liteagent_fake_main.");
  };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", program,
                 args[1]);
    return 2;
  }
  absl::StatusOr<AgentMainConfig> config = ReadFlags(options);
  if (!config.ok()) {
    std::fprintf(stderr, "%s: %s\n", program,
                 std::string(config.status().message()).c_str());
    return 2;
  }

  // Signals are taken by sigwait below; block them before any thread starts
  // so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<EventLog> event_log;
  if (!config->event_log.empty()) {
    absl::StatusOr<std::unique_ptr<EventLog>> opened =
        EventLog::Open(config->event_log);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s: --event_log: %s\n", program,
                   std::string(opened.status().message()).c_str());
      return 2;
    }
    event_log = *std::move(opened);
    config->agent.event_log = event_log.get();
  }

  const ModuleChoice& choice = *FindModule(options, config->module);
  absl::StatusOr<std::unique_ptr<Module>> opened = choice.open(*config);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s: --module=%s: %s\n", program,
                 config->module.c_str(),
                 std::string(opened.status().message()).c_str());
    return 1;
  }
  // Declared before the agent, so it outlives it.
  const std::unique_ptr<Module> module = *std::move(opened);

  grpc::ChannelArguments channel_args;
  // gRPC's own reconnect backoff (default: up to 120 s) would otherwise
  // hold the channel down long after the manager is back.
  channel_args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                      static_cast<int>(absl::ToInt64Milliseconds(
                          config->agent.backoff_initial)));
  // gRPC takes this as the least time one connection attempt may last
  // (TCP connect and TLS handshake), not as a backoff: --backoff_initial
  // (100 ms) cut the handshake short on an emulated guest's CPU, and the
  // first Joins failed with "Handshake timed out". A call's deadline bounds
  // it anyway.
  channel_args.SetInt(
      GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
      static_cast<int>(absl::ToInt64Milliseconds(config->agent.rpc_timeout)));
  channel_args.SetInt(
      GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
      static_cast<int>(absl::ToInt64Milliseconds(config->agent.backoff_max)));
  ClientKeepalive(&channel_args);
  std::shared_ptr<grpc::ChannelCredentials> channel_credentials;
  std::shared_ptr<grpc::ServerCredentials> server_credentials;
  std::unique_ptr<tls::Authz> authz;
  if (config->insecure) {
    channel_credentials = grpc::InsecureChannelCredentials();
    server_credentials = grpc::InsecureServerCredentials();
    authz = tls::Authz::Insecure();
  } else {
    tls::SetServerName(&channel_args, config->manager_tls_name);
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> cc =
        tls::ChannelCredentials(config->tls, config->tls_reload_interval);
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> sc =
        tls::ServerCredentials(config->tls, config->tls_reload_interval);
    absl::StatusOr<std::unique_ptr<tls::Authz>> loaded =
        tls::Authz::Load(config->authz);
    for (const absl::Status& s : {cc.status(), sc.status(), loaded.status()}) {
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", program,
                     std::string(s.message()).c_str());
        return 2;
      }
    }
    channel_credentials = *std::move(cc);
    server_credentials = *std::move(sc);
    authz = *std::move(loaded);
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      config->agent.manager_address, channel_credentials, channel_args);
  Agent agent(config->agent, module.get(),
              lite::v1::ClusterManager::NewStub(channel));

  // Every NodeAgent call counted by method and code, without touching a
  // handler.
  absl::StatusOr<std::shared_ptr<metrics::RpcMetrics>> rpc_metrics =
      metrics::RpcMetrics::Create(
          "lite_agent_rpc_calls_total",
          "RPCs the agent finished (lite.v1.NodeAgent, health), by service, "
          "method and status code",
          {lite::v1::NodeAgent::service_full_name()});
  if (!rpc_metrics.ok()) {
    std::fprintf(stderr, "%s: %s\n", program,
                 rpc_metrics.status().ToString().c_str());
    return 1;
  }
  // Declared after the agent and the module, so it stops first: a scrape
  // reads both.
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!config->metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsServer>> started =
        metrics::MetricsServer::Start(
            config->metrics_listen,
            {std::make_shared<AgentMetrics>(
                 &agent, [m = module.get()] { return m->GetCounters(); }),
             *rpc_metrics});
    absl::Status s = started.status();
    if (s.ok()) {
      metrics_server = *std::move(started);
      if (!config->metrics_port_file.empty()) {
        s = WritePortFile("--metrics_port_file", config->metrics_port_file,
                          metrics_server->port());
      }
    }
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", program,
                   std::string(s.message()).c_str());
      return 1;
    }
  }

  NodeAgentService service(&agent, authz.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  ServerKeepalive(&builder);
  // Streams per connection, handshake timeout, gRPC's memory (L6).
  ApplyConnectionLimits(&builder, kAgentServerLimits);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back((*rpc_metrics)->NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  int port = 0;
  builder.AddListeningPort(config->listen, server_credentials, &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "%s: cannot listen on --listen=%s\n", program,
                 config->listen.c_str());
    return 1;
  }
  if (!config->port_file.empty()) {
    if (absl::Status s = WritePortFile("--port_file", config->port_file, port);
        !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", program,
                   std::string(s.message()).c_str());
      server->Shutdown();
      return 1;
    }
  }
  if (config->insecure) {
    LITE_LOG_WARNING("%s", tls::InsecureWarning(program));
  }
  LITE_LOG_INFO(
      "%s: node '%s', rdma address %s, manager %s, module %s; "
      "NodeAgent on port %d; %s; %s",
      program, config->agent.node_name, config->agent.rdma_address,
      config->agent.manager_address, module->Name(), port,
      metrics_server == nullptr
          ? std::string("no metrics endpoint (--metrics_listen is empty)")
          : absl::StrFormat("metrics on http://%s/metrics (port %d)",
                            config->metrics_listen, metrics_server->port()),
      config->insecure
          ? std::string("PLAINTEXT (--insecure)")
          : absl::StrFormat(
                "mutual TLS: certificate %s, CA %s, manager must be '%s', "
                "roles from %s, files re-read every %s",
                config->tls.cert, config->tls.ca, config->manager_tls_name,
                config->authz,
                absl::FormatDuration(config->tls_reload_interval)));

  agent.Start();
  lite::systemd::NotifyReady(
      absl::StrFormat("node '%s', manager %s, module %s, NodeAgent on port %d",
                      config->agent.node_name, config->agent.manager_address,
                      module->Name(), port));
  std::thread beside;
  if (choice.beside) {
    beside = std::thread([&] { choice.beside(module.get(), *config); });
  }

  int sig = SIGTERM;
  if (int err = sigwait(&signals, &sig); err != 0) {
    LITE_LOG_ERROR("sigwait: %s; shutting down", std::strerror(err));
  }
  LITE_LOG_INFO("received %s; leaving the cluster", strsignal(sig));
  lite::systemd::NotifyStopping();
  server->GetHealthCheckService()->SetServingStatus(false);
  agent.Shutdown();
  if (beside.joinable()) beside.join();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  LITE_LOG_INFO("%s stopped", program);
  return 0;
}

ModuleChoice NetlinkModuleChoice() {
  return ModuleChoice{
      .name = "netlink",
      .summary = "lite.ko",
      .open = [](const AgentMainConfig& config)
          -> absl::StatusOr<std::unique_ptr<Module>> {
        LITE_ASSIGN_OR_RETURN(std::unique_ptr<NetlinkModule> module,
                              NetlinkModule::Open(NetlinkModuleOptions{
                                  .rdma_address = config.agent.rdma_address,
                                  .node_name = config.agent.node_name,
                                  .request_timeout = config.module_timeout}));
        return std::unique_ptr<Module>(std::move(module));
      },
  };
}

}  // namespace lite::agent
