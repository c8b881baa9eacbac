/*
 * The original API's memory calls on LMRs: alloc_remote_mem, wrap_alloc,
 * the ask table (add_ask_mr_table, ask_lmr), and the one-sided operations.
 *
 * An identifier registered with add_ask_mr_table() on node N is a small
 * record LMR, "v0/N/id/IDENTIFIER", on N: the registered LMR's name, the
 * permission it may be asked with, and a salted hash of its password (never
 * the password). ask_lmr() reads the record, checks both, and maps the LMR.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_internal.h"
#include "api/lite.h"

#define RECORD_MAGIC 0x64693076657469ULL /* "itev0id" */
#define PERMISSIONS                                               \
  (MR_READ_FLAG | MR_WRITE_FLAG | MR_SHARE_FLAG | MR_ADMIN_FLAG | \
   MR_ATOMIC_FLAG)

struct record {
  uint64_t magic; /* written last: a record without it is not ready */
  uint64_t identifier;
  uint64_t salt;
  uint64_t password_hash;
  uint64_t permission;
  uint64_t size;
  uint64_t owner_pid;
  uint64_t owner_start; /* the owner's start time (/proc/PID/stat) */
  char name[LITE_NAME_MAX + 1];
};

/* Field 22 of /proc/PID/stat, the start time in clock ticks; 0 if gone. */
static uint64_t start_time(pid_t pid) {
  char path[64], buf[1024];
  unsigned long long t = 0;
  const char *p;
  FILE *f;
  int field;

  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  f = fopen(path, "re");
  if (f == NULL) return 0;
  if (fgets(buf, sizeof(buf), f) == NULL) buf[0] = '\0';
  fclose(f);
  /* After the command's closing parenthesis, field 3 starts. */
  p = strrchr(buf, ')');
  for (field = 2; p != NULL && field < 22; field++) p = strchr(p + 1, ' ');
  if (p != NULL) sscanf(p + 1, "%llu", &t);
  return t;
}

static uint32_t access_of(uint64_t permission) {
  uint32_t access = 0;

  if (permission & (MR_READ_FLAG | MR_ATOMIC_FLAG)) access |= LITE_ACCESS_READ;
  if (permission & (MR_WRITE_FLAG | MR_ATOMIC_FLAG))
    access |= LITE_ACCESS_WRITE;
  return access;
}

/* Allocates `name` on `home`, maps it, returns its new handler. */
static int alloc_region(struct lite_ctx *ctx, const char *name, uint64_t size,
                        uint32_t home, int password, const char *what) {
  struct v0_region r = {.size = size,
                        .access = LITE_ACCESS_READ | LITE_ACCESS_WRITE,
                        .created = 1};
  int rc, handler;

  rc = lite_alloc(ctx, name, size, 0600, home, NULL);
  if (rc < 0) return v0_from_lite(rc, what);
  rc = lite_map(ctx, name, r.access, &r.handle, NULL);
  if (rc < 0) {
    v0_from_lite(rc, what);
    lite_free(ctx, name);
    return -1;
  }
  snprintf(r.name, sizeof(r.name), "%s", name);
  r.password_hash = v0_handler_password(password);
  handler = v0_region_add(&r);
  if (handler < 0) {
    lite_unmap(ctx, r.handle);
    lite_free(ctx, name);
  }
  return handler;
}

static unsigned long long next_region(void) {
  static unsigned long long seq;

  return __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
}

int userspace_liteapi_alloc_remote_mem(unsigned int node_id, unsigned int size,
                                       bool atomic_flag, int password) {
  struct lite_ctx *ctx = v0_ctx();
  char name[LITE_NAME_MAX + 1];

  (void)atomic_flag; /* every LMR takes atomics here */
  if (ctx == NULL) return -1;
  if (size == 0) return v0_fail(EINVAL, "alloc_remote_mem: size 0");
  snprintf(name, sizeof(name), V0_NAME_FMT_REGION, node_id, (unsigned)getpid(),
           (unsigned long long)start_time(getpid()), (unsigned)next_region());
  return alloc_region(ctx, name, size, node_id, password, "alloc_remote_mem");
}

/* Reads the record of `name`, which must be on node `home`, into *rec: 0,
 * or -1 (ENOENT when missing or not yet ready, EACCES on another node). */
