/*
 * libLITE batched operations: the C API over LITE_IOC_BATCH. See
 * lite_batch.h. A batch is one ioctl; a queue is an array of entries that
 * lite_poll() hands to lite.ko as it is, in one ioctl.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/lite_internal.h"

void lite_batch_read(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                     void *buf, uint32_t length) {
  memset(op, 0, sizeof(*op));
  op->opcode = LITE_BATCH_READ;
  op->handle = handle;
  op->offset = offset;
  op->buf = (uintptr_t)buf;
  op->length = length;
}

void lite_batch_write(struct lite_batch_op *op, uint64_t handle,
                      uint64_t offset, const void *buf, uint32_t length) {
  memset(op, 0, sizeof(*op));
  op->opcode = LITE_BATCH_WRITE;
  op->handle = handle;
  op->offset = offset;
  op->buf = (uintptr_t)buf;
  op->length = length;
}

void lite_batch_faa(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                    uint64_t add) {
  memset(op, 0, sizeof(*op));
  op->opcode = LITE_BATCH_FAA;
  op->handle = handle;
  op->offset = offset;
  op->operand = add;
  op->length = 8;
}

void lite_batch_cas(struct lite_batch_op *op, uint64_t handle, uint64_t offset,
                    uint64_t expected, uint64_t desired) {
  memset(op, 0, sizeof(*op));
  op->opcode = LITE_BATCH_CAS;
  op->handle = handle;
  op->offset = offset;
  op->operand = expected;
  op->swap = desired;
  op->length = 8;
}

int lite_batch_run(struct lite_ctx *ctx, struct lite_batch_op *ops,
                   uint32_t count, uint32_t *failed) {
  struct lite_batch req;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (ops == NULL) return REJECT(EINVAL, "lite_batch: ops is NULL");
  if (count == 0 || count > LITE_BATCH_MAX)
    return REJECT(EINVAL, "lite_batch: %u entries (1..%u)", count,
                  LITE_BATCH_MAX);
  memset(&req, 0, sizeof(req));
  req.ops = (uintptr_t)ops;
  req.count = count;
  err = lite_priv_ioctl(ctx, LITE_IOC_BATCH, &req);
  if (err) {
    lite_priv_clear_message();
    return err;
  }
  if (failed) *failed = req.failed;
  return 0;
}

struct lite_queue {
  struct lite_ctx *ctx;
  uint32_t depth;
  uint32_t nr; /* submitted, not polled: ops[0..nr), oldest first */
  struct lite_batch_op *ops;
  uint64_t *tags;
};

int lite_queue_create(struct lite_ctx *ctx, uint32_t depth,
                      struct lite_queue **queue) {
  struct lite_queue *q;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (queue == NULL) return REJECT(EINVAL, "lite_queue_create: queue is NULL");
  if (depth == 0 || depth > LITE_BATCH_MAX)
    return REJECT(EINVAL, "lite_queue_create: depth %u (1..%u)", depth,
                  LITE_BATCH_MAX);
  q = calloc(1, sizeof(*q));
  if (q == NULL) return -ENOMEM;
  q->ops = calloc(depth, sizeof(*q->ops));
  q->tags = calloc(depth, sizeof(*q->tags));
  if (q->ops == NULL || q->tags == NULL) {
    lite_queue_destroy(q);
    return -ENOMEM;
  }
  q->ctx = ctx;
  q->depth = depth;
  *queue = q;
  return 0;
}

void lite_queue_destroy(struct lite_queue *queue) {
  if (queue == NULL) return;
  free(queue->ops);
  free(queue->tags);
  free(queue);
}

int lite_submit(struct lite_queue *queue, const struct lite_batch_op *op,
                uint64_t tag) {
  if (queue == NULL || op == NULL)
    return REJECT(EINVAL, "lite_submit: a NULL queue or operation");
  if (queue->nr == queue->depth)
    return REJECT(EAGAIN, "lite_submit: the queue holds %u operations; poll",
                  queue->depth);
  queue->ops[queue->nr] = *op;
  queue->tags[queue->nr] = tag;
  queue->nr++;
  return 0;
}

uint32_t lite_queue_pending(const struct lite_queue *queue) {
  return queue ? queue->nr : 0;
}

int lite_poll(struct lite_queue *queue, struct lite_completion *out,
              uint32_t max) {
  uint32_t n, i;
  int err;

  if (queue == NULL || (out == NULL && max))
    return REJECT(EINVAL, "lite_poll: a NULL queue or completion array");
  n = queue->nr < max ? queue->nr : max;
  if (n == 0) return 0;
  /* The entries run where they were submitted: no copy. */
  err = lite_batch_run(queue->ctx, queue->ops, n, NULL);
  if (err) return err;
  for (i = 0; i < n; i++) {
    out[i].tag = queue->tags[i];
    out[i].result = queue->ops[i].result;
    out[i].error = queue->ops[i].error;
    out[i].reserved = 0;
  }
  queue->nr -= n;
  if (queue->nr) { /* fewer polled than submitted: the rest moves up */
    memmove(queue->ops, queue->ops + n, queue->nr * sizeof(*queue->ops));
    memmove(queue->tags, queue->tags + n, queue->nr * sizeof(*queue->tags));
  }
  return (int)n;
}
