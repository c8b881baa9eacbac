// lite_probe: checks of /dev/lite's handle rules that need raw ioctls, for
// tests/vm/datapath.sh. It speaks the uapi directly (not libLITE) so that it
// can hand the kernel handles no library would produce.
//
//   lite_probe bogus-handle          an invented handle: EBADF
//   lite_probe closed-handle NAME    map, unmap, use: EBADF; unmap again: EBADF
//   lite_probe foreign-handle NAME   a handle made by another open file (the
//                                    same process, and a child process with
//                                    its own open): EBADF there, fine here
//   lite_probe past-end NAME         a write crossing the end: EINVAL, and the
//                                    last bytes are unchanged; offset+length
//                                    overflowing 64 bits: EINVAL
//   lite_probe bad-args NAME         reserved/flags/priority not zero, length
//                                    0, misaligned atomic: EINVAL
//   lite_probe no-agent NAME         ALLOC and MAP with no agent: ENOTCONN,
//                                    quickly
//   lite_probe partial-write NAME    a 64 KiB WRITE whose last page is
//                                    munmapped, and one over two pin windows
//                                    whose last page is: EFAULT, and the LMR
//                                    is unchanged (NAME: >= 1 MiB, writable)
//   lite_probe abandon-drain NAME    a child blocked in a big MEMSET is
//                                    killed, its batch left in flight; the
//                                    parent, sharing the open file, unmaps
//                                    the handle: the unmap waits for the
//                                    batch (grant_drain_waits up) and
//                                    returns once the abandoned context
//                                    completed (debugfs ops_abandoned 0).
//                                    NAME: tens of MiB, writable; changed
//   lite_probe expect-after NAME ERRNO SECONDS READY_FILE
//                                    map NAME read-only, read once, create
//                                    READY_FILE, then read every 50 ms until
//                                    a read fails: ok if it fails with ERRNO
//                                    (e.g. ESTALE, or EHOSTDOWN,ESTALE for
//                                    either) within SECONDS
//   lite_probe map-hold NAME         map NAME read-only and print "map: OK"
//                                    or "map: ERRNO"; if mapped, wait for a
//                                    line on stdin, READ 8 bytes, print
//                                    "read: OK" or "read: ERRNO", close (for
//                                    a test that answers the MAP upcall)
//   lite_probe map-loop NAME         like map-hold, but READs (and prints)
//                                    once per line on stdin until EOF
//   lite_probe park NAME LITENL      a thread's 8-byte READ (bounce) stalls
//                                    copying out into a userfaultfd page, so
//                                    the operation stays counted on its
//                                    grant; UNMAP then waits the drain bound
//                                    and parks the grant (not given back):
//                                    grants_parked 1, the grant still listed
//                                    revoked (LITENL grant list); once the
//                                    fault is served the grant is given back
//                                    (grants_parked 0, no longer listed)
//
// Prints one "ok"/"FAIL" line per check; exits with the number of failures.
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

static int failures;

static void check(int ok, const char *what) {
  printf("  %-5s %s\n", ok ? "ok" : "FAIL", what);
  if (!ok) failures++;
}

// Runs an ioctl; returns 0 or the errno.
static int lite_ioctl(int fd, unsigned long cmd, void *arg) {
  return ioctl(fd, cmd, arg) == 0 ? 0 : errno;
}

static int open_lite(void) {
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);

  if (fd < 0) {
    fprintf(stderr, "lite_probe: %s: %s\n", LITE_DEVICE_PATH, strerror(errno));
    exit(100);
  }
  return fd;
}

static int map(int fd, const char *name, uint32_t access, struct lite_map *m) {
  memset(m, 0, sizeof(*m));
  snprintf(m->name, sizeof(m->name), "%s", name);
  m->access = access;
  return lite_ioctl(fd, LITE_IOC_MAP, m);
}

static int map_or_die(int fd, const char *name, uint32_t access,
                      struct lite_map *m) {
  int err = map(fd, name, access, m);

  if (err) {
    fprintf(stderr, "lite_probe: map %s: %s: %s\n", name, strerror(err),
            m->message);
    exit(100);
  }
  return 0;
}

static int rw(int fd, unsigned long cmd, uint64_t handle, uint64_t offset,
              void *buf, uint64_t length) {
  struct lite_rw op = {
      .handle = handle,
      .offset = offset,
      .buf = (uintptr_t)buf,
      .length = length,
  };

  return lite_ioctl(fd, cmd, &op);
}

