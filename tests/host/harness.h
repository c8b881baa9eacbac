// Host integration test harness: runs the real litemgr, the agent
// (liteagent_fake with its in-process fake module) and litectl binaries as
// child processes on loopback. Daemons listen on port 0 and report their port
// through --port_file, so tests running in parallel never collide. Every
// process is stopped by its PID (SIGTERM, then SIGKILL), never by name, and
// dies with the test process if that is killed (PR_SET_PDEATHSIG). Every wait
// is bounded.
//
// TLS by default: each Cluster makes a CA in its scratch directory with
// cmd/litecerts, a manager certificate ("litemgr"), an operator
// certificate ("ops", for litectl and the test's own operator and agent
// stubs) and one node certificate per agent, named as the agent; the
// daemons get --tls_* and --authz (the authz file litecerts appends to).
// Cluster(Cluster::kInsecure) runs everything with --insecure instead.
#ifndef LITE_TESTS_HOST_HARNESS_H_
#define LITE_TESTS_HOST_HARNESS_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lite/v1/agent.grpc.pb.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::hosttest {

// Generous for a loaded 2-core machine, but bounded.
inline constexpr absl::Duration kStartTimeout = absl::Seconds(20);

// Path of a binary in the test's runfiles, e.g. "agent/liteagent".
std::string Runfile(const std::string& path);

// A fresh scratch directory (unique per call) under $TEST_TMPDIR.
std::string ScratchDir();

// The cluster key WritePairKeyFile writes (32 bytes, 0xa0 to 0xbf), for a
// test that derives pair secrets or identity tokens itself.
std::string TestClusterKey();

// Writes TestClusterKey() in hex to a fresh --pair_key_file (mode 0600) and
// returns its path; aborts, saying why, if it cannot. A test that restarts
// the manager and expects nodes to keep their ids needs it: identity tokens
// are restored only by a manager holding the key that signed them (without
// the file a manager draws a new key at each start).
std::string WritePairKeyFile();

// Polls pred every `poll` until it holds or timeout passes.
bool Eventually(const std::function<bool()>& pred, absl::Duration timeout,
                absl::Duration poll = absl::Milliseconds(10));

// A child process with stdout and stderr going to files.
class Process {
 public:
  // Starts binary with args; stdout to stdout_path, stderr to stderr_path
  // (empty: the same file as stdout).
  static absl::StatusOr<std::unique_ptr<Process>> Start(
      const std::string& name, const std::string& binary,
      const std::vector<std::string>& args, const std::string& stdout_path,
      const std::string& stderr_path = "");
  ~Process();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  const std::string& stdout_path() const { return stdout_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  bool Running();
  void Signal(int sig);
  // Waits for the process to exit; its wait status, or nullopt on timeout.
  std::optional<int> Wait(absl::Duration timeout);
  // SIGTERM, then SIGKILL after `grace`; returns the wait status.
  int Stop(absl::Duration grace = absl::Seconds(10));
  // The last `lines` lines of its stderr, for failure messages.
  std::string Tail(int lines = 30) const;

 private:
  Process(std::string name, pid_t pid, std::string out, std::string err)
      : name_(std::move(name)),
        pid_(pid),
        stdout_path_(std::move(out)),
        stderr_path_(std::move(err)) {}

  const std::string name_;
  pid_t pid_;
  const std::string stdout_path_;
  const std::string stderr_path_;
  std::optional<int> status_;
};

std::string ReadFile(const std::string& path);

// Waits for a daemon's --port_file and returns the port.
absl::StatusOr<int> ReadPortFile(const std::string& path, Process* owner,
                                 absl::Duration timeout);

// A cluster's certificates (docs/security.md): DIR/NAME.{crt,key}, DIR/ca.crt.
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string ca;
};

// Runs cmd/litecerts with `args`; its output in the error if it fails.
absl::Status Litecerts(const std::vector<std::string>& args);

// Client credentials presenting `files` (cert and key may be empty: no
// client certificate), or plaintext when `files` is nullopt.
std::shared_ptr<grpc::ChannelCredentials> ClientCredentials(
    const std::optional<TlsFiles>& files);

// A channel to 127.0.0.1:port that expects the server's certificate to
// name `server_name`, reconnecting promptly.
std::shared_ptr<grpc::Channel> DialChannel(
    int port, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const std::string& server_name);

// litectl's result.
struct CtlResult {
  int exit_code = -1;  // -1: did not exit in time (it was killed)
  std::string out;
  std::string err;
};

// A litemgr and any number of liteagents.
class Cluster {
 public:
  struct ManagerConfig {
    int64_t lease_ms = 1000;
    int64_t recovery_window_ms = 3000;
    // --suspect_max_ms. 0 (the old rule: a lease that runs out fails the
    // node) unless a test asks: the fake modules' probes cannot tell a
    // SIGSTOPped agent's fake kernel, which is that agent, from a live one.
    int64_t suspect_max_ms = 0;
    // --pair_key_file; empty: the manager draws a key at each start.
    std::string pair_key_file = "";
  };
  struct AgentConfig {
    std::string fake_lmrs = "";
    std::string fake_maps = "";
    std::string fake_memory = "256M";
    // RPC services the fake registers (NAME=MODE,...) and opens (NAME,...).
    std::string fake_services = "";
    std::string fake_opens = "";
    // --fake_unreachable_file: peers the fake's probes find gone (re-read
    // at every probe); empty: none.
    std::string fake_unreachable_file = "";
  };

