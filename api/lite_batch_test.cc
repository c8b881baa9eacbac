// Unit tests of libLITE's batches (C: lite_batch, the submit/poll queue;
// C++: lite::Batch; and the io_uring ring's argument checks) against the
// fake device: what goes into
// LITE_IOC_BATCH, how each entry's own result comes back, what is refused
// before the ioctl, and how a failed ioctl is reported.
#include "api/lite_batch.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "api/fake_device.h"
#include "api/lite.h"
#include "api/lite.hpp"
#include "api/lite_ring.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::testing {
namespace {

using ::testing::HasSubstr;

// The fake lite.ko's batch: every entry with handle 13 fails EBADF, READs
// fill their buffer with 'r', atomics return 100 + index; `call_error`
// fails the whole ioctl instead.
class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.set_handler(
        [this](unsigned long req, void* data) { return Handle(req, data); });
    ASSERT_EQ(dev_.Open(&ctx_), 0) << lite_message();
  }
  void TearDown() override { lite_close(ctx_); }

  int Handle(unsigned long req, void* data) {
    if (req == LITE_IOC_MAP) {
      auto* m = static_cast<struct lite_map*>(data);
      m->handle = ++next_handle_;
      m->size_bytes = 1 << 20;
      return 0;
    }
    if (req == LITE_IOC_UNMAP) return 0;
    if (req != LITE_IOC_BATCH) return -ENOTTY;
    auto* b = static_cast<struct lite_batch*>(data);
    counts_.push_back(b->count);
    if (b->flags || b->reserved) return -EINVAL;
    if (call_error_) return call_error_;
    auto* ops = reinterpret_cast<lite_batch_op*>(b->ops);
    b->failed = 0;
    for (uint32_t i = 0; i < b->count; ++i) {
      seen_.push_back(ops[i]);
      ops[i].error = ops[i].handle == 13 ? -EBADF : 0;
      if (ops[i].error) b->failed++;
      if (!ops[i].error && ops[i].opcode == LITE_BATCH_READ)
        std::memset(reinterpret_cast<void*>(ops[i].buf), 'r', ops[i].length);
      if (!ops[i].error && ops[i].opcode >= LITE_BATCH_FAA)
        ops[i].result = 100 + i;
    }
    return 0;
  }

  FakeDevice dev_;
  lite_ctx* ctx_ = nullptr;
  int call_error_ = 0;
  uint64_t next_handle_ = 0;
  std::vector<uint32_t> counts_;     // entries per ioctl
  std::vector<lite_batch_op> seen_;  // every entry as the "kernel" got it
};

TEST_F(BatchTest, FillersZeroEverythingElse) {
  lite_batch_op op;
  std::memset(&op, 0xff, sizeof(op));
  char buf[16];
  lite_batch_read(&op, 7, 64, buf, sizeof(buf));
  EXPECT_EQ(op.opcode, LITE_BATCH_READ);
  EXPECT_EQ(op.handle, 7u);
  EXPECT_EQ(op.offset, 64u);
  EXPECT_EQ(op.buf, reinterpret_cast<uintptr_t>(buf));
  EXPECT_EQ(op.length, sizeof(buf));
  EXPECT_EQ(op.operand | op.swap | op.result | op.flags | op.priority, 0u);
  EXPECT_EQ(op.error, 0);
  lite_batch_cas(&op, 7, 8, 1, 2);
  EXPECT_EQ(op.opcode, LITE_BATCH_CAS);
  EXPECT_EQ(op.length, 8u);
  EXPECT_EQ(op.buf, 0u);
  EXPECT_EQ(op.operand, 1u);
  EXPECT_EQ(op.swap, 2u);
  lite_batch_faa(&op, 7, 16, 5);
  EXPECT_EQ(op.opcode, LITE_BATCH_FAA);
  EXPECT_EQ(op.swap, 0u);
  static_assert(sizeof(lite_batch_op) == 64, "the uapi entry is 64 bytes");
}

TEST_F(BatchTest, EveryEntryGetsItsOwnResult) {
  char in[8] = {}, out[8] = "written";
  lite_batch_op ops[4];
  lite_batch_read(&ops[0], 1, 0, in, sizeof(in));
  lite_batch_write(&ops[1], 13, 0, out, sizeof(out));  // fails: EBADF
  lite_batch_faa(&ops[2], 1, 8, 1);
  lite_batch_cas(&ops[3], 1, 16, 0, 1);
  uint32_t failed = 99;
  ASSERT_EQ(lite_batch_run(ctx_, ops, 4, &failed), 0);
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(std::string(in, 8), "rrrrrrrr");
  EXPECT_EQ(ops[0].error, 0);
  EXPECT_EQ(ops[1].error, -EBADF);
  EXPECT_EQ(ops[2].result, 102u);
  EXPECT_EQ(ops[3].result, 103u);
  const lite_batch b = dev_.last<lite_batch>(LITE_IOC_BATCH);
  EXPECT_EQ(b.ops, reinterpret_cast<uintptr_t>(ops));  // in place, no copy
  EXPECT_EQ(b.count, 4u);
}