static void bogus_handle(void) {
  int fd = open_lite();
  char buf[8];
  uint64_t handles[] = {0, 1, 0x100000001ULL, UINT64_MAX};
  size_t i;
  int all = 1;

  for (i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
    all &= rw(fd, LITE_IOC_READ, handles[i], 0, buf, 8) == EBADF;
  check(all, "READ with invented handles (0, 1, 2^32+1, ~0): EBADF");
  struct lite_unmap u = {.handle = 1};

  check(lite_ioctl(fd, LITE_IOC_UNMAP, &u) == EBADF,
        "UNMAP of an invented handle: EBADF");
  close(fd);
}

static void closed_handle(const char *name) {
  int fd = open_lite();
  struct lite_map m;
  struct lite_unmap u = {0};
  char buf[8];

  map_or_die(fd, name, LITE_ACCESS_READ, &m);
  check(rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8) == 0,
        "READ through a fresh handle works");
  u.handle = m.handle;
  check(lite_ioctl(fd, LITE_IOC_UNMAP, &u) == 0, "UNMAP succeeds");
  check(rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8) == EBADF,
        "READ through the unmapped handle: EBADF");
  check(lite_ioctl(fd, LITE_IOC_UNMAP, &u) == EBADF, "UNMAP again: EBADF");
  struct lite_map m2;

  map_or_die(fd, name, LITE_ACCESS_READ, &m2);
  check(m2.handle != m.handle, "a new map gets a new handle value");
  close(fd);
}

static void foreign_handle(const char *name) {
  int fd = open_lite(), other = open_lite();
  struct lite_map m;
  char buf[8];
  pid_t child;
  int status;

  map_or_die(fd, name, LITE_ACCESS_READ, &m);
  check(rw(other, LITE_IOC_READ, m.handle, 0, buf, 8) == EBADF,
        "another open file of the same process: the handle is EBADF");
  check(rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8) == 0,
        "the file that made the handle still uses it");
  child = fork();
  if (child == 0) {
    int own = open_lite();

    _exit(rw(own, LITE_IOC_READ, m.handle, 0, buf, 8) == EBADF ? 0 : 1);
  }
  check(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "another process with its own open file: the handle is EBADF");
  close(other);
  close(fd);
}

static void past_end(const char *name) {
  int fd = open_lite();
  struct lite_map m;
  unsigned char before[16], after[16], junk[16];

  map_or_die(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &m);
  memset(junk, 0xEE, sizeof(junk));
  check(rw(fd, LITE_IOC_READ, m.handle, m.size_bytes - 16, before, 16) == 0,
        "READ of the last 16 bytes works");
  check(rw(fd, LITE_IOC_WRITE, m.handle, m.size_bytes - 8, junk, 16) == EINVAL,
        "WRITE of 16 bytes at size-8: EINVAL");
  check(rw(fd, LITE_IOC_WRITE, m.handle, m.size_bytes, junk, 1) == EINVAL,
        "WRITE of 1 byte at offset == size: EINVAL");
  check(rw(fd, LITE_IOC_WRITE, m.handle, UINT64_MAX - 4, junk, 16) == EINVAL,
        "WRITE whose offset + length overflows: EINVAL");
  check(rw(fd, LITE_IOC_READ, m.handle, m.size_bytes - 16, after, 16) == 0 &&
            memcmp(before, after, 16) == 0,
        "the last 16 bytes are unchanged");
  close(fd);
}

