// litectl subcommands that talk to the cluster manager
// (lite.v1.ClusterOperator).
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cmd/litectl/commands.h"
#include "cmd/litectl/format.h"
#include "cmd/litectl/redact.h"
#include "common/cli/table.h"
#include "common/status/macros.h"
#include "common/units/units.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

namespace lite::litectl {
namespace {

using lite::v1::ClusterOperator;

// A listing that never ends (a manager bug) must not hang litectl.
constexpr int kMaxPages = 100000;

std::unique_ptr<ClusterOperator::Stub> ManagerStub(const Context& ctx) {
  return ClusterOperator::NewStub(ctx.Dial(ctx.manager));
}

// Reads every page of a listing into `all`. `call` makes one call for the
// request; `items` moves one response's items into `all`.
template <typename Req, typename Resp>
absl::Status ReadAllPages(
    const Context& ctx, Req req,
    const std::function<grpc::Status(grpc::ClientContext*, const Req&, Resp*)>&
        call,
    const std::function<void(Resp&)>& absorb) {
  for (int page = 0; page < kMaxPages; ++page) {
    grpc::ClientContext cctx;
    ctx.Arm(&cctx);
    Resp resp;
    grpc::Status s = call(&cctx, req, &resp);
    if (!s.ok()) return CallError(s, ctx.manager);
    const std::string next = resp.next_page_token();
    absorb(resp);
    if (next.empty()) return absl::OkStatus();
    if (next == req.page_token()) {
      return absl::InternalError(
          absl::StrFormat("the manager returned page token '%s' twice", next));
    }
    req.set_page_token(next);
  }
  return absl::InternalError("the listing did not end after 100000 pages");
}

absl::StatusOr<lite::v1::ListNodesResponse> AllNodes(
    const Context& ctx, ClusterOperator::Stub* stub) {
  lite::v1::ListNodesResponse all;
  absl::Status s =
      ReadAllPages<lite::v1::ListNodesRequest, lite::v1::ListNodesResponse>(
          ctx, {},
          [stub](grpc::ClientContext* c, const lite::v1::ListNodesRequest& r,
                 lite::v1::ListNodesResponse* resp) {
            return stub->ListNodes(c, r, resp);
          },
          [&all, first = true](lite::v1::ListNodesResponse& resp) mutable {
            for (auto& n : *resp.mutable_nodes())
              *all.add_nodes() = std::move(n);
            // The first page's: a watch from it misses no change made
            // while the later pages were read (it may show some twice).
            if (first) all.set_event_sequence(resp.event_sequence());
            first = false;
          });
  if (!s.ok()) return s;
  return all;
}

// node id -> name, for tables that show nodes by name.
std::map<uint32_t, std::string> NodeNames(
    const lite::v1::ListNodesResponse& nodes) {
  std::map<uint32_t, std::string> names;
  for (const auto& n : nodes.nodes()) names[n.node_id()] = n.node_name();
  return names;
}

std::string NodeLabel(const std::map<uint32_t, std::string>& names,
                      uint32_t id) {
  auto it = names.find(id);
  return it == names.end() ? absl::StrCat(id)
                           : absl::StrCat(it->second, "(", id, ")");
}

std::string StateName(lite::v1::NodeState state) {
  return EnumSuffix(lite::v1::NodeState_Name(state), "NODE_STATE_");
}

std::string AccessName(const lite::v1::Access& a) {
  return absl::StrCat(a.read() ? "r" : "", a.write() ? "w" : "");
}

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

// Exactly one of a positional NODE (a name, or all digits an id) or --id.
absl::Status NodeSelector(const cli::Args& args, uint32_t* id,
                          std::string* name, absl::string_view command) {
  const bool positional = !args.positional().empty();
  if (positional == args.Has("id")) {
    return cli::UsageError(
        absl::StrFormat("give a node (name or id) or --id NODE_ID, not %s",
                        positional ? "both" : "neither"));
  }
  const std::string text = positional ? args.positional()[0] : args.Get("id");
  const std::string what = positional ? "NODE" : "--id";
  if (positional) {
    LITE_ASSIGN_OR_RETURN(cli::NodeRef node, cli::ParseNode(what, text));
    if (!node.name.empty()) {
      *name = node.name;
      return absl::OkStatus();
    }
  }
  LITE_ASSIGN_OR_RETURN(uint64_t parsed, cli::Id(what, text, UINT32_MAX));
  *id = static_cast<uint32_t>(parsed);
  return absl::OkStatus();
}

// A node given to a filter flag (--home, --holder): all digits is an id,
// anything else a name the manager knows (looked up in ListNodes).
absl::StatusOr<uint32_t> ResolveNode(const Context& ctx,
                                     ClusterOperator::Stub* stub,
                                     absl::string_view flag,
                                     const std::string& text) {
  LITE_ASSIGN_OR_RETURN(cli::NodeRef node, cli::ParseNode(flag, text));
  if (node.name.empty()) {
    LITE_ASSIGN_OR_RETURN(uint64_t id, cli::Id(flag, text, UINT32_MAX));
    return static_cast<uint32_t>(id);
  }
  LITE_ASSIGN_OR_RETURN(lite::v1::ListNodesResponse nodes, AllNodes(ctx, stub));
  for (const auto& n : nodes.nodes()) {
    if (n.node_name() == node.name) return n.node_id();
  }
  return cli::UsageError(absl::StrFormat(
      "%s: no node is named '%s' (litectl nodes lists them; all digits is "
      "an id)",
      flag, node.name));
}

std::string MemberLabel(const lite::v1::Member& m) {
  return absl::StrFormat("node %s (id %u)", Inert(m.node_name()), m.node_id());
}

}  // namespace

absl::Status RunNodes(const Context& ctx, const cli::Args&) {
  auto stub = ManagerStub(ctx);
  absl::StatusOr<lite::v1::ListNodesResponse> all = AllNodes(ctx, stub.get());
  if (!all.ok()) return all.status();
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, *all, true);
  }
  cli::Table t({"ID", "NAME", "STATE", "INCARNATION", "RDMA ADDRESS",
                "DRAINING", "SESSION", "LEASE LEFT", "AGE"});
  const int64_t now = NowMs();
  for (const auto& n : all->nodes()) {
    const bool alive = n.state() == lite::v1::NODE_STATE_ALIVE;
    // SUSPECT is ALIVE to every API (its grants hold); operators see it.
    const std::string state =
        alive && n.suspect_since_unix_ms() != 0
            ? absl::StrCat("SUSPECT (",
                           HumanMs(now - n.suspect_since_unix_ms()), ")")
            : StateName(n.state());
    AddInertRow(t,
                {absl::StrCat(n.node_id()), n.node_name(), state,
                 absl::StrCat(n.incarnation()), n.rdma_address(),
                 n.draining() ? "yes" : "no", n.session_open() ? "open" : "-",
                 alive ? HumanMs(n.lease_remaining_ms()) : "-",
                 HumanAge(n.joined_at_unix_ms(), now)});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status RunLmrs(const Context& ctx, const cli::Args& args) {
  lite::v1::ListLmrsRequest req;
  auto stub = ManagerStub(ctx);
  if (args.Has("home")) {
    LITE_ASSIGN_OR_RETURN(uint32_t home, ResolveNode(ctx, stub.get(), "--home",
                                                     args.Get("home")));
    req.set_home_node_id(home);
  }
  lite::v1::ListLmrsResponse all;
  absl::Status s =
      ReadAllPages<lite::v1::ListLmrsRequest, lite::v1::ListLmrsResponse>(
          ctx, req,
          [&stub](grpc::ClientContext* c, const lite::v1::ListLmrsRequest& r,
                  lite::v1::ListLmrsResponse* resp) {
            return stub->ListLmrs(c, r, resp);
          },
          [&all, first = true](lite::v1::ListLmrsResponse& resp) mutable {
            for (auto& l : *resp.mutable_lmrs()) {
              Redact(&l);
              *all.add_lmrs() = std::move(l);
            }
            // The first page's revision (see AllNodes).
            if (first) all.set_revision(resp.revision());
            first = false;
          });
  if (!s.ok()) return s;
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, all, true);
  }
  absl::StatusOr<lite::v1::ListNodesResponse> nodes = AllNodes(ctx, stub.get());
  if (!nodes.ok()) return nodes.status();
  const auto names = NodeNames(*nodes);
  // No chunk column: chunks are addresses, which litectl never shows.
  cli::Table t({"ID", "NAME", "HOME", "SIZE", "OWNER", "MODE", "ORIGIN",
                "EPOCH", "AGE", "STATE"});
  const int64_t now = NowMs();
  for (const auto& l : all.lmrs()) {
    AddInertRow(
        t,
        {HexId(l.lmr_id()), l.name(), NodeLabel(names, l.home_node_id()),
         units::HumanBytes(l.size_bytes()),
         absl::StrCat(l.owner_uid(), ":", l.owner_gid()), OctalMode(l.mode()),
         absl::AsciiStrToLower(
             EnumSuffix(lite::v1::LmrOrigin_Name(l.origin()), "LMR_ORIGIN_")),
         absl::StrCat(l.epoch()), HumanAge(l.created_at_unix_ms(), now),
         // Freed: waiting for the holders' acks, then its home.
         l.state() == lite::v1::LMR_STATE_RELEASING
             ? absl::StrCat("releasing (", l.revokes_pending(), " acks)")
             : "live"});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status RunServices(const Context& ctx, const cli::Args& args) {
  lite::v1::ListServicesRequest req;
  auto stub = ManagerStub(ctx);
  if (args.Has("node")) {
    LITE_ASSIGN_OR_RETURN(uint32_t node, ResolveNode(ctx, stub.get(), "--node",
                                                     args.Get("node")));
    req.set_node_id(node);
  }
  lite::v1::ListServicesResponse all;
  absl::Status s = ReadAllPages<lite::v1::ListServicesRequest,
                                lite::v1::ListServicesResponse>(
      ctx, req,
      [&stub](grpc::ClientContext* c, const lite::v1::ListServicesRequest& r,
              lite::v1::ListServicesResponse* resp) {
        return stub->ListServices(c, r, resp);
      },
      [&all, first = true](lite::v1::ListServicesResponse& resp) mutable {
        for (auto& svc : *resp.mutable_services()) {
          *all.add_services() = std::move(svc);
        }
        if (first) all.set_revision(resp.revision());
        first = false;
      });
  if (!s.ok()) return s;
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, all, true);
  }
  absl::StatusOr<lite::v1::ListNodesResponse> nodes = AllNodes(ctx, stub.get());
  if (!nodes.ok()) return nodes.status();
  const auto names = NodeNames(*nodes);
  cli::Table t({"ID", "NAME", "NODE", "PORT", "OWNER", "MODE", "MAX REQ",
                "MAX REPLY", "DEPTH", "CLIENTS", "QUEUED", "SERVED", "AGE"});
  const int64_t now = NowMs();
  for (const auto& svc : all.services()) {
    AddInertRow(
        t, {HexId(svc.service_id()), svc.name(),
            NodeLabel(names, svc.node_id()), absl::StrCat(svc.port()),
            absl::StrCat(svc.owner_uid(), ":", svc.owner_gid()),
            absl::StrFormat("0%03o", svc.mode()),
            units::HumanBytes(svc.max_request_bytes()),
            units::HumanBytes(svc.max_reply_bytes()), absl::StrCat(svc.depth()),
            absl::StrCat(svc.clients(), "/", svc.max_clients()),
            absl::StrCat(svc.queued()), absl::StrCat(svc.served()),
            HumanAge(svc.registered_at_unix_ms(), now)});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status RunGrants(const Context& ctx, const cli::Args& args) {
  lite::v1::ListGrantsRequest req;
  if (args.Has("lmr")) {
    absl::StatusOr<uint64_t> id = cli::Id("--lmr", args.Get("lmr"), UINT64_MAX);
    if (!id.ok()) return id.status();
    req.set_lmr_id(*id);
  }
  auto stub = ManagerStub(ctx);
  if (args.Has("holder")) {
    LITE_ASSIGN_OR_RETURN(
        uint32_t holder,
        ResolveNode(ctx, stub.get(), "--holder", args.Get("holder")));
    req.set_holder_node_id(holder);
  }
  lite::v1::ListGrantsResponse all;
  absl::Status s =
      ReadAllPages<lite::v1::ListGrantsRequest, lite::v1::ListGrantsResponse>(
          ctx, req,
          [&stub](grpc::ClientContext* c, const lite::v1::ListGrantsRequest& r,
                  lite::v1::ListGrantsResponse* resp) {
            return stub->ListGrants(c, r, resp);
          },
          [&all, first = true](lite::v1::ListGrantsResponse& resp) mutable {
            for (auto& g : *resp.mutable_grants()) {
              Redact(&g);
              *all.add_grants() = std::move(g);
            }
            // The first page's revision (see AllNodes).
            if (first) all.set_revision(resp.revision());
            first = false;
          });
  if (!s.ok()) return s;
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, all, true);
  }
  absl::StatusOr<lite::v1::ListNodesResponse> nodes = AllNodes(ctx, stub.get());
  if (!nodes.ok()) return nodes.status();
  const auto names = NodeNames(*nodes);
  cli::Table t({"ID", "LMR", "HOME", "HOLDER", "ACCESS", "UID", "GID", "PID",
                "EPOCH", "AGE"});
  const int64_t now = NowMs();
  for (const auto& g : all.grants()) {
    AddInertRow(
        t,
        {HexId(g.grant_id()), g.lmr_name(), NodeLabel(names, g.home_node_id()),
         NodeLabel(names, g.holder_node_id()), AccessName(g.access()),
         absl::StrCat(g.requester().uid()), absl::StrCat(g.requester().gid()),
         absl::StrCat(g.requester().pid()), absl::StrCat(g.epoch()),
         HumanAge(g.granted_at_unix_ms(), now)});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status RunDrain(const Context& ctx, const cli::Args& args) {
  lite::v1::DrainNodeRequest req;
  uint32_t id = 0;
  std::string name;
  if (absl::Status s = NodeSelector(args, &id, &name, "drain"); !s.ok()) {
    return s;
  }
  req.set_node_id(id);
  req.set_node_name(name);
  req.set_cancel(args.Has("undo"));
  auto stub = ManagerStub(ctx);
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  lite::v1::DrainNodeResponse resp;
  grpc::Status s = stub->DrainNode(&cctx, req, &resp);
  if (!s.ok()) return CallError(s, ctx.manager);
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, resp, true);
  }
  *ctx.out << MemberLabel(resp.member())
           << (resp.member().draining() ? " is draining: no new LMRs are "
                                          "placed on it\n"
                                        : " is in service\n");
  return absl::OkStatus();
}

