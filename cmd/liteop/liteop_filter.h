// liteop rpc-serve --exec: a request's bytes through a shell command.
#ifndef LITE_TOOLS_LITEOP_LITEOP_FILTER_H_
#define LITE_TOOLS_LITEOP_LITEOP_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace lite::liteop {

// Runs `/bin/sh -c command` with `input` on its stdin and returns its
// stdout, of which at most max_output bytes are kept (*truncated says
// whether more came). A command that exits non-zero or is killed is an
// error.
absl::StatusOr<std::string> RunFilter(const std::string& command,
                                      absl::Span<const uint8_t> input,
                                      size_t max_output, bool* truncated);

}  // namespace lite::liteop

#endif  // LITE_TOOLS_LITEOP_LITEOP_FILTER_H_
