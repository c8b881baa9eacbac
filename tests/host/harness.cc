#include "tests/host/harness.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/grpc/status.h"
#include "google/protobuf/util/json_util.h"

namespace lite::hosttest {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

grpc::ChannelArguments FastReconnect() {
  grpc::ChannelArguments args;
  // The manager restarts in some tests; reconnect promptly.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  // gRPC also takes this as the connect timeout (TCP and TLS handshake):
  // at 100 ms a handshake on a loaded 2-core machine failed ("tcp
  // handshaker shutdown") for the whole of a 20 s wait.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  return args;
}

// The operator certificate the harness's own stubs and litectl present.
constexpr char kOperator[] = "ops";

void Arm(grpc::ClientContext* ctx, absl::Duration d = absl::Seconds(5)) {
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + d));
}

}  // namespace

absl::Status Litecerts(const std::vector<std::string>& args) {
  static std::atomic<int> runs{0};
  const std::string log =
      absl::StrCat(ScratchDir(), "/litecerts.", ++runs, ".log");
  absl::StatusOr<std::unique_ptr<Process>> p =
      Process::Start("litecerts", Runfile("cmd/litecerts"), args, log);
  if (!p.ok()) return p.status();
  std::optional<int> status = (*p)->Wait(absl::Seconds(30));
  if (status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) {
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat(
      "litecerts ", absl::StrJoin(args, " "), " failed: ", ReadFile(log)));
}

std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(
    const std::optional<TlsFiles>& files) {
  if (!files.has_value()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(files->ca);
  if (!files->cert.empty()) ssl.pem_cert_chain = ReadFile(files->cert);
  if (!files->key.empty()) ssl.pem_private_key = ReadFile(files->key);
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> DialChannel(
    int port, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const std::string& server_name) {
  grpc::ChannelArguments args = FastReconnect();
  args.SetSslTargetNameOverride(server_name);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                   credentials, args);
}

std::string Runfile(const std::string& path) {
  std::string root = Env("TEST_SRCDIR");
  std::string workspace = Env("TEST_WORKSPACE");
  if (workspace.empty()) workspace = "lite";
  return absl::StrCat(root, "/", workspace, "/", path);
}

std::string ScratchDir() {
  // One directory per call: port files and logs of one cluster must never be
  // mistaken for another's.
  static std::atomic<int> counter{0};
  std::string base = Env("TEST_TMPDIR");
  if (base.empty()) base = "/tmp";
  std::string dir = absl::StrCat(base, "/host.", getpid(), ".", ++counter);
  mkdir(dir.c_str(), 0755);
  return dir;
}

std::string TestClusterKey() {
  std::string key;
  for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(0xa0 + i));
  return key;
}

std::string WritePairKeyFile() {
  const std::string path = absl::StrCat(ScratchDir(), "/pair.key");
  std::ofstream out(path);
  out << absl::BytesToHexString(TestClusterKey()) << "\n";
  out.close();
  if (!out || chmod(path.c_str(), 0600) != 0) {
    // An empty path would start a manager with a random key and fail the
    // test far from here, for another reason.
    std::fprintf(stderr, "cannot write the test's key file %s: %s\n",
                 path.c_str(), std::strerror(errno));
    std::abort();
  }
  return path;
}

bool Eventually(const std::function<bool()>& pred, absl::Duration timeout,
                absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (pred()) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(poll);
  }
}

absl::StatusOr<std::unique_ptr<Process>> Process::Start(
    const std::string& name, const std::string& binary,
    const std::vector<std::string>& args, const std::string& stdout_path,
    const std::string& stderr_path) {
  const std::string err_path = stderr_path.empty() ? stdout_path : stderr_path;
  int out_fd = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  int err_fd =
      err_path == stdout_path
          ? out_fd
          : open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out_fd < 0 || err_fd < 0) {
    return absl::InternalError(
        absl::StrFormat("opening logs for %s: %s", name, std::strerror(errno)));
  }
  std::vector<std::string> argv_strings = {binary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::InternalError(
        absl::StrFormat("fork for %s: %s", name, std::strerror(errno)));
  }
  if (pid == 0) {
    // Never outlive the test, even if it is killed.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    // The test may block signals in its threads; children start clean.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(argv[0], argv.data());
    // Only async-signal-safe calls between fork and exec.
    static const char kMsg[] = "exec failed\n";
    (void)!write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
    _exit(127);
  }
  close(out_fd);
  if (err_fd != out_fd) close(err_fd);
  return std::unique_ptr<Process>(
      new Process(name, pid, stdout_path, err_path));
}

