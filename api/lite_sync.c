/*
 * libLITE locks and barriers: the C API over LITE_IOC_SYNC. See
 * lite_sync.h. Each call is one ioctl with its arguments on the stack.
 */
#include "api/lite_sync.h"

#include <errno.h>

#include "api/lite_internal.h"

int lite_sync_create(struct lite_ctx *ctx, const char *name, uint32_t mode,
                     uint32_t home_node_id) {
  return lite_alloc(ctx, name, LITE_SYNC_LMR_BYTES, mode, home_node_id, NULL);
}

int lite_sync_open(struct lite_ctx *ctx, const char *name,
                   lite_handle_t *lock) {
  return lite_map(ctx, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, lock, NULL);
}

static int sync_op(struct lite_ctx *ctx, lite_handle_t handle, uint32_t op,
                   uint32_t count, uint32_t timeout_ms) {
  struct lite_sync req = {
      .handle = handle,
      .op = op,
      .timeout_ms = timeout_ms,
      .count = count,
  };
  int err = lite_priv_check_ctx(ctx);

  if (err) return err;
  if (timeout_ms > LITE_RPC_TIMEOUT_MAX_MS)
    return REJECT(EINVAL, "timeout_ms %u is over LITE_RPC_TIMEOUT_MAX_MS (%u)",
                  timeout_ms, LITE_RPC_TIMEOUT_MAX_MS);
  err = lite_priv_ioctl(ctx, LITE_IOC_SYNC, &req);
  if (err) {
    lite_priv_clear_message();
    return err;
  }
  return (req.result & LITE_SYNC_OWNER_DIED) ? -EOWNERDEAD : 0;
}

int lite_lock(struct lite_ctx *ctx, lite_handle_t lock, uint32_t timeout_ms) {
  return sync_op(ctx, lock, LITE_SYNC_LOCK, 0, timeout_ms);
}

int lite_trylock(struct lite_ctx *ctx, lite_handle_t lock) {
  return sync_op(ctx, lock, LITE_SYNC_TRYLOCK, 0, 0);
}

int lite_unlock(struct lite_ctx *ctx, lite_handle_t lock) {
  int err = sync_op(ctx, lock, LITE_SYNC_UNLOCK, 0, 0);

  if (err == -EPERM)
    return REJECT(EPERM, "this context does not hold the lock");
  return err;
}

int lite_barrier(struct lite_ctx *ctx, lite_handle_t barrier, uint32_t count,
                 uint32_t timeout_ms) {
  if (count == 0 || count > LITE_SYNC_COUNT_MAX)
    return REJECT(EINVAL, "a barrier's count is 1..%u, not %u",
                  LITE_SYNC_COUNT_MAX, count);
  return sync_op(ctx, barrier, LITE_SYNC_BARRIER, count, timeout_ms);
}
