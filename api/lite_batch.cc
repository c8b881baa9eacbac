#include "api/lite_batch.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "api/lite_batch_ops.hpp"

namespace lite {

Batch& Batch::Add(const Lmr& lmr, const lite_batch_op& op, Pending pending) {
  if (!lmr.ctx_) {
    if (invalid_.ok())
      invalid_ =
          ErrnoToStatus(EBADF, pending.what,
                        "the Lmr is not mapped (moved from or unmapped)");
  } else if (ctx_ && ctx_ != lmr.ctx_) {
    if (invalid_.ok())
      invalid_ = ErrnoToStatus(EINVAL, pending.what,
                               "the Lmrs of one batch must share a session");
  } else {
    ctx_ = lmr.ctx_;
  }
  ops_.push_back(op);
  pending_.push_back(std::move(pending));
  return *this;
}

Batch& Batch::Read(const Lmr& lmr, uint64_t offset, absl::Span<uint8_t> out,
                   Done done) {
  internal::BatchEntry e = internal::ReadEntry(lmr, offset, out);
  return Add(lmr, e.op, {std::move(e.what), std::move(done), {}});
}

Batch& Batch::Write(const Lmr& lmr, uint64_t offset,
                    absl::Span<const uint8_t> data, Done done) {
  internal::BatchEntry e = internal::WriteEntry(lmr, offset, data);
  return Add(lmr, e.op, {std::move(e.what), std::move(done), {}});
}

Batch& Batch::FetchAdd(const Lmr& lmr, uint64_t offset, uint64_t add,
                       DoneValue done) {
  internal::BatchEntry e = internal::FetchAddEntry(lmr, offset, add);
  return Add(lmr, e.op, {std::move(e.what), {}, std::move(done)});
}

Batch& Batch::CompareSwap(const Lmr& lmr, uint64_t offset, uint64_t expected,
                          uint64_t desired, DoneValue done) {
  internal::BatchEntry e =
      internal::CompareSwapEntry(lmr, offset, expected, desired);
  return Add(lmr, e.op, {std::move(e.what), {}, std::move(done)});
}

void Batch::Finish(size_t ran, absl::Status call_failed) {
  failed_ = 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    Pending& p = pending_[i];
    absl::Status s = i < ran ? absl::OkStatus() : call_failed;
    if (i < ran && ops_[i].error) s = ErrnoToStatus(ops_[i].error, p.what);
    if (!s.ok()) ++failed_;
    if (p.done) p.done(s);
    if (p.done_value) {
      if (s.ok()) {
        p.done_value(ops_[i].result);
      } else {
        p.done_value(s);
      }
    }
  }
  ops_.clear();
  pending_.clear();
  ctx_.reset();
  invalid_ = absl::OkStatus();
}

absl::Status Batch::Run() {
  absl::Status result = invalid_;
  size_t ran = 0;
  while (result.ok() && ran < ops_.size()) {
    const uint32_t n = static_cast<uint32_t>(
        std::min<size_t>(ops_.size() - ran, LITE_BATCH_MAX));
    const int err = lite_batch_run(ctx_.get(), ops_.data() + ran, n, nullptr);
    if (err) {
      result = ErrnoToStatus(err, "batch", lite_message());
    } else {
      ran += n;
    }
  }
  Finish(ran, result);
  return result;
}

}  // namespace lite