absl::Status RunEvict(const Context& ctx, const cli::Args& args) {
  lite::v1::EvictNodeRequest req;
  uint32_t id = 0;
  std::string name;
  if (absl::Status s = NodeSelector(args, &id, &name, "evict"); !s.ok()) {
    return s;
  }
  req.set_node_id(id);
  req.set_node_name(name);
  req.set_reason(args.Get("reason"));
  auto stub = ManagerStub(ctx);
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  lite::v1::EvictNodeResponse resp;
  grpc::Status s = stub->EvictNode(&cctx, req, &resp);
  if (!s.ok()) return CallError(s, ctx.manager);
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, resp, true);
  }
  *ctx.out << MemberLabel(resp.member()) << " incarnation "
           << resp.member().incarnation() << " evicted; now "
           << StateName(resp.member().state()) << "\n";
  return absl::OkStatus();
}

// node id -> name, as a watch learns them (ListNodes first, then every
// member event), so that events that carry only an id name the node too.
using NameBook = std::map<uint32_t, std::string>;

std::string Label(const NameBook& names, uint32_t id) {
  auto it = names.find(id);
  return cli::NodeLabel(it == names.end() ? "" : it->second, id);
}

// One event as one line for people: nodes as "node3 (3)". The line starts
// with the event's sequence, its revision: `watch --since` it to resume.
// Names, reasons and addresses are the manager's text: the whole line is
// made Inert, so no field of a new event kind can be forgotten.
std::string DescribeEvent(const lite::v1::Event& e, NameBook& names) {
  std::string kind, details;
  switch (e.kind_case()) {
    case lite::v1::Event::kMemberJoined: {
      const auto& m = e.member_joined().member();
      names[m.node_id()] = m.node_name();
      kind = "MemberJoined";
      details = absl::StrFormat(
          "node %s incarnation %u at %s%s", Label(names, m.node_id()),
          m.incarnation(), m.rdma_address(), m.draining() ? " (draining)" : "");
      break;
    }
    case lite::v1::Event::kMemberLeft: {
      const auto& m = e.member_left();
      names[m.node_id()] = m.node_name();
      kind = "MemberLeft";
      details = absl::StrFormat("node %s incarnation %u",
                                Label(names, m.node_id()), m.incarnation());
      break;
    }
    case lite::v1::Event::kMemberFailed: {
      const auto& m = e.member_failed();
      names[m.node_id()] = m.node_name();
      kind = "MemberFailed";
      details = absl::StrFormat(
          "node %s incarnation %u %s: %s", Label(names, m.node_id()),
          m.incarnation(),
          EnumSuffix(lite::v1::FailureCause_Name(m.cause()), "FAILURE_CAUSE_"),
          m.reason());
      break;
    }
    case lite::v1::Event::kMemberSuspected: {
      const auto& m = e.member_suspected();
      names[m.node_id()] = m.node_name();
      kind = "MemberSuspected";
      details = absl::StrFormat("node %s incarnation %u: %s",
                                Label(names, m.node_id()), m.incarnation(),
                                m.reason());
      break;
    }
    case lite::v1::Event::kMemberRecovered: {
      const auto& m = e.member_recovered();
      names[m.node_id()] = m.node_name();
      kind = "MemberRecovered";
      details = absl::StrFormat("node %s incarnation %u, after %s SUSPECT",
                                Label(names, m.node_id()), m.incarnation(),
                                HumanMs(m.suspected_ms()));
      break;
    }
    case lite::v1::Event::kMemberDrainChanged: {
      const auto& m = e.member_drain_changed();
      names[m.node_id()] = m.node_name();
      kind = "MemberDrainChanged";
      details = absl::StrFormat("node %s %s", Label(names, m.node_id()),
                                m.draining() ? "draining" : "in service");
      break;
    }
    case lite::v1::Event::kLmrAdded: {
      const auto& l = e.lmr_added().lmr();
      kind = "LmrAdded";
      details = absl::StrFormat(
          "lmr %s '%s' on node %s, %s, owner %u:%u mode %s", HexId(l.lmr_id()),
          l.name(), Label(names, l.home_node_id()),
          units::HumanBytes(l.size_bytes()), l.owner_uid(), l.owner_gid(),
          OctalMode(l.mode()));
      break;
    }
    case lite::v1::Event::kLmrRemoved: {
      const auto& l = e.lmr_removed();
      kind = "LmrRemoved";
      details = absl::StrFormat(
          "lmr %s '%s' on node %s: %s%s", HexId(l.lmr_id()), l.name(),
          Label(names, l.home_node_id()),
          EnumSuffix(lite::v1::RemovalCause_Name(l.cause()), "REMOVAL_CAUSE_"),
          l.release_follows() ? ", release follows" : "");
      break;
    }
    case lite::v1::Event::kGrantRevoked: {
      const auto& g = e.grant_revoked();
      kind = "GrantRevoked";
      details = absl::StrFormat(
          "grant %s on lmr %s held by node %s incarnation %u: %s%s",
          HexId(g.grant_id()), HexId(g.lmr_id()),
          Label(names, g.holder_node_id()), g.holder_incarnation(),
          EnumSuffix(lite::v1::RemovalCause_Name(g.cause()), "REMOVAL_CAUSE_"),
          g.ack_requested() ? ", ack requested" : "");
      break;
    }
    case lite::v1::Event::kRecoveryComplete: {
      kind = "RecoveryComplete";
      std::vector<std::string> members;
      for (const auto& m : e.recovery_complete().members()) {
        names[m.node_id()] = m.node_name();
        members.push_back(m.node_name());
      }
      details = absl::StrFormat("%d members back: %s", members.size(),
                                absl::StrJoin(members, ", "));
      break;
    }
    default:
      kind = "Unknown";
      details = "an event kind this litectl does not know (use -o json)";
      break;
  }
  return Inert(absl::StrFormat("%-6u %s  %-18s %s", e.sequence(),
                               UtcTime(e.time_unix_ms()), kind, details));
}