static int read_record(struct lite_ctx *ctx, const char *name, uint32_t home,
                       struct record *rec, const char *what) {
  lite_handle_t h;
  int rc;

  if (v0_map_on(ctx, what, name, LITE_ACCESS_READ, home, &h, NULL) < 0)
    return -1;
  rc = lite_read(ctx, h, 0, rec, sizeof(*rec));
  lite_unmap(ctx, h);
  if (rc < 0) return v0_from_lite(rc, what);
  if (rec->magic != RECORD_MAGIC)
    return v0_fail(ENOENT, "%s: %s is being registered or is not a record",
                   what, name);
  rec->name[LITE_NAME_MAX] = '\0';
  return 0;
}

/* A record whose owner (a process of this node) is gone is freed. */
static int take_over_stale(struct lite_ctx *ctx, const char *name,
                           uint32_t node) {
  struct record rec;

  if (read_record(ctx, name, node, &rec, "add_ask_mr_table") < 0) return -1;
  if (rec.owner_start != 0 &&
      start_time((pid_t)rec.owner_pid) == rec.owner_start)
    return v0_fail(EEXIST,
                   "add_ask_mr_table: identifier %" PRIu64
                   " is registered by process %" PRIu64 " on this node",
                   rec.identifier, rec.owner_pid);
  return v0_from_lite(lite_free(ctx, name), "add_ask_mr_table");
}

int userspace_liteapi_add_ask_mr_table(uint64_t identifier, uint64_t lmr,
                                       uint64_t permission, int password) {
  const struct v0_region *target = v0_region_get((unsigned)lmr);
  struct lite_ctx *ctx = v0_ctx();
  char name[LITE_NAME_MAX + 1];
  struct record rec = {0};
  uint32_t node;
  int rc, handler;

  if (ctx == NULL) return -1;
  if (target == NULL || lmr > UINT32_MAX)
    return v0_fail(EBADF, "add_ask_mr_table: %" PRIu64 " is not a handler",
                   lmr);
  if (permission == 0 || (permission & ~(uint64_t)PERMISSIONS))
    return v0_fail(EINVAL,
                   "add_ask_mr_table: permission %#" PRIx64
                   " is not a set of MR_*_FLAG bits",
                   permission);
  node = v0_node_id();
  if (node == 0) return -1;
  snprintf(name, sizeof(name), V0_NAME_FMT_RECORD, node,
           (unsigned long long)identifier);
  rec.identifier = identifier;
  rec.salt = v0_random64();
  rec.password_hash = v0_password_hash(rec.salt, password);
  rec.permission = permission;
  rec.size = target->size;
  rec.owner_pid = (uint64_t)getpid();
  rec.owner_start = start_time(getpid());
  snprintf(rec.name, sizeof(rec.name), "%s", target->name);

  rc = lite_alloc(ctx, name, 4096, 0600, node, NULL);
  if (rc == -EEXIST) {
    if (take_over_stale(ctx, name, node) < 0) return -1;
    rc = lite_alloc(ctx, name, 4096, 0600, node, NULL);
  }
  if (rc < 0) return v0_from_lite(rc, "add_ask_mr_table");
  {
    struct v0_region r = {.size = 4096,
                          .access = LITE_ACCESS_READ | LITE_ACCESS_WRITE,
                          .created = 1};
    uint64_t magic = RECORD_MAGIC;

    snprintf(r.name, sizeof(r.name), "%s", name);
    rc = lite_map(ctx, name, r.access, &r.handle, NULL);
    /* The body, then the magic that makes it valid. */
    if (rc == 0) rc = lite_write(ctx, r.handle, 0, &rec, sizeof(rec));
    if (rc == 0) rc = lite_write(ctx, r.handle, 0, &magic, sizeof(magic));
    if (rc < 0) {
      v0_from_lite(rc, "add_ask_mr_table");
      lite_free(ctx, name);
      return -1;
    }
    handler = v0_region_add(&r); /* freed at exit with the others */
    if (handler < 0) {
      lite_unmap(ctx, r.handle);
      lite_free(ctx, name);
      return -1;
    }
  }
  return 0;
}

