// litenl events and agent: the commands that wait.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cmd/litenl/litenl.h"
#include "common/cli/json.h"
#include "common/status/macros.h"
#include "common/units/units.h"

namespace lite::litenl {
namespace {

using cli::Json;

std::string ErrnoName(uint32_t err) {
  const char* name = strerrorname_np(static_cast<int>(err));
  return name ? name : absl::StrFormat("errno %u", err);
}

// Peer names for events, which carry only ids: the peer list when the
// stream starts, read again for a peer not seen yet (a removed peer may be
// gone from it). Best effort: without a client every peer is unnamed.
class PeerNames {
 public:
  explicit PeerNames(genl::Client* client) : client_(client) { Refresh(); }

  std::string Name(uint32_t node_id) {
    if (names_.find(node_id) == names_.end()) Refresh();
    // Asked once: an unknown id stays unnamed.
    return names_[node_id];
  }

 private:
  void Refresh() {
    if (client_ == nullptr) return;
    absl::StatusOr<std::vector<genl::PeerInfo>> peers = client_->ListPeers();
    if (!peers.ok()) return;
    for (const genl::PeerInfo& p : *peers) names_[p.node_id] = p.name;
  }

  genl::Client* client_;
  std::map<uint32_t, std::string> names_;
};

// One event; the peer named first in text, "name" last in JSON (scripts
// match the leading "event", "node_id", "incarnation").
void PrintEvent(std::ostream& out, const genl::Event& e,
                const std::string& name, bool json) {
  const char* type = genl::EventTypeName(e.type);
  const std::string addr = genl::FormatIPv4(e.addr);
  if (json) {
    Json j = {{"event", type},
              {"node_id", e.node_id},
              {"incarnation", e.incarnation},
              {"addr", addr},
              {"state", genl::PeerStateName(e.state)},
              {"qps_connected", e.qps_connected}};
    if (e.qp_index) j["qp_index"] = *e.qp_index;
    if (e.reason) {
      j["reason"] = ErrnoName(*e.reason);
      j["errno"] = *e.reason;
    }
    j["name"] = name;
    out << cli::JsonLine(j) << "\n";
  } else {
    std::string extra;
    if (e.qp_index) extra += absl::StrFormat(" qp %u", *e.qp_index);
    if (e.reason) {
      extra += absl::StrFormat(" reason %s (%s)", ErrnoName(*e.reason),
                               std::strerror(static_cast<int>(*e.reason)));
    }
    out << absl::StrFormat(
        "%s node %s incarnation %u addr %s qps_connected %u%s\n", type,
        cli::NodeLabel(name, e.node_id), e.incarnation, addr, e.qps_connected,
        extra);
  }
  out.flush();
}

absl::Status TouchFile(const std::string& path) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("cannot create %s: %s", path, std::strerror(errno)));
  }
  close(fd);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<absl::Duration>> ReadTimeout(const cli::Args& a) {
  if (!a.Has("timeout")) return std::nullopt;
  absl::StatusOr<uint64_t> secs =
      units::ParseNumber(a.Get("timeout"), UINT32_MAX);
  if (!secs.ok() || *secs == 0) {
    return cli::UsageError(absl::StrFormat(
        "--timeout must be a positive number of seconds, not '%s'",
        a.Get("timeout")));
  }
  return absl::Seconds(*secs);
}

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

// SIGTERM/SIGINT end waits cleanly (poll returns EINTR, the loop stops).
void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