// --since: a revision, as a watch line's first column, an event's
// "sequence" or a listing's revision (event_sequence for nodes) show it.
// Decimal only: what litectl prints.
absl::StatusOr<uint64_t> SinceRevision(const std::string& text) {
  uint64_t revision = 0;
  if (text.empty() || text.size() > 20 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(text, &revision)) {
    return cli::UsageError(absl::StrFormat(
        "--since: '%s' is not a revision (a decimal event sequence: the "
        "first column of 'litectl watch', or a listing's revision in -o "
        "json; 0 is from now on)",
        text));
  }
  return revision;
}

// A watch's end as litectl reports it: OUT_OF_RANGE explained, and where
// to resume from once events were seen.
absl::Status WatchError(const grpc::Status& s, const Context& ctx,
                        uint64_t since, uint64_t last_seen) {
  absl::Status e = CallError(s, ctx.manager);
  if (absl::IsOutOfRange(e)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s (the manager's event history no longer has revision %u: list "
        "again, e.g. 'litectl nodes -o json', then watch --since the "
        "listing's revision)",
        e.message(), since));
  }
  if (last_seen == 0) return e;
  return absl::Status(e.code(),
                      absl::StrFormat("%s (last revision seen %u: resume with "
                                      "'litectl watch --since %u')",
                                      e.message(), last_seen, last_seen));
}

