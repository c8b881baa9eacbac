// JSON for the tools' output where no proto message exists (litectl prints
// its protos with protobuf's printer): nlohmann::ordered_json, which keeps
// fields in the order they were added and escapes strings properly.
//
// 64-bit ids: these tools print them as JSON numbers (exact in jq >= 1.7,
// Python and nlohmann; readers that hold numbers as doubles, e.g.
// JavaScript, lose ids above 2^53). litectl prints uint64 fields as
// strings, the protobuf JSON mapping's rule. Each tool's --help says which.
#ifndef LITE_COMMON_CLI_JSON_H_
#define LITE_COMMON_CLI_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

namespace lite::cli {

using Json = nlohmann::ordered_json;

// One line with ", " and ": " between items, as Python's json.dumps()
// writes it: {"node_id": 2, "addr": "10.0.0.2", "peers": [1, 3]}. Strings
// that are not UTF-8 get U+FFFD for the bad bytes instead of failing.
std::string JsonLine(const Json& value);

}  // namespace lite::cli

#endif  // LITE_COMMON_CLI_JSON_H_