absl::Status Events(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(std::optional<absl::Duration> timeout, ReadTimeout(a));
  uint64_t count = 0, peer = 0;
  if (a.Has("count")) {
    LITE_ASSIGN_OR_RETURN(count,
                          cli::Number("--count", a.Get("count"), UINT32_MAX));
    if (count == 0) return cli::UsageError("--count: at least 1, not 0");
  }
  std::string peer_name;
  if (a.Has("peer")) {
    LITE_ASSIGN_OR_RETURN(cli::NodeRef node,
                          cli::ParseNode("--peer", a.Get("peer")));
    if (node.name.empty()) {
      LITE_ASSIGN_OR_RETURN(peer, cli::Id("--peer", a.Get("peer"), UINT32_MAX));
    }
    peer_name = node.name;
  }
  std::optional<genl::EventType> type;
  if (a.Has("type")) {
    const std::string t = a.Get("type");
    if (t == "connected") {
      type = genl::EventType::kPeerConnected;
    } else if (t == "failed") {
      type = genl::EventType::kPeerFailed;
    } else if (t == "removed") {
      type = genl::EventType::kPeerRemoved;
    } else {
      return cli::UsageError(absl::StrFormat(
          "--type must be connected, failed or removed, not '%s'", t));
    }
  }
  // For names (and --peer NAME): a request socket beside the events one,
  // without --attr-u32 (the events carry no request).
  absl::StatusOr<std::unique_ptr<genl::Client>> client = genl::Client::Open();
  if (!peer_name.empty()) {
    // Resolved once: events name peers by id, and a peer keeps its id.
    if (!client.ok()) return Failed("events", client.status());
    absl::StatusOr<uint32_t> id = PeerId(**client, peer_name);
    if (!id.ok()) return Failed("events --peer", id.status());
    peer = *id;
  }
  PeerNames names(client.ok() ? client->get() : nullptr);
  CatchStopSignals();
  absl::StatusOr<std::unique_ptr<genl::EventStream>> stream =
      genl::EventStream::Open();
  if (!stream.ok()) return Failed("events", stream.status());
  if (a.Has("ready-file")) {
    LITE_RETURN_IF_ERROR(Failed("events", TouchFile(a.Get("ready-file"))));
  }
  const absl::Time deadline =
      timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  uint64_t seen = 0;
  while (!g_stop && (!count || seen < count)) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    absl::StatusOr<std::optional<genl::Event>> event =
        (*stream)->Next(std::min(left, absl::Seconds(1)));
    if (!event.ok()) {
      if (genl::ErrnoOf(event.status()) == EINTR) break;
      return Failed("events", event.status());
    }
    if (!event->has_value()) continue;
    const genl::Event& e = **event;
    if (type && e.type != *type) continue;
    if (peer && e.node_id != peer) continue;
    PrintEvent(a.out(), e, names.Name(e.node_id),
               a.output() == cli::Output::kJson);
    ++seen;
  }
  if (count && seen < count) {
    return absl::DeadlineExceededError(
        absl::StrFormat("events: got %u of %u event(s) before %s", seen, count,
                        g_stop ? "a signal" : "the timeout"));
  }
  return absl::OkStatus();
}

absl::Status Agent(const cli::Args& a) {
  LITE_ASSIGN_OR_RETURN(std::optional<absl::Duration> timeout, ReadTimeout(a));
  CatchStopSignals();
  absl::StatusOr<std::unique_ptr<genl::Client>> client = OpenClient(a);
  if (!client.ok()) return Failed("agent", client.status());
  LITE_RETURN_IF_ERROR(Failed("agent attach", (*client)->AttachAgent()));
  a.out() << absl::StrFormat("attached as the agent (netlink port %u)\n",
                             (*client)->portid());
  a.out().flush();
  if (a.Has("ready-file")) {
    LITE_RETURN_IF_ERROR(Failed("agent", TouchFile(a.Get("ready-file"))));
  }
  const absl::Time deadline =
      timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  while (!g_stop && absl::Now() < deadline) {
    absl::SleepFor(std::min(deadline - absl::Now(), absl::Milliseconds(100)));
  }
  if (a.Has("exit-without-detach")) return absl::OkStatus();
  LITE_RETURN_IF_ERROR(Failed("agent detach", (*client)->DetachAgent()));
  a.out() << "detached\n";
  return absl::OkStatus();
}

const cli::Flag kTimeout{.name = "timeout",
                         .value = "SECS",
                         .help = "stop after SECS seconds (default: never)"};
const cli::Flag kReadyFile{
    .name = "ready-file",
    .value = "PATH",
    .help = "create PATH once ready (subscribed, or attached), for scripts"};

}  // namespace

std::vector<cli::Command> EventCommands() {
  return {
      {.name = "events",
       .usage = "events [--timeout SECS] [--count N] [--type TYPE] "
                "[--peer NODE] [--ready-file PATH] [-o text|json]",
       .summary = "Print lite.ko's events, one per line, as they come",
       .details = absl::StrCat(
           "Needs CAP_NET_ADMIN (the events group). -o text is the default "
           "('table' is the same). Events carry the peer's id; litenl names "
           "the peer from the peer list (text: 'node node2 (3)'; JSON: "
           "\"name\" last, \"\" when unknown). ",
           kJsonNote),
       .flags = {kTimeout,
                 {.name = "count",
                  .value = "N",
                  .help = "stop after N matching events; fail if the timeout "
                          "comes first"},
                 {.name = "type",
                  .value = "TYPE",
                  .help = "only connected, failed or removed events"},
                 {.name = "peer",
                  .value = "NODE",
                  .help = "only events about that peer: its name (looked up "
                          "once in the peer list), or all digits its id"},
                 kReadyFile},
       .run = Events},
      {.name = "agent",
       .usage = "agent [--timeout SECS] [--ready-file PATH] "
                "[--exit-without-detach]",
       .summary = "Attach as the node's agent and hold until SIGTERM, SIGINT "
                  "or the timeout, then detach",
       .details = "While this process's netlink socket is attached as the "
                  "node's agent, only it may change the node. With "
                  "--exit-without-detach it just exits and lite.ko detaches "
                  "it when the socket closes.",
       .flags = {kTimeout,
                 kReadyFile,
                 {.name = "exit-without-detach",
                  .help = "exit without DETACH (lite.ko detaches on close)"}},
       .run = Agent},
  };
}

}  // namespace lite::litenl
