// free_hammer: the two sides of tests/vm/free_in_use.sh (issue 9, item 6):
// writers that keep an LMR busy, and its owner, who frees it under them and
// at once allocates new LMRs on the same home, fills them and checks that
// nothing but itself ever wrote into them.
//
//   free_hammer write NAME SECONDS AFTER_ERROR_MS READY_FILE [--unmap]
//     Maps NAME read-write and WRITEs 8 B, 4 KiB, 64 KiB and 1 MiB blocks of
//     0xEE in turn, spread over the LMR, without pause (the 1 MiB ones keep
//     work requests in flight for long); creates READY_FILE after the first
//     round; stops after SECONDS, or AFTER_ERROR_MS after the first failed
//     WRITE (it goes on writing until then, so that handles used after the
//     free are seen failing too). With --unmap it unmaps the handle at its
//     first failure and stops, as an application would: on the LMR's home a
//     mapped handle holds the pages, and the test wants them free at once.
//     Prints one line:
//       ops=N ok=N failed=N max_ms=X first_error=ERRNO errors=ERRNO:N,...
//       last=ERRNO|ok
//
//   free_hammer churn VICTIM PREFIX COUNT SIZE SETTLE_MS
//     Frees VICTIM (the caller must own it and run on its home), waits
//     until this node's lite.ko gave the memory back (its debugfs gauge
//     "lmrs" drops: the fenced free ends only once every holder of a grant
//     acknowledged the revoke, which a loaded node can take seconds to do),
//     then at once allocates COUNT LMRs PREFIX.0 .. PREFIX.COUNT-1 of SIZE
//     bytes on this node, one after another, and fills each with its own
//     pattern as soon as it exists: the first of them is where the freed
//     pages go again. Waits SETTLE_MS (the writers are still failing
//     meanwhile), then reads every new LMR back. Prints:
//       freed=0 released_ms=X allocated=N verified=N corrupted=N
//       first_corruption=NAME@OFF
//     (freed is the errno name of the free when it failed; released_ms is
//     how long the memory took to be given back, "-" if not within 30 s).
//
// Exit status 0 when it ran (the test judges the numbers), 2 on a usage or
// setup error.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/lite.h"

#define BLOCK_MAX (1024 * 1024)
#define FILL_BLOCK (64 * 1024)

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void touch(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) close(fd);
}

// Counts per errno, for the few a freed LMR produces.
#define MAX_KINDS 8
struct kinds {
  int err[MAX_KINDS];
  long n[MAX_KINDS];
  int used;
};

static void count(struct kinds *k, int err) {
  for (int i = 0; i < k->used; i++) {
    if (k->err[i] == err) {
      k->n[i]++;
      return;
    }
  }
  if (k->used < MAX_KINDS) {
    k->err[k->used] = err;
    k->n[k->used++] = 1;
  }
}

static int do_write(struct lite_ctx *ctx, char **argv) {
  const char *name = argv[0];
  const double run_ms = atof(argv[1]) * 1e3;
  const double after_ms = atof(argv[2]);
  static const uint64_t sizes[] = {8, 4096, 64 * 1024, BLOCK_MAX};
  const int unmap_on_error = argv[4] != NULL;
  static char block[BLOCK_MAX];
  struct lite_lmr_info info;
  lite_handle_t h;
  int rc = lite_map(ctx, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &h, &info);
  if (rc) {
    fprintf(stderr, "free_hammer: map %s: %s %s\n", name, lite_errno_name(rc),
            lite_message());
    return 2;
  }
  if (info.size_bytes < BLOCK_MAX) {
    fprintf(stderr, "free_hammer: %s is smaller than %d bytes\n", name,
            BLOCK_MAX);
    return 2;
  }
  memset(block, 0xEE, sizeof(block));
  struct kinds kinds = {0};
  long ops = 0, ok = 0, failed = 0;
  double max_ms = 0, first_at = 0;
  int first_err = 0, last = 0;
  uint64_t offset = 0;
  const double start = now_ms();
  for (;;) {
    const double t = now_ms();
    if (t - start >= run_ms) break;
    if (first_err && t - first_at >= after_ms) break;
    const uint64_t len = sizes[ops % 4];
    // Walk the LMR in 60 KiB steps so that every chunk sees writes.
    offset = (offset + 60 * 1024) % (info.size_bytes - BLOCK_MAX + 1);
    rc = lite_write(ctx, h, offset, block, len);
    const double end = now_ms();
    if (end - t > max_ms) max_ms = end - t;
    ops++;
    last = rc;
    if (rc == 0) {
      ok++;
    } else {
      failed++;
      count(&kinds, rc);
      if (!first_err) {
        first_err = rc;
        first_at = end;
        if (unmap_on_error) {
          lite_unmap(ctx, h);
          break;
        }
      } else {
        usleep(20000);  // failing fast is the point; leave the vCPU to others
      }
    }
    if (ops == 4) touch(argv[3]);
  }
  printf("ops=%ld ok=%ld failed=%ld max_ms=%.1f first_error=%s errors=", ops,
         ok, failed, max_ms, first_err ? lite_errno_name(first_err) : "-");
  for (int i = 0; i < kinds.used; i++) {
    printf("%s%s:%ld", i ? "," : "", lite_errno_name(kinds.err[i]), kinds.n[i]);
  }
  printf("%s last=%s\n", kinds.used ? "" : "-",
         last ? lite_errno_name(last) : "ok");
  lite_close(ctx);
  return 0;
}

