/*
 * libLITE asynchronous operations: the C API over io_uring commands on
 * /dev/lite (LITE_URING_CMD_OP). See lite_ring.h. liburing does the rings;
 * this file fills the commands and counts what is in flight so that the
 * completion ring (twice the submission ring) can never overflow.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

#include "api/lite_internal.h"

struct lite_ring {
  struct lite_ctx *ctx;
  struct io_uring uring;
  uint32_t depth;
  uint32_t inflight; /* submitted and not polled */
  uint32_t queued;   /* of those, not yet handed to the kernel */
};

int lite_ring_create(struct lite_ctx *ctx, uint32_t depth,
                     struct lite_ring **ring) {
  struct lite_ring *r;
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (ring == NULL) return REJECT(EINVAL, "lite_ring_create: ring is NULL");
  *ring = NULL;
  if (depth == 0 || depth > LITE_RING_DEPTH_MAX)
    return REJECT(EINVAL, "lite_ring_create: depth %u (1..%u)", depth,
                  LITE_RING_DEPTH_MAX);
  if (ctx->fake)
    return REJECT(EOPNOTSUPP, "lite_ring_create: not on a test device");
  r = calloc(1, sizeof(*r));
  if (r == NULL) return REJECT(ENOMEM, "lite_ring_create: out of memory");
  r->ctx = ctx;
  r->depth = depth;
  /* Big entries: the command is a 64-byte lite_batch_op, the atomic's old
   * value comes back in the CQE's extra word. */
  err = io_uring_queue_init(depth, &r->uring,
                            IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
  if (err < 0) {
    free(r);
    if (err == -ENOSYS || err == -EINVAL)
      return REJECT(EOPNOTSUPP,
                    "lite_ring_create: this kernel has no io_uring with big "
                    "entries (%s)",
                    strerror(-err));
    return REJECT(-err, "lite_ring_create: io_uring_setup: %s", strerror(-err));
  }
  *ring = r;
  return 0;
}

/* Writes up to `max` ready completions to out; returns how many. */
static uint32_t lite_ring_reap(struct lite_ring *r, struct lite_completion *out,
                               uint32_t max) {
  struct io_uring_cqe *cqe;
  unsigned head;
  uint32_t n = 0;

  io_uring_for_each_cqe(&r->uring, head, cqe) {
    if (n == max) break;
    out[n].tag = cqe->user_data;
    out[n].error = cqe->res < 0 ? cqe->res : 0;
    out[n].result = cqe->res < 0 ? 0 : cqe->big_cqe[0];
    out[n].reserved = 0;
    n++;
  }
  io_uring_cq_advance(&r->uring, n);
  r->inflight -= n;
  return n;
}

void lite_ring_destroy(struct lite_ring *ring) {
  struct lite_completion c[16];

  if (ring == NULL) return;
  /* The kernel would finish them after the close too, writing READs'
   * bytes into buffers the caller may have freed by then. */
  while (ring->inflight) {
    int n = lite_ring_poll(ring, c, 16, 1);
    if (n < 0 && n != -EINTR) break;
  }
  io_uring_queue_exit(&ring->uring);
  free(ring);
}

int lite_ring_submit(struct lite_ring *ring, const struct lite_batch_op *op,
                     uint64_t tag) {
  struct io_uring_sqe *sqe;
  struct lite_batch_op *cmd;

  if (ring == NULL || op == NULL)
    return REJECT(EINVAL, "lite_ring_submit: a NULL ring or operation");
  if (ring->inflight == ring->depth)
    return REJECT(EAGAIN, "lite_ring_submit: %u operations in flight; poll",
                  ring->depth);
  sqe = io_uring_get_sqe(&ring->uring);
  if (sqe == NULL) /* cannot be: the ring has room for depth */
    return REJECT(EAGAIN, "lite_ring_submit: the submission ring is full");
  memset(sqe, 0, 2 * sizeof(*sqe));
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = ring->ctx->fd;
  sqe->cmd_op = LITE_URING_CMD_OP;
  sqe->user_data = tag;
  cmd = (struct lite_batch_op *)sqe->cmd;
  *cmd = *op;
  cmd->result = 0;
  cmd->error = 0;
  ring->inflight++;
  ring->queued++;
  return 0;
}

uint32_t lite_ring_inflight(const struct lite_ring *ring) {
  return ring ? ring->inflight : 0;
}

int lite_ring_poll(struct lite_ring *ring, struct lite_completion *out,
                   uint32_t max, uint32_t min_complete) {
  uint32_t wait;
  int ret;

  if (ring == NULL || (out == NULL && max))
    return REJECT(EINVAL, "lite_ring_poll: a NULL ring or completion array");
  wait = min_complete < ring->inflight ? min_complete : ring->inflight;
  if (ring->queued || io_uring_cq_ready(&ring->uring) < wait) {
    ret = io_uring_submit_and_wait(&ring->uring, wait);
    if (ret < 0 && ret != -EINTR)
      return REJECT(-ret, "lite_ring_poll: io_uring_enter: %s", strerror(-ret));
    ring->queued = io_uring_sq_ready(&ring->uring);
    if (ret == -EINTR && io_uring_cq_ready(&ring->uring) == 0)
      return REJECT(EINTR, "lite_ring_poll: interrupted by a signal");
  }
  return (int)lite_ring_reap(ring, out, max);
}
