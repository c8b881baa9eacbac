/*
 * libLITE batched operations (included by api/lite.h; include that one).
 *
 * Many small READs, WRITEs, fetch-and-adds and compare-and-swaps in one
 * system call (LITE_IOC_BATCH, kmod/include/uapi/lite_batch.h): lite.ko
 * posts them all, up to LITE_BATCH_WINDOW in flight at once, and each entry
 * gets its own result. docs/datapath.md ("Batched operations") has the
 * flow and the figures.
 *
 *   struct lite_batch_op ops[2];
 *   lite_batch_read(&ops[0], h, 0, buf, 64);
 *   lite_batch_faa(&ops[1], h, 4096, 1);
 *   int err = lite_batch_run(ctx, ops, 2, &failed);  // then ops[i].error
 *
 * Two ways in:
 *  - lite_batch_run(): an array of entries, one ioctl, every entry's error (and
 *    an atomic's old value) written into it.
 *  - a queue (lite_queue_create): lite_submit() adds an operation with a
 *    caller's tag, lite_poll() hands everything submitted to lite.ko in one
 *    ioctl and returns the completions, tag and error each. The operations
 *    overlap one another on the wire; they run during lite_poll(), not
 *    behind the caller's back. A queue belongs to one thread at a time.
 *
 * Limits: at most LITE_BATCH_MAX entries per ioctl; a batched READ or WRITE
 * moves 1..LITE_BATCH_RW_MAX bytes (use lite_read/lite_write above that);
 * entries run concurrently, in no particular order.
 */
#ifndef LITE_API_LITE_BATCH_H_
#define LITE_API_LITE_BATCH_H_

#include <stdint.h>

#include "kmod/include/uapi/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lite_ctx;

/* Fill one entry (every other field zeroed). */
void lite_batch_read(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                     void *buf, uint32_t length);
void lite_batch_write(struct lite_batch_op *op, uint64_t handle,
                      uint64_t offset, const void *buf, uint32_t length);
void lite_batch_faa(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                    uint64_t add);
void lite_batch_cas(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                    uint64_t expected, uint64_t desired);

/*
 * Runs ops[0..count) in one system call; each entry's `error` (0 or a
 * negative errno, as lite_read .. lite_cas would return it) and an atomic's
 * `result` (the old value) are set. *failed (may be NULL): how many failed.
 * Returns 0 when every entry has its own result, even if some failed.
 * Errors (of the call itself): -EINVAL count 0 or above LITE_BATCH_MAX, a
 * NULL ops; -EFAULT; -EINTR (a fatal signal); -ENOTTY lite.ko predates
 * batches.
 */
int lite_batch_run(struct lite_ctx *ctx, struct lite_batch_op *ops,
                   uint32_t count, uint32_t *failed);

/* One finished operation of a queue. */
struct lite_completion {
  uint64_t tag;    /* what lite_submit() was given */
  uint64_t result; /* FAA/CAS: the old value */
  int32_t error;   /* 0 or a negative errno */
  uint32_t reserved;
};

/* A queue of operations for lite_submit()/lite_poll(). Opaque. */
struct lite_queue;

/*
 * A queue of up to `depth` (1..LITE_BATCH_MAX) submitted operations on ctx,
 * which must outlive it. Errors: -EINVAL, -ENOMEM.
 */
int lite_queue_create(struct lite_ctx *ctx, uint32_t depth,
                      struct lite_queue **queue);
void lite_queue_destroy(struct lite_queue *queue);

/*
 * Adds *op (copied; its buffer must stay valid until lite_poll() returns
 * it) with `tag`. Errors: -EAGAIN the queue holds `depth` operations
 * already (poll first); -EINVAL a NULL queue or op.
 */
int lite_submit(struct lite_queue *queue, const struct lite_batch_op *op,
                uint64_t tag);

/* How many operations are submitted and not yet polled. */
uint32_t lite_queue_pending(const struct lite_queue *queue);

/*
 * Runs up to `max` of the submitted operations (the oldest first) in one
 * system call and writes their completions to out[0..n); returns n (0 if
 * none was submitted) or, when the call itself failed (see lite_batch_run()),
 * a negative errno with the operations still queued.
 */
int lite_poll(struct lite_queue *queue, struct lite_completion *out,
              uint32_t max);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LITE_API_LITE_BATCH_H_ */