Process::~Process() {
  if (!status_.has_value()) Stop(absl::Seconds(5));
}

bool Process::Running() {
  if (status_.has_value()) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = status;
  return !status_.has_value();
}

void Process::Signal(int sig) {
  // Only ever our own child, by its PID, and only while it is unreaped (so
  // the PID cannot have been reused).
  if (Running()) kill(pid_, sig);
}

std::optional<int> Process::Wait(absl::Duration timeout) {
  Eventually([this] { return !Running(); }, timeout, absl::Milliseconds(5));
  return status_;
}

int Process::Stop(absl::Duration grace) {
  if (status_.has_value()) return *status_;
  Signal(SIGTERM);
  if (Wait(grace).has_value()) return *status_;
  Signal(SIGKILL);
  // SIGKILL cannot be ignored; the wait only covers the kernel's teardown.
  Wait(absl::Seconds(30));
  return status_.value_or(-1);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Process::Tail(int lines) const {
  std::vector<std::string> all = absl::StrSplit(ReadFile(stderr_path_), '\n');
  const size_t from = all.size() > static_cast<size_t>(lines)
                          ? all.size() - static_cast<size_t>(lines)
                          : 0;
  return absl::StrJoin(all.begin() + from, all.end(), "\n");
}

absl::StatusOr<int> ReadPortFile(const std::string& path, Process* owner,
                                 absl::Duration timeout) {
  int port = 0;
  bool ok = Eventually(
      [&] {
        std::string text(absl::StripAsciiWhitespace(ReadFile(path)));
        return absl::SimpleAtoi(text, &port) && port > 0;
      },
      timeout);
  if (ok) return port;
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s wrote no port to %s within %s (running: %d); its log:\n%s",
      owner->name(), path, absl::FormatDuration(timeout), owner->Running(),
      owner->Tail()));
}

Cluster::Cluster(Security security)
    : tls_(security == kTls),
      dir_(ScratchDir()),
      cert_dir_(absl::StrCat(dir_, "/certs")) {
  if (!tls_) return;
  certs_made_ = Litecerts({cert_dir_, "ca"});
  if (certs_made_.ok()) certs_made_ = Litecerts({cert_dir_, "manager"});
  if (certs_made_.ok()) {
    certs_made_ = Litecerts({cert_dir_, "operator", kOperator});
  }
}

TlsFiles Cluster::Files(const std::string& name) const {
  return {absl::StrCat(cert_dir_, "/", name, ".crt"),
          absl::StrCat(cert_dir_, "/", name, ".key"),
          absl::StrCat(cert_dir_, "/ca.crt")};
}

absl::StatusOr<TlsFiles> Cluster::Certificate(const std::string& kind,
                                              const std::string& name) {
  if (!certs_made_.ok()) return certs_made_;
  const TlsFiles files = Files(name);
  if (access(files.cert.c_str(), R_OK) != 0) {
    absl::Status made = Litecerts({cert_dir_, kind, name});
    if (!made.ok()) return made;
    // A running manager (and agents) see the new authz line within a
    // second (Authz looks at the file at most once a second).
    if (manager_ != nullptr) absl::SleepFor(absl::Milliseconds(1100));
  }
  return files;
}

std::unique_ptr<lite::v1::ClusterManager::Stub> Cluster::NewManagerStub(
    const std::optional<TlsFiles>& files) {
  return lite::v1::ClusterManager::NewStub(
      DialChannel(manager_port_, ClientCredentials(files), "litemgr"));
}

std::unique_ptr<lite::v1::ClusterOperator::Stub> Cluster::NewOperatorStub(
    const std::optional<TlsFiles>& files) {
  return lite::v1::ClusterOperator::NewStub(
      DialChannel(manager_port_, ClientCredentials(files), "litemgr"));
}

lite::v1::ClusterManager::Stub* Cluster::manager_stub_as(
    const std::string& name) {
  auto it = manager_stubs_.find(name);
  if (it != manager_stubs_.end()) return it->second.get();
  std::optional<TlsFiles> files;
  if (tls_) {
    absl::StatusOr<TlsFiles> issued = Certificate("node", name);
    // A stub without a certificate: its calls fail the handshake
    // (UNAVAILABLE), which the test reports with the name.
    files = issued.ok() ? *issued : TlsFiles{"", "", Files(name).ca};
  }
  auto stub = NewManagerStub(files);
  lite::v1::ClusterManager::Stub* raw = stub.get();
  manager_stubs_[name] = std::move(stub);
  return raw;
}

