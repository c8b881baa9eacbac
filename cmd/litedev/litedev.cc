#include "cmd/litedev/litedev.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/cli/cli.h"
#include "common/cli/json.h"
#include "common/cli/table.h"

namespace lite::litedev {
namespace {

const char* PortStateName(uint32_t state) {
  switch (state) {
    case LITE_PORT_DOWN:
      return "DOWN";
    case LITE_PORT_INIT:
      return "INIT";
    case LITE_PORT_ARMED:
      return "ARMED";
    case LITE_PORT_ACTIVE:
      return "ACTIVE";
    case LITE_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

const char* LinkLayerName(uint32_t layer) {
  switch (layer) {
    case LITE_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case LITE_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

bool KeyReady(const lite_device_info& d) {
  return d.flags & LITE_DEVICE_GLOBAL_KEY_READY;
}

std::string KeyColumn(const lite_device_info& d) {
  if (KeyReady(d)) return "ready";
  return absl::StrFormat("failed: %s", std::strerror(-d.global_key_errno));
}

// The kernel fills name[] NUL-terminated; never read past the array.
std::string DeviceName(const lite_device_info& d) {
  return std::string(d.name, strnlen(d.name, sizeof(d.name)));
}

void PrintTable(std::ostream& out, const QueryResult& r) {
  out << absl::StrFormat("lite.ko ABI version %u, %zu RDMA device(s)\n",
                         r.abi_version, r.devices.size());
  if (r.devices.empty()) return;
  cli::Table table({"DEVICE", "PORT", "STATE", "LINK", "MTU", "GLOBAL KEY"});
  for (const lite_device_info& d : r.devices) {
    table.AddRow({DeviceName(d), absl::StrCat(d.port),
                  PortStateName(d.port_state), LinkLayerName(d.link_layer),
                  absl::StrCat(d.active_mtu_bytes), KeyColumn(d)});
  }
  out << table.Render();
}

void PrintJson(std::ostream& out, const QueryResult& r) {
  cli::Json devices = cli::Json::array();
  for (const lite_device_info& d : r.devices) {
    devices.push_back({
        {"name", DeviceName(d)},
        {"node_guid", absl::StrFormat("%016x", d.node_guid)},
        {"port", d.port},
        {"port_state", PortStateName(d.port_state)},
        {"link_layer", LinkLayerName(d.link_layer)},
        {"active_mtu_bytes", d.active_mtu_bytes},
        {"global_key_ready", KeyReady(d)},
        {"global_key_errno", -d.global_key_errno},
    });
  }
  out << cli::JsonLine({{"abi_version", r.abi_version}, {"devices", devices}})
      << "\n";
}

absl::Status Run(const cli::Args& args, const QueryFn& query) {
  const std::string path = args.Get("device", LITE_DEVICE_PATH);
  QueryResult result;
  if (absl::Status s = query(path, &result); !s.ok()) return s;
  if (result.abi_version != LITE_ABI_VERSION) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "lite.ko speaks ABI version %u, this tool was built for %u",
        result.abi_version, LITE_ABI_VERSION));
  }
  if (args.output() == cli::Output::kJson) {
    PrintJson(args.out(), result);
  } else {
    PrintTable(args.out(), result);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status QueryDevice(const std::string& path, QueryResult* result) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return absl::UnavailableError(
        absl::StrFormat("cannot open %s: %s%s", path, std::strerror(err),
                        err == ENOENT ? " (is lite.ko loaded?)" : ""));
  }
  // Ask with room for a few devices; if more appeared in between, ask again
  // with room for all of them.
  result->devices.resize(4);
  for (int attempt = 0; attempt < 8; ++attempt) {
    lite_query q{};
    q.max_devices = result->devices.size();
    q.devices = reinterpret_cast<uintptr_t>(result->devices.data());
    if (ioctl(fd, LITE_IOC_QUERY, &q) != 0) {
      const int err = errno;
      close(fd);
      return absl::ErrnoToStatus(err,
                                 absl::StrFormat("LITE_IOC_QUERY on %s", path));
    }
    result->abi_version = q.abi_version;
    const bool fits = q.num_devices <= result->devices.size();
    result->devices.resize(q.num_devices);
    if (fits) {
      close(fd);
      return absl::OkStatus();
    }
  }
  close(fd);
  return absl::UnavailableError(absl::StrFormat(
      "LITE_IOC_QUERY on %s: the device list kept changing", path));
}

int RunLitedev(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err, const QueryFn& query) {
  cli::Tool tool;
  tool.footer =
      "-o json: one line, {\"abi_version\", \"devices\": [{\"name\",\n"
      "\"node_guid\", \"port\", \"port_state\", \"link_layer\",\n"
      "\"active_mtu_bytes\", \"global_key_ready\", \"global_key_errno\"}]}.\n\n"
      "Exit status: 0 the answer was read; 1 it was not (one line on stderr\n"
      "says why); 2 bad usage.\n";
  tool.root = {
      .name = "litedev",
      .usage = "litedev [--device PATH] [-o table|json]",
      .summary = "What lite.ko reports about itself and its RDMA devices",
      .details =
          "Prints lite.ko's ABI version and the RDMA devices it serves: name,\n"
          "port, port state, link layer, MTU and whether the global memory "
          "key\nis ready.",
      .flags = {{.name = "device",
                 .value = "PATH",
                 .help = "the LITE device (default " LITE_DEVICE_PATH ")"}},
      .run = [&query](const cli::Args& a) { return Run(a, query); },
  };
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::litedev
