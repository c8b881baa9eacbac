/*
 * What the files of the compat layer share. Not an API: the public one is
 * lite-lib.h.
 */
#ifndef LITE_API_COMPAT_V0_INTERNAL_H_
#define LITE_API_COMPAT_V0_INTERNAL_H_

#include <stdint.h>

#include "api/lite.h"
#include "api/lite_rpc.h"

/* The process's LITE context, opened on first use (/dev/lite); NULL with
 * errno and the message set when it cannot be opened. */
struct lite_ctx *v0_ctx(void);

/* Fails the calling API function: errno = err, the message from fmt;
 * returns -1, the original API's failure value. */
int v0_fail(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A libLITE result: rc >= 0 is returned as it is; a negative errno fails
 * the call (errno = -rc) with libLITE's message, or `what` and the errno's
 * name when libLITE had none. */
int v0_from_lite(int rc, const char *what);

/* This node's id in the cluster (0 with errno set when it has none). */
uint32_t v0_node_id(void);

/* lite_map() of a compat name that must be on node `home` (the original's
 * "lock i of node N" could only be on N; names are first-come, so anyone
 * may have made it elsewhere first): 0, or -1 with errno and the message
 * (starting with `what`) set: EACCES when it is homed on another node
 * (nothing stays mapped), or lite_map's error. info may be NULL. */
int v0_map_on(struct lite_ctx *ctx, const char *what, const char *name,
              uint32_t access, uint32_t home, lite_handle_t *handle,
              struct lite_lmr_info *info);

/* The original's priority argument (NULL_PRIORITY, USERSPACE_HIGH_PRIORITY,
 * USERSPACE_LOW_PRIORITY) as libLITE's (0, LITE_PRIO_HIGH, LITE_PRIO_LOW). */
uint32_t v0_priority(int original);

/* A password as stored and compared: a keyed 64-bit mix of (salt, password).
 * Never the password itself (docs/compat.md says what this does and does
 * not protect). */
uint64_t v0_password_hash(uint64_t salt, int password);

/* A random 64-bit value (getrandom). */
uint64_t v0_random64(void);

/* splitmix64's finalizer: every input bit moves every output bit. */
uint64_t v0_mix64(uint64_t x);

/* How many of this node's members (itself and its peers) are connected,
 * and the lowest id among them: 0, or -1 with errno set. */
int v0_connected_members(uint32_t *count, uint32_t *lowest_id);

/* --- handlers (v0_handlers.c) ------------------------------------------- */

struct v0_region {
  lite_handle_t handle;
  uint64_t size;
  uint64_t password_hash; /* v0_handler_password(password) */
  uint32_t access;        /* LITE_ACCESS_* of the handle */
  int created;            /* this process allocated it: freed at exit */
  char name[LITE_NAME_MAX + 1];
};

/* A handler's password as v0_region.password_hash keeps it: one keyed mix
 * with a per-process salt (the table is this process's own memory; the
 * slower v0_password_hash is for records other processes can read). */
uint64_t v0_handler_password(int password);

/* Adds a region; returns its handler (>= 1), or -1 (errno ENOMEM, ENFILE). */
int v0_region_add(const struct v0_region *region);
/* The region is no longer this process's to free at exit (it was freed). */
void v0_region_forget(unsigned handler);
/* The region of a handler, or NULL (no lock: handlers are never reused). */
const struct v0_region *v0_region_get(unsigned handler);
/* Fails (-1, EBADF) unless `handler` names a region; EACCES for a wrong
 * password. */
int v0_region_check(unsigned handler, int password,
                    const struct v0_region **region);

/* --- what other nodes serve (v0_peers.c) --------------------------------- */

/* The original's port on a node, opened once and kept. */
int v0_service_of(uint32_t node, unsigned port, lite_service_t *service);
/* The original's lock (node, index), opened once and kept. */
int v0_lock_of(uint32_t node, int index, lite_handle_t *lock);

/* LMR and service names of the compat layer, all under "v0/". */
#define V0_NAME_FMT_RECORD "v0/%u/id/%llu"
#define V0_NAME_FMT_REGION "v0/%u/lmr/%u.%llu.%u"
#define V0_NAME_FMT_PORT "v0/%u/port/%u"
#define V0_NAME_FMT_LOCK "v0/%u/lock/%d"
#define V0_NAME_FMT_LOCK_COUNT "v0/%u/lock-count"
#define V0_NAME_BARRIER "v0/barrier"

/* The original's IMM_MAX_PORT: ports are 0 .. 63. */
#define IMM_MAX_PORT_V0 64

#endif /* LITE_API_COMPAT_V0_INTERNAL_H_ */
