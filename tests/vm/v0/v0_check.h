// The checks of the v0 test programs: one "ok"/"FAIL" line each, failures
// counted for the exit status. Only libc and the compat header: these
// programs are written the way an original LITE user wrote theirs.
#ifndef LITE_TESTS_VM_V0_V0_CHECK_H_
#define LITE_TESTS_VM_V0_V0_CHECK_H_

#include "lite-lib.h"

static int v0_failures;

#define CHECK(cond, ...)                                            \
  do {                                                              \
    if (cond) {                                                     \
      printf("  ok    " __VA_ARGS__);                               \
    } else {                                                        \
      printf("  FAIL  " __VA_ARGS__);                               \
      printf("        (errno %d: %s)\n", errno, lite_v0_message()); \
      v0_failures++;                                                \
    }                                                               \
    printf("\n");                                                   \
    fflush(stdout);                                                 \
  } while (0)

// A call that must fail with `err` (and say something).
#define CHECK_FAILS(call, err, ...)                                    \
  do {                                                                 \
    errno = 0;                                                         \
    int rc_ = (call);                                                  \
    CHECK(rc_ == -1 && errno == (err) && lite_v0_message()[0] != '\0', \
          __VA_ARGS__);                                                \
    if (rc_ == -1 && errno == (err))                                   \
      printf("        said: %s\n", lite_v0_message());                 \
  } while (0)

static inline int v0_exit(void) {
  return v0_failures > 100 ? 100 : v0_failures;
}

// Waits until `path` exists (a test host's go-ahead), up to `secs`.
static inline int v0_wait_file(const char *path, int secs) {
  for (int i = 0; i < secs * 10; i++) {
    if (access(path, F_OK) == 0) return 0;
    usleep(100000);
  }
  return -1;
}

#endif  // LITE_TESTS_VM_V0_V0_CHECK_H_
