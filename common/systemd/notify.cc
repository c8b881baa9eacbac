#include "common/systemd/notify.h"

#include <systemd/sd-daemon.h>

#include <string>

#include "common/log/log.h"

namespace lite::systemd {
namespace {

void Notify(const std::string& state) {
  // < 0: the socket named by NOTIFY_SOCKET is unusable; 0: not under
  // systemd. Neither stops the daemon: systemd reports a unit that never
  // became ready itself.
  if (int rc = sd_notify(0, state.c_str()); rc < 0) {
    LITE_LOG_WARNING("sd_notify: cannot tell systemd '%s' (error %d)",
                     state.substr(0, state.find('\n')), -rc);
  }
}

}  // namespace

void NotifyReady(std::string_view status) {
  std::string line(status);
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  Notify("READY=1\nSTATUS=" + line);
}

void NotifyStopping() { Notify("STOPPING=1"); }

}  // namespace lite::systemd