static void bad_args(const char *name) {
  int fd = open_lite();
  struct lite_map m;
  char buf[16];
  struct lite_rw op;
  struct lite_atomic a;

  map_or_die(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &m);
  op = (struct lite_rw){
      .handle = m.handle, .buf = (uintptr_t)buf, .length = 8, .flags = 1};
  check(lite_ioctl(fd, LITE_IOC_READ, &op) == EINVAL, "READ flags=1: EINVAL");
  op.flags = 0;
  op.priority = 7;
  check(lite_ioctl(fd, LITE_IOC_READ, &op) == EINVAL,
        "READ priority=7: EINVAL");
  op.priority = 0;
  op.length = 0;
  check(lite_ioctl(fd, LITE_IOC_READ, &op) == EINVAL, "READ length 0: EINVAL");
  op.length = 8;
  op.buf = 8; /* not mapped */
  check(lite_ioctl(fd, LITE_IOC_WRITE, &op) == EFAULT,
        "WRITE from an unmapped user address: EFAULT");
  a = (struct lite_atomic){.handle = m.handle, .offset = 4, .operand = 1};
  check(lite_ioctl(fd, LITE_IOC_FAA, &a) == EINVAL,
        "FAA at offset 4 (not 8-aligned): EINVAL");
  a.offset = 0;
  a.swap = 5;
  check(lite_ioctl(fd, LITE_IOC_FAA, &a) == EINVAL,
        "FAA with swap set: EINVAL");
  struct lite_memset ms = {.handle = m.handle, .length = 8, .value = 256};

  check(lite_ioctl(fd, LITE_IOC_MEMSET, &ms) == EINVAL,
        "MEMSET value 256: EINVAL");
  struct lite_memcpy mc = {.dst_handle = m.handle,
                           .dst_offset = 0,
                           .src_handle = m.handle,
                           .src_offset = 4,
                           .length = 8};

  check(lite_ioctl(fd, LITE_IOC_MEMCPY, &mc) == EINVAL,
        "MEMCPY of overlapping ranges of one LMR: EINVAL");
  struct lite_map bad;

  check(map(fd, "bad name!", LITE_ACCESS_READ, &bad) == EINVAL,
        "MAP of an invalid name: EINVAL");
  check(map(fd, name, 4, &bad) == EINVAL,
        "MAP with an unknown access bit: EINVAL");
  close(fd);
}

static double now_s(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void no_agent(const char *name) {
  int fd = open_lite();
  struct lite_alloc al = {.size_bytes = 4096, .mode = 0600};
  struct lite_map m;
  double start = now_s();

  snprintf(al.name, sizeof(al.name), "%s.new", name);
  memset(al.message, 'X', sizeof(al.message));
  check(lite_ioctl(fd, LITE_IOC_ALLOC, &al) == ENOTCONN,
        "ALLOC with no agent attached: ENOTCONN");
  check(al.message[0] == 0, "... and its message is cleared (was XXX...)");
  check(map(fd, name, LITE_ACCESS_READ, &m) == ENOTCONN,
        "MAP with no agent attached: ENOTCONN");
  memset(al.message, 'X', sizeof(al.message));
  al.flags = 1;
  check(lite_ioctl(fd, LITE_IOC_ALLOC, &al) == EINVAL && al.message[0] == 0,
        "ALLOC with flags 1: EINVAL, message cleared");
  check(now_s() - start < 1.0, "both failed at once (under 1 s)");
  close(fd);
}

// An mmap()ed buffer of @pages pages, filled with @fill, the last page
// unmapped again.
static unsigned char *buffer_without_last_page(size_t pages, int fill) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *buf = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (buf == MAP_FAILED) {
    perror("lite_probe: mmap");
    exit(100);
  }
  memset(buf, fill, pages * page);
  if (munmap(buf + (pages - 1) * page, page)) {
    perror("lite_probe: munmap");
    exit(100);
  }
  return buf;
}

// WRITE @len bytes from @buf (its last page unmapped) at @offset: EFAULT and
// nothing written.
static void write_fails_whole(int fd, uint64_t handle, uint64_t offset,
                              const unsigned char *buf, uint64_t len,
                              const char *what) {
  unsigned char *before = malloc(len), *after = malloc(len);
  char line[160];
  int err;

  if (!before || !after) exit(100);
  check(rw(fd, LITE_IOC_READ, handle, offset, before, len) == 0,
        "READ of the range before the WRITE");
  err = rw(fd, LITE_IOC_WRITE, handle, offset, (void *)buf, len);
  snprintf(line, sizeof(line), "%s: EFAULT (got %s)", what,
           err ? strerror(err) : "success");
  check(err == EFAULT, line);
  memset(after, 0x5A, len);
  check(rw(fd, LITE_IOC_READ, handle, offset, after, len) == 0 &&
            memcmp(before, after, len) == 0,
        "... and the LMR is unchanged (no prefix written)");
  free(before);
  free(after);
}

