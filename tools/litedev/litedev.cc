// litedev: prints what lite.ko reports through LITE_IOC_QUERY — its ABI
// version and, for each RDMA device it serves, the port state and whether the
// global memory key is ready. Exit status 0 only if the answer was read.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "kmod/include/uapi/lite.h"

namespace {

constexpr char kUsage[] =
    "usage: litedev [-o table|json] [--device PATH]\n"
    "\n"
    "Prints lite.ko's ABI version and the RDMA devices it serves: name,\n"
    "port, port state, link layer, MTU and whether the global memory key is\n"
    "ready. Exits non-zero with a one-line reason if /dev/lite cannot be\n"
    "queried.\n"
    "\n"
    "  -o table|json   output format (default: table)\n"
    "  --device PATH   the LITE device node (default: " LITE_DEVICE_PATH ")\n";

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

// Asks for the count first, then for the entries; retries if a device
// appeared in between.
int Query(int fd, uint32_t* abi, std::vector<lite_device_info>* devices) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    lite_query q{};
    q.max_devices = devices->size();
    q.devices = reinterpret_cast<uintptr_t>(devices->data());
    if (ioctl(fd, LITE_IOC_QUERY, &q) != 0) return errno;
    *abi = q.abi_version;
    if (q.num_devices <= devices->size()) {
      devices->resize(q.num_devices);
      return 0;
    }
    devices->resize(q.num_devices);
  }
  return EAGAIN;
}

void PrintTable(uint32_t abi, const std::vector<lite_device_info>& devices) {
  absl::PrintF("lite.ko ABI version %u, %zu RDMA device(s)\n", abi,
               devices.size());
  if (devices.empty()) return;
  absl::PrintF("%-16s %-4s %-12s %-11s %-6s %s\n", "DEVICE", "PORT", "STATE",
               "LINK", "MTU", "GLOBAL KEY");
  for (const auto& d : devices) {
    absl::PrintF("%-16s %-4u %-12s %-11s %-6u %s\n", d.name, d.port,
                 PortStateName(d.port_state), LinkLayerName(d.link_layer),
                 d.active_mtu_bytes, KeyColumn(d));
  }
}

void PrintJson(uint32_t abi, const std::vector<lite_device_info>& devices) {
  absl::PrintF("{\"abi_version\": %u, \"devices\": [", abi);
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    // Device names are kernel names ([a-z0-9_]), safe inside JSON quotes.
    absl::PrintF(
        "%s{\"name\": \"%s\", \"node_guid\": \"%016x\", \"port\": %u, "
        "\"port_state\": \"%s\", \"link_layer\": \"%s\", "
        "\"active_mtu_bytes\": %u, \"global_key_ready\": %s, "
        "\"global_key_errno\": %d}",
        i ? ", " : "", d.name, d.node_guid, d.port, PortStateName(d.port_state),
        LinkLayerName(d.link_layer), d.active_mtu_bytes,
        KeyReady(d) ? "true" : "false", -d.global_key_errno);
  }
  absl::PrintF("]}\n");
}

int Fail(const std::string& reason) {
  absl::FPrintF(stderr, "litedev: %s\n", reason);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string format = "table";
  std::string path = LITE_DEVICE_PATH;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((arg == "-o" || arg == "--device") && i + 1 < argc) {
      (arg == "-o" ? format : path) = argv[++i];
      continue;
    }
    return Fail(absl::StrFormat(
        "unknown or incomplete argument '%s' (see --help)", arg));
  }
  if (format != "table" && format != "json") {
    return Fail(absl::StrFormat("-o must be table or json, not '%s'", format));
  }

  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Fail(absl::StrFormat("cannot open %s: %s%s", path,
                                std::strerror(err),
                                err == ENOENT ? " (is lite.ko loaded?)" : ""));
  }
  uint32_t abi = 0;
  std::vector<lite_device_info> devices(4);
  int err = Query(fd, &abi, &devices);
  close(fd);
  if (err) {
    return Fail(
        absl::StrFormat("LITE_IOC_QUERY on %s: %s", path, std::strerror(err)));
  }
  if (abi != LITE_ABI_VERSION) {
    return Fail(absl::StrFormat(
        "lite.ko speaks ABI version %u, this tool was built for %u", abi,
        LITE_ABI_VERSION));
  }
  if (format == "json") {
    PrintJson(abi, devices);
  } else {
    PrintTable(abi, devices);
  }
  return 0;
}