TEST_F(BatchTest, BadBatchesAreRefusedBeforeTheIoctl) {
  lite_batch_op ops[1];
  lite_batch_faa(&ops[0], 1, 0, 1);
  EXPECT_EQ(lite_batch_run(ctx_, ops, 0, nullptr), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("0 entries"));
  EXPECT_EQ(lite_batch_run(ctx_, ops, LITE_BATCH_MAX + 1, nullptr), -EINVAL);
  EXPECT_EQ(lite_batch_run(ctx_, nullptr, 1, nullptr), -EINVAL);
  EXPECT_EQ(lite_batch_run(nullptr, ops, 1, nullptr), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_BATCH), 0);
}

TEST_F(BatchTest, AFailedCallPassesThroughWithAnEmptyMessage) {
  call_error_ = -ENOTTY;  // an older lite.ko
  lite_batch_op ops[1];
  lite_batch_faa(&ops[0], 1, 0, 1);
  EXPECT_EQ(lite_batch_run(ctx_, ops, 1, nullptr), -ENOTTY);
  EXPECT_STREQ(lite_message(), "");
}

TEST_F(BatchTest, QueueRunsTheOldestFirstAndKeepsTheRest) {
  lite_queue* q = nullptr;
  ASSERT_EQ(lite_queue_create(ctx_, 3, &q), 0);
  lite_batch_op op;
  for (uint64_t tag = 10; tag < 13; ++tag) {
    lite_batch_faa(&op, tag == 11 ? 13 : 1, 8 * tag, 1);
    ASSERT_EQ(lite_submit(q, &op, tag), 0);
  }
  EXPECT_EQ(lite_submit(q, &op, 99), -EAGAIN);
  EXPECT_THAT(lite_message(), HasSubstr("poll"));
  EXPECT_EQ(lite_queue_pending(q), 3u);

  lite_completion c[3];
  ASSERT_EQ(lite_poll(q, c, 2), 2);  // one ioctl, the two oldest
  EXPECT_EQ(c[0].tag, 10u);
  EXPECT_EQ(c[0].error, 0);
  EXPECT_EQ(c[0].result, 100u);
  EXPECT_EQ(c[1].tag, 11u);
  EXPECT_EQ(c[1].error, -EBADF);
  EXPECT_EQ(lite_queue_pending(q), 1u);
  ASSERT_EQ(lite_submit(q, &op, 13), 0);

  call_error_ = -EINTR;  // the call fails: nothing is lost
  EXPECT_EQ(lite_poll(q, c, 3), -EINTR);
  EXPECT_EQ(lite_queue_pending(q), 2u);
  call_error_ = 0;
  ASSERT_EQ(lite_poll(q, c, 3), 2);
  EXPECT_EQ(c[0].tag, 12u);
  EXPECT_EQ(c[1].tag, 13u);
  EXPECT_EQ(lite_poll(q, c, 3), 0);  // nothing submitted: no ioctl
  EXPECT_EQ(counts_, (std::vector<uint32_t>{2, 2, 2}));
  EXPECT_EQ(seen_[0].offset, 80u);  // tag 10's entry, as submitted
  lite_queue_destroy(q);
}

TEST_F(BatchTest, QueueArgumentsAreChecked) {
  lite_queue* q = nullptr;
  EXPECT_EQ(lite_queue_create(ctx_, 0, &q), -EINVAL);
  EXPECT_EQ(lite_queue_create(ctx_, LITE_BATCH_MAX + 1, &q), -EINVAL);
  EXPECT_EQ(lite_queue_create(ctx_, 4, nullptr), -EINVAL);
  EXPECT_EQ(lite_queue_create(nullptr, 4, &q), -EINVAL);
  EXPECT_EQ(lite_submit(nullptr, nullptr, 0), -EINVAL);
  ASSERT_EQ(lite_queue_create(ctx_, 4, &q), 0);
  EXPECT_EQ(lite_poll(q, nullptr, 1), -EINVAL);
  EXPECT_EQ(lite_poll(nullptr, nullptr, 0), -EINVAL);
  lite_queue_destroy(q);
  lite_queue_destroy(nullptr);
}

