/*
 * The compat layer's process context, its errors, membership and the calls
 * that need no cluster (alloc_memory, stick_this_thread_to_core).
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_internal.h"
#include "api/compat/v0_testing.h"
#include "api/lite.h"

static __thread char message[256];

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lite_ctx *ctx_current;

const char *lite_v0_message(void) { return message; }

int v0_fail(int err, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(message, sizeof(message), fmt, ap);
  va_end(ap);
  errno = err;
  return -1;
}

int v0_from_lite(int rc, const char *what) {
  const char *why;

  if (rc >= 0) return rc;
  why = lite_message();
  if (why != NULL && why[0] != '\0') return v0_fail(-rc, "%s: %s", what, why);
  return v0_fail(-rc, "%s: %s", what, lite_errno_name(rc));
}

struct lite_ctx *v0_ctx(void) {
  struct lite_ctx *ctx = __atomic_load_n(&ctx_current, __ATOMIC_ACQUIRE);
  int rc;

  if (__builtin_expect(ctx != NULL, 1)) return ctx;
  pthread_mutex_lock(&ctx_lock);
  if (ctx_current == NULL) {
    rc = lite_open(NULL, &ctx);
    if (rc == 0) {
      /* Never closed: the process's exit closes the file, which ends its
       * services and handles. Closing it in an exit handler would free the
       * context under threads still waiting in a call (a server's
       * receive_message, say) when main returns. */
      __atomic_store_n(&ctx_current, ctx, __ATOMIC_RELEASE);
    } else {
      v0_from_lite(rc, "cannot open /dev/lite (is lite.ko loaded?)");
    }
  }
  ctx = ctx_current;
  pthread_mutex_unlock(&ctx_lock);
  return ctx;
}

/* Tables of the other files, emptied when a test changes the context. */
void v0_handlers_reset(void);
void v0_rpc_reset(void);
void v0_peers_reset(void);
void v0_lock_reset(void);

void lite_v0_use_context(struct lite_ctx *ctx) {
  pthread_mutex_lock(&ctx_lock);
  __atomic_store_n(&ctx_current, ctx, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&ctx_lock);
  v0_handlers_reset();
  v0_rpc_reset();
  v0_peers_reset();
  v0_lock_reset();
}

uint32_t v0_node_id(void) {
  struct lite_ctx *ctx = v0_ctx();
  uint32_t id = 0;
  int rc;

  if (ctx == NULL) return 0;
  rc = lite_node_id(ctx, &id, NULL);
  if (rc < 0) {
    v0_from_lite(rc, "this node has no identity in the cluster (no agent?)");
    return 0;
  }
  return id;
}

int v0_map_on(struct lite_ctx *ctx, const char *what, const char *name,
              uint32_t access, uint32_t home, lite_handle_t *handle,
              struct lite_lmr_info *info) {
  struct lite_lmr_info got;
  int rc;

  rc = lite_map(ctx, name, access, handle, &got);
  if (rc < 0) return v0_from_lite(rc, what);
  if (got.home_node_id != home) {
    lite_unmap(ctx, *handle);
    return v0_fail(EACCES, "%s: %s is on node %u, not node %u: refused", what,
                   name, got.home_node_id, home);
  }
  if (info != NULL) *info = got;
  return 0;
}

uint32_t v0_priority(int original) {
  switch (original) {
    case USERSPACE_HIGH_PRIORITY:
      return LITE_PRIO_HIGH;
    case USERSPACE_LOW_PRIORITY:
      return LITE_PRIO_LOW;
    default:
      return 0;
  }
}

uint64_t v0_random64(void) {
  uint64_t v = 0;

  while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
  }
  return v;
}

uint64_t v0_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t v0_password_hash(uint64_t salt, int password) {
  uint64_t h = v0_mix64(salt ^ 0x6c6974652d763021ULL); /* "lite-v0!" */
  int round;

  /* A few rounds so that one guess costs more than one multiply. */
  for (round = 0; round < 8; round++)
    h = v0_mix64(h ^ (uint32_t)password ^ ((uint64_t)round << 32));
  return h;
}

int userspace_liteapi_join(char *input_str, int eth_port, int ib_port) {
  uint32_t id;

  (void)input_str; /* the manager's address is the agent's (liteagent) */
  (void)eth_port;
  (void)ib_port;
  id = v0_node_id();
  return id == 0 ? -1 : (int)id;
}

int userspace_liteapi_get_node_id(void) {
  uint32_t id = v0_node_id();

  return id == 0 ? -1 : (int)id;
}

int v0_connected_members(uint32_t *count, uint32_t *lowest_id) {
  struct lite_ctx *ctx = v0_ctx();
  struct lite_member *members;
  uint32_t n = 0, i;
  int rc;

  *count = 0;
  *lowest_id = 0;
  if (ctx == NULL) return -1;
  members = calloc(LITE_MEMBERS_MAX, sizeof(*members));
  if (members == NULL) return v0_fail(ENOMEM, "no memory for the member list");
  rc = lite_members(ctx, members, LITE_MEMBERS_MAX, &n);
  for (i = 0; rc == 0 && i < n && i < LITE_MEMBERS_MAX; i++) {
    if (members[i].state != LITE_PEER_CONNECTED) continue;
    (*count)++;
    if (*lowest_id == 0 || members[i].node_id < *lowest_id)
      *lowest_id = members[i].node_id;
  }
  free(members);
  return rc < 0 ? v0_from_lite(rc, "the cluster's members") : 0;
}

/* This node and the peers it is connected to: the nodes a call can reach. */
int userspace_liteapi_get_total_node(void) {
  uint32_t count, lowest;

  if (v0_connected_members(&count, &lowest) < 0) return -1;
  return (int)count;
}

void *userspace_liteapi_alloc_memory(unsigned long size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t bytes;
  void *p;

  if (size == 0 || size > (1UL << 40)) {
    v0_fail(EINVAL, "alloc_memory: size %lu is not 1 .. 2^40", size);
    return NULL;
  }
  bytes = (size + page - 1) / page * page;
  /* Page-aligned, zeroed and resident, like the original's pinned pages. */
  p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    v0_fail(errno, "alloc_memory: mmap of %zu bytes: %s", bytes,
            strerror(errno));
    return NULL;
  }
  return p;
}

int stick_this_thread_to_core(int core_id) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;

  /* The original's convention: an errno value, not -1. */
  if (core_id < 0 || core_id >= cores) return EINVAL;
  CPU_ZERO(&set);
  CPU_SET(core_id, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int userspace_syscall_test(void) {
  return v0_fail(ENOSYS,
                 "syscall_test was the original kernel's test hook; this "
                 "LITE has no such call");
}
