// batch_probe: LITE_IOC_BATCH against a real lite.ko, with raw ioctls (no
// libLITE), for tests/vm/datapath.sh. NAME is an LMR of at least 64 KiB,
// zero below 60000, that the caller may map read-write.
//
//   batch_probe mixed NAME    one batch whose entries succeed and fail in
//                             every way: each entry's own errno, `failed`,
//                             what the good entries wrote, and nothing
//                             written by the failed ones
//   batch_probe window NAME   200 fetch-and-adds on one word in one batch
//                             (more than the 16 in flight and the device's
//                             32 contexts): the word ends at +200 and the
//                             old values are 200 distinct numbers
//   batch_probe reads NAME    64 READs of distinct 64-byte pieces in one
//                             batch: each buffer holds its own piece
// Prints ok/FAIL lines; exit status: the failures (100: usage, set-up).
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define PROBE_NAME "batch_probe"
#include "tests/vm/probe_check.h"

static int xioctl(int fd, unsigned long cmd, void *arg) {
  return ioctl(fd, cmd, arg) == 0 ? 0 : errno;
}

static void entry(struct lite_batch_op *e, uint16_t opcode, uint64_t handle,
                  uint64_t offset, const void *buf, uint32_t length) {
  memset(e, 0, sizeof(*e));
  e->opcode = opcode;
  e->handle = handle;
  e->offset = offset;
  e->buf = (uintptr_t)buf;
  e->length = length;
}

static int run_batch(int fd, struct lite_batch_op *ops, uint32_t n,
                     uint32_t *failed) {
  struct lite_batch b = {.ops = (uintptr_t)ops, .count = n};
  int err = xioctl(fd, LITE_IOC_BATCH, &b);

  *failed = b.failed;
  return err;
}

static void read_at(int fd, uint64_t h, uint64_t off, void *buf, uint64_t len) {
  struct lite_rw r = {
      .handle = h, .offset = off, .buf = (uintptr_t)buf, .length = len};
  int err = xioctl(fd, LITE_IOC_READ, &r);

  if (err) die("read back", err);
}

static const char *ename(int err) {
  switch (err) {
    case 0:
      return "0";
    case EBADF:
      return "EBADF";
    case EACCES:
      return "EACCES";
    case EINVAL:
      return "EINVAL";
    case EFAULT:
      return "EFAULT";
    default:
      return strerror(err);
  }
}

static void mixed(const char *name) {
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) die(LITE_DEVICE_PATH, errno);
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  uint64_t ro = map_lmr(fd, name, LITE_ACCESS_READ);
  uint64_t dead = map_lmr(fd, name, LITE_ACCESS_READ);
  struct lite_unmap u = {.handle = dead};
  if (xioctl(fd, LITE_IOC_UNMAP, &u)) die("unmap", errno);

  static const char first[16] = "batch-0-written", second[16] = "batch-second";
  char rbuf[16], big[LITE_BATCH_RW_MAX + 1], got[16];
  uint64_t before = 0, after = 0;
  struct lite_batch_op ops[11];
  static const struct {
    int err;
    const char *what;
  } want[11] = {
      {0, "WRITE 16 B at 0"},
      {EACCES, "WRITE through a read-only map"},
      {EBADF, "READ on an unmapped handle"},
      {EINVAL, "READ past the LMR's end"},
      {0, "FAA +5 at 4096"},
      {EINVAL, "CAS at a misaligned offset"},
      {0, "READ 16 B at 0"},
      {EFAULT, "WRITE from an unmapped user address"},
      {EINVAL, "unknown opcode 9"},
      {EINVAL, "READ of 16 KiB + 1"},
      {0, "WRITE 16 B at 256"},
  };
  uint32_t failed = 0, expect_failed = 0;
  struct lite_map info = {0};

  snprintf(info.name, sizeof(info.name), "%s", name);
  info.access = LITE_ACCESS_READ;
  if (xioctl(fd, LITE_IOC_MAP, &info)) die("map for the size", errno);
  read_at(fd, h, 4096, &before, 8);

  entry(&ops[0], LITE_BATCH_WRITE, h, 0, first, 16);
  entry(&ops[1], LITE_BATCH_WRITE, ro, 64, first, 16);
  entry(&ops[2], LITE_BATCH_READ, dead, 0, rbuf, 16);
  entry(&ops[3], LITE_BATCH_READ, h, info.size_bytes - 4, rbuf, 8);
  entry(&ops[4], LITE_BATCH_FAA, h, 4096, NULL, 8);
  ops[4].operand = 5;
  entry(&ops[5], LITE_BATCH_CAS, h, 4100, NULL, 8);
  ops[5].swap = 1;
  entry(&ops[6], LITE_BATCH_READ, h, 0, rbuf, 16);
  entry(&ops[7], LITE_BATCH_WRITE, h, 128, (void *)8, 16);
  entry(&ops[8], 9, h, 0, rbuf, 16);
  entry(&ops[9], LITE_BATCH_READ, h, 0, big, sizeof(big));
  entry(&ops[10], LITE_BATCH_WRITE, h, 256, second, 16);
  check(run_batch(fd, ops, 11, &failed) == 0,
        "a batch of 11 with 7 bad entries: the call succeeds");
  for (int i = 0; i < 11; i++) {
    check(-ops[i].error == want[i].err, "entry %d, %s: %s (got %s)", i,
          want[i].what, ename(want[i].err), ename(-ops[i].error));
    expect_failed += want[i].err != 0;
  }
  check(failed == expect_failed, "failed = %u (want %u)", failed,
        expect_failed);
  check(ops[4].result == before, "FAA's old value %llu (want %llu)",
        (unsigned long long)ops[4].result, (unsigned long long)before);
  read_at(fd, h, 0, got, 16);
  check(!memcmp(got, first, 16), "entry 0's bytes are at 0");
  read_at(fd, h, 256, got, 16);
  check(!memcmp(got, second, 16), "entry 10's bytes are at 256");
  read_at(fd, h, 4096, &after, 8);
  check(after == before + 5, "the word at 4096 went up by 5 (%llu -> %llu)",
        (unsigned long long)before, (unsigned long long)after);
  memset(rbuf, 0, sizeof(rbuf));
  read_at(fd, h, 64, got, 16);
  check(!memcmp(got, rbuf, 16), "nothing at 64 (the read-only map's WRITE)");
  read_at(fd, h, 128, got, 16);
  check(!memcmp(got, rbuf, 16), "nothing at 128 (the unreadable buffer)");

  struct lite_batch bad = {.ops = (uintptr_t)ops, .count = 0};
  check(xioctl(fd, LITE_IOC_BATCH, &bad) == EINVAL, "count 0: EINVAL");
  bad.count = LITE_BATCH_MAX + 1;
  check(xioctl(fd, LITE_IOC_BATCH, &bad) == EINVAL, "count 257: EINVAL");
  bad.count = 1;
  bad.flags = 1;
  check(xioctl(fd, LITE_IOC_BATCH, &bad) == EINVAL, "flags 1: EINVAL");
  bad.flags = 0;
  bad.ops = 8;
  check(xioctl(fd, LITE_IOC_BATCH, &bad) == EFAULT, "array at 8: EFAULT");
  close(fd);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return x < y ? -1 : x > y;
}

