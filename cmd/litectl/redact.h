// What litectl never prints: a memory key or a chunk address. The manager
// does not send them to operators (proto/lite/v1/manager.proto,
// ClusterOperator); litectl clears them anyway before any output, JSON
// included, so that an older or a compromised manager cannot make an
// operator's screen, script or log the place a key leaks from. With the
// key, anyone on the RDMA fabric reaches the LMR's memory (issue #10).
#ifndef LITE_TOOLS_LITECTL_REDACT_H_
#define LITE_TOOLS_LITECTL_REDACT_H_

#include "lite/v1/manager.pb.h"
#include "lite/v1/types.pb.h"

namespace lite::litectl {

// Clears memory_key and chunks (each chunk is an address; their count and
// lengths are the size, which stays in size_bytes).
void Redact(lite::v1::Lmr* lmr);
void Redact(lite::v1::Grant* grant);
// Every Lmr or Grant inside (LmrAdded's).
void Redact(lite::v1::Event* event);

}  // namespace lite::litectl

#endif  // LITE_TOOLS_LITECTL_REDACT_H_
