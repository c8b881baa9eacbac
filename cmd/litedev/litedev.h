// litedev: what lite.ko reports through LITE_IOC_QUERY — its ABI version
// and, for each RDMA device it serves, the port and whether the global
// memory key is ready. The tool minus process setup, so tests run it
// in-process against a query function of their own.
#ifndef LITE_TOOLS_LITEDEV_LITEDEV_H_
#define LITE_TOOLS_LITEDEV_LITEDEV_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kmod/include/uapi/lite.h"

namespace lite::litedev {

struct QueryResult {
  uint32_t abi_version = 0;
  std::vector<lite_device_info> devices;
};

// Queries the LITE device at `path` (the real one: open + LITE_IOC_QUERY).
// Errors name the path and say what to check ("is lite.ko loaded?").
absl::Status QueryDevice(const std::string& path, QueryResult* result);

using QueryFn =
    std::function<absl::Status(const std::string& path, QueryResult* result)>;

// The whole tool: parses `args` (without the program name), queries through
// `query`, prints; returns the exit status (0, 1 failed, 2 bad usage).
int RunLitedev(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err, const QueryFn& query = QueryDevice);

}  // namespace lite::litedev

#endif  // LITE_TOOLS_LITEDEV_LITEDEV_H_
