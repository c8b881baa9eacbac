/*
 * What other nodes serve, opened once per process and kept: the original's
 * (node, port) as an opened RPC service, and its (node, lock index) as an
 * opened lock. A small hash table under one mutex: the calls that use it
 * each make a round trip to another node, which costs a thousand times
 * more than the uncontended lock.
 *
 * Names are cluster-wide and first-come: anyone with /dev/lite on any node
 * can register "v0/5/port/3" or allocate "v0/5/lock/0" before node 5 does.
 * The original's port P of node N could only be on node N, so a service
 * or lock LMR that is not on node N is refused (EACCES), never used.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/compat/v0_internal.h"

enum kind { KIND_PORT = 1, KIND_LOCK = 2 };

struct peer_entry {
  struct peer_entry *next;
  uint64_t key;
  uint64_t handle;
};

#define BUCKETS 256u

static pthread_mutex_t peers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct peer_entry *buckets[BUCKETS];

static uint64_t key_of(enum kind kind, uint32_t node, uint32_t index) {
  return ((uint64_t)kind << 62) | ((uint64_t)node << 32) | index;
}

static int find(uint64_t key, uint64_t *handle) {
  struct peer_entry *e;
  int found = 0;

  pthread_mutex_lock(&peers_lock);
  for (e = buckets[key % BUCKETS]; e != NULL; e = e->next)
    if (e->key == key) {
      *handle = e->handle;
      found = 1;
      break;
    }
  pthread_mutex_unlock(&peers_lock);
  return found;
}

/* Keeps `handle` for key; returns the one kept (another thread's if it was
 * first: the caller then closes its own). */
static uint64_t keep(uint64_t key, uint64_t handle, int *kept) {
  struct peer_entry *e;

  *kept = 0;
  pthread_mutex_lock(&peers_lock);
  for (e = buckets[key % BUCKETS]; e != NULL; e = e->next)
    if (e->key == key) {
      handle = e->handle;
      goto out;
    }
  e = malloc(sizeof(*e));
  if (e != NULL) {
    e->key = key;
    e->handle = handle;
    e->next = buckets[key % BUCKETS];
    buckets[key % BUCKETS] = e;
    *kept = 1;
  }
out:
  pthread_mutex_unlock(&peers_lock);
  return handle;
}

int v0_service_of(uint32_t node, unsigned port, lite_service_t *service) {
  struct lite_ctx *ctx = v0_ctx();
  uint64_t key = key_of(KIND_PORT, node, port);
  char name[LITE_NAME_MAX + 1];
  struct lite_service_peer peer;
  lite_service_t s;
  int rc, kept;

  if (ctx == NULL) return -1;
  if (port >= IMM_MAX_PORT_V0)
    return v0_fail(EINVAL, "port %u is not 0 .. %d", port, IMM_MAX_PORT_V0 - 1);
  if (find(key, service)) return 0;
  snprintf(name, sizeof(name), V0_NAME_FMT_PORT, node, port);
  rc = lite_rpc_open(ctx, name, &s, &peer);
  if (rc == -ENOENT)
    return v0_fail(ENOENT, "node %u has no application on port %u", node, port);
  if (rc < 0) return v0_from_lite(rc, name);
  if (peer.node_id != node) {
    lite_rpc_close(ctx, s);
    return v0_fail(EACCES, "%s is served by node %u, not node %u: refused",
                   name, peer.node_id, node);
  }
  *service = keep(key, s, &kept);
  if (!kept && *service != s) lite_rpc_close(ctx, s);
  return 0;
}

int v0_lock_of(uint32_t node, int index, lite_handle_t *lock) {
  struct lite_ctx *ctx = v0_ctx();
  uint64_t key = key_of(KIND_LOCK, node, (uint32_t)index);
  char name[LITE_NAME_MAX + 1];
  lite_handle_t h;
  int kept;

  if (ctx == NULL) return -1;
  if (index < 0) return v0_fail(EINVAL, "lock index %d", index);
  if (find(key, lock)) return 0;
  snprintf(name, sizeof(name), V0_NAME_FMT_LOCK, node, index);
  /* lite_sync_open() with the home checked. */
  if (v0_map_on(ctx, "lock", name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, node,
                &h, NULL) < 0) {
    if (errno == ENOENT)
      return v0_fail(ENOENT, "node %u has no lock %d", node, index);
    return -1;
  }
  *lock = keep(key, h, &kept);
  if (!kept && *lock != h) lite_unmap(ctx, h);
  return 0;
}

void v0_peers_reset(void) {
  unsigned b;

  pthread_mutex_lock(&peers_lock);
  for (b = 0; b < BUCKETS; b++)
    while (buckets[b] != NULL) {
      struct peer_entry *e = buckets[b];

      buckets[b] = e->next;
      free(e);
    }
  pthread_mutex_unlock(&peers_lock);
}
