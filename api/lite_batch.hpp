// libLITE's C++ batches: many small operations on mapped LMRs in one system
// call (LITE_IOC_BATCH, api/lite_batch.h), each with its own result.
//
//   lite::Batch batch;
//   batch.Read(kv, 0, absl::MakeSpan(a), [](absl::Status s) { ... });
//   batch.FetchAdd(counter, 0, 1, [](absl::StatusOr<uint64_t> old) { ... });
//   RETURN_IF_ERROR(batch.Run());  // the callbacks have run
//
// Run() hands the operations to lite.ko (LITE_BATCH_MAX per system call),
// then calls each operation's callback, in the order the operations were
// added, with its own status (failures as Lmr's calls report them) or an
// atomic's old value. Run() fails only when a system call itself failed;
// operations that did not run then get that status in their callbacks.
// Buffers must stay valid until Run() returns. All LMRs of one batch must
// be mapped through one Lite session (a handle belongs to one open file).
// A Batch is reusable after Run() (it is empty again); not thread-safe.
#ifndef LITE_API_LITE_BATCH_HPP_
#define LITE_API_LITE_BATCH_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "api/lite.h"
#include "api/lite.hpp"

namespace lite {

class Batch {
 public:
  using Done = std::function<void(absl::Status)>;
  using DoneValue = std::function<void(absl::StatusOr<uint64_t>)>;

  Batch() = default;

  // `out.size()` / `data.size()` bytes, 1..LITE_BATCH_RW_MAX.
  Batch& Read(const Lmr& lmr, uint64_t offset, absl::Span<uint8_t> out,
              Done done = nullptr);
  Batch& Write(const Lmr& lmr, uint64_t offset, absl::Span<const uint8_t> data,
               Done done = nullptr);
  // The callback gets the old value.
  Batch& FetchAdd(const Lmr& lmr, uint64_t offset, uint64_t add,
                  DoneValue done = nullptr);
  // The callback gets the old value; the swap happened iff it == expected.
  Batch& CompareSwap(const Lmr& lmr, uint64_t offset, uint64_t expected,
                     uint64_t desired, DoneValue done = nullptr);

  size_t size() const { return ops_.size(); }

  // Runs every operation added since the last Run(), then the callbacks.
  // OK when every operation got its own result (some may have failed:
  // failed() says how many); else the first system call's failure, or
  // INVALID_ARGUMENT for an unmapped Lmr or Lmrs of different sessions.
  absl::Status Run();
  // Operations of the last Run() that failed.
  size_t failed() const { return failed_; }

 private:
  struct Pending {
    std::string what;  // "read \"kv\"", for the status
    Done done;
    DoneValue done_value;
  };
  Batch& Add(const Lmr& lmr, const lite_batch_op& op, Pending pending);
  // Callbacks: ops_[0..ran) with their own results, the rest call_failed.
  void Finish(size_t ran, absl::Status call_failed);

  std::shared_ptr<lite_ctx> ctx_;
  std::vector<lite_batch_op> ops_;
  std::vector<Pending> pending_;
  absl::Status invalid_;  // the first bad Add(), reported by Run()
  size_t failed_ = 0;
};

}  // namespace lite

#endif  // LITE_API_LITE_BATCH_HPP_