std::vector<std::string> Cluster::DaemonSecurity(
    const std::string& name) const {
  if (!tls_) return {"--insecure"};
  const TlsFiles files = Files(name);
  return {absl::StrCat("--tls_cert=", files.cert),
          absl::StrCat("--tls_key=", files.key),
          absl::StrCat("--tls_ca=", files.ca),
          absl::StrCat("--authz=", cert_dir_, "/authz")};
}

std::vector<std::string> Cluster::LitectlSecurity(
    const std::string& name) const {
  if (!tls_) return {"--insecure"};
  const TlsFiles files = Files(name);
  return {"--tls_cert", files.cert, "--tls_key",
          files.key,    "--tls_ca", files.ca};
}

Cluster::~Cluster() {
  // Agents first, so that they leave while the manager still runs.
  if (watch_ != nullptr) watch_->Stop();
  for (auto& [name, a] : agents_) {
    if (a.process != nullptr) a.process->Stop();
  }
  if (manager_ != nullptr) manager_->Stop();
}

std::string Cluster::manager_address() const {
  return absl::StrCat("127.0.0.1:", manager_port_);
}

absl::Status Cluster::StartManager(const ManagerConfig& config, int port) {
  if (!certs_made_.ok()) return certs_made_;
  ++manager_starts_;
  const std::string port_file =
      absl::StrCat(dir_, "/litemgr.", manager_starts_, ".port");
  const std::string metrics_port_file =
      absl::StrCat(dir_, "/litemgr.", manager_starts_, ".metrics_port");
  std::vector<std::string> args = {
      absl::StrCat("--listen=127.0.0.1:", port),
      absl::StrCat("--port_file=", port_file),
      // Port 0: tests run in parallel, each manager with an endpoint.
      "--metrics_listen=127.0.0.1:0",
      absl::StrCat("--metrics_port_file=", metrics_port_file),
      absl::StrCat("--lease_ms=", config.lease_ms),
      absl::StrCat("--suspect_max_ms=", config.suspect_max_ms),
      absl::StrCat("--recovery_window_ms=", config.recovery_window_ms),
      absl::StrCat("--pair_key_file=", config.pair_key_file)};
  for (std::string& flag : DaemonSecurity("litemgr")) {
    args.push_back(std::move(flag));
  }
  absl::StatusOr<std::unique_ptr<Process>> p =
      Process::Start(absl::StrCat("litemgr#", manager_starts_),
                     Runfile("controlplane/litemgr"), args,
                     absl::StrCat(dir_, "/litemgr.", manager_starts_, ".log"));
  if (!p.ok()) return p.status();
  manager_ = *std::move(p);
  absl::StatusOr<int> bound =
      ReadPortFile(port_file, manager_.get(), kStartTimeout);
  if (!bound.ok()) return bound.status();
  manager_port_ = *bound;
  // Written before the gRPC server starts, so it is there by now.
  absl::StatusOr<int> metrics =
      ReadPortFile(metrics_port_file, manager_.get(), kStartTimeout);
  if (!metrics.ok()) return metrics.status();
  manager_metrics_port_ = *metrics;
  manager_stubs_.clear();
  std::optional<TlsFiles> files;
  if (tls_) files = Files(kOperator);
  operator_stub_ = NewOperatorStub(files);
  return absl::OkStatus();
}

