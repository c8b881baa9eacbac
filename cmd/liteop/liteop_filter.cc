// liteop rpc-serve --exec: a request's bytes through a shell command.
#include "cmd/liteop/liteop_filter.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace lite::liteop {
namespace {

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// write(), but a reader that went away is EPIPE, not a SIGPIPE that kills
// us: the signal is blocked in this thread meanwhile, and one it raised is
// taken before it is unblocked.
ssize_t WriteNoSigpipe(int fd, const void* data, size_t len) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t n = write(fd, data, len);
  if (n < 0 && errno == EPIPE) {
    const int saved = errno;
    const timespec now = {0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
    errno = saved;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return n;
}

}  // namespace

absl::StatusOr<std::string> RunFilter(const std::string& command,
                                      absl::Span<const uint8_t> input,
                                      size_t max_output, bool* truncated) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Errno("pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return Errno("pipe");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  int err = posix_spawn(&pid, "/bin/sh", &fa, nullptr,
                        const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (err != 0) {
    close(in[1]);
    close(out[0]);
    errno = err;
    return Errno("spawning /bin/sh");
  }
  // Feed stdin and drain stdout together: a command that answers before
  // it has read everything never blocks us, nor we it.
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  std::string output;
  *truncated = false;
  size_t written = 0;
  int to_child = in[1];
  if (input.empty()) {
    close(to_child);
    to_child = -1;
  }
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {to_child, POLLOUT, 0}};
    if (poll(fds, to_child >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (to_child >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = WriteNoSigpipe(to_child, input.data() + written,
                                 input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN) written = input.size();  // EPIPE: done
      if (written == input.size()) {
        close(to_child);
        to_child = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = read(out[0], buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      size_t room = max_output - output.size();
      if (static_cast<size_t>(n) > room) *truncated = true;
      output.append(buf, std::min(room, static_cast<size_t>(n)));
    }
  }
  if (to_child >= 0) close(to_child);
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::AbortedError(absl::StrCat(
        "'", command, "' failed (",
        WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status))
                          : absl::StrCat("signal ", WTERMSIG(status)),
        ")"));
  }
  return output;
}

}  // namespace lite::liteop
