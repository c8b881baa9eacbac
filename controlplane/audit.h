// The manager's audit trail: one log line per mutating call (Join, Leave,
// RegisterLmr, AllocLmr, MapLmr, UnmapLmr, FreeLmr, RestoreGrant, DrainNode,
// EvictNode), refused ones included:
//   audit: n1 MapLmr node=3 name="kv" uid=1000 access=read -> OK
// The caller is the name its certificate proved ("(insecure)" under
// --insecure, "(unauthenticated)" without a certificate). Strings from the
// wire are quoted and C-escaped, so a line cannot be forged or carry
// terminal escapes; memory keys and addresses are never logged.
#ifndef LITE_CONTROLPLANE_AUDIT_H_
#define LITE_CONTROLPLANE_AUDIT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace lite::controlplane {

// `text` quoted and C-escaped: "a\x1b[2J" stays on one inert line.
std::string Quoted(absl::string_view text);

// Logs "audit: <caller> <method> <fields> -> <code>".
void Audit(absl::string_view caller, absl::string_view method,
           absl::string_view fields, const absl::Status& outcome);

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_AUDIT_H_
