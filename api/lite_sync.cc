// libLITE's C++ locks and barriers (api/lite_sync.hpp).
#include "api/lite_sync.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lite {
namespace {

uint32_t TimeoutMs(absl::Duration timeout) {
  if (timeout >= absl::Milliseconds(LITE_RPC_TIMEOUT_MAX_MS))
    return LITE_RPC_TIMEOUT_MAX_MS;
  int64_t ms = absl::ToInt64Milliseconds(timeout);
  return ms < 1 ? 1 : static_cast<uint32_t>(ms);
}

[[noreturn]] void Die(const absl::Status& status) {
  std::fprintf(stderr, "lite::Mutex: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace

absl::StatusOr<Mutex> Mutex::Open(const Lite& session, absl::string_view name) {
  absl::StatusOr<Lmr> lmr = session.Map(name, kReadWrite);
  if (!lmr.ok()) return lmr.status();
  return Mutex(*std::move(lmr));
}

Mutex::Mutex(Mutex&& other) noexcept
    : lmr_(std::move(other.lmr_)),
      owner_died_(other.owner_died_.load(std::memory_order_relaxed)) {}

Mutex& Mutex::operator=(Mutex&& other) noexcept {
  lmr_ = std::move(other.lmr_);
  owner_died_.store(other.owner_died_.load(std::memory_order_relaxed),
                    std::memory_order_relaxed);
  return *this;
}

absl::StatusOr<bool> Mutex::Acquired(int err, const char* what) {
  if (err != 0 && err != -EOWNERDEAD) return lmr_.OpStatus(err, what);
  owner_died_.store(err == -EOWNERDEAD, std::memory_order_relaxed);
  return err == -EOWNERDEAD;
}

absl::StatusOr<bool> Mutex::Lock(absl::Duration timeout) {
  if (!lmr_.mapped()) return lmr_.OpStatus(-EBADF, "lock");
  return Acquired(lite_lock(lmr_.live_ctx(), lmr_.handle(), TimeoutMs(timeout)),
                  "lock");
}

absl::StatusOr<bool> Mutex::TryLock() {
  if (!lmr_.mapped()) return lmr_.OpStatus(-EBADF, "try-lock");
  return Acquired(lite_trylock(lmr_.live_ctx(), lmr_.handle()), "try-lock");
}

absl::Status Mutex::Unlock() {
  if (!lmr_.mapped()) return lmr_.OpStatus(-EBADF, "unlock");
  int err = lite_unlock(lmr_.live_ctx(), lmr_.handle());
  return err ? lmr_.OpStatus(err, "unlock") : absl::OkStatus();
}

void Mutex::lock() {
  for (;;) {
    absl::StatusOr<bool> held = Lock(absl::InfiniteDuration());
    if (held.ok()) return;
    if (!absl::IsDeadlineExceeded(held.status())) Die(held.status());
  }
}

bool Mutex::try_lock() {
  absl::StatusOr<bool> held = TryLock();
  if (held.ok()) return true;
  if (!absl::IsFailedPrecondition(held.status()) ||
      StatusErrno(held.status()) != EBUSY)
    Die(held.status());
  return false;
}

void Mutex::unlock() {
  absl::Status s = Unlock();
  if (!s.ok()) Die(s);
}

absl::StatusOr<Barrier> Barrier::Open(const Lite& session,
                                      absl::string_view name, uint32_t count) {
  if (count == 0 || count > LITE_SYNC_COUNT_MAX)
    return absl::InvalidArgumentError(
        absl::StrCat("barrier \"", name, "\": count ", count, " is not 1..",
                     LITE_SYNC_COUNT_MAX));
  absl::StatusOr<Lmr> lmr = session.Map(name, kReadWrite);
  if (!lmr.ok()) return lmr.status();
  return Barrier(*std::move(lmr), count);
}

absl::Status Barrier::Wait(absl::Duration timeout) const {
  if (!lmr_.mapped()) return lmr_.OpStatus(-EBADF, "barrier");
  int err =
      lite_barrier(lmr_.live_ctx(), lmr_.handle(), count_, TimeoutMs(timeout));
  return err ? lmr_.OpStatus(err, "barrier") : absl::OkStatus();
}

absl::Status CreateSync(const Lite& session, absl::string_view name,
                        uint32_t mode, uint32_t home_node_id) {
  AllocOptions options;
  options.mode = mode;
  options.home_node_id = home_node_id;
  return session.Alloc(name, LITE_SYNC_LMR_BYTES, options).status();
}

}  // namespace lite
