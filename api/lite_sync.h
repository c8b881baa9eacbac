/*
 * libLITE locks and barriers: the C API over LITE_IOC_SYNC
 * (kmod/include/uapi/lite_sync.h, docs/locks.md).
 *
 * A lock or a barrier is a named LMR. lite_sync_create() makes one (any LMR
 * will do; its bytes stay the application's, e.g. the data the lock
 * guards), lite_sync_open() maps it once by name (the one control-plane
 * round trip), and every lock, unlock and barrier after that is one ioctl
 * and one request to the LMR's home node, no cluster manager involved:
 *
 *   lite_handle_t lock;
 *   lite_sync_open(ctx, "accounts.lock", &lock);
 *   int err = lite_lock(ctx, lock, 5000);
 *   if (err == -EOWNERDEAD) repair();      // held, but the last holder died
 *   else if (err) return err;              // not held
 *   ...
 *   lite_unlock(ctx, lock);
 *
 * Mutual exclusion holds across every node, process and thread; waiters are
 * served in the order their requests reach the home (FIFO). A lock belongs
 * to the context (open file) that took it: any thread of it may unlock it,
 * a second lite_lock() through the same context waits like anyone else.
 * When the holder's process dies or the manager fails its node, the lock
 * passes to the next waiter, whose lite_lock() returns -EOWNERDEAD (a node
 * only cut off from the home keeps it: docs/locks.md, "Failures").
 *
 * Errors of every call here (besides those listed per call):
 *   -EBADF      unknown handle;  -EACCES  mapped without write access;
 *   -ESTALE     the LMR was freed;  -EHOSTDOWN  its home node is down;
 *   -ENOTCONN   its home serves no locks (its agent has not registered
 *               lite.sync.<node id> yet);
 *   -EINTR      a fatal signal arrived (nothing held, not arrived);
 *   -EDQUOT     (lite_lock, lite_barrier) this user has lite.ko's
 *               sync_waits_per_uid (default 16) waits at that home from
 *               this node already: refused at once, nothing held.
 */
#ifndef LITE_API_LITE_SYNC_H_
#define LITE_API_LITE_SYNC_H_

#include <stdint.h>

#include "api/lite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The LMR lite_sync_create() makes: one page. */
#define LITE_SYNC_LMR_BYTES 4096u

/*
 * Creates the LMR `name` (LITE_SYNC_LMR_BYTES, `mode` as lite_alloc's) on
 * node `home_node_id` (0: this node) to lock or meet on.
 * Errors: lite_alloc's.
 */
int lite_sync_create(struct lite_ctx *ctx, const char *name, uint32_t mode,
                     uint32_t home_node_id);

/* Maps the LMR `name` with read and write access for the calls below.
 * Errors: lite_map's. */
int lite_sync_open(struct lite_ctx *ctx, const char *name, lite_handle_t *lock);

/*
 * Waits up to timeout_ms (0: lite.ko's rpc_timeout_ms, 10 s by default; at
 * most LITE_RPC_TIMEOUT_MAX_MS) until the lock is this context's.
 * Returns 0, or -EOWNERDEAD: held too, but the previous holder died while
 * holding it (the data it guards may be half-updated).
 * Errors: -ETIMEDOUT not held; -EINVAL timeout too long.
 */
int lite_lock(struct lite_ctx *ctx, lite_handle_t lock, uint32_t timeout_ms);

/* As lite_lock() without waiting: -EBUSY when another holds it. */
int lite_trylock(struct lite_ctx *ctx, lite_handle_t lock);

/* Releases a lock this context holds. Errors: -EPERM it does not. */
int lite_unlock(struct lite_ctx *ctx, lite_handle_t lock);

/*
 * Waits until `count` callers (any nodes, contexts, threads) have arrived
 * at the barrier, up to timeout_ms (as lite_lock's). A context that arrived
 * once is a participant: when it closes (its process dies) or its node
 * fails, every waiter fails, and so does each other participant's next
 * arrival, once.
 * Errors: -ECONNABORTED a participant's process died; -EHOSTDOWN a
 *         participant's node (or the home) failed; -ETIMEDOUT not all came
 *         (this caller no longer counts as arrived); -EINVAL count 0, over
 *         LITE_SYNC_COUNT_MAX, or not this round's count.
 */
int lite_barrier(struct lite_ctx *ctx, lite_handle_t barrier, uint32_t count,
                 uint32_t timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* LITE_API_LITE_SYNC_H_ */
