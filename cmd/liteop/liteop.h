// liteop: LMR operations from the command line, for scripts, tests and the
// demo. One command per run; commands that act on an LMR map it by name
// first (and unmap it at exit). See `liteop --help`.
#ifndef LITE_TOOLS_LITEOP_LITEOP_H_
#define LITE_TOOLS_LITEOP_LITEOP_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/lite.hpp"

namespace lite::liteop {

// Opens the LITE device at `path`: lite::Lite::Open in the binary, a fake
// device in tests.
using Opener =
    std::function<absl::StatusOr<lite::Lite>(const std::string& path)>;

// Runs liteop with args (without the program name); returns the exit
// status: 0 success, 1 a LITE call failed, 2 bad usage (common/cli).
int RunLiteop(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err, const Opener& open);

}  // namespace lite::liteop

#endif  // LITE_TOOLS_LITEOP_LITEOP_H_
