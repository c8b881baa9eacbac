/*
 * libLITE asynchronous operations on io_uring (included by api/lite.h;
 * include that one).
 *
 * Small READs, WRITEs, fetch-and-adds and compare-and-swaps run while the
 * caller does something else: each is one io_uring command on /dev/lite
 * (LITE_URING_CMD_OP, kmod/include/uapi/lite_batch.h), handed to lite.ko
 * with the others queued since the last poll in one system call, and its
 * completion lands in a ring mapped into the process, where a poll finds it
 * without a system call. Unlike a batch (lite_batch.h), nothing waits for a
 * whole call's operations: a thread keeps up to `depth` in flight all the
 * time. docs/datapath.md ("Asynchronous operations with io_uring") has the
 * flow and the figures.
 *
 *   struct lite_ring *ring;
 *   lite_ring_create(ctx, 16, &ring);
 *   struct lite_batch_op op;
 *   lite_batch_read(&op, h, 0, buf, 64);
 *   lite_ring_submit(ring, &op, 7);             // tag 7
 *   struct lite_completion c;
 *   int n = lite_ring_poll(ring, &c, 1, 1);     // waits for one: c.tag 7
 *
 * The entries are the batch's (lite_batch_read() .. lite_batch_cas() fill
 * them, with the batch's limits); a submitted entry is copied, but its
 * buffer must stay valid until its completion is polled. A ring belongs to
 * one thread at a time. Needs a kernel with io_uring and a lite.ko with
 * LITE_URING_CMD_OP; without them lite_ring_create() fails with
 * -EOPNOTSUPP, and lite_batch_run() does the same work.
 */
#ifndef LITE_API_LITE_RING_H_
#define LITE_API_LITE_RING_H_

#include <stdint.h>

#include "kmod/include/uapi/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lite_ctx;
struct lite_completion;

/* Most operations one ring keeps in flight. */
#define LITE_RING_DEPTH_MAX 256

/* An io_uring for asynchronous operations on one lite_ctx. Opaque. */
struct lite_ring;

/*
 * A ring on ctx (which must outlive it) for up to `depth`
 * (1..LITE_RING_DEPTH_MAX) operations in flight. lite.ko runs at most 32
 * operations at once on a device (all processes together), and takes at
 * most uring_cmds_per_file (default 16) commands in flight per open
 * /dev/lite and uring_cmds_per_uid (16) per user: past them an operation
 * completes at once with -EBUSY or -EDQUOT (docs/datapath.md, "Per-user
 * limits"), so a ring deeper than 16 gains nothing by default. Errors: -EINVAL,
 * -ENOMEM, -EOPNOTSUPP (no io_uring, or lite.ko without it), and
 * io_uring_setup's (-EPERM, -EMFILE, ...).
 */
int lite_ring_create(struct lite_ctx *ctx, uint32_t depth,
                     struct lite_ring **ring);

/*
 * Waits for every operation in flight (their buffers are written until
 * then), then closes the ring.
 */
void lite_ring_destroy(struct lite_ring *ring);

/*
 * Queues *op (copied) with `tag`; the next lite_ring_poll() hands it to
 * lite.ko. Errors: -EAGAIN `depth` operations are in flight (poll first);
 * -EINVAL a NULL ring or op.
 */
int lite_ring_submit(struct lite_ring *ring, const struct lite_batch_op *op,
                     uint64_t tag);

/* Operations submitted and not yet polled (queued or running). */
uint32_t lite_ring_inflight(const struct lite_ring *ring);

/*
 * Hands the queued operations to lite.ko, waits until at least
 * min(min_complete, in flight) have completed, and writes up to `max`
 * completions to out[0..n): the tag, the error (0 or a negative errno, as
 * lite_read() .. lite_cas() would return it) and an atomic's old value.
 * Returns n, or a negative errno for the call itself (-EINTR a signal came
 * while it waited: poll again; -EINVAL), with nothing lost: completions not
 * returned stay for the next poll.
 */
int lite_ring_poll(struct lite_ring *ring, struct lite_completion *out,
                   uint32_t max, uint32_t min_complete);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LITE_API_LITE_RING_H_ */
