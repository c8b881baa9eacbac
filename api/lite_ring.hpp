// libLITE's C++ asynchronous operations: small operations on mapped LMRs
// kept in flight on an io_uring (api/lite_ring.h), each completion handed
// to its own callback.
//
//   ASSIGN_OR_RETURN(lite::Ring ring, lite::Ring::Create(session, 16));
//   ring.Read(kv, 0, absl::MakeSpan(a), [](absl::Status s) { ... });
//   ring.FetchAdd(counter, 0, 1, [](absl::StatusOr<uint64_t> old) { ... });
//   RETURN_IF_ERROR(ring.Poll(1).status());  // callbacks of what completed
//   RETURN_IF_ERROR(ring.Drain());           // until nothing is in flight
//
// An operation starts running at the next Poll() (or Drain()), and keeps
// running while the caller does other work; its callback runs inside a
// Poll() or Drain() once it has completed, with its own status (failures
// as Lmr's calls report them) or an atomic's old value. When `depth`
// operations are in flight, adding one more first polls for one
// completion. Buffers must stay valid until their callback has run. The
// LMRs must be mapped through the session the ring was created on. The
// destructor drains. Not thread-safe: one thread per Ring.
#ifndef LITE_API_LITE_RING_HPP_
#define LITE_API_LITE_RING_HPP_

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

class Ring {
 public:
  using Done = std::function<void(absl::Status)>;
  using DoneValue = std::function<void(absl::StatusOr<uint64_t>)>;

  // A ring for up to `depth` (1..LITE_RING_DEPTH_MAX) operations in flight
  // on `session`'s device. UNIMPLEMENTED without io_uring commands.
  static absl::StatusOr<Ring> Create(const Lite& session, uint32_t depth);

  Ring(Ring&& other) noexcept;
  Ring& operator=(Ring&& other) noexcept;
  ~Ring();  // drains, and drops the callbacks' results on failure

  // `out.size()` / `data.size()` bytes, 1..LITE_BATCH_RW_MAX. An error
  // here (an unmapped Lmr, another session's, a failed poll for room) means
  // the operation was not added and its callback will not run.
  absl::Status Read(const Lmr& lmr, uint64_t offset, absl::Span<uint8_t> out,
                    Done done = nullptr);
  absl::Status Write(const Lmr& lmr, uint64_t offset,
                     absl::Span<const uint8_t> data, Done done = nullptr);
  // The callback gets the old value.
  absl::Status FetchAdd(const Lmr& lmr, uint64_t offset, uint64_t add,
                        DoneValue done = nullptr);
  // The callback gets the old value; the swap happened iff it == expected.
  absl::Status CompareSwap(const Lmr& lmr, uint64_t offset, uint64_t expected,
                           uint64_t desired, DoneValue done = nullptr);

  // Starts what was added, waits until at least min(min_complete, in
  // flight) operations have completed, runs the callbacks of every
  // completed one; how many ran.
  absl::StatusOr<size_t> Poll(size_t min_complete = 1);
  // Polls until nothing is in flight.
  absl::Status Drain();
  size_t in_flight() const { return in_flight_; }

 private:
  struct Pending {
    std::string what;  // "read \"kv\"", for the status
    Done done;
    DoneValue done_value;
  };
  Ring(std::shared_ptr<lite_ctx> ctx, lite_ring* ring, uint32_t depth);
  absl::Status Add(const Lmr& lmr, const lite_batch_op& op, Pending pending);

  std::shared_ptr<lite_ctx> ctx_;  // outlives ring_
  lite_ring* ring_ = nullptr;
  // Callbacks by tag: a slot per operation in flight, reused.
  std::vector<Pending> pending_;
  std::vector<uint32_t> free_tags_;
  std::vector<lite_completion> done_;
  size_t in_flight_ = 0;
};

}  // namespace lite

#endif  // LITE_API_LITE_RING_HPP_