absl::Status RunWatch(const Context& ctx, const cli::Args& args) {
  lite::v1::WatchRequest req;
  if (args.Has("since")) {
    LITE_ASSIGN_OR_RETURN(uint64_t since, SinceRevision(args.Get("since")));
    req.set_since_revision(since);
  }
  int64_t count = -1;
  if (args.Has("count")) {
    absl::StatusOr<uint64_t> n = cli::Number(
        "--count", args.Get("count"), std::numeric_limits<int64_t>::max());
    if (!n.ok()) return n.status();
    if (*n == 0) return cli::UsageError("--count: at least 1, not 0");
    count = static_cast<int64_t>(*n);
  }
  auto stub = ManagerStub(ctx);
  NameBook names;
  if (ctx.output == Output::kTable) {
    // Names for the nodes events mention by id only; a watch works
    // without them.
    absl::StatusOr<lite::v1::ListNodesResponse> nodes =
        AllNodes(ctx, stub.get());
    if (nodes.ok()) names = NodeNames(*nodes);
  }
  grpc::ClientContext cctx;
  // No deadline: a watch runs until Ctrl-C or --count.
  bool interrupted = false;
  absl::Mutex mu;
  if (ctx.interrupt != nullptr) {
    ctx.interrupt->SetHook([&] {
      absl::MutexLock lock(&mu);
      interrupted = true;
      cctx.TryCancel();
    });
  }
  auto reader = stub->Watch(&cctx, req);
  lite::v1::Event event;
  int64_t seen = 0;
  uint64_t last_seen = 0;
  bool counted_out = false;
  absl::Status printed;
  while (printed.ok() && reader->Read(&event)) {
    Redact(&event);
    last_seen = event.sequence();
    if (ctx.output == Output::kJson) {
      printed = PrintJson(ctx, event, false);
    } else {
      *ctx.out << DescribeEvent(event, names) << "\n";
    }
    ctx.out->flush();
    if (count > 0 && ++seen >= count) {
      counted_out = true;
      cctx.TryCancel();
      break;
    }
  }
  if (!printed.ok()) cctx.TryCancel();
  grpc::Status s = reader->Finish();
  if (ctx.interrupt != nullptr) ctx.interrupt->ClearHook();
  if (!printed.ok()) return printed;
  {
    absl::MutexLock lock(&mu);
    if (interrupted || counted_out) return absl::OkStatus();
  }
  if (s.ok()) return absl::OkStatus();
  return WatchError(s, ctx, req.since_revision(), last_seen);
}

}  // namespace lite::litectl