int userspace_liteapi_wrap_alloc(void *data, int size, uint64_t identifier,
                                 int password) {
  struct lite_ctx *ctx = v0_ctx();
  const struct v0_region *r;
  uint32_t node;
  int handler, rc;

  if (ctx == NULL) return -1;
  if (data == NULL || size <= 0)
    return v0_fail(EINVAL, "wrap_alloc: needs data and a size over 0");
  node = v0_node_id();
  if (node == 0) return -1;
  handler =
      userspace_liteapi_alloc_remote_mem(node, (unsigned)size, true, password);
  if (handler < 0) return -1;
  r = v0_region_get((unsigned)handler);
  rc = lite_write(ctx, r->handle, 0, data, (uint64_t)size);
  if (rc < 0) {
    v0_from_lite(rc, "wrap_alloc: copying the data in");
  } else if (userspace_liteapi_add_ask_mr_table(
                 identifier, (uint64_t)handler,
                 MR_READ_FLAG | MR_WRITE_FLAG | MR_ATOMIC_FLAG,
                 password) == 0) {
    return handler;
  }
  /* Nothing is left behind: the copy is freed (the handler stays unused). */
  {
    int err = errno;

    lite_unmap(ctx, r->handle);
    lite_free(ctx, r->name);
    v0_region_forget((unsigned)handler);
    errno = err;
  }
  return -1;
}

int userspace_liteapi_ask_lmr(int memory_node, uint64_t identifier,
                              uint64_t permission, int password) {
  struct lite_ctx *ctx = v0_ctx();
  char name[LITE_NAME_MAX + 1];
  struct v0_region r = {0};
  struct record rec;
  unsigned home, seq;
  int rc, end = 0;

  if (ctx == NULL) return -1;
  if (memory_node <= 0)
    return v0_fail(EINVAL, "ask_lmr: node %d is not a node id", memory_node);
  if (permission == 0 || (permission & ~(uint64_t)PERMISSIONS))
    return v0_fail(EINVAL,
                   "ask_lmr: permission %#" PRIx64
                   " is not a set of MR_*_FLAG bits",
                   permission);
  snprintf(name, sizeof(name), V0_NAME_FMT_RECORD, (unsigned)memory_node,
           (unsigned long long)identifier);
  if (read_record(ctx, name, (uint32_t)memory_node, &rec, "ask_lmr") < 0) {
    if (errno == ENOENT)
      v0_fail(ENOENT,
              "ask_lmr: node %d has no LMR with identifier %" PRIu64
              " (MR_ASK_UNKNOWN)",
              memory_node, identifier);
    return -1;
  }
  if (rec.password_hash != v0_password_hash(rec.salt, password))
    return v0_fail(EACCES,
                   "ask_lmr: wrong password for identifier %" PRIu64
                   " (MR_ASK_REFUSE)",
                   identifier);
  if (permission & ~rec.permission)
    return v0_fail(EPERM,
                   "ask_lmr: identifier %" PRIu64 " allows %#" PRIx64
                   ", not %#" PRIx64 " (MR_ASK_UNPERMITTED)",
                   identifier, rec.permission, permission);
  /* Only a region of this layer (alloc_remote_mem, wrap_alloc) on the node
   * its name says: a record cannot send the caller to any other LMR it may
   * map (its own "kvstore", say). */
  if (sscanf(rec.name, "v0/%u/lmr/%*u.%*llu.%u%n", &home, &seq, &end) != 2 ||
      rec.name[end] != '\0' || home == 0)
    return v0_fail(EACCES,
                   "ask_lmr: the record of identifier %" PRIu64
                   " names \"%.40s\", not a region of this layer: refused",
                   identifier, rec.name);
  r.access = access_of(permission);
  if (r.access == 0) r.access = LITE_ACCESS_READ;
  if (v0_map_on(ctx, "ask_lmr", rec.name, r.access, home, &r.handle, NULL) < 0)
    return -1;
  r.size = rec.size;
  r.password_hash = v0_handler_password(password);
  snprintf(r.name, sizeof(r.name), "%s", rec.name);
  rc = v0_region_add(&r);
  if (rc < 0) lite_unmap(ctx, r.handle);
  return rc;
}