static void partial_write(const char *name) {
  int fd = open_lite();
  long page = sysconf(_SC_PAGESIZE);
  struct lite_map m;
  unsigned char *buf;
  size_t pages;

  map_or_die(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &m);
  if (m.size_bytes < (1u << 20)) {
    fprintf(stderr, "lite_probe: %s is smaller than 1 MiB\n", name);
    exit(100);
  }
  /* One pin window (64 KiB, pinned: > 16 KiB), its last page gone. */
  buf = buffer_without_last_page(16, 0xA5);
  write_fails_whole(fd, m.handle, 64 << 10, buf, 16 * page,
                    "64 KiB WRITE whose last page is unmapped");
  munmap(buf, 15 * page);
  /*
   * 1 MiB starting half-way into a page: 257 pages, two pin windows
   * (256 pages less the half, then one); the second one's page is gone.
   */
  pages = 257;
  buf = buffer_without_last_page(pages, 0x3C);
  write_fails_whole(fd, m.handle, 0, buf + page / 2, 256 * page,
                    "WRITE over two pin windows whose last page is unmapped");
  munmap(buf, (pages - 1) * page);
  close(fd);
}

static long debugfs_counter(const char *name) {
  char path[128];
  long v = -1;
  FILE *f;

  snprintf(path, sizeof(path), "/sys/kernel/debug/lite/%s", name);
  f = fopen(path, "r");
  if (!f || fscanf(f, "%ld", &v) != 1) {
    fprintf(stderr, "lite_probe: cannot read %s\n", path);
    exit(100);
  }
  fclose(f);
  return v;
}

// One try: returns 1 when it was conclusive (the unmap found the killed
// child's MEMSET still in flight, or a failure), 0 when the batch had
// completed before the unmap (try again).
static int abandon_once(const char *name, int last) {
  int fd = open_lite();
  struct lite_map m;
  struct lite_unmap u = {0};
  long waits, after, waits_after;
  double start, took;
  pid_t child;
  int status, err;

  map_or_die(fd, name, LITE_ACCESS_READ | LITE_ACCESS_WRITE, &m);
  child = fork();
  if (child == 0) {
    /* MEMSETs of the whole LMR until killed: up to 8 MiB per batch. */
    struct lite_memset ms = {.handle = m.handle, .length = m.size_bytes};

    for (;;)
      if (lite_ioctl(fd, LITE_IOC_MEMSET, &ms)) _exit(1);
  }
  usleep(1500 * 1000);
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  waits = debugfs_counter("grant_drain_waits");
  u.handle = m.handle;
  start = now_s();
  err = lite_ioctl(fd, LITE_IOC_UNMAP, &u);
  took = now_s() - start;
  after = debugfs_counter("ops_abandoned");
  waits_after = debugfs_counter("grant_drain_waits");
  close(fd);
  printf(
      "        unmap took %.1f ms, grant_drain_waits +%ld, ops_abandoned "
      "%ld after it\n",
      took * 1000, waits_after - waits, after);
  if (waits_after == waits && after == 0 && !last) return 0;
  check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
        "the child was killed in its MEMSET");
  check(waits_after > waits,
        "the UNMAP found the killed operation in flight on the grant and "
        "waited (grant_drain_waits)");
  check(err == 0, "UNMAP of the handle succeeds");
  check(after == 0,
        "UNMAP returned only once the abandoned context completed "
        "(ops_abandoned 0)");
  return 1;
}

static void abandon_drain(const char *name) {
  int fd, i;
  struct lite_map m;
  char buf[8];

  for (i = 0; i < 5; i++)
    if (abandon_once(name, i == 4)) break;
  fd = open_lite();
  map_or_die(fd, name, LITE_ACCESS_READ, &m);
  check(rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8) == 0,
        "a new map of the LMR reads fine afterwards");
  close(fd);
}

static const struct {
  const char *name;
  int value;
} errno_names[] = {
    {"ESTALE", ESTALE}, {"EHOSTDOWN", EHOSTDOWN}, {"EBADF", EBADF},
    {"EIO", EIO},       {"ETIMEDOUT", ETIMEDOUT},
};

static const char *errno_name(int err) {
  size_t i;

  for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
    if (errno_names[i].value == err) return errno_names[i].name;
  return strerror(err);
}

