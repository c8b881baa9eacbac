// libLITE internal: one batch entry for an operation on a mapped Lmr, with
// the words its status names it by ("read \"kv\""). Shared by lite::Batch
// and lite::Ring, whose entries are the same struct lite_batch_op.
#ifndef LITE_API_LITE_BATCH_OPS_HPP_
#define LITE_API_LITE_BATCH_OPS_HPP_

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "api/lite.h"
#include "api/lite.hpp"

namespace lite::internal {

struct BatchEntry {
  lite_batch_op op;
  std::string what;
};

// A length beyond 32 bits becomes 0, which lite.ko refuses (EINVAL).
inline uint32_t EntryLength(size_t size) {
  return size > UINT32_MAX ? 0 : static_cast<uint32_t>(size);
}

inline BatchEntry ReadEntry(const Lmr& lmr, uint64_t offset,
                            absl::Span<uint8_t> out) {
  BatchEntry e{{}, absl::StrCat("read \"", lmr.name(), "\"")};
  lite_batch_read(&e.op, lmr.handle(), offset, out.data(),
                  EntryLength(out.size()));
  return e;
}

inline BatchEntry WriteEntry(const Lmr& lmr, uint64_t offset,
                             absl::Span<const uint8_t> data) {
  BatchEntry e{{}, absl::StrCat("write \"", lmr.name(), "\"")};
  lite_batch_write(&e.op, lmr.handle(), offset, data.data(),
                   EntryLength(data.size()));
  return e;
}

inline BatchEntry FetchAddEntry(const Lmr& lmr, uint64_t offset, uint64_t add) {
  BatchEntry e{{}, absl::StrCat("faa \"", lmr.name(), "\"")};
  lite_batch_faa(&e.op, lmr.handle(), offset, add);
  return e;
}

inline BatchEntry CompareSwapEntry(const Lmr& lmr, uint64_t offset,
                                   uint64_t expected, uint64_t desired) {
  BatchEntry e{{}, absl::StrCat("cas \"", lmr.name(), "\"")};
  lite_batch_cas(&e.op, lmr.handle(), offset, expected, desired);
  return e;
}

}  // namespace lite::internal

#endif  // LITE_API_LITE_BATCH_OPS_HPP_