absl::Status Cluster::StartAgent(const std::string& name, int index,
                                 const AgentConfig& config) {
  if (tls_) {
    absl::StatusOr<TlsFiles> issued = Certificate("node", name);
    if (!issued.ok()) return issued.status();
  }
  AgentProc& a = agents_[name];
  ++a.starts;
  const std::string stem = absl::StrCat(dir_, "/", name, ".", a.starts);
  std::vector<std::string> args = {
      "--module=fake",
      absl::StrCat("--manager=", manager_address()),
      absl::StrCat("--node_name=", name),
      absl::StrCat("--rdma_address=127.0.0.1:", 17000 + index),
      "--listen=127.0.0.1:0",
      absl::StrCat("--port_file=", stem, ".port"),
      // Port 0: several agents (and tests) on one host.
      "--metrics_listen=127.0.0.1:0",
      absl::StrCat("--metrics_port_file=", stem, ".metrics_port"),
      absl::StrCat("--event_log=", event_log(name)),
      // Come back quickly after a manager restart.
      "--backoff_max=1s",
      absl::StrCat("--fake_memory=", config.fake_memory),
      absl::StrCat("--fake_peers_file=", peers_file(name)),
  };
  if (!config.fake_lmrs.empty()) {
    args.push_back(absl::StrCat("--fake_lmrs=", config.fake_lmrs));
  }
  if (!config.fake_maps.empty()) {
    args.push_back(absl::StrCat("--fake_maps=", config.fake_maps));
  }
  if (!config.fake_services.empty()) {
    args.push_back(absl::StrCat("--fake_services=", config.fake_services));
  }
  if (!config.fake_opens.empty()) {
    args.push_back(absl::StrCat("--fake_opens=", config.fake_opens));
  }
  if (!config.fake_unreachable_file.empty()) {
    args.push_back(
        absl::StrCat("--fake_unreachable_file=", config.fake_unreachable_file));
  }
  for (std::string& flag : DaemonSecurity(name)) {
    args.push_back(std::move(flag));
  }
  // A restarted agent gets a fresh event log: it is a new process.
  std::remove(event_log(name).c_str());
  std::remove(peers_file(name).c_str());
  absl::StatusOr<std::unique_ptr<Process>> p = Process::Start(
      absl::StrCat("liteagent ", name, "#", a.starts),
      Runfile("agent/liteagent_fake"), args, absl::StrCat(stem, ".log"));
  if (!p.ok()) return p.status();
  a.process = *std::move(p);
  absl::StatusOr<int> port =
      ReadPortFile(absl::StrCat(stem, ".port"), a.process.get(), kStartTimeout);
  if (!port.ok()) return port.status();
  a.port = *port;
  // Written before the NodeAgent port, so it is there by now.
  absl::StatusOr<int> metrics = ReadPortFile(
      absl::StrCat(stem, ".metrics_port"), a.process.get(), kStartTimeout);
  if (!metrics.ok()) return metrics.status();
  a.metrics_port = *metrics;
  // The agent serves with its node certificate; operators call it.
  std::optional<TlsFiles> files;
  if (tls_) files = Files(kOperator);
  a.stub = lite::v1::NodeAgent::NewStub(
      DialChannel(*port, ClientCredentials(files), name));
  return absl::OkStatus();
}

Process* Cluster::agent(const std::string& name) {
  auto it = agents_.find(name);
  return it == agents_.end() ? nullptr : it->second.process.get();
}

lite::v1::NodeAgent::Stub* Cluster::agent_stub(const std::string& name) {
  auto it = agents_.find(name);
  return it == agents_.end() ? nullptr : it->second.stub.get();
}

int Cluster::agent_port(const std::string& name) const {
  auto it = agents_.find(name);
  return it == agents_.end() ? 0 : it->second.port;
}

int Cluster::agent_metrics_port(const std::string& name) const {
  auto it = agents_.find(name);
  return it == agents_.end() ? 0 : it->second.metrics_port;
}

std::string Cluster::event_log(const std::string& name) const {
  return absl::StrCat(dir_, "/", name, ".events.jsonl");
}

std::string Cluster::peers_file(const std::string& name) const {
  return absl::StrCat(dir_, "/", name, ".peers");
}

void Cluster::DropAgent(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return;
  it->second.process.reset();
  it->second.stub.reset();
}

