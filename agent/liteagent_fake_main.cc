// liteagent_fake: liteagent for host tests and laptops. Besides lite.ko over
// netlink it offers --module=fake, an in-process test double of lite.ko with
// no RDMA and no real memory (fake_module.h), and the TEST ONLY flags that
// play the fake's applications. Never deployed on a node: the production
// binary is liteagent. See docs/agent.md.
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/agent_main.h"
#include "agent/fake_module.h"
#include "agent/fake_spec.h"
#include "agent/validation.h"
#include "common/log/log.h"
#include "common/status/macros.h"

ABSL_FLAG(std::string, fake_lmrs, "",
          "TEST ONLY (--module=fake): LMRs the fake's applications register "
          "at startup, NAME=SIZE[@MODE],... e.g. buf=64M,log=1G@0644");
ABSL_FLAG(std::string, fake_maps, "",
          "TEST ONLY (--module=fake): LMRs the fake's applications map at "
          "startup, NAME=r|w|rw,...");
ABSL_FLAG(std::string, fake_services, "",
          "TEST ONLY (--module=fake): RPC services the fake's applications "
          "register at startup, NAME=MODE,... e.g. echo=0711");
ABSL_FLAG(std::string, fake_opens, "",
          "TEST ONLY (--module=fake): RPC services the fake's applications "
          "open at startup, NAME,...");
ABSL_FLAG(std::string, fake_peers_file, "",
          "TEST ONLY (--module=fake): the fake rewrites this file with its "
          "identity and peers after every change, each peer with the SHA-256 "
          "of its pair secret (never the secret)");
ABSL_FLAG(std::string, fake_unreachable_file, "",
          "TEST ONLY (--module=fake): a file listing peers (node ids or "
          "names, separated by spaces, commas or lines) whose kernel is "
          "gone: the manager's probes of them answer UNAVAILABLE, as "
          "lite.ko's EHOSTDOWN. Read at every probe; no file: every peer "
          "acknowledges");
ABSL_FLAG(std::string, fake_memory, "1G",
          "TEST ONLY (--module=fake): LMR memory the fake can allocate, e.g. "
          "1G");

