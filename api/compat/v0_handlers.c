/*
 * The original API's lite_handler integers: a per-process table from
 * handler to a libLITE handle, the region's size, access and password hash.
 * Handlers are never reused, so a lookup takes no lock: entries live in
 * chunks that are allocated once and published with release stores.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/compat/v0_internal.h"

#define CHUNK_ENTRIES 256u
#define CHUNKS 256u /* handlers 1 .. 65535 */

struct entry {
  struct v0_region region;
  int ready; /* set (release) once region is written */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *chunks[CHUNKS];
static unsigned next_handler = 1;
static uint64_t salt;
static int free_registered;

static uint64_t process_salt(void) {
  uint64_t s = __atomic_load_n(&salt, __ATOMIC_ACQUIRE);

  if (__builtin_expect(s != 0, 1)) return s;
  pthread_mutex_lock(&table_lock);
  if (salt == 0) __atomic_store_n(&salt, v0_random64() | 1, __ATOMIC_RELEASE);
  s = salt;
  pthread_mutex_unlock(&table_lock);
  return s;
}

uint64_t v0_handler_password(int password) {
  return v0_mix64(process_salt() ^ (uint32_t)password);
}

/* At exit: the LMRs this process allocated are freed, as their names carry
 * its pid and nobody else would free them. */
static void free_created(void) {
  struct lite_ctx *ctx = v0_ctx();
  unsigned c, i;

  if (ctx == NULL) return;
  pthread_mutex_lock(&table_lock);
  for (c = 0; c < CHUNKS && chunks[c] != NULL; c++)
    for (i = 0; i < CHUNK_ENTRIES; i++) {
      struct entry *e = &chunks[c][i];

      if (e->ready && e->region.created) {
        lite_unmap(ctx, e->region.handle);
        lite_free(ctx, e->region.name);
        e->region.created = 0;
      }
    }
  pthread_mutex_unlock(&table_lock);
}

int v0_region_add(const struct v0_region *region) {
  unsigned handler, c;
  struct entry *chunk;

  pthread_mutex_lock(&table_lock);
  handler = next_handler;
  if (handler >= CHUNKS * CHUNK_ENTRIES) {
    pthread_mutex_unlock(&table_lock);
    return v0_fail(ENFILE, "this process has used all %u handlers",
                   CHUNKS * CHUNK_ENTRIES - 1);
  }
  c = handler / CHUNK_ENTRIES;
  chunk = chunks[c];
  if (chunk == NULL) {
    chunk = calloc(CHUNK_ENTRIES, sizeof(*chunk));
    if (chunk == NULL) {
      pthread_mutex_unlock(&table_lock);
      return v0_fail(ENOMEM, "no memory for the handler table");
    }
    __atomic_store_n(&chunks[c], chunk, __ATOMIC_RELEASE);
  }
  chunk[handler % CHUNK_ENTRIES].region = *region;
  __atomic_store_n(&chunk[handler % CHUNK_ENTRIES].ready, 1, __ATOMIC_RELEASE);
  next_handler = handler + 1;
  if (region->created && !free_registered) {
    free_registered = 1;
    atexit(free_created);
  }
  pthread_mutex_unlock(&table_lock);
  return (int)handler;
}

void v0_region_forget(unsigned handler) {
  pthread_mutex_lock(&table_lock);
  if (handler > 0 && handler < next_handler)
    chunks[handler / CHUNK_ENTRIES][handler % CHUNK_ENTRIES].region.created = 0;
  pthread_mutex_unlock(&table_lock);
}

const struct v0_region *v0_region_get(unsigned handler) {
  struct entry *chunk;
  struct entry *e;

  if (handler == 0 || handler >= CHUNKS * CHUNK_ENTRIES) return NULL;
  chunk = __atomic_load_n(&chunks[handler / CHUNK_ENTRIES], __ATOMIC_ACQUIRE);
  if (chunk == NULL) return NULL;
  e = &chunk[handler % CHUNK_ENTRIES];
  return __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) ? &e->region : NULL;
}

int v0_region_check(unsigned handler, int password,
                    const struct v0_region **region) {
  const struct v0_region *r = v0_region_get(handler);

  if (__builtin_expect(r == NULL, 0))
    return v0_fail(EBADF, "handler %u is not one this process was given",
                   handler);
  if (__builtin_expect(r->password_hash != v0_handler_password(password), 0))
    return v0_fail(EACCES, "wrong password for handler %u", handler);
  *region = r;
  return 0;
}

void v0_handlers_reset(void) {
  unsigned c;

  pthread_mutex_lock(&table_lock);
  for (c = 0; c < CHUNKS; c++) {
    free(chunks[c]);
    chunks[c] = NULL;
  }
  next_handler = 1;
  pthread_mutex_unlock(&table_lock);
}