absl::StatusOr<lite::v1::GetStatusResponse> Cluster::AgentStatus(
    const std::string& name) {
  lite::v1::NodeAgent::Stub* stub = agent_stub(name);
  if (stub == nullptr) return absl::NotFoundError("no agent " + name);
  grpc::ClientContext ctx;
  Arm(&ctx, absl::Seconds(2));
  lite::v1::GetStatusResponse resp;
  grpc::Status s = stub->GetStatus(&ctx, {}, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<std::vector<lite::v1::Member>> Cluster::AgentPeers(
    const std::string& name) {
  lite::v1::NodeAgent::Stub* stub = agent_stub(name);
  if (stub == nullptr) return absl::NotFoundError("no agent " + name);
  grpc::ClientContext ctx;
  Arm(&ctx, absl::Seconds(2));
  lite::v1::ListPeersResponse resp;
  grpc::Status s = stub->ListPeers(&ctx, {}, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return std::vector<lite::v1::Member>(resp.peers().begin(),
                                       resp.peers().end());
}

absl::StatusOr<lite::v1::GetStatusResponse> Cluster::WaitConnected(
    const std::string& name, absl::Duration timeout) {
  absl::StatusOr<lite::v1::GetStatusResponse> last =
      absl::UnavailableError("not asked yet");
  const bool ok = Eventually(
      [&] {
        last = AgentStatus(name);
        return last.ok() && last->manager_connection_state() ==
                                lite::v1::MANAGER_CONNECTION_STATE_CONNECTED;
      },
      timeout, absl::Milliseconds(20));
  if (ok) return last;
  return absl::DeadlineExceededError(absl::StrFormat(
      "agent %s not CONNECTED within %s (last: %s); its log:\n%s", name,
      absl::FormatDuration(timeout),
      last.ok() ? last->ShortDebugString() : last.status().ToString(),
      agent(name) != nullptr ? agent(name)->Tail() : "(no process)"));
}

absl::StatusOr<std::vector<lite::v1::Member>> Cluster::Nodes() {
  grpc::ClientContext ctx;
  Arm(&ctx);
  lite::v1::ListNodesResponse resp;
  grpc::Status s = operator_stub_->ListNodes(&ctx, {}, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  if (!resp.next_page_token().empty()) {
    return absl::InternalError("more than one page of nodes");
  }
  return std::vector<lite::v1::Member>(resp.nodes().begin(),
                                       resp.nodes().end());
}

absl::StatusOr<std::vector<lite::v1::Lmr>> Cluster::Lmrs() {
  grpc::ClientContext ctx;
  Arm(&ctx);
  lite::v1::ListLmrsResponse resp;
  grpc::Status s = operator_stub_->ListLmrs(&ctx, {}, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return std::vector<lite::v1::Lmr>(resp.lmrs().begin(), resp.lmrs().end());
}

absl::StatusOr<std::vector<lite::v1::Grant>> Cluster::Grants() {
  grpc::ClientContext ctx;
  Arm(&ctx);
  lite::v1::ListGrantsResponse resp;
  grpc::Status s = operator_stub_->ListGrants(&ctx, {}, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return std::vector<lite::v1::Grant>(resp.grants().begin(),
                                      resp.grants().end());
}

CtlResult Cluster::Litectl(const std::vector<std::string>& args,
                           absl::Duration timeout) {
  ++ctl_runs_;
  const std::string stem = absl::StrCat(dir_, "/litectl.", ctl_runs_);
  std::vector<std::string> full = LitectlSecurity(kOperator);
  full.push_back("--manager");
  full.push_back(manager_address());
  full.insert(full.end(), args.begin(), args.end());
  CtlResult result;
  absl::StatusOr<std::unique_ptr<Process>> p =
      Process::Start("litectl", Runfile("cmd/litectl/litectl"), full,
                     stem + ".out", stem + ".err");
  if (!p.ok()) {
    result.err = std::string(p.status().message());
    return result;
  }
  std::optional<int> status = (*p)->Wait(timeout);
  if (!status.has_value()) (*p)->Stop(absl::Seconds(1));
  if (status.has_value() && WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  }
  result.out = ReadFile(stem + ".out");
  result.err = ReadFile(stem + ".err");
  return result;
}

absl::Status Cluster::StartWatch() {
  std::vector<std::string> args = LitectlSecurity(kOperator);
  for (const char* arg : {"--manager", "", "watch", "-o", "json"}) {
    args.push_back(*arg == '\0' ? manager_address() : arg);
  }
  absl::StatusOr<std::unique_ptr<Process>> p = Process::Start(
      "litectl watch", Runfile("cmd/litectl/litectl"), args,
      absl::StrCat(dir_, "/watch.jsonl"), absl::StrCat(dir_, "/watch.err"));
  if (!p.ok()) return p.status();
  watch_ = *std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<lite::v1::Event>> Cluster::WatchedEvents() {
  return ParseEventLines(ReadFile(absl::StrCat(dir_, "/watch.jsonl")));
}

std::string Cluster::Logs() {
  std::string out;
  auto add = [&out](Process* p) {
    if (p == nullptr) return;
    absl::StrAppend(&out, "\n----- ", p->name(), " (", p->stderr_path(),
                    ") -----\n", p->Tail(40), "\n");
  };
  add(manager_.get());
  for (auto& [name, a] : agents_) add(a.process.get());
  add(watch_.get());
  return out;
}

absl::StatusOr<std::vector<lite::v1::Event>> ParseEventLines(
    const std::string& text) {
  std::vector<lite::v1::Event> events;
  // A writer may be mid-line: only complete lines count.
  absl::string_view complete(text);
  complete = complete.substr(0, complete.rfind('\n') + 1);
  for (absl::string_view line : absl::StrSplit(complete, '\n')) {
    if (line.empty()) continue;
    lite::v1::Event e;
    auto s = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(line.data(), line.size()), &e);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad event line '", line, "': ", s.ToString()));
    }
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace lite::hosttest
