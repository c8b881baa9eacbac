// libLITE's C++ locks and barriers over api/lite_sync.h (docs/locks.md).
//
//   ASSIGN_OR_RETURN(lite::Mutex mu, lite::Mutex::Open(session, "acct.lock"));
//   {
//     std::lock_guard<lite::Mutex> hold(mu);   // waits; see lock() below
//     if (mu.previous_owner_died()) Repair();
//     ...
//   }
//   ASSIGN_OR_RETURN(lite::Barrier meet, lite::Barrier::Open(session,
//                                                             "step", 12));
//   RETURN_IF_ERROR(meet.Wait());
//
// Both keep their LMR mapped (and so their session open) while they live.
// One Mutex or Barrier may be used by many threads at once; the lock belongs
// to the session, so threads sharing one Mutex exclude each other like
// threads on different nodes do.
#ifndef LITE_API_LITE_SYNC_HPP_
#define LITE_API_LITE_SYNC_HPP_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/lite.hpp"
#include "api/lite_sync.h"

namespace lite {

// A distributed lock: Lock()/Unlock() with errors as absl::Status, and
// lock()/try_lock()/unlock() for std::lock_guard and std::unique_lock.
class Mutex {
 public:
  // Maps the LMR `name` (create one with Lite::Alloc or CreateSync below).
  static absl::StatusOr<Mutex> Open(const Lite& session,
                                    absl::string_view name);

  Mutex(Mutex&& other) noexcept;
  Mutex& operator=(Mutex&& other) noexcept;

  // Waits up to `timeout` (at least 1 ms; InfiniteDuration() for the
  // longest lite.ko allows, an hour). true: held, but the previous holder
  // died holding it (EOWNERDEAD); false: held.
  absl::StatusOr<bool> Lock(absl::Duration timeout = absl::Seconds(10));
  // As Lock() without waiting: FAILED_PRECONDITION (EBUSY) if held.
  absl::StatusOr<bool> TryLock();
  absl::Status Unlock();

  // For std::lock_guard. lock() waits as long as it takes (retrying past
  // each timeout) and aborts the process with the error on any other
  // failure: a guard cannot be told. Use Lock() to handle errors.
  void lock();
  bool try_lock();
  void unlock();
  // Whether the last lock()/try_lock()/Lock() found the previous holder dead.
  bool previous_owner_died() const {
    return owner_died_.load(std::memory_order_relaxed);
  }

  const Lmr& lmr() const { return lmr_; }

 private:
  explicit Mutex(Lmr lmr) : lmr_(std::move(lmr)) {}
  absl::StatusOr<bool> Acquired(int err, const char* what);
  Lmr lmr_;
  std::atomic<bool> owner_died_{false};
};

// A distributed barrier of `count` participants.
class Barrier {
 public:
  static absl::StatusOr<Barrier> Open(const Lite& session,
                                      absl::string_view name, uint32_t count);

  // Returns once all `count` have arrived. ABORTED (ECONNABORTED) when a
  // participant's process died, UNAVAILABLE (EHOSTDOWN) when its node
  // failed, DEADLINE_EXCEEDED when not all came in time.
  absl::Status Wait(absl::Duration timeout = absl::Seconds(10)) const;

  uint32_t count() const { return count_; }
  const Lmr& lmr() const { return lmr_; }

 private:
  Barrier(Lmr lmr, uint32_t count) : lmr_(std::move(lmr)), count_(count) {}
  Lmr lmr_;
  uint32_t count_;
};

// Creates an LMR of LITE_SYNC_LMR_BYTES named `name` on `home_node_id` (0:
// this node) with `mode`, to lock or meet on.
absl::Status CreateSync(const Lite& session, absl::string_view name,
                        uint32_t mode, uint32_t home_node_id = 0);

}  // namespace lite

#endif  // LITE_API_LITE_SYNC_HPP_