static void expect_after(const char *name, const char *want_name,
                         double seconds, const char *ready_file) {
  int fd = open_lite(), want = 0, want2 = 0, err = 0;
  char first[32];
  const char *second = strchr(want_name, ',');
  struct lite_map m;
  char buf[8];
  double start, deadline;
  size_t i;
  FILE *ready;

  /* "A" or "A,B": either errno passes. */
  snprintf(first, sizeof(first), "%.*s",
           second ? (int)(second - want_name) : (int)strlen(want_name),
           want_name);
  for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
    if (!strcmp(errno_names[i].name, first)) want = errno_names[i].value;
    if (second && !strcmp(errno_names[i].name, second + 1))
      want2 = errno_names[i].value;
  }
  if (!want || (second && !want2)) {
    fprintf(stderr, "lite_probe: unknown errno name %s\n", want_name);
    exit(100);
  }
  map_or_die(fd, name, LITE_ACCESS_READ, &m);
  check(rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8) == 0,
        "READ works before the change");
  ready = fopen(ready_file, "w");
  if (!ready) {
    perror(ready_file);
    exit(100);
  }
  fclose(ready);
  start = now_s();
  deadline = start + seconds;
  while (now_s() < deadline) {
    err = rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8);
    if (err) break;
    usleep(50 * 1000);
  }
  printf("        READ failed with %s %.0f ms after READY\n",
         err ? errno_name(err) : "nothing", (now_s() - start) * 1000);
  check(err && (err == want || err == want2), want_name);
  close(fd);
}

static void map_hold(const char *name) {
  int fd = open_lite(), err;
  struct lite_map m;
  char buf[8], line[16];

  err = map(fd, name, LITE_ACCESS_READ, &m);
  printf("map: %s\n", err ? errno_name(err) : "OK");
  if (!err && fgets(line, sizeof(line), stdin)) {
    err = rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8);
    printf("read: %s\n", err ? errno_name(err) : "OK");
  }
  close(fd);
}

// Maps NAME for reading, prints "map: OK" or the errno name, then READs 8
// bytes at offset 0 for each line on stdin, printing "read: OK" or the
// errno name (lmr.sh's key-mode section: a READ with a freed LMR's key).
static void map_loop(const char *name) {
  int fd = open_lite(), err;
  struct lite_map m;
  char buf[8], line[16];

  err = map(fd, name, LITE_ACCESS_READ, &m);
  printf("map: %s\n", err ? errno_name(err) : "OK");
  while (!err && fgets(line, sizeof(line), stdin)) {
    int rerr = rw(fd, LITE_IOC_READ, m.handle, 0, buf, 8);

    printf("read: %s\n", rerr ? errno_name(rerr) : "OK");
  }
  close(fd);
}

