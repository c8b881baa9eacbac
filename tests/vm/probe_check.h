// What the data-path probes (batch_probe.c, ring_probe.c) share: ok/FAIL
// lines counted into the exit status, a set-up failure (exit 100), and a
// map of an LMR by name. Each probe defines PROBE_NAME before including it.
#ifndef LITE_TESTS_VM_PROBE_CHECK_H_
#define LITE_TESTS_VM_PROBE_CHECK_H_

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kmod/include/uapi/lite.h"

#ifndef PROBE_NAME
#error "define PROBE_NAME (the probe's name, for its error lines) first"
#endif

static int failures;

static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...) {
  va_list ap;

  printf("  %-5s ", ok ? "ok" : "FAIL");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (!ok) failures++;
}

static void die(const char *what, int err) {
  fprintf(stderr, PROBE_NAME ": %s: %s\n", what, strerror(err));
  exit(100);
}

__attribute__((unused)) static uint64_t map_lmr(int fd, const char *name,
                                                uint32_t access) {
  struct lite_map m = {.access = access};

  snprintf(m.name, sizeof(m.name), "%s", name);
  if (ioctl(fd, LITE_IOC_MAP, &m)) die(m.message[0] ? m.message : "map", errno);
  return m.handle;
}

#endif  // LITE_TESTS_VM_PROBE_CHECK_H_
