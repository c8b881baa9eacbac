/*
 * The original API's locks and barrier on LITE's (docs/locks.md).
 *
 * Lock i of node N is the lock LMR "v0/N/lock/i" on N; create_lock() takes
 * the next i from a fetch-and-add on "v0/N/lock-count". The barrier is one
 * LMR, "v0/barrier", on the lowest-numbered node this node is connected to,
 * so every node picks the same home. Locks and the barrier outlive the
 * process that made them, as in the original: other processes use them.
 * Each is used only if it is on the node its name says (v0_map_on): the
 * names are first-come, and one made elsewhere first is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_internal.h"
#include "api/lite_sync.h"

static void fill(remote_spinlock_t *input, uint32_t node, int index) {
  memset(input, 0, sizeof(*input));
  input->lock_num = index;
  input->lock_mr.node_id = node;
  input->lock_mr.length = LITE_SYNC_LMR_BYTES;
}

/* The next lock index of node `node`. */
static int next_index(struct lite_ctx *ctx, uint32_t node) {
  char name[LITE_NAME_MAX + 1];
  lite_handle_t h;
  uint64_t old = 0;
  int rc;

  snprintf(name, sizeof(name), V0_NAME_FMT_LOCK_COUNT, node);
  rc = lite_alloc(ctx, name, 4096, 0600, node, NULL);
  if (rc < 0 && rc != -EEXIST) return v0_from_lite(rc, "create_lock");
  /* Someone else's counter elsewhere would hand out its indexes. */
  if (v0_map_on(ctx, "create_lock", name, LITE_ACCESS_READ | LITE_ACCESS_WRITE,
                node, &h, NULL) < 0)
    return -1;
  rc = lite_faa(ctx, h, 0, 1, &old);
  lite_unmap(ctx, h);
  if (rc < 0) return v0_from_lite(rc, "create_lock");
  if (old > INT32_MAX)
    return v0_fail(ENOSPC, "create_lock: node %u has made %d locks", node,
                   INT32_MAX);
  return (int)old;
}

int userspace_liteapi_create_lock(int target_node, remote_spinlock_t *input) {
  struct lite_ctx *ctx = v0_ctx();
  char name[LITE_NAME_MAX + 1];
  int index, rc;

  if (ctx == NULL) return -1;
  if (target_node <= 0 || input == NULL)
    return v0_fail(EINVAL, "create_lock: needs a node id and a lock");
  index = next_index(ctx, (uint32_t)target_node);
  if (index < 0) return -1;
  snprintf(name, sizeof(name), V0_NAME_FMT_LOCK, (unsigned)target_node, index);
  rc = lite_sync_create(ctx, name, 0600, (uint32_t)target_node);
  if (rc < 0) return v0_from_lite(rc, "create_lock");
  fill(input, (uint32_t)target_node, index);
  return 0;
}

int userspace_liteapi_ask_lock(int target_node, int target_idx,
                               remote_spinlock_t *input) {
  lite_handle_t h;

  if (target_node <= 0 || target_idx < 0 || input == NULL)
    return v0_fail(EINVAL, "ask_lock: needs a node id, an index and a lock");
  if (v0_lock_of((uint32_t)target_node, target_idx, &h) < 0) return -1;
  fill(input, (uint32_t)target_node, target_idx);
  return 0;
}

static int lock_of(const remote_spinlock_t *input, lite_handle_t *h,
                   const char *what) {
  if (input == NULL) return v0_fail(EINVAL, "%s: no lock", what);
  return v0_lock_of(input->lock_mr.node_id, input->lock_num, h);
}

int userspace_liteapi_lock(remote_spinlock_t *input) {
  struct lite_ctx *ctx = v0_ctx();
  lite_handle_t h;
  int rc;

  if (ctx == NULL || lock_of(input, &h, "lock") < 0) return -1;
  /* The original waited as long as it took. */
  do {
    rc = lite_lock(ctx, h, LITE_RPC_TIMEOUT_MAX_MS);
  } while (rc == -ETIMEDOUT);
  /* -EOWNERDEAD: held, after a holder that died (the original had no such
   * case; the lock is this caller's either way). */
  return rc == -EOWNERDEAD ? 0 : v0_from_lite(rc, "lock");
}

int userspace_liteapi_unlock(remote_spinlock_t *input) {
  struct lite_ctx *ctx = v0_ctx();
  lite_handle_t h;

  if (ctx == NULL || lock_of(input, &h, "unlock") < 0) return -1;
  return v0_from_lite(lite_unlock(ctx, h), "unlock");
}

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static lite_handle_t barrier;
static int opened;

void v0_lock_reset(void) {
  pthread_mutex_lock(&open_lock);
  opened = 0;
  pthread_mutex_unlock(&open_lock);
}

int userspace_liteapi_dist_barrier(unsigned int num) {
  struct lite_ctx *ctx = v0_ctx();
  uint32_t home;
  int rc = 0;

  if (ctx == NULL) return -1;
  if (num == 0 || num > LITE_SYNC_COUNT_MAX)
    return v0_fail(EINVAL, "dist_barrier: %u is not 1 .. %u", num,
                   LITE_SYNC_COUNT_MAX);
  pthread_mutex_lock(&open_lock);
  if (!opened) {
    uint32_t connected;

    /* The lowest id among the connected members: every node picks it. */
    if (v0_connected_members(&connected, &home) < 0) {
      rc = -1;
    } else {
      rc = lite_sync_create(ctx, V0_NAME_BARRIER, 0600, home);
      if (rc == -EEXIST) rc = 0;
      rc = v0_from_lite(rc, "dist_barrier");
      /* lite_sync_open(), refusing a barrier made on another node. */
      if (rc == 0)
        rc = v0_map_on(ctx, "dist_barrier", V0_NAME_BARRIER,
                       LITE_ACCESS_READ | LITE_ACCESS_WRITE, home, &barrier,
                       NULL);
      opened = rc == 0;
    }
  }
  pthread_mutex_unlock(&open_lock);
  if (rc < 0) return -1;
  do {
    rc = lite_barrier(ctx, barrier, num, LITE_RPC_TIMEOUT_MAX_MS);
  } while (rc == -ETIMEDOUT);
  return v0_from_lite(rc, "dist_barrier");
}
