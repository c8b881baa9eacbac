#include "common/metrics/scrape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace lite::metrics {

absl::StatusOr<std::string> Scrape(int port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect to 127.0.0.1:", port, ": ", std::strerror(err)));
  }
  const std::string request = absl::StrCat(
      "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1:", port, "\r\n\r\n");
  if (write(fd, request.data(), request.size()) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("short write of the request");
  }
  // HTTP/1.0: the server closes the connection after the body.
  std::string response;
  char buf[8192];
  while (true) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    pollfd p = {fd, POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) {
      close(fd);
      return absl::DeadlineExceededError(
          absl::StrCat("no complete answer from 127.0.0.1:", port, " within ",
                       absl::FormatDuration(timeout)));
    }
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const size_t end = response.find("\r\n\r\n");
  if (end == std::string::npos) {
    return absl::InternalError(absl::StrCat("not an HTTP answer: ", response));
  }
  const std::string status_line = response.substr(0, response.find("\r\n"));
  if (!absl::StrContains(status_line, " 200 ")) {
    return absl::InternalError(absl::StrCat("HTTP answer: ", status_line));
  }
  return response.substr(end + 4);
}

std::optional<double> Sample(absl::string_view text, absl::string_view series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, series)) continue;
    if (!absl::ConsumePrefix(&line, " ")) continue;
    double value = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(line), &value)) {
      return value;
    }
  }
  return std::nullopt;
}

}  // namespace lite::metrics
