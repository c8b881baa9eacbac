// lite-bench: LITE's one-sided operations measured through libLITE — latency
// (p50, p99, average, minimum) of READ, WRITE, FAA and CAS per size, and
// WRITE bandwidth from several threads — against one LMR, usually homed on
// another node. It measures and prints; it never judges the figures. See
// tools/bench/README.md and `lite-bench --help`.
#ifndef LITE_TOOLS_BENCH_LITE_BENCH_H_
#define LITE_TOOLS_BENCH_LITE_BENCH_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/lite.hpp"

namespace lite::bench {

// Opens the LITE device at `path`: lite::Lite::Open in the binary, a fake
// device in tests.
using Opener =
    std::function<absl::StatusOr<lite::Lite>(const std::string& path)>;

// Runs lite-bench with args (without the program name); returns the exit
// status: 0 success, 1 an operation failed, 2 bad usage (common/cli).
int RunLiteBench(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err, const Opener& open);

}  // namespace lite::bench

#endif  // LITE_TOOLS_BENCH_LITE_BENCH_H_