static int rw(unsigned handler, void *local, unsigned size, unsigned offset,
              int password, int priority, int write) {
  struct lite_ctx *ctx = v0_ctx();
  const struct v0_region *r;
  uint32_t prio = v0_priority(priority);
  int rc;

  if (__builtin_expect(ctx == NULL, 0)) return -1;
  if (__builtin_expect(v0_region_check(handler, password, &r) < 0, 0))
    return -1;
  rc = write ? lite_write_prio(ctx, r->handle, offset, local, size, prio)
             : lite_read_prio(ctx, r->handle, offset, local, size, prio);
  if (__builtin_expect(rc < 0, 0))
    return v0_from_lite(rc, write ? "rdma_write" : "rdma_read");
  return 0;
}

int userspace_liteapi_rdma_read(unsigned h, void *local, unsigned int size,
                                unsigned int offset, int password) {
  return rw(h, local, size, offset, password, NULL_PRIORITY, 0);
}
int userspace_liteapi_rdma_read_high(unsigned h, void *local, unsigned int size,
                                     unsigned int offset, int password) {
  return rw(h, local, size, offset, password, USERSPACE_HIGH_PRIORITY, 0);
}
int userspace_liteapi_rdma_read_low(unsigned h, void *local, unsigned int size,
                                    unsigned int offset, int password) {
  return rw(h, local, size, offset, password, USERSPACE_LOW_PRIORITY, 0);
}
int userspace_liteapi_rdma_write(unsigned h, void *local, unsigned int size,
                                 unsigned int offset, int password) {
  return rw(h, local, size, offset, password, NULL_PRIORITY, 1);
}
int userspace_liteapi_rdma_write_high(unsigned h, void *local,
                                      unsigned int size, unsigned int offset,
                                      int password) {
  return rw(h, local, size, offset, password, USERSPACE_HIGH_PRIORITY, 1);
}
int userspace_liteapi_rdma_write_low(unsigned h, void *local, unsigned int size,
                                     unsigned int offset, int password) {
  return rw(h, local, size, offset, password, USERSPACE_LOW_PRIORITY, 1);
}

/* The original's memset and remote_memset: size bytes at offset set to 0. */
static int zero(unsigned handler, int offset, int size, const char *what) {
  struct lite_ctx *ctx = v0_ctx();
  const struct v0_region *r = v0_region_get(handler);

  if (ctx == NULL) return -1;
  if (r == NULL)
    return v0_fail(EBADF, "%s: %u is not a handler", what, handler);
  if (offset < 0 || size <= 0)
    return v0_fail(EINVAL, "%s: offset %d, size %d", what, offset, size);
  return v0_from_lite(
      lite_memset(ctx, r->handle, (uint64_t)offset, 0, (uint64_t)size), what);
}

int userspace_liteapi_memset(unsigned h, int offset, int size) {
  return zero(h, offset, size, "memset");
}
int userspace_liteapi_remote_memset(unsigned h, int offset, int size) {
  return zero(h, offset, size, "remote_memset");
}

static const struct v0_region *atomic_target(unsigned long handler,
                                             const char *what) {
  const struct v0_region *r =
      handler > UINT32_MAX ? NULL : v0_region_get((unsigned)handler);

  if (r == NULL) v0_fail(EBADF, "%s: %lu is not a handler", what, handler);
  return r;
}

int userspace_liteapi_fetch_add(unsigned long h, void *local_addr,
                                unsigned long long input_value) {
  struct lite_ctx *ctx = v0_ctx();
  const struct v0_region *r;
  uint64_t old;
  int rc;

  if (ctx == NULL || (r = atomic_target(h, "fetch_add")) == NULL) return -1;
  rc = lite_faa(ctx, r->handle, 0, input_value, &old);
  if (rc < 0) return v0_from_lite(rc, "fetch_add");
  if (local_addr != NULL) memcpy(local_addr, &old, sizeof(old));
  return 0;
}

int userspace_liteapi_compare_swp(unsigned long h, void *local_addr,
                                  unsigned long long guess_value,
                                  unsigned long long set_value) {
  struct lite_ctx *ctx = v0_ctx();
  const struct v0_region *r;
  uint64_t old;
  int rc;

  if (ctx == NULL || (r = atomic_target(h, "compare_swp")) == NULL) return -1;
  rc = lite_cas(ctx, r->handle, 0, guess_value, set_value, &old);
  if (rc < 0) return v0_from_lite(rc, "compare_swp");
  if (local_addr != NULL) memcpy(local_addr, &old, sizeof(old));
  return old == guess_value ? 0 : 1;
}
