#include "controlplane/bench/manager_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace lite::controlplane::bench {

absl::StatusOr<ManagerProcess> ManagerProcess::Start(
    const std::string& binary, const std::vector<std::string>& extra_args,
    const std::string& log_path) {
  char port_template[] = "/tmp/scale_bench_port.XXXXXX";
  const int port_fd = mkstemp(port_template);
  if (port_fd < 0) return absl::InternalError("mkstemp failed");
  close(port_fd);
  const std::string port_file = port_template;
  std::ofstream(port_file, std::ios::trunc).close();

  // Plaintext: the simulated agents measure the manager's state machine,
  // not TLS; they dial with insecure credentials. The metrics endpoint on
  // as deployed, on a free port (never a running litemgr's).
  std::vector<std::string> args = {
      binary, "--listen=127.0.0.1:0", absl::StrCat("--port_file=", port_file),
      "--insecure", "--metrics_listen=127.0.0.1:0"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int log_fd =
      open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    unlink(port_file.c_str());
    return absl::InternalError(
        absl::StrCat("cannot open ", log_path, ": ", strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    unlink(port_file.c_str());
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    // The manager must not outlive the benchmark, however it ends.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDERR_FILENO);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(log_fd);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  int port = 0;
  while (absl::Now() < deadline) {
    std::ifstream in(port_file);
    std::string text;
    if (std::getline(in, text) && absl::SimpleAtoi(text, &port) && port > 0) {
      break;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      unlink(port_file.c_str());
      return absl::InternalError(
          absl::StrCat("litemgr exited during startup; see ", log_path));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  unlink(port_file.c_str());
  if (port <= 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return absl::DeadlineExceededError("litemgr did not report its port");
  }
  return ManagerProcess(pid, port);
}

ManagerProcess::ManagerProcess(ManagerProcess&& other) noexcept
    : pid_(other.pid_), port_(other.port_) {
  other.pid_ = 0;
}

ManagerProcess::~ManagerProcess() {
  if (pid_ > 0) Stop();
}

std::string ManagerProcess::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::StatusOr<int64_t> ManagerProcess::ResidentBytes() const {
  std::ifstream in(absl::StrCat("/proc/", pid_, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    int64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return absl::NotFoundError("no VmRSS in /proc/<pid>/status");
}

int ManagerProcess::Stop(int grace_ms) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const absl::Time deadline = absl::Now() + absl::Milliseconds(grace_ms);
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (absl::Now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  pid_ = 0;
  return status;
}

std::string FindLitemgr(const char* argv0) {
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("RUNFILES_DIR"); dir != nullptr) {
    candidates.push_back(absl::StrCat(dir, "/lite/controlplane/litemgr"));
  }
  candidates.push_back(
      absl::StrCat(argv0, ".runfiles/lite/controlplane/litemgr"));
  candidates.push_back("controlplane/litemgr");
  const std::string self = argv0;
  const size_t slash = self.rfind('/');
  if (slash != std::string::npos) {
    candidates.push_back(self.substr(0, slash) + "/../litemgr");
  }
  for (const std::string& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace lite::controlplane::bench
