// peer_loop: READ and FAA in a loop on one LMR, timing every operation, for
// tests/vm/peer_failure.sh (the home node is crashed under this traffic).
//
//   peer_loop NAME MAX_SECONDS AFTER_ERROR_MS READY_FILE STOP_FILE
//
// Maps NAME read-write, does one READ (64 bytes) and one FAA (8 bytes) after
// another, creates READY_FILE after the first round, and stops once
// STOP_FILE exists, or AFTER_ERROR_MS after the first failed operation (it
// goes on issuing operations until then, to see that new ones fail fast
// too), or after MAX_SECONDS at the latest. The test says when to stop
// rather than guessing a duration: on a loaded host, a fixed run could end
// before the crash it is meant to see. Each
// operation's latency is measured on CLOCK_MONOTONIC around the call.
// Prints one line:
//
//   ops=N ok=N failed=N max_ok_ms=X max_failed_ms=X max_ms=X
//   first_error=ERRNO first_error_ms=X errors=ERRNO:N,...
//
// (ms with 1 decimal; first_error "-" if none). Exit status 0 if it ran
// (the test judges the numbers), 2 on a usage or setup error.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/lite.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Counts per errno, for the few a failed peer produces.
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

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr,
            "usage: peer_loop NAME MAX_SECONDS AFTER_ERROR_MS READY_FILE "
            "STOP_FILE\n");
    return 2;
  }
  const char *name = argv[1];
  const double run_ms = atof(argv[2]) * 1e3;
  const double after_ms = atof(argv[3]);
  struct lite_ctx *ctx;
  lite_handle_t h;
  int rc = lite_open(NULL, &ctx);
  if (rc) {
    fprintf(stderr, "peer_loop: open: %s\n", lite_errno_name(rc));
    return 2;
  }
  rc = lite_map(ctx, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &h, NULL);
  if (rc) {
    fprintf(stderr, "peer_loop: map %s: %s %s\n", name, lite_errno_name(rc),
            lite_message());
    return 2;
  }
  struct kinds kinds = {0};
  long ops = 0, ok = 0, failed = 0;
  double max_ok = 0, max_failed = 0, first_ms = 0, first_at = 0;
  int first_err = 0, ready = 0;
  char buf[64];
  const double start = now_ms();
  double stop_checked = start;
  for (;;) {
    const double t = now_ms();
    if (t - start >= run_ms) break;
    if (first_err && t - first_at >= after_ms) break;
    if (t - stop_checked >= 50) {  // a stat every 50 ms, not per operation
      if (access(argv[5], F_OK) == 0) break;
      stop_checked = t;
    }
    rc = (ops & 1) ? lite_faa(ctx, h, 0, 1, NULL)
                   : lite_read(ctx, h, 64, buf, sizeof(buf));
    const double end = now_ms(), lat = end - t;
    ops++;
    if (rc == 0) {
      ok++;
      if (lat > max_ok) max_ok = lat;
    } else {
      failed++;
      count(&kinds, rc);
      if (lat > max_failed) max_failed = lat;
      if (!first_err) {
        first_err = rc;
        first_ms = lat;
        first_at = end;
      } else {
        // Failing fast is the point; do not spin the guest's only CPU.
        usleep(20000);
      }
    }
    if (!ready && ops >= 2) {
      int fd = open(argv[4], O_WRONLY | O_CREAT, 0644);
      if (fd >= 0) close(fd);
      ready = 1;
    }
  }
  printf(
      "ops=%ld ok=%ld failed=%ld max_ok_ms=%.1f max_failed_ms=%.1f "
      "max_ms=%.1f first_error=%s first_error_ms=%.1f errors=",
      ops, ok, failed, max_ok, max_failed,
      max_ok > max_failed ? max_ok : max_failed,
      first_err ? lite_errno_name(first_err) : "-", first_ms);
  for (int i = 0; i < kinds.used; i++) {
    printf("%s%s:%ld", i ? "," : "", lite_errno_name(kinds.err[i]), kinds.n[i]);
  }
  printf("%s\n", kinds.used ? "" : "-");
  lite_close(ctx);
  return 0;
}
