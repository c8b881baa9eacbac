// litemgr as a child process for the benchmark: started on a free loopback
// port, measured through /proc, stopped by its PID (never by name).
#ifndef LITE_CONTROLPLANE_BENCH_MANAGER_PROCESS_H_
#define LITE_CONTROLPLANE_BENCH_MANAGER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lite::controlplane::bench {

class ManagerProcess {
 public:
  // Starts `binary` with --listen=127.0.0.1:0 and `extra_args`, its stderr
  // appended to `log_path`, and waits until it reports its port.
  static absl::StatusOr<ManagerProcess> Start(
      const std::string& binary, const std::vector<std::string>& extra_args,
      const std::string& log_path);

  ManagerProcess(ManagerProcess&& other) noexcept;
  ManagerProcess& operator=(ManagerProcess&&) = delete;
  ~ManagerProcess();  // Stops it if still running.

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string address() const;
  // Resident set size now, from /proc/<pid>/status.
  absl::StatusOr<int64_t> ResidentBytes() const;
  // SIGTERM, then SIGKILL if it has not exited within `grace_ms`. Returns
  // its exit status as waitpid reports it.
  int Stop(int grace_ms = 5000);

 private:
  ManagerProcess(pid_t pid, int port) : pid_(pid), port_(port) {}
  pid_t pid_;
  int port_;
};

// Finds the litemgr binary next to the benchmark in Bazel's runfiles.
std::string FindLitemgr(const char* argv0);

}  // namespace lite::controlplane::bench

#endif  // LITE_CONTROLPLANE_BENCH_MANAGER_PROCESS_H_