static void window(const char *name) {
  enum { N = 200 };
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) die(LITE_DEVICE_PATH, errno);
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  static struct lite_batch_op ops[N];
  uint64_t before = 0, after = 0, olds[N];
  uint32_t failed = 0;
  int distinct = 1, errors = 0;

  read_at(fd, h, 8192, &before, 8);
  for (int i = 0; i < N; i++) {
    entry(&ops[i], LITE_BATCH_FAA, h, 8192, NULL, 8);
    ops[i].operand = 1;
  }
  check(run_batch(fd, ops, N, &failed) == 0 && failed == 0,
        "200 fetch-and-adds in one batch, none failed (failed %u)", failed);
  for (int i = 0; i < N; i++) {
    olds[i] = ops[i].result;
    errors += ops[i].error != 0;
  }
  qsort(olds, N, sizeof(olds[0]), cmp_u64);
  for (int i = 0; i < N; i++) distinct &= olds[i] == before + i;
  read_at(fd, h, 8192, &after, 8);
  check(after == before + N, "the word went up by exactly 200 (%llu -> %llu)",
        (unsigned long long)before, (unsigned long long)after);
  check(distinct && !errors, "the old values are %llu..%llu, each once",
        (unsigned long long)before, (unsigned long long)before + N - 1);
  close(fd);
}

static void reads(const char *name) {
  enum { N = 64, PIECE = 64, BASE = 16384 };
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd < 0) die(LITE_DEVICE_PATH, errno);
  uint64_t h = map_lmr(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  static uint8_t pattern[N * PIECE], bufs[N][PIECE];
  static struct lite_batch_op ops[N];
  struct lite_rw w = {.handle = h,
                      .offset = BASE,
                      .buf = (uintptr_t)pattern,
                      .length = sizeof(pattern)};
  uint32_t failed = 0;
  int same = 1;

  for (size_t i = 0; i < sizeof(pattern); i++)
    pattern[i] = (uint8_t)(i * 7 + 3);
  if (xioctl(fd, LITE_IOC_WRITE, &w)) die("write the pattern", errno);
  memset(bufs, 0, sizeof(bufs));
  for (int i = 0; i < N; i++)
    entry(&ops[i], LITE_BATCH_READ, h, BASE + (uint64_t)i * PIECE, bufs[i],
          PIECE);
  check(run_batch(fd, ops, N, &failed) == 0 && failed == 0,
        "64 READs of 64 B in one batch, none failed (failed %u)", failed);
  for (int i = 0; i < N; i++)
    same &= !memcmp(bufs[i], pattern + i * PIECE, PIECE);
  check(same, "every READ's buffer holds its own piece");
  close(fd);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 3 && !strcmp(argv[1], "mixed"))
    mixed(argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "window"))
    window(argv[2]);
  else if (argc == 3 && !strcmp(argv[1], "reads"))
    reads(argv[2]);
  else {
    fprintf(stderr, "usage: batch_probe mixed|window|reads NAME\n");
    return 100;
  }
  return failures;
}
