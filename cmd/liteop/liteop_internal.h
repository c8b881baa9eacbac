// liteop's inside: what its command files (liteop.cc, liteop_rpc.cc) share.
#ifndef LITE_TOOLS_LITEOP_LITEOP_INTERNAL_H_
#define LITE_TOOLS_LITEOP_LITEOP_INTERNAL_H_

#include <vector>

#include "cmd/liteop/liteop.h"
#include "common/cli/cli.h"
#include "common/cli/json.h"

namespace lite::liteop {

// One result: "key=value key=value" (a bool as yes/no, empty strings left
// out), or with -o json one JSON object on one line.
void PrintRecord(const cli::Args& a, const cli::Json& record);

// The RPC commands (liteop_rpc.cc): rpc-serve, rpc-call, rpc-send.
void AddRpcCommands(std::vector<cli::Command>& commands, const Opener& open);

}  // namespace lite::liteop

#endif  // LITE_TOOLS_LITEOP_LITEOP_INTERNAL_H_
