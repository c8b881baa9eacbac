// libLITE's locks and barriers (api/lite_sync.h, api/lite_sync.hpp) against
// the scripted fake of lite.ko: what each call puts in LITE_IOC_SYNC, how
// the answers map back (the owner-died bit, errnos), and what is refused
// before any ioctl.
#include "api/lite_sync.h"

#include <cerrno>
#include <memory>
#include <mutex>
#include <vector>

#include "api/fake_device.h"
#include "api/lite.h"
#include "api/lite_sync.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::lite::testing::FakeDevice;
using ::testing::HasSubstr;

class SyncTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(dev_.Open(&ctx_), 0) << lite_message(); }
  void TearDown() override { lite_close(ctx_); }

  // Answers LITE_IOC_SYNC with `err`, and `result` in the struct.
  void Answer(int err, uint32_t result = 0) {
    dev_.set_handler([err, result](unsigned long request, void* data) {
      if (request != LITE_IOC_SYNC) return -ENOTTY;
      static_cast<lite_sync*>(data)->result = result;
      return err;
    });
  }

  FakeDevice dev_;
  lite_ctx* ctx_ = nullptr;
};

TEST_F(SyncTest, LockSendsItsHandleOpAndTimeoutWithZeroedRest) {
  Answer(0);
  EXPECT_EQ(lite_lock(ctx_, 0x1234, 2500), 0);
  lite_sync s = dev_.last<lite_sync>(LITE_IOC_SYNC);
  EXPECT_EQ(s.handle, 0x1234u);
  EXPECT_EQ(s.op, static_cast<uint32_t>(LITE_SYNC_LOCK));
  EXPECT_EQ(s.timeout_ms, 2500u);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.flags, 0u);
  EXPECT_EQ(s.result, 0u);
  EXPECT_EQ(s.reserved, 0u);
}

TEST_F(SyncTest, OwnerDiedBitIsEOWNERDEADAndTheLockIsHeld) {
  Answer(0, LITE_SYNC_OWNER_DIED);
  EXPECT_EQ(lite_lock(ctx_, 1, 0), -EOWNERDEAD);
  EXPECT_EQ(lite_trylock(ctx_, 1), -EOWNERDEAD);
  EXPECT_STREQ(lite_errno_name(EOWNERDEAD), "EOWNERDEAD");
}

TEST_F(SyncTest, KernelErrnosPassThrough) {
  Answer(-EBUSY);
  EXPECT_EQ(lite_trylock(ctx_, 1), -EBUSY);
  EXPECT_EQ(dev_.last<lite_sync>(LITE_IOC_SYNC).op,
            static_cast<uint32_t>(LITE_SYNC_TRYLOCK));
  Answer(-ECONNABORTED);
  EXPECT_EQ(lite_barrier(ctx_, 1, 3, 100), -ECONNABORTED);
  EXPECT_STREQ(lite_errno_name(ECONNABORTED), "ECONNABORTED");
  Answer(-EPERM);
  EXPECT_EQ(lite_unlock(ctx_, 1), -EPERM);
  EXPECT_THAT(lite_message(), HasSubstr("does not hold"));
}

TEST_F(SyncTest, BarrierSendsItsCount) {
  Answer(0);
  EXPECT_EQ(lite_barrier(ctx_, 7, 12, 1000), 0);
  lite_sync s = dev_.last<lite_sync>(LITE_IOC_SYNC);
  EXPECT_EQ(s.op, static_cast<uint32_t>(LITE_SYNC_BARRIER));
  EXPECT_EQ(s.count, 12u);
  EXPECT_EQ(s.timeout_ms, 1000u);
}

TEST_F(SyncTest, BadArgumentsAreRefusedBeforeTheIoctl) {
  Answer(0);
  EXPECT_EQ(lite_barrier(ctx_, 1, 0, 100), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("count"));
  EXPECT_EQ(lite_barrier(ctx_, 1, LITE_SYNC_COUNT_MAX + 1, 100), -EINVAL);
  EXPECT_EQ(lite_lock(ctx_, 1, LITE_RPC_TIMEOUT_MAX_MS + 1), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("LITE_RPC_TIMEOUT_MAX_MS"));
  EXPECT_EQ(lite_lock(nullptr, 1, 0), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_SYNC), 0);
}

// The C++ layer: a Mutex from a fake map, used with std::lock_guard.
class MutexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.set_handler([this](unsigned long request, void* data) {
      if (request == LITE_IOC_MAP) {
        auto* m = static_cast<struct lite_map*>(data);
        m->handle = 42;
        return 0;
      }
      if (request == LITE_IOC_UNMAP) return 0;
      if (request != LITE_IOC_SYNC) return -ENOTTY;
      auto* s = static_cast<lite_sync*>(data);
      ops_.push_back(s->op);
      s->result = died_ ? LITE_SYNC_OWNER_DIED : 0;
      return next_err_;
    });
    lite_ctx* ctx = nullptr;
    ASSERT_EQ(dev_.Open(&ctx), 0);
    session_ = std::make_unique<lite::Lite>(lite::Lite::Adopt(ctx));
  }

  FakeDevice dev_;
  std::unique_ptr<lite::Lite> session_;
  std::vector<uint32_t> ops_;
  bool died_ = false;
  int next_err_ = 0;
};

TEST_F(MutexTest, LockGuardLocksAndUnlocks) {
  absl::StatusOr<lite::Mutex> mu = lite::Mutex::Open(*session_, "m");
  ASSERT_TRUE(mu.ok()) << mu.status();
  {
    std::lock_guard<lite::Mutex> hold(*mu);
    EXPECT_FALSE(mu->previous_owner_died());
  }
  EXPECT_EQ(ops_, (std::vector<uint32_t>{LITE_SYNC_LOCK, LITE_SYNC_UNLOCK}));
}

TEST_F(MutexTest, OwnerDiedIsReportedNotAnError) {
  absl::StatusOr<lite::Mutex> mu = lite::Mutex::Open(*session_, "m");
  ASSERT_TRUE(mu.ok());
  died_ = true;
  absl::StatusOr<bool> died = mu->Lock();
  ASSERT_TRUE(died.ok()) << died.status();
  EXPECT_TRUE(*died);
  EXPECT_TRUE(mu->previous_owner_died());
}

TEST_F(MutexTest, TryLockBusyIsFalseAndErrorsAreStatuses) {
  absl::StatusOr<lite::Mutex> mu = lite::Mutex::Open(*session_, "m");
  ASSERT_TRUE(mu.ok());
  next_err_ = -EBUSY;
  EXPECT_FALSE(mu->try_lock());
  next_err_ = -EHOSTDOWN;
  absl::StatusOr<bool> r = mu->Lock(absl::Milliseconds(5));
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_EQ(lite::StatusErrno(r.status()), EHOSTDOWN);
}

TEST_F(MutexTest, BarrierRefusesACountOfZeroAndMapsAbort) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(lite::Barrier::Open(*session_, "b", 0).status()));
  absl::StatusOr<lite::Barrier> b = lite::Barrier::Open(*session_, "b", 3);
  ASSERT_TRUE(b.ok());
  next_err_ = -ECONNABORTED;
  absl::Status s = b->Wait();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_EQ(ops_.back(), static_cast<uint32_t>(LITE_SYNC_BARRIER));
}

}  // namespace