static uint8_t pattern(int lmr, uint64_t offset) {
  return (uint8_t)(0x5A ^ lmr ^ (offset >> 12) ^ (offset * 7));
}

static void fill_block(uint8_t *buf, int lmr, uint64_t offset, uint64_t len) {
  for (uint64_t i = 0; i < len; i++) buf[i] = pattern(lmr, offset + i);
}

// How long churn waits for the freed LMR's memory to be given back.
#define RELEASE_WAIT_MS 30000

// LMRs this node's lite.ko hosts (debugfs), or -1 if it cannot be read.
static long lmrs_hosted(void) {
  FILE *f = fopen("/sys/kernel/debug/lite/lmrs", "r");
  long n = -1;
  if (f) {
    if (fscanf(f, "%ld", &n) != 1) n = -1;
    fclose(f);
  }
  return n;
}

static int do_churn(struct lite_ctx *ctx, char **argv) {
  const char *victim = argv[0], *prefix = argv[1];
  const int count_new = atoi(argv[2]);
  const uint64_t size = strtoull(argv[3], NULL, 0);
  const double settle_ms = atof(argv[4]);
  static uint8_t buf[FILL_BLOCK], got[FILL_BLOCK];
  if (count_new < 1 || count_new > 64 || size < FILL_BLOCK ||
      size % FILL_BLOCK) {
    fprintf(stderr,
            "free_hammer: churn needs 1..64 LMRs of a multiple of "
            "64 KiB\n");
    return 2;
  }
  lite_handle_t *h = calloc(count_new, sizeof(*h));
  char name[192], released[32] = "-";
  const long hosted = lmrs_hosted();
  const double free_start = now_ms();
  int freed = lite_free(ctx, victim), allocated = 0;
  while (!freed && hosted > 0 && now_ms() - free_start < RELEASE_WAIT_MS) {
    long now = lmrs_hosted();
    if (now >= 0 && now < hosted) {
      snprintf(released, sizeof(released), "%.0f", now_ms() - free_start);
      break;
    }
    usleep(10000);
  }
  for (int i = 0; i < count_new; i++) {
    snprintf(name, sizeof(name), "%s.%d", prefix, i);
    int rc = lite_alloc(ctx, name, size, 0600, 0, NULL);
    if (!rc)
      rc = lite_map(ctx, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &h[i],
                    NULL);
    for (uint64_t off = 0; !rc && off < size; off += FILL_BLOCK) {
      fill_block(buf, i, off, FILL_BLOCK);
      rc = lite_write(ctx, h[i], off, buf, FILL_BLOCK);
    }
    if (rc) {
      fprintf(stderr, "free_hammer: new LMR %s: %s %s\n", name,
              lite_errno_name(rc), lite_message());
      break;
    }
    allocated++;
  }
  usleep((useconds_t)(settle_ms * 1e3));
  int verified = 0, corrupted = 0;
  char first[224] = "-";
  for (int i = 0; i < allocated; i++) {
    int bad = 0;
    for (uint64_t off = 0; off < size && !bad; off += FILL_BLOCK) {
      int rc = lite_read(ctx, h[i], off, got, FILL_BLOCK);
      fill_block(buf, i, off, FILL_BLOCK);
      if (rc) {
        fprintf(stderr, "free_hammer: read back %s.%d: %s\n", prefix, i,
                lite_errno_name(rc));
        bad = 1;
        break;
      }
      for (uint64_t j = 0; j < FILL_BLOCK; j++) {
        if (got[j] != buf[j]) {
          if (!corrupted)
            snprintf(first, sizeof(first), "%s.%d@%llu", prefix, i,
                     (unsigned long long)(off + j));
          bad = 1;
          break;
        }
      }
    }
    if (bad)
      corrupted++;
    else
      verified++;
  }
  printf(
      "freed=%s released_ms=%s allocated=%d verified=%d corrupted=%d "
      "first_corruption=%s\n",
      freed ? lite_errno_name(freed) : "0", released, allocated, verified,
      corrupted, first);
  free(h);
  lite_close(ctx);
  return 0;
}

int main(int argc, char **argv) {
  struct lite_ctx *ctx;
  int write_mode = (argc == 6 || (argc == 7 && !strcmp(argv[6], "--unmap"))) &&
                   !strcmp(argv[1], "write");
  int churn_mode = argc == 7 && !strcmp(argv[1], "churn");
  if (!write_mode && !churn_mode) {
    fprintf(stderr,
            "usage: free_hammer write NAME SECONDS AFTER_ERROR_MS READY_FILE "
            "[--unmap]\n"
            "       free_hammer churn VICTIM PREFIX COUNT SIZE SETTLE_MS\n");
    return 2;
  }
  int rc = lite_open(NULL, &ctx);
  if (rc) {
    fprintf(stderr, "free_hammer: open: %s\n", lite_errno_name(rc));
    return 2;
  }
  return write_mode ? do_write(ctx, argv + 2) : do_churn(ctx, argv + 2);
}
