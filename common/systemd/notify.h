// Readiness and stopping, told to systemd (sd_notify, libsystemd) by the
// daemons whose units are Type=notify (packaging/systemd/). Outside systemd
// (no NOTIFY_SOCKET in the environment) each call does nothing.
#ifndef LITE_COMMON_SYSTEMD_NOTIFY_H_
#define LITE_COMMON_SYSTEMD_NOTIFY_H_

#include <string_view>

namespace lite::systemd {

// READY=1, with STATUS= the one-line `status` systemctl status shows.
void NotifyReady(std::string_view status);

// STOPPING=1: the daemon is shutting down.
void NotifyStopping();

}  // namespace lite::systemd

#endif  // LITE_COMMON_SYSTEMD_NOTIFY_H_
