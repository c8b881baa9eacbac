// litectl subcommands that talk to a node agent (lite.v1.NodeAgent) or to a
// server's gRPC health service.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cmd/litectl/commands.h"
#include "cmd/litectl/format.h"
#include "common/cli/table.h"
#include "common/units/units.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "lite/v1/agent.grpc.pb.h"

namespace lite::litectl {
namespace {

std::string AgentAddress(const Context& ctx, const cli::Args& args) {
  if (args.Has("agent")) return args.Get("agent");
  return ctx.agent_env.empty() ? std::string(kDefaultAgent) : ctx.agent_env;
}

absl::Status AgentStatus(const Context& ctx, lite::v1::NodeAgent::Stub* stub,
                         const std::string& target) {
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  lite::v1::GetStatusResponse resp;
  grpc::Status s = stub->GetStatus(&cctx, {}, &resp);
  if (!s.ok()) return CallError(s, target);
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, resp, true);
  }
  const int64_t now = absl::ToUnixMillis(absl::Now());
  const std::string state = EnumSuffix(
      lite::v1::ManagerConnectionState_Name(resp.manager_connection_state()),
      "MANAGER_CONNECTION_STATE_");
  cli::Table t({"FIELD", "VALUE"});
  AddInertRow(t, {"node name", resp.node_name()});
  AddInertRow(t,
              {"node id", resp.node_id() == 0 ? "- (not joined yet)"
                                              : absl::StrCat(resp.node_id())});
  AddInertRow(t, {"incarnation", absl::StrCat(resp.incarnation())});
  AddInertRow(t, {"rdma address", resp.rdma_address()});
  AddInertRow(t, {"manager", resp.manager_address()});
  AddInertRow(t, {"connection", state});
  AddInertRow(t, {"session uptime", resp.session_uptime_ms() > 0
                                        ? HumanMs(resp.session_uptime_ms())
                                        : "-"});
  AddInertRow(t,
              {"applied event", absl::StrCat(resp.applied_event_sequence())});
  AddInertRow(t, {"reconnects", absl::StrCat(resp.reconnects())});
  AddInertRow(
      t, {"last error",
          resp.last_error().empty() ? "-" : cli::OneLine(resp.last_error())});
  AddInertRow(
      t, {"started",
          absl::StrCat(UtcTime(resp.started_at_unix_ms()), " (",
                       HumanAge(resp.started_at_unix_ms(), now), " ago)")});
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status AgentPeers(const Context& ctx, lite::v1::NodeAgent::Stub* stub,
                        const std::string& target) {
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  lite::v1::ListPeersResponse resp;
  grpc::Status s = stub->ListPeers(&cctx, {}, &resp);
  if (!s.ok()) return CallError(s, target);
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, resp, true);
  }
  cli::Table t({"ID", "NAME", "INCARNATION", "RDMA ADDRESS", "DRAINING"});
  for (const auto& p : resp.peers()) {
    AddInertRow(t, {absl::StrCat(p.node_id()), p.node_name(),
                    absl::StrCat(p.incarnation()), p.rdma_address(),
                    p.draining() ? "yes" : "no"});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

absl::Status AgentCounters(const Context& ctx, lite::v1::NodeAgent::Stub* stub,
                           const std::string& target) {
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  lite::v1::GetCountersResponse resp;
  grpc::Status s = stub->GetCounters(&cctx, {}, &resp);
  if (!s.ok()) return CallError(s, target);
  if (ctx.output == Output::kJson) {
    return PrintJson(ctx, resp, true);
  }
  cli::Table t({"COUNTER", "VALUE", "MEANING"});
  for (const auto& c : resp.counters()) {
    AddInertRow(t, {c.name(), absl::StrCat(c.value()), c.help()});
  }
  *ctx.out << t.Render();
  return absl::OkStatus();
}

// --agent, when given, names a server.
absl::Status CheckAgentFlag(const cli::Args& args) {
  if (args.Has("agent") && args.Get("agent").empty()) {
    return cli::UsageError("--agent is empty (HOST:PORT)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunAgent(const Context& ctx, const cli::Args& args) {
  if (absl::Status s = CheckAgentFlag(args); !s.ok()) return s;
  const std::string target = AgentAddress(ctx, args);
  auto stub = lite::v1::NodeAgent::NewStub(ctx.Dial(target));
  const std::string& what = args.positional()[0];
  if (what == "status") return AgentStatus(ctx, stub.get(), target);
  if (what == "peers") return AgentPeers(ctx, stub.get(), target);
  if (what == "counters") return AgentCounters(ctx, stub.get(), target);
  return cli::UsageError(
      absl::StrFormat("'%s' is not status, peers or counters", what));
}

absl::Status RunHealth(const Context& ctx, const cli::Args& args) {
  if (absl::Status s = CheckAgentFlag(args); !s.ok()) return s;
  const std::string target =
      args.Has("agent") ? args.Get("agent") : ctx.manager;
  auto stub = grpc::health::v1::Health::NewStub(ctx.Dial(target));
  grpc::ClientContext cctx;
  ctx.Arm(&cctx);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(args.Get("service"));
  grpc::health::v1::HealthCheckResponse resp;
  grpc::Status s = stub->Check(&cctx, req, &resp);
  if (!s.ok()) return CallError(s, target);
  if (ctx.output == Output::kJson) {
    if (absl::Status p = PrintJson(ctx, resp, true); !p.ok()) return p;
  }
  const std::string status =
      grpc::health::v1::HealthCheckResponse::ServingStatus_Name(resp.status());
  if (resp.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(absl::StrFormat(
        "%s: service '%s' is %s", target, req.service(), status));
  }
  if (ctx.output == Output::kTable) *ctx.out << status << "\n";
  return absl::OkStatus();
}

}  // namespace lite::litectl
