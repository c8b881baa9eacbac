// litenl services: the RPC services this node's lite.ko serves
// (LITE_CMD_RPC_SERVICE_GET). The dump has no memory key and no address,
// so there is none to hide.
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cmd/litenl/litenl.h"
#include "common/cli/json.h"

namespace lite::litenl {
namespace {

using cli::Json;

absl::Status Services(const cli::Args& a) {
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("services", client.status());
  absl::StatusOr<std::vector<genl::ServiceInfo>> services =
      (*client)->ListServices();
  if (!services.ok()) {
    if (genl::ErrnoOf(services.status()) == EPERM) {
      return absl::Status(
          services.status().code(),
          absl::StrCat("services: the service listing needs CAP_NET_ADMIN "
                       "(run as root): ",
                       services.status().message()));
    }
    return Failed("services", services.status());
  }
  std::ostream& out = a.out();
  if (a.output() == cli::Output::kJson) {
    Json list = Json::array();
    for (const genl::ServiceInfo& s : *services) {
      list.push_back({{"service_id", s.service_id},
                      {"name", s.name},
                      {"port", s.port},
                      {"uid", s.uid},
                      {"gid", s.gid},
                      {"pid", s.pid},
                      {"mode", s.mode},
                      {"max_request", s.max_request},
                      {"max_reply", s.max_reply},
                      {"depth", s.depth},
                      {"max_clients", s.max_clients},
                      {"clients", s.clients},
                      {"queued", s.queued},
                      {"served", s.served},
                      {"closing", s.closing}});
    }
    out << cli::JsonLine({{"services", std::move(list)}}) << "\n";
    return absl::OkStatus();
  }
  out << absl::StrFormat(
      "%-20s %-24s %-5s %-6s %-6s %-8s %-4s %-8s %-8s %-5s %-9s %-8s %-12s "
      "%s\n",
      "SERVICE", "NAME", "PORT", "UID", "GID", "PID", "MODE", "REQUEST",
      "REPLY", "DEPTH", "CLIENTS", "QUEUED", "SERVED", "STATE");
  for (const genl::ServiceInfo& s : *services) {
    out << absl::StrFormat(
        "%-20u %-24s %-5u %-6u %-6u %-8u %04o %-8u %-8u %-5u %-9s %-8u %-12u "
        "%s\n",
        s.service_id, s.name, s.port, s.uid, s.gid, s.pid, s.mode,
        s.max_request, s.max_reply, s.depth,
        absl::StrCat(s.clients, "/", s.max_clients), s.queued, s.served,
        s.closing ? "closing" : "serving");
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<cli::Command> ServiceCommands() {
  return {
      {.name = "services",
       .usage = "services [-o table|json]",
       .summary = "The RPC services this node serves",
       .details =
           "lite.ko's services in port order: id, name, port, owner (uid, "
           "gid, pid), mode, largest request and reply in bytes, depth "
           "(requests one client node may have queued), client nodes "
           "holding a ring of at most max_clients, requests queued (arrived, "
           "not taken yet) and served (answered or released, total), and "
           "whether it is being unregistered (closing). The listing needs "
           "CAP_NET_ADMIN (EPERM otherwise). With -o json each result is "
           "one JSON line; 64-bit values are JSON numbers.",
       .run = Services},
  };
}

}  // namespace lite::litenl
