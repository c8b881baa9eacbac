#include "api/lite_ring.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "api/lite_batch_ops.hpp"

namespace lite {

absl::StatusOr<Ring> Ring::Create(const Lite& session, uint32_t depth) {
  lite_ring* ring = nullptr;
  const int err = lite_ring_create(session.ctx_.get(), depth, &ring);
  if (err) return ErrnoToStatus(err, "ring", lite_message());
  return Ring(session.ctx_, ring, depth);
}

Ring::Ring(std::shared_ptr<lite_ctx> ctx, lite_ring* ring, uint32_t depth)
    : ctx_(std::move(ctx)), ring_(ring), pending_(depth), done_(depth) {
  free_tags_.reserve(depth);
  for (uint32_t t = depth; t > 0; --t) free_tags_.push_back(t - 1);
}

Ring::Ring(Ring&& other) noexcept
    : ctx_(std::move(other.ctx_)),
      ring_(std::exchange(other.ring_, nullptr)),
      pending_(std::move(other.pending_)),
      free_tags_(std::move(other.free_tags_)),
      done_(std::move(other.done_)),
      in_flight_(std::exchange(other.in_flight_, 0)) {}

Ring& Ring::operator=(Ring&& other) noexcept {
  if (this != &other) {
    this->~Ring();
    new (this) Ring(std::move(other));
  }
  return *this;
}

Ring::~Ring() {
  if (ring_ == nullptr) return;
  (void)Drain();
  lite_ring_destroy(ring_);  // waits for anything Drain() could not reap
}

absl::Status Ring::Add(const Lmr& lmr, const lite_batch_op& op,
                       Pending pending) {
  if (!lmr.ctx_) {
    return ErrnoToStatus(EBADF, pending.what,
                         "the Lmr is not mapped (moved from or unmapped)");
  }
  if (lmr.ctx_ != ctx_) {
    return ErrnoToStatus(EINVAL, pending.what,
                         "the Lmr is mapped through another session");
  }
  if (free_tags_.empty()) {
    absl::StatusOr<size_t> polled = Poll(1);
    if (!polled.ok()) return polled.status();
  }
  const uint32_t tag = free_tags_.back();
  const int err = lite_ring_submit(ring_, &op, tag);
  if (err) return ErrnoToStatus(err, pending.what, lite_message());
  free_tags_.pop_back();
  pending_[tag] = std::move(pending);
  ++in_flight_;
  return absl::OkStatus();
}

absl::Status Ring::Read(const Lmr& lmr, uint64_t offset,
                        absl::Span<uint8_t> out, Done done) {
  internal::BatchEntry e = internal::ReadEntry(lmr, offset, out);
  return Add(lmr, e.op, {std::move(e.what), std::move(done), {}});
}

absl::Status Ring::Write(const Lmr& lmr, uint64_t offset,
                         absl::Span<const uint8_t> data, Done done) {
  internal::BatchEntry e = internal::WriteEntry(lmr, offset, data);
  return Add(lmr, e.op, {std::move(e.what), std::move(done), {}});
}

absl::Status Ring::FetchAdd(const Lmr& lmr, uint64_t offset, uint64_t add,
                            DoneValue done) {
  internal::BatchEntry e = internal::FetchAddEntry(lmr, offset, add);
  return Add(lmr, e.op, {std::move(e.what), {}, std::move(done)});
}

absl::Status Ring::CompareSwap(const Lmr& lmr, uint64_t offset,
                               uint64_t expected, uint64_t desired,
                               DoneValue done) {
  internal::BatchEntry e =
      internal::CompareSwapEntry(lmr, offset, expected, desired);
  return Add(lmr, e.op, {std::move(e.what), {}, std::move(done)});
}

absl::StatusOr<size_t> Ring::Poll(size_t min_complete) {
  if (ring_ == nullptr) {
    return absl::FailedPreconditionError("ring: moved from");
  }
  const uint32_t want =
      static_cast<uint32_t>(std::min<size_t>(min_complete, pending_.size()));
  const int n = lite_ring_poll(ring_, done_.data(),
                               static_cast<uint32_t>(done_.size()), want);
  if (n < 0) return ErrnoToStatus(n, "ring poll", lite_message());
  for (int i = 0; i < n; ++i) {
    const lite_completion& c = done_[i];
    // The slot is free again before the callback, which may add more.
    Pending p = std::move(pending_[c.tag]);
    free_tags_.push_back(static_cast<uint32_t>(c.tag));
    --in_flight_;
    const absl::Status s =
        c.error ? ErrnoToStatus(c.error, p.what) : absl::OkStatus();
    if (p.done) p.done(s);
    if (p.done_value) {
      if (s.ok()) {
        p.done_value(c.result);
      } else {
        p.done_value(s);
      }
    }
  }
  return static_cast<size_t>(n);
}

absl::Status Ring::Drain() {
  while (in_flight_) {
    absl::StatusOr<size_t> n = Poll(in_flight_);
    // A signal while it waited: wait again.
    if (!n.ok() && StatusErrno(n.status()) != EINTR) return n.status();
  }
  return absl::OkStatus();
}

}  // namespace lite
