// prio_probe: the priority rules of /dev/lite (uapi/lite_qos.h) with raw
// ioctls, for tests/vm/qos_locks.sh.
//
//   prio_probe NAME HIGH_ALLOWED
//
// NAME: an LMR of at least 4 KiB this user may map read-write.
// HIGH_ALLOWED: 1 if this process should be allowed LITE_PRIO_HIGH
// (CAP_SYS_NICE, or the group in lite.ko's qos_high_gid), else 0. Checks:
// a new file's default is LOW and says whether HIGH is allowed; LOW may
// always be set; HIGH is set or refused (EPERM, the default unchanged) as
// allowed; a value that is no priority, flags or reserved: EINVAL; a READ,
// a FAA, a batch entry and an RPC-less MEMSET at HIGH succeed or fail with
// EPERM as allowed, at LOW and 0 succeed, at 3 or more fail with EINVAL.
// Exit status: the number of failed checks (100: set-up failed).
#define PROBE_NAME "prio_probe"
#include <fcntl.h>
#include <unistd.h>

#include "tests/vm/probe_check.h"

static int prio_ioctl(int fd, struct lite_priority_args *a) {
  return ioctl(fd, LITE_IOC_PRIORITY, a) ? errno : 0;
}

static int read_at(int fd, uint64_t h, uint32_t priority) {
  char buf[64];
  struct lite_rw rw = {.handle = h,
                       .buf = (uintptr_t)buf,
                       .length = sizeof(buf),
                       .priority = priority};
  return ioctl(fd, LITE_IOC_READ, &rw) ? errno : 0;
}

static int faa_at(int fd, uint64_t h, uint32_t priority) {
  struct lite_atomic a = {
      .handle = h, .offset = 64, .operand = 1, .priority = priority};
  return ioctl(fd, LITE_IOC_FAA, &a) ? errno : 0;
}

static int memset_at(int fd, uint64_t h, uint32_t priority) {
  struct lite_memset m = {.handle = h,
                          .offset = 128,
                          .length = 64,
                          .value = 7,
                          .priority = priority};
  return ioctl(fd, LITE_IOC_MEMSET, &m) ? errno : 0;
}

// A batch of one READ at @priority: the entry's own errno (positive).
static int batch_at(int fd, uint64_t h, uint32_t priority) {
  char buf[8];
  struct lite_batch_op op = {.handle = h,
                             .buf = (uintptr_t)buf,
                             .length = sizeof(buf),
                             .opcode = LITE_BATCH_READ,
                             .priority = priority};
  struct lite_batch b = {.ops = (uintptr_t)&op, .count = 1};
  if (ioctl(fd, LITE_IOC_BATCH, &b)) return 1000 + errno;
  return -op.error;
}

static const char *name_of(int err) {
  switch (err) {
    case 0:
      return "OK";
    case EPERM:
      return "EPERM";
    case EINVAL:
      return "EINVAL";
    default:
      return strerror(err);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: prio_probe NAME HIGH_ALLOWED\n");
    return 100;
  }
  const int high_ok = atoi(argv[2]) != 0;
  const int want_high = high_ok ? 0 : EPERM;
  int fd = open("/dev/lite", O_RDWR);
  if (fd < 0) die("open /dev/lite", errno);

  struct lite_priority_args a = {0};
  int err = prio_ioctl(fd, &a);
  check(!err && a.priority == LITE_PRIO_LOW,
        "a new file's default priority is LOW (%s, %u)", name_of(err),
        a.priority);
  check(!err && a.high_allowed == (uint32_t)high_ok,
        "... and it says HIGH is %sallowed (%u)", high_ok ? "" : "not ",
        a.high_allowed);

  a = (struct lite_priority_args){.priority = LITE_PRIO_HIGH};
  err = prio_ioctl(fd, &a);
  check(err == want_high, "set HIGH: %s (want %s)", name_of(err),
        name_of(want_high));
  a = (struct lite_priority_args){0};
  prio_ioctl(fd, &a);
  check(a.priority == (high_ok ? LITE_PRIO_HIGH : LITE_PRIO_LOW),
        "the default is now %s (%u)", high_ok ? "HIGH" : "still LOW",
        a.priority);
  a = (struct lite_priority_args){.priority = LITE_PRIO_LOW};
  check(prio_ioctl(fd, &a) == 0 && a.priority == LITE_PRIO_LOW,
        "set LOW: OK, and it reads back LOW");
  a = (struct lite_priority_args){.priority = 3};
  check(prio_ioctl(fd, &a) == EINVAL, "set priority 3: EINVAL");
  a = (struct lite_priority_args){.priority = LITE_PRIO_LOW, .flags = 1};
  check(prio_ioctl(fd, &a) == EINVAL, "flags 1: EINVAL");
  a = (struct lite_priority_args){.priority = LITE_PRIO_LOW, .reserved = 1};
  check(prio_ioctl(fd, &a) == EINVAL, "reserved 1: EINVAL");

  uint64_t h = map_lmr(fd, argv[1], LITE_ACCESS_READ | LITE_ACCESS_WRITE);
  static const struct {
    const char *what;
    int (*fn)(int, uint64_t, uint32_t);
  } ops[] = {{"READ", read_at},
             {"FAA", faa_at},
             {"MEMSET", memset_at},
             {"batch READ", batch_at}};
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    err = ops[i].fn(fd, h, LITE_PRIO_HIGH);
    check(err == want_high, "%s at HIGH: %s (want %s)", ops[i].what,
          name_of(err), name_of(want_high));
    err = ops[i].fn(fd, h, LITE_PRIO_LOW);
    check(err == 0, "%s at LOW: %s", ops[i].what, name_of(err));
    err = ops[i].fn(fd, h, LITE_PRIO_DEFAULT);
    check(err == 0, "%s at the default: %s", ops[i].what, name_of(err));
    err = ops[i].fn(fd, h, 3);
    check(err == EINVAL, "%s at priority 3: %s", ops[i].what, name_of(err));
  }
  close(fd);
  return failures > 99 ? 99 : failures;
}