  enum Security { kTls, kInsecure };
  explicit Cluster(Security security = kTls);
  ~Cluster();

  bool tls() const { return tls_; }
  // The certificates' directory (with the CA, ca.key and authz).
  const std::string& cert_dir() const { return cert_dir_; }
  const std::string& dir() const { return dir_; }
  // Issues certificate `name` of `kind` (node, operator, manager) unless it
  // exists; its files.
  absl::StatusOr<TlsFiles> Certificate(const std::string& kind,
                                       const std::string& name);
  // The file names of certificate `name` (issued or not).
  TlsFiles Files(const std::string& name) const;
  // A node-service stub presenting node certificate `name` (issued on first
  // use); plaintext without TLS.
  lite::v1::ClusterManager::Stub* manager_stub_as(const std::string& name);
  // Fresh stubs presenting `files` (nullopt: plaintext).
  std::unique_ptr<lite::v1::ClusterManager::Stub> NewManagerStub(
      const std::optional<TlsFiles>& files);
  std::unique_ptr<lite::v1::ClusterOperator::Stub> NewOperatorStub(
      const std::optional<TlsFiles>& files);

  // Starts litemgr on port 0, or on `port` (a restart on the same address).
  absl::Status StartManager(const ManagerConfig& config, int port = 0);
  Process* manager() { return manager_.get(); }
  int manager_port() const { return manager_port_; }
  // Where the manager serves its Prometheus metrics (on 127.0.0.1).
  int manager_metrics_port() const { return manager_metrics_port_; }
  std::string manager_address() const;
  // Forgets the manager process (after it was killed and reaped).
  void DropManager() { manager_.reset(); }
  // As node "n1", the first node of most tests.
  lite::v1::ClusterManager::Stub* manager_stub() {
    return manager_stub_as("n1");
  }
  lite::v1::ClusterOperator::Stub* operator_stub() {
    return operator_stub_.get();
  }

  // Starts (or restarts, after the old one died) agent `name` with RDMA
  // address 127.0.0.1:(17000 + index).
  absl::Status StartAgent(const std::string& name, int index,
                          const AgentConfig& config);
  Process* agent(const std::string& name);
  lite::v1::NodeAgent::Stub* agent_stub(const std::string& name);
  // The port agent `name` serves NodeAgent on (0: none).
  int agent_port(const std::string& name) const;
  // Where it serves its Prometheus metrics, on 127.0.0.1 (0: none).
  int agent_metrics_port(const std::string& name) const;
  std::string event_log(const std::string& name) const;
  // The fake module's --fake_peers_file: "self ID INC", then "peer ID INC
  // SHA256-OF-SECRET" lines (fake_module.h).
  std::string peers_file(const std::string& name) const;
  // Forgets the agent process (after it was killed and reaped).
  void DropAgent(const std::string& name);

  // GetStatus of an agent (a short deadline).
  absl::StatusOr<lite::v1::GetStatusResponse> AgentStatus(
      const std::string& name);
  absl::StatusOr<std::vector<lite::v1::Member>> AgentPeers(
      const std::string& name);
  // Waits until the agent's session is open.
  absl::StatusOr<lite::v1::GetStatusResponse> WaitConnected(
      const std::string& name, absl::Duration timeout = kStartTimeout);

  // Every node / LMR / grant, from the manager.
  absl::StatusOr<std::vector<lite::v1::Member>> Nodes();
  absl::StatusOr<std::vector<lite::v1::Lmr>> Lmrs();
  absl::StatusOr<std::vector<lite::v1::Grant>> Grants();

  // Runs litectl with --manager set to this cluster's manager.
  CtlResult Litectl(const std::vector<std::string>& args,
                    absl::Duration timeout = absl::Seconds(30));

  // litectl's --tls_* arguments for certificate `name` (none without TLS:
  // then --insecure).
  std::vector<std::string> LitectlSecurity(const std::string& name) const;

  // Starts `litectl watch -o json` writing to a file; see WatchedEvents.
  absl::Status StartWatch();
  Process* watch() { return watch_.get(); }
  // The events the watch has printed so far.
  absl::StatusOr<std::vector<lite::v1::Event>> WatchedEvents();

  // Every process's recent stderr, for a failure message.
  std::string Logs();

 private:
  struct AgentProc {
    std::unique_ptr<Process> process;
    std::unique_ptr<lite::v1::NodeAgent::Stub> stub;
    int port = 0;
    int metrics_port = 0;
    int starts = 0;
  };

  // Daemon flags for TLS with certificate `name` (or --insecure).
  std::vector<std::string> DaemonSecurity(const std::string& name) const;

  const bool tls_;
  const std::string dir_;
  const std::string cert_dir_;
  absl::Status certs_made_;
  std::unique_ptr<Process> manager_;
  int manager_port_ = 0;
  int manager_metrics_port_ = 0;
  int manager_starts_ = 0;
  std::map<std::string, std::unique_ptr<lite::v1::ClusterManager::Stub>>
      manager_stubs_;
  std::unique_ptr<lite::v1::ClusterOperator::Stub> operator_stub_;
  std::map<std::string, AgentProc> agents_;
  std::unique_ptr<Process> watch_;
  int ctl_runs_ = 0;
};

// Parses one JSON event per line (as liteagent --event_log and litectl watch
// -o json write them).
absl::StatusOr<std::vector<lite::v1::Event>> ParseEventLines(
    const std::string& text);

}  // namespace lite::hosttest

#endif  // LITE_TESTS_HOST_HARNESS_H_