static long debugfs(const char *name) {
  char path[128];
  long v = -1;
  FILE *f;

  snprintf(path, sizeof(path), "/sys/kernel/debug/lite/%s", name);
  f = fopen(path, "r");
  if (f) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

// 1 if LITENL's grant list shows a grant into @lmr_id (revoked, if asked).
static int grant_listed(const char *litenl, uint64_t lmr_id, int revoked) {
  char cmd[512], line[4096], want[64];
  int found = 0;
  FILE *p;

  snprintf(cmd, sizeof(cmd), "%s grant list -o json", litenl);
  snprintf(want, sizeof(want), "\"lmr_id\": %llu,", (unsigned long long)lmr_id);
  p = popen(cmd, "r");
  if (!p) return -1;
  while (fgets(line, sizeof(line), p)) {
    char *at = strstr(line, want);

    // One grant per object: from its lmr_id to the next '}'.
    while (at) {
      char *end = strchr(at, '}'), keep;

      if (!end) end = at + strlen(at);
      keep = *end;
      *end = '\0';
      if (!revoked || strstr(at, "\"revoked\": true")) found = 1;
      *end = keep;
      at = strstr(end, want);
    }
  }
  pclose(p);
  return found;
}

struct park_read {
  int fd;
  uint64_t handle;
  char *buf;
  int err;
};

static void *park_reader(void *arg) {
  struct park_read *r = arg;

  r->err = rw(r->fd, LITE_IOC_READ, r->handle, 0, r->buf, 8);
  return NULL;
}

static void park(const char *name, const char *litenl) {
  int fd = open_lite(), uffd;
  long page = sysconf(_SC_PAGESIZE), timeouts;
  struct uffdio_api api = {.api = UFFD_API};
  struct uffdio_register reg;
  struct uffdio_zeropage zero;
  struct uffd_msg msg;
  struct pollfd pfd;
  struct lite_map m;
  struct lite_unmap u = {0};
  struct park_read r;
  pthread_t t;
  double start, took, deadline;
  char *area;
  int err;

  map_or_die(fd, name, LITE_ACCESS_READ, &m);
  area = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
              -1, 0);
  uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
  if (area == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
    perror("lite_probe park: userfaultfd");
    exit(100);
  }
  reg.range.start = (uintptr_t)area;
  reg.range.len = page;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING;
  if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
    perror("lite_probe park: UFFDIO_REGISTER");
    exit(100);
  }
  r = (struct park_read){.fd = fd, .handle = m.handle, .buf = area};
  timeouts = debugfs("grant_drain_timeouts");
  pthread_create(&t, NULL, park_reader, &r);
  // The READ has its data and is copying it out: the fault is the proof.
  pfd = (struct pollfd){.fd = uffd, .events = POLLIN};
  check(poll(&pfd, 1, 20000) == 1 && read(uffd, &msg, sizeof(msg)) > 0 &&
            msg.event == UFFD_EVENT_PAGEFAULT,
        "the READ stalls copying out into a userfaultfd page");
  u.handle = m.handle;
  start = now_s();
  err = lite_ioctl(fd, LITE_IOC_UNMAP, &u);
  took = now_s() - start;
  printf("        UNMAP returned %d after %.0f ms\n", err, took * 1000);
  check(err == 0 && took > 1.5, "UNMAP waits the drain bound, then returns 0");
  check(debugfs("grants_parked") == 1 &&
            debugfs("grant_drain_timeouts") == timeouts + 1,
        "... the grant is parked (grants_parked 1, grant_drain_timeouts +1)");
  check(grant_listed(litenl, m.lmr_id, 1) == 1,
        "... and still in the node's grant table, revoked (not given back)");
  zero.range = reg.range;
  zero.mode = 0;
  check(ioctl(uffd, UFFDIO_ZEROPAGE, &zero) == 0, "the fault is served");
  pthread_join(t, NULL);
  printf("        the stalled READ returned %s\n",
         r.err ? errno_name(r.err) : "OK");
  deadline = now_s() + 5;
  while (debugfs("grants_parked") != 0 && now_s() < deadline) usleep(20000);
  check(debugfs("grants_parked") == 0,
        "once it ends the parked grant is given back (grants_parked 0)");
  check(grant_listed(litenl, m.lmr_id, 0) == 0,
        "... and gone from the node's grant table (its UNMAP upcall sent)");
  close(uffd);
  close(fd);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  const char *name = argc > 2 ? argv[2] : NULL;

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(what, "bogus-handle") && argc == 2)
    bogus_handle();
  else if (!strcmp(what, "closed-handle") && name)
    closed_handle(name);
  else if (!strcmp(what, "foreign-handle") && name)
    foreign_handle(name);
  else if (!strcmp(what, "past-end") && name)
    past_end(name);
  else if (!strcmp(what, "bad-args") && name)
    bad_args(name);
  else if (!strcmp(what, "no-agent") && name)
    no_agent(name);
  else if (!strcmp(what, "partial-write") && name)
    partial_write(name);
  else if (!strcmp(what, "abandon-drain") && name)
    abandon_drain(name);
  else if (!strcmp(what, "park") && argc == 4)
    park(name, argv[3]);
  else if (!strcmp(what, "map-hold") && name)
    map_hold(name);
  else if (!strcmp(what, "map-loop") && name)
    map_loop(name);
  else if (!strcmp(what, "expect-after") && argc == 6)
    expect_after(name, argv[3], atof(argv[4]), argv[5]);
  else {
    fprintf(
        stderr,
        "usage: lite_probe bogus-handle | closed-handle NAME | foreign-handle "
        "NAME |\n"
        "                  past-end NAME | bad-args NAME | no-agent NAME |\n"
        "                  partial-write NAME | abandon-drain NAME |\n"
        "                  map-hold NAME | map-loop NAME | park NAME LITENL |\n"
        "                  expect-after NAME ERRNO SECONDS READY_FILE\n");
    return 100;
  }
  return failures;
}