TEST_F(BatchTest, CppCallbacksGetTheirOwnResults) {
  Lite session = Lite::Adopt(ctx_);
  ctx_ = nullptr;  // the session owns it now
  absl::StatusOr<Lmr> kv = session.Map("kv", kReadWrite);
  ASSERT_TRUE(kv.ok()) << kv.status();
  std::vector<uint8_t> buf(32);
  absl::Status read_status = absl::UnknownError("not called");
  absl::StatusOr<uint64_t> old = absl::UnknownError("not called");
  Batch batch;
  batch.Read(*kv, 0, absl::MakeSpan(buf),
             [&](absl::Status s) { read_status = s; });
  batch.FetchAdd(*kv, 8, 1, [&](absl::StatusOr<uint64_t> v) { old = v; });
  ASSERT_TRUE(batch.Run().ok());
  EXPECT_TRUE(read_status.ok());
  EXPECT_EQ(buf[0], 'r');
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, 101u);
  EXPECT_EQ(batch.failed(), 0u);
  EXPECT_EQ(batch.size(), 0u);  // empty again
}

TEST_F(BatchTest, CppSplitsAtTheLimitAndReportsACallFailureToTheRest) {
  Lite session = Lite::Adopt(ctx_);
  ctx_ = nullptr;
  absl::StatusOr<Lmr> kv = session.Map("kv", kReadWrite);
  ASSERT_TRUE(kv.ok());
  Batch batch;
  std::vector<absl::Status> got(LITE_BATCH_MAX + 2);
  for (size_t i = 0; i < got.size(); ++i) {
    batch.FetchAdd(*kv, 0, 1, [&got, i](absl::StatusOr<uint64_t> v) {
      got[i] = v.status();
    });
  }
  ASSERT_TRUE(batch.Run().ok());
  EXPECT_EQ(counts_, (std::vector<uint32_t>{LITE_BATCH_MAX, 2}));

  // The second ioctl fails: the first chunk keeps its own results.
  for (size_t i = 0; i < got.size(); ++i) {
    batch.FetchAdd(*kv, 0, 1, [&got, i](absl::StatusOr<uint64_t> v) {
      got[i] = v.status();
    });
  }
  counts_.clear();
  int calls = 0;
  dev_.set_handler([&](unsigned long req, void* data) {
    if (req == LITE_IOC_BATCH && ++calls == 2) return -EFAULT;
    return Handle(req, data);
  });
  absl::Status s = batch.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusErrno(s), EFAULT);
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(got[LITE_BATCH_MAX - 1].ok());
  EXPECT_EQ(StatusErrno(got[LITE_BATCH_MAX]), EFAULT);
  EXPECT_EQ(batch.failed(), 2u);
}

TEST_F(BatchTest, CppEntryFailureAndUnmappedLmr) {
  Lite session = Lite::Adopt(ctx_);
  ctx_ = nullptr;
  absl::StatusOr<Lmr> kv = session.Map("kv", kReadWrite);
  ASSERT_TRUE(kv.ok());
  Lmr gone = std::move(*kv);
  ASSERT_TRUE(gone.Unmap().ok());
  Batch batch;
  absl::Status st;
  batch.Write(gone, 0, absl::MakeConstSpan(std::vector<uint8_t>(4)),
              [&](absl::Status s) { st = s; });
  absl::Status s = batch.Run();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("not mapped"));
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(dev_.calls(LITE_IOC_BATCH), 0);
}

// The io_uring path needs a real /dev/lite (tests/vm/ring_probe.c and
// lite-bench's ring_* in the VM cluster); here: what is refused before it.
TEST_F(BatchTest, RingArgumentsAndNoRingOnTheFakeDevice) {
  struct lite_ring* ring = reinterpret_cast<struct lite_ring*>(1);
  EXPECT_EQ(lite_ring_create(ctx_, 0, &ring), -EINVAL);
  EXPECT_EQ(ring, nullptr);
  EXPECT_THAT(lite_message(), HasSubstr("depth 0"));
  EXPECT_EQ(lite_ring_create(ctx_, LITE_RING_DEPTH_MAX + 1, &ring), -EINVAL);
  EXPECT_EQ(lite_ring_create(ctx_, 16, nullptr), -EINVAL);
  EXPECT_EQ(lite_ring_create(nullptr, 16, &ring), -EINVAL);
  EXPECT_EQ(lite_ring_create(ctx_, 16, &ring), -EOPNOTSUPP);
  EXPECT_EQ(ring, nullptr);

  struct lite_batch_op op;
  lite_batch_faa(&op, 1, 0, 1);
  struct lite_completion c;
  EXPECT_EQ(lite_ring_submit(nullptr, &op, 0), -EINVAL);
  EXPECT_EQ(lite_ring_poll(nullptr, &c, 1, 1), -EINVAL);
  EXPECT_EQ(lite_ring_inflight(nullptr), 0u);
  lite_ring_destroy(nullptr);  // nothing to do

  Lite session = Lite::Adopt(ctx_);
  ctx_ = nullptr;
  absl::StatusOr<Ring> cpp = Ring::Create(session, 16);
  EXPECT_EQ(cpp.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(StatusErrno(cpp.status()), EOPNOTSUPP);
  EXPECT_EQ(dev_.calls(LITE_IOC_BATCH), 0);
}

}  // namespace
}  // namespace lite::testing