namespace lite::agent {
namespace {

// What the fake's flags say, checked (before the module is opened).
struct FakeConfig {
  FakeModuleOptions module;
  std::vector<FakeLmrSpec> lmrs;
  std::vector<FakeMapSpec> maps;
  std::vector<FakeServiceSpec> services;
  std::vector<std::string> opens;
};

absl::StatusOr<FakeConfig> ReadFakeFlags(absl::string_view module) {
  if (module != "fake" &&
      (!absl::GetFlag(FLAGS_fake_lmrs).empty() ||
       !absl::GetFlag(FLAGS_fake_maps).empty() ||
       !absl::GetFlag(FLAGS_fake_services).empty() ||
       !absl::GetFlag(FLAGS_fake_opens).empty() ||
       !absl::GetFlag(FLAGS_fake_peers_file).empty() ||
       !absl::GetFlag(FLAGS_fake_unreachable_file).empty())) {
    return absl::InvalidArgumentError(
        "--fake_lmrs, --fake_maps, --fake_services, --fake_opens, "
        "--fake_peers_file and --fake_unreachable_file need --module=fake");
  }
  FakeConfig c;
  c.module.peers_file = absl::GetFlag(FLAGS_fake_peers_file);
  c.module.unreachable_file = absl::GetFlag(FLAGS_fake_unreachable_file);
  absl::StatusOr<uint64_t> memory = ParseSize(absl::GetFlag(FLAGS_fake_memory));
  if (!memory.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fake_memory: ", memory.status().message()));
  }
  c.module.memory_bytes = *memory;
  LITE_ASSIGN_OR_RETURN(c.lmrs, ParseFakeLmrs(absl::GetFlag(FLAGS_fake_lmrs)));
  LITE_ASSIGN_OR_RETURN(c.maps, ParseFakeMaps(absl::GetFlag(FLAGS_fake_maps)));
  LITE_ASSIGN_OR_RETURN(c.services,
                        ParseFakeServices(absl::GetFlag(FLAGS_fake_services)));
  LITE_ASSIGN_OR_RETURN(c.opens,
                        ParseFakeOpens(absl::GetFlag(FLAGS_fake_opens)));
  return c;
}

// Plays the fake module's applications: registers and maps what the
// --fake_lmrs / --fake_maps flags list, registers and opens the services of
// --fake_services / --fake_opens, and logs each answer (host tests read the
// log lines).
void RunFakeApplications(FakeModule* fake, const FakeConfig& fake_config,
                         const AgentMainConfig& config) {
  lite::v1::Credentials creds;
  creds.set_uid(getuid());
  creds.set_gid(getgid());
  creds.set_pid(static_cast<uint32_t>(getpid()));
  std::vector<std::pair<std::string, uint64_t>> pending;
  for (const FakeLmrSpec& spec : fake_config.lmrs) {
    RegisterUpcall reg;
    reg.name = spec.name;
    reg.size_bytes = spec.size_bytes;
    reg.mode = spec.mode;
    pending.emplace_back(absl::StrCat("register '", spec.name, "'"),
                         fake->InjectUpcall(creds, reg));
  }
  for (const FakeMapSpec& spec : fake_config.maps) {
    MapUpcall map{.name = spec.name, .read = spec.read, .write = spec.write};
    pending.emplace_back(absl::StrCat("map '", spec.name, "'"),
                         fake->InjectUpcall(creds, map));
  }
  for (const FakeServiceSpec& spec : fake_config.services) {
    RpcRegisterUpcall reg{.name = spec.name,
                          .mode = spec.mode,
                          .port = 0,  // the fake takes the lowest free one
                          .max_request_bytes = 4096,
                          .max_reply_bytes = 4096,
                          .depth = 16,
                          .max_clients = 4};
    pending.emplace_back(absl::StrCat("register service '", spec.name, "'"),
                         fake->InjectUpcall(creds, reg));
  }
  for (const std::string& name : fake_config.opens) {
    pending.emplace_back(absl::StrCat("open service '", name, "'"),
                         fake->InjectUpcall(creds, RpcOpenUpcall{name}));
  }
  // The dispatcher answers every upcall within --upcall_timeout (and at
  // shutdown), so these waits end.
  const absl::Duration wait =
      config.agent.upcalls.upcall_timeout + config.agent.rpc_timeout;
  for (const auto& [what, id] : pending) {
    absl::StatusOr<UpcallReply> reply = fake->WaitForReply(id, wait);
    if (!reply.ok()) {
      LITE_LOG_ERROR("fake application: %s: %s", what,
                     reply.status().ToString());
    } else if (!reply->status.ok()) {
      LITE_LOG_WARNING("fake application: %s failed: %s", what,
                       reply->status.ToString());
    } else if (reply->lmr.has_value()) {
      LITE_LOG_INFO("fake application: %s: LMR %#x", what,
                    reply->lmr->lmr_id());
    } else if (reply->grant.has_value()) {
      LITE_LOG_INFO("fake application: %s: grant %#x", what,
                    reply->grant->grant_id());
    } else if (reply->service_id.has_value()) {
      LITE_LOG_INFO("fake application: %s: service %#x", what,
                    *reply->service_id);
    } else if (reply->service.has_value()) {
      LITE_LOG_INFO("fake application: %s: service %#x on node %u port %u",
                    what, reply->service->service_id(),
                    reply->service->node_id(), reply->service->port());
    }
  }
}

int Main(int argc, char** argv) {
  // Filled once the flags are parsed (check_flags runs before any module is
  // opened); read by the fake's open and beside.
  FakeConfig fake_config;
  ModuleChoice fake{
      .name = "fake",
      .summary = "tests",
      .open = [&](const AgentMainConfig& config)
          -> absl::StatusOr<std::unique_ptr<Module>> {
        FakeModuleOptions options = fake_config.module;
        options.node_name = config.agent.node_name;
        return std::make_unique<FakeModule>(options);
      },
      .beside =
          [&](Module* module, const AgentMainConfig& config) {
            if (fake_config.lmrs.empty() && fake_config.maps.empty() &&
                fake_config.services.empty() && fake_config.opens.empty()) {
              return;
            }
            RunFakeApplications(static_cast<FakeModule*>(module), fake_config,
                                config);
          },
  };
  return AgentMain(
      argc, argv,
      AgentMainOptions{
          .program = "liteagent_fake",
          .usage =
              "liteagent for host tests and laptops: joins litemgr, keeps the "
              "node's session, programs lite.ko through a module, serves "
              "lite.v1.NodeAgent.\n"
              "Usage: liteagent_fake --module=fake --rdma_address=IP:PORT "
              "[--manager=HOST:PORT] [--node_name=NAME] [--listen=HOST:PORT] "
              "[--fake_lmrs=...] ...\n"
              "--module=fake is an in-process test double of lite.ko; "
              "--module=netlink (the default) drives lite.ko as liteagent "
              "does. See docs/agent.md.",
          .modules = {NetlinkModuleChoice(), std::move(fake)},
          .check_flags = [&](absl::string_view module) -> absl::Status {
            LITE_ASSIGN_OR_RETURN(fake_config, ReadFakeFlags(module));
            return absl::OkStatus();
          },
      });
}

}  // namespace
}  // namespace lite::agent

int main(int argc, char** argv) { return lite::agent::Main(argc, argv); }
