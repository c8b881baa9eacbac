// fuzz_sync: the lock service attacked directly, and the lock and barrier
// ioctls fuzzed, for tests/vm/fuzz.sh (issue 31, deliverable 5; review
// 2026-11-28 H2). Run as any uid:
//
//   fuzz_sync --names                   every variant of lite.ko's reserved
//                                       RPC names is refused
//   fuzz_sync --fuzz [--seed N] [--secs N] [--threads N] [--procs N]
//                                       LOCK/TRYLOCK/UNLOCK/BARRIER in random
//                                       orders with UNMAP, close and SIGKILL
//   fuzz_sync --check [--free]          afterwards: nothing is stuck
//
// --names: LITE_IOC_RPC_OPEN and LITE_IOC_RPC_REGISTER of lite.sync.<id> for
// many node ids, case variants, trailing bytes after a NUL, names of 128
// and 129 characters, a buffer without a NUL, prefix tricks (xlite.,
// lite_, lite:, a high byte, a leading dot). The result must be exactly
// what lite.ko's rules give: EINVAL for a name that is not one, EPERM for a
// name beginning with "lite.", else (OPEN) ENOENT, since nobody registered
// those names: a success means a file reached a service it must not.
//
// --fuzz: procs x threads, each thread with its own /dev/lite file and
// handles of the LMRs fz.sync.0..3 (made 0666 by root: the uid 1000 run
// locks root's LMRs), in random order: LOCK and BARRIER (1..30 ms
// timeouts, counts 1..3), TRYLOCK, UNLOCK (of a lock the file holds, and
// of one it does not: EPERM), through unmapped, random and read-only
// handles, UNMAP and MAP again, close the file holding locks, and fork a
// child that locks and is SIGKILLed while holding or waiting. Every errno
// must be one uapi/lite_sync.h documents for the case; a lock granted while
// another live file holds it (shared-memory owner table) fails, and so does
// a grant after a holder's file closed without LITE_SYNC_OWNER_DIED.
//
// --check: every fz.sync LMR's lock is free (TRYLOCK 0 within 3 s: a
// closed file's DIED is asynchronous) and released again, a barrier of 1
// passes, and this uid's whole sync_waits_per_uid budget can wait at once
// while one more wait gets EDQUOT (a wait slot leaked by a cancelled or
// killed wait would give EDQUOT earlier). --free frees the LMRs.
//
// Exit status 0 when every check passed, 1 otherwise, 100 when the set-up
// failed.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmod/include/uapi/lite.h"

#define NLMR 4
#define MAX_THREADS 16
#define TAG_BITS (1U << 20)
#define CLOSED_BIT (1ULL << 63)

struct shared {
  _Atomic uint64_t owner[NLMR];  // the holder's file tag, 0 if none
  _Atomic uint64_t next_tag;
  _Atomic uint8_t dead[TAG_BITS / 8];  // files closed or killed
  _Atomic long fails;
  _Atomic long counts[5][8];  // [op][outcome]
};
static struct shared *sh;
static uint64_t g_seed = 1;
static int g_secs = 10, g_threads = 4, g_procs = 2;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  long n = sh ? atomic_fetch_add(&sh->fails, 1) : 0;

  if (n >= 40) return;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL (seed %llu): ", (unsigned long long)g_seed);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static uint64_t rnd(uint64_t *s) {  // splitmix64
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint64_t below(uint64_t *s, uint64_t n) { return rnd(s) % n; }

static uint64_t now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void lmr_name(char *buf, int k) {
  memset(buf, 0, LITE_NAME_BUF);
  snprintf(buf, LITE_NAME_BUF, "fz.sync.%d", k);
}

static int open_lite(void) {
  int fd = open(LITE_DEVICE_PATH, O_RDWR | O_CLOEXEC);

  if (fd < 0) {
    fprintf(stderr, "fuzz_sync: open %s: %s\n", LITE_DEVICE_PATH,
            strerror(errno));
    exit(100);
  }
  return fd;
}

// A handle of LMR k with access, 0 on failure (errno kept).
static uint64_t map_lmr(int fd, int k, uint32_t access) {
  struct lite_map m = {.access = access};

  lmr_name(m.name, k);
  return ioctl(fd, LITE_IOC_MAP, &m) ? 0 : m.handle;
}

static int sync_op(int fd, uint64_t h, uint32_t op, uint32_t count,
                   uint32_t timeout_ms, uint32_t *result) {
  struct lite_sync s = {
      .handle = h, .op = op, .timeout_ms = timeout_ms, .count = count};
  int ret = ioctl(fd, LITE_IOC_SYNC, &s) ? errno : 0;

  if (result) *result = s.result;
  return ret;
}

static int in(int err, const int *set) {
  for (; *set; set++)
    if (*set == err) return 1;
  return 0;
}

// ---------------------------------------------------------------------------
// --names
// ---------------------------------------------------------------------------

// lite.ko's lite_name_valid(): 1..128 of [A-Za-z0-9._:/-], a letter or
// digit first, NUL-terminated within the buffer.
static int name_valid(const char *buf) {
  size_t len = strnlen(buf, LITE_NAME_BUF);

  if (len == LITE_NAME_BUF || !len || len > LITE_NAME_MAX) return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)buf[i];

    if (c < 128 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9')))
      continue;
    if (i && strchr("._:/-", c)) continue;
    return 0;
  }
  return 1;
}

static int names_tried;

// One name (a full LITE_NAME_BUF buffer, NULs and bytes after them as
// given), opened and, if it is refused anyway, registered.
static void try_name(int fd, const char *buf, const char *what) {
  int reserved =
      !strncmp(buf, LITE_RPC_RESERVED_PREFIX, strlen(LITE_RPC_RESERVED_PREFIX));
  int want = !name_valid(buf) ? EINVAL : reserved ? EPERM : ENOENT;
  struct lite_rpc_open o = {0};
  int err;

  names_tried++;
  memcpy(o.name, buf, LITE_NAME_BUF);
  err = ioctl(fd, LITE_IOC_RPC_OPEN, &o) ? errno : 0;
  if (!err) {
    struct lite_rpc_close c = {.service = o.service};

    fail("RPC_OPEN %s '%.40s' succeeded (node %u, service %llu): want %s", what,
         buf, o.node_id, (unsigned long long)o.service_id, strerror(want));
    ioctl(fd, LITE_IOC_RPC_CLOSE, &c);
  } else if (err != want) {
    fail("RPC_OPEN %s '%.40s': %s (%s), want %s", what, buf, strerror(err),
         o.message, strerror(want));
  }
  if (want == ENOENT) return;  // a valid name of no service: it may be ours
  struct lite_rpc_register r = {
      .mode = 0777, .max_request = 64, .max_reply = 64};

  memcpy(r.name, buf, LITE_NAME_BUF);
  err = ioctl(fd, LITE_IOC_RPC_REGISTER, &r) ? errno : 0;
  if (!err) {
    struct lite_rpc_close c = {.service = r.service};

    fail("RPC_REGISTER %s '%.40s' succeeded: want %s", what, buf,
         strerror(want));
    ioctl(fd, LITE_IOC_RPC_CLOSE, &c);
  } else if (err != want) {
    fail("RPC_REGISTER %s '%.40s': %s, want %s", what, buf, strerror(err),
         strerror(want));
  }
}

static void try_str(int fd, const char *name, const char *what) {
  char buf[LITE_NAME_BUF] = {0};

  snprintf(buf, sizeof(buf), "%s", name);
  try_name(fd, buf, what);
}

static int names_main(void) {
  static const char *const kFixed[] = {"lite.",
                                       "lite.sync",
                                       "lite.sync.",
                                       "lite.x",
                                       "lite.rpc",
                                       "lite.lock.1",
                                       "lite.sync.01",
                                       "lite.sync.-1",
                                       "lite.sync.+1",
                                       "lite.sync.1.",
                                       "lite.sync..1",
                                       "lite.sync.1/",
                                       "lite.SYNC.1",
                                       "lite..sync.1",
                                       "lite.sync.0x1",
                                       "lite.sync.1:0",
                                       "LITE.sync.1",
                                       "Lite.sync.1",
                                       "lITE.sync.1",
                                       "LITE.SYNC.1",
                                       "xlite.sync.1",
                                       "lite_sync.1",
                                       "lite:sync.1",
                                       "lite/sync.1",
                                       "lite-sync.1",
                                       "litesync.1",
                                       "lite",
                                       ".lite.sync.1",
                                       " lite.sync.1",
                                       "lite.sync.1 ",
                                       "lite\tsync.1",
                                       "lite.sync.1\n",
                                       "lite.sync.\xc4",
                                       "\xe2\x85\xbcite.sync.1",
                                       "l\xc4\xb1te.sync.1",
                                       "lite.sync.1%00",
                                       "lite%2esync.1",
                                       "lite\\.sync.1"};
  struct lite_node_info ni = {0};
  char buf[LITE_NAME_BUF], n[32];
  int fd = open_lite();
  uint32_t self;

  if (ioctl(fd, LITE_IOC_NODE, &ni) || !ni.node_id) {
    fprintf(stderr, "fuzz_sync: LITE_IOC_NODE: no node id (agent?)\n");
    return 100;
  }
  self = ni.node_id;
  // lite.sync.<id> for every id a small cluster has, and edges.
  static const uint32_t kIds[] = {0x7fffffffU, 0x80000000U, 0xffffffffU,
                                  65535,       65536,       1000000};
  for (uint32_t id = 0; id <= 72; id++) {
    snprintf(n, sizeof(n), "lite.sync.%u", id);
    try_str(fd, n, "node id");
  }
  for (size_t i = 0; i < sizeof(kIds) / sizeof(kIds[0]); i++) {
    snprintf(n, sizeof(n), "lite.sync.%u", kIds[i]);
    try_str(fd, n, "node id");
  }
  for (size_t i = 0; i < sizeof(kFixed) / sizeof(kFixed[0]); i++)
    try_str(fd, kFixed[i], "variant");
  // This node's own service: with bytes after a NUL, padded to 128 and
  // 129 characters, and a buffer with no NUL at all.
  snprintf(n, sizeof(n), "lite.sync.%u", self);
  for (int trail = 0; trail < 4; trail++) {
    memset(buf, trail ? 'A' + trail : 0, sizeof(buf));
    memcpy(buf, n, strlen(n) + 1);
    buf[sizeof(buf) - 1] = 0;
    try_name(fd, buf, "NUL then bytes");
  }
  memset(buf, 0, sizeof(buf));
  memcpy(buf, n, strlen(n));
  memset(buf + strlen(n), '1', LITE_NAME_MAX - strlen(n));
  try_name(fd, buf, "128 characters");
  buf[LITE_NAME_MAX] = '1';
  try_name(fd, buf, "129 characters");
  memset(buf + strlen(n), '1', sizeof(buf) - strlen(n));
  try_name(fd, buf, "no NUL");
  memset(buf, 0, sizeof(buf));
  try_name(fd, buf, "empty");
  // Each character of lite.sync.<self> changed in case, and a character
  // inserted before and after each position.
  for (size_t i = 0; i < strlen(n); i++) {
    char v[32];

    snprintf(v, sizeof(v), "%s", n);
    if (v[i] >= 'a' && v[i] <= 'z') {
      v[i] -= 32;
      try_str(fd, v, "case");
    }
    snprintf(v, sizeof(v), "%.*s.%s", (int)i, n, n + i);
    try_str(fd, v, "inserted dot");
    snprintf(v, sizeof(v), "%.*s%s", (int)i, n, n + i + 1);
    try_str(fd, v, "dropped character");
  }
  close(fd);
  printf("fuzz_sync --names: %d names tried on node %u, %ld failures\n",
         names_tried, self, (long)atomic_load(&sh->fails));
  return atomic_load(&sh->fails) ? 1 : 0;
}

// ---------------------------------------------------------------------------
// --fuzz
// ---------------------------------------------------------------------------

enum { C_LOCK, C_TRY, C_UNLOCK, C_BARRIER, C_OTHER };
static const char *const kOpNames[5] = {"LOCK", "TRYLOCK", "UNLOCK", "BARRIER",
                                        "other"};

static void count(int op, int err) {
  int o = err == 0           ? 0
          : err == ETIMEDOUT ? 1
          : err == EBUSY     ? 2
          : err == EPERM     ? 3
          : err == EDQUOT    ? 4
          : err == EBADF     ? 5
          : err == EACCES    ? 6
                             : 7;
  atomic_fetch_add(&sh->counts[op][o], 1);
}

static int tag_dead(uint64_t t) {
  t &= ~CLOSED_BIT;
  return atomic_load(&sh->dead[t % TAG_BITS / 8]) & (1U << (t % 8));
}
static void mark_dead(uint64_t t) {
  atomic_fetch_or(&sh->dead[t % TAG_BITS / 8], (uint8_t)(1U << (t % 8)));
}

struct file {
  int fd;
  uint64_t tag;
  uint64_t h[NLMR];  // 0: unmapped
  uint64_t ro;       // a read-only handle of LMR 0
  int held[NLMR];
};

static void file_open(struct file *f) {
  memset(f, 0, sizeof(*f));
  f->fd = open_lite();
  f->tag = atomic_fetch_add(&sh->next_tag, 1);
  for (int k = 0; k < NLMR; k++)
    f->h[k] = map_lmr(f->fd, k, (LITE_ACCESS_READ | LITE_ACCESS_WRITE));
  f->ro = map_lmr(f->fd, 0, LITE_ACCESS_READ);
}

// The file closes: the locks it holds pass on with the owner-died mark.
static void file_close(struct file *f) {
  for (int k = 0; k < NLMR; k++) {
    uint64_t t = f->tag;

    if (f->held[k] &&
        !atomic_compare_exchange_strong(&sh->owner[k], &t, f->tag | CLOSED_BIT))
      fail("lock %d: held by file %llu, the table says %llu", k,
           (unsigned long long)f->tag, (unsigned long long)t);
  }
  mark_dead(f->tag);
  close(f->fd);
}

// A grant of lock k to f: nobody alive held it.
static void granted(struct file *f, int k, uint32_t result, const char *op) {
  uint64_t prev = atomic_exchange(&sh->owner[k], f->tag);

  f->held[k] = 1;
  if (prev && !tag_dead(prev))
    fail("%s of lock %d granted to file %llu while file %llu holds it", op, k,
         (unsigned long long)f->tag, (unsigned long long)prev);
  if ((prev & CLOSED_BIT) && !(result & LITE_SYNC_OWNER_DIED))
    fail("%s of lock %d after its holder's file closed: no OWNER_DIED", op, k);
  if (result & ~LITE_SYNC_OWNER_DIED)
    fail("%s of lock %d: unknown result bits %#x", op, k, result);
}

static void release(struct file *f, int k) {
  uint64_t t = f->tag;

  if (!atomic_compare_exchange_strong(&sh->owner[k], &t, 0))
    fail("lock %d: held by file %llu, the table says %llu", k,
         (unsigned long long)f->tag, (unsigned long long)t);
  f->held[k] = 0;
}

static const int kWaitErrs[] = {ETIMEDOUT, EDQUOT, 0};
static const int kBarrierErrs[] = {ETIMEDOUT,    EDQUOT, EINVAL,
                                   ECONNABORTED, EUSERS, 0};

// A child that locks k and then goes on locking and unlocking until it is
// killed: the parent's SIGKILL finds it holding or waiting.
static void child_run(int k, uint64_t seed, int tag_fd) {
  struct file f;

  file_open(&f);
  // The parent marks this file dead before it kills the child.
  if (write(tag_fd, &f.tag, sizeof(f.tag)) != sizeof(f.tag)) _exit(1);
  for (;;) {
    uint32_t res = 0;
    int err;

    if (!f.held[k]) {
      err =
          sync_op(f.fd, f.h[k], LITE_SYNC_LOCK, 0, 1 + below(&seed, 50), &res);
      count(C_LOCK, err);
      if (!err)
        granted(&f, k, res, "child's LOCK");
      else if (!in(err, kWaitErrs))
        fail("child's LOCK of %d: %s", k, strerror(err));
    } else if (below(&seed, 4) == 0) {
      release(&f, k);
      err = sync_op(f.fd, f.h[k], LITE_SYNC_UNLOCK, 0, 0, NULL);
      count(C_UNLOCK, err);
      if (err) fail("child's UNLOCK of held lock %d: %s", k, strerror(err));
    } else {
      usleep(below(&seed, 3000));
    }
  }
}

static void kill_a_child(uint64_t *s) {
  int k = (int)below(s, NLMR), p[2], st;
  uint64_t tag = 0;
  pid_t pid;

  if (pipe2(p, O_CLOEXEC)) return;
  pid = fork();
  if (!pid) child_run(k, rnd(s), p[1]);
  close(p[1]);
  if (pid > 0 && read(p[0], &tag, sizeof(tag)) != sizeof(tag))
    fail("a locking child did not start");
  close(p[0]);
  if (pid < 0) return;
  usleep(1000 + below(s, 20000));
  mark_dead(tag);  // its file is dead from the kill on
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
    fail("a locking child ended with status %#x, not SIGKILL", st);
}

struct worker {
  pthread_t t;
  uint64_t s;
  uint64_t deadline;
};

static void step(struct worker *w, struct file *f) {
  uint64_t *s = &w->s;
  int k = (int)below(s, NLMR), r = (int)below(s, 100), err;
  uint32_t res = 0, tmo = 1 + (uint32_t)below(s, 30);
  int bad_handle = below(s, 20) == 0;
  uint64_t h = bad_handle ? rnd(s) | 1ULL << 62 : f->h[k];

  if (r < 30 || r >= 97) {  // LOCK
    err = sync_op(f->fd, h, LITE_SYNC_LOCK, 0, tmo, &res);
    count(C_LOCK, err);
    if (!h || bad_handle) {
      if (err != EBADF) fail("LOCK on a bad handle: %s", strerror(err));
    } else if (!err) {
      if (f->held[k]) fail("LOCK of %d granted twice to one file", k);
      granted(f, k, res, "LOCK");
    } else if (!in(err, kWaitErrs)) {
      fail("LOCK of %d: %s", k, strerror(err));
    }
  } else if (r < 45) {  // TRYLOCK
    err = sync_op(f->fd, h, LITE_SYNC_TRYLOCK, 0, 0, &res);
    count(C_TRY, err);
    if (!h || bad_handle) {
      if (err != EBADF) fail("TRYLOCK on a bad handle: %s", strerror(err));
    } else if (f->held[k] && err != EBUSY) {
      fail("TRYLOCK of %d held by the same file: %s, want EBUSY", k,
           strerror(err));
    } else if (!err) {
      granted(f, k, res, "TRYLOCK");
    } else if (err != EBUSY) {
      fail("TRYLOCK of %d: %s", k, strerror(err));
    }
  } else if (r < 65) {  // UNLOCK
    int held = f->held[k] && h && !bad_handle;

    if (held) release(f, k);
    err = sync_op(f->fd, h, LITE_SYNC_UNLOCK, 0, 0, NULL);
    count(C_UNLOCK, err);
    if (!h || bad_handle) {
      if (err != EBADF) fail("UNLOCK on a bad handle: %s", strerror(err));
    } else if (held ? err != 0 : err != EPERM) {
      fail("UNLOCK of %d %s: %s, want %s", k,
           held ? "held" : "not held by the file", strerror(err),
           held ? "success" : "EPERM");
    }
  } else if (r < 75) {  // BARRIER
    uint32_t n = 1 + (uint32_t)below(s, 3);

    err = sync_op(f->fd, h, LITE_SYNC_BARRIER, n, tmo, NULL);
    count(C_BARRIER, err);
    if (!h || bad_handle) {
      if (err != EBADF) fail("BARRIER on a bad handle: %s", strerror(err));
    } else if (err && !in(err, kBarrierErrs)) {
      fail("BARRIER %u on %d: %s", n, k, strerror(err));
    }
  } else if (r < 80) {  // a read-only handle
    uint32_t op = 1 + (uint32_t)below(s, 4);

    err = sync_op(f->fd, f->ro, op, op == LITE_SYNC_BARRIER, tmo, NULL);
    if (f->ro && err != EACCES)
      fail("SYNC on a read-only handle: %s, want EACCES", strerror(err));
    count(C_OTHER, err);
  } else if (r < 90) {  // UNMAP, or MAP again (the file keeps its locks)
    if (f->h[k]) {
      struct lite_unmap u = {.handle = f->h[k]};

      if (ioctl(f->fd, LITE_IOC_UNMAP, &u))
        fail("UNMAP of a live handle: %s", strerror(errno));
      f->h[k] = 0;
    } else {
      f->h[k] = map_lmr(f->fd, k, (LITE_ACCESS_READ | LITE_ACCESS_WRITE));
    }
    count(C_OTHER, 0);
  } else if (r < 95) {  // close, holding whatever it holds
    file_close(f);
    file_open(f);
    count(C_OTHER, 0);
  } else {
    kill_a_child(s);
    count(C_OTHER, 0);
  }
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  struct file f;

  file_open(&f);
  while (now_ms() < w->deadline) step(w, &f);
  file_close(&f);
  return NULL;
}

static void proc_main(int p) {
  struct worker w[MAX_THREADS];
  uint64_t deadline = now_ms() + (uint64_t)g_secs * 1000;

  alarm((unsigned)g_secs + 60);  // a hang ends the process: a failure
  for (int i = 0; i < g_threads; i++) {
    w[i].s = g_seed * 1000003 + (uint64_t)p * 101 + (uint64_t)i;
    w[i].deadline = deadline;
    pthread_create(&w[i].t, NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < g_threads; i++) pthread_join(w[i].t, NULL);
  exit(0);
}

static int fuzz_main(void) {
  pid_t pids[16];
  int st;

  for (int p = 0; p < g_procs; p++) {
    pids[p] = fork();
    if (!pids[p]) proc_main(p);
  }
  for (int p = 0; p < g_procs; p++) {
    waitpid(pids[p], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
      fail("fuzzing process %d ended with status %#x (SIGALRM: a call hung)", p,
           st);
  }
  printf(
      "fuzz_sync --fuzz: %d procs x %d threads, %d s; outcomes "
      "(ok/ETIMEDOUT/EBUSY/EPERM/EDQUOT/EBADF/EACCES/other):\n",
      g_procs, g_threads, g_secs);
  for (int op = 0; op < 5; op++) {
    printf("  %-8s", kOpNames[op]);
    for (int o = 0; o < 8; o++)
      printf(" %ld", (long)atomic_load(&sh->counts[op][o]));
    printf("\n");
  }
  printf("  %ld failures\n", (long)atomic_load(&sh->fails));
  return atomic_load(&sh->fails) ? 1 : 0;
}

// ---------------------------------------------------------------------------
// --check
// ---------------------------------------------------------------------------

struct waiter {
  pthread_t t;
  int fd;
  uint64_t h;
  uint32_t tmo;
  int err;
};

static void *wait_main(void *arg) {
  struct waiter *w = arg;

  w->err = sync_op(w->fd, w->h, LITE_SYNC_LOCK, 0, w->tmo, NULL);
  return NULL;
}

static unsigned waits_per_uid(void) {
  FILE *f = fopen("/sys/module/lite/parameters/sync_waits_per_uid", "r");
  unsigned v = 16;

  if (f) {
    if (fscanf(f, "%u", &v) != 1) v = 16;
    fclose(f);
  }
  return v;
}

// This uid's whole wait budget waits on lock 0 (held by holder) and all of
// it times out; one more wait meanwhile gets EDQUOT. 0 if so, else how
// many of the budget were refused.
static int budget_round(int holder_fd, uint64_t holder_h, unsigned n,
                        int *extra) {
  struct waiter w[64];
  int refused = 0;

  (void)holder_fd;
  (void)holder_h;
  for (unsigned i = 0; i < n; i++) {
    w[i].fd = open_lite();
    w[i].h = map_lmr(w[i].fd, 0, (LITE_ACCESS_READ | LITE_ACCESS_WRITE));
    w[i].tmo = 1500;
    pthread_create(&w[i].t, NULL, wait_main, &w[i]);
  }
  usleep(500 * 1000);
  struct waiter x = {.fd = open_lite(), .tmo = 100};

  x.h = map_lmr(x.fd, 0, (LITE_ACCESS_READ | LITE_ACCESS_WRITE));
  wait_main(&x);
  *extra = x.err;
  close(x.fd);
  for (unsigned i = 0; i < n; i++) {
    pthread_join(w[i].t, NULL);
    if (w[i].err != ETIMEDOUT) refused++;
    close(w[i].fd);
  }
  return refused;
}

static int check_main(int free_them) {
  int fd = open_lite(), err = 0;
  uint32_t res;

  for (int k = 0; k < NLMR; k++) {
    uint64_t h = map_lmr(fd, k, (LITE_ACCESS_READ | LITE_ACCESS_WRITE)),
             end = now_ms() + 3000;

    if (!h) {
      fail("MAP fz.sync.%d: %s", k, strerror(errno));
      continue;
    }
    do {
      err = sync_op(fd, h, LITE_SYNC_TRYLOCK, 0, 0, &res);
    } while (err == EBUSY && now_ms() < end && !usleep(20000));
    if (err) {
      fail("lock %d stuck after the fuzzer: TRYLOCK %s after 3 s", k,
           strerror(err));
      continue;
    }
    err = sync_op(fd, h, LITE_SYNC_UNLOCK, 0, 0, NULL);
    if (err) fail("lock %d: UNLOCK after TRYLOCK: %s", k, strerror(err));
    err = sync_op(fd, h, LITE_SYNC_TRYLOCK, 0, 0, &res);
    if (err || res)
      fail("lock %d: TRYLOCK again: %s, result %#x (want 0, 0)", k,
           strerror(err), res);
    if (sync_op(fd, h, LITE_SYNC_UNLOCK, 0, 0, NULL))
      fail("lock %d: second UNLOCK failed", k);
    end = now_ms() + 3000;
    do {
      err = sync_op(fd, h, LITE_SYNC_BARRIER, 1, 1000, NULL);
    } while (err && now_ms() < end && !usleep(50000));
    if (err) fail("barrier %d: a barrier of 1 fails: %s", k, strerror(err));
  }
  printf(
      "fuzz_sync --check: %d locks free, taken and released; barriers of "
      "1 pass\n",
      NLMR);
  // The wait budget: lock 0 held, this uid's share waits, one more is
  // refused. Retried for 5 s: cancels of the fuzzer's timed-out waits may
  // still be on their way.
  uint64_t h0 = map_lmr(fd, 0, (LITE_ACCESS_READ | LITE_ACCESS_WRITE)),
           end = now_ms() + 5000;
  unsigned n = waits_per_uid();
  int refused, extra;

  if (!h0 || sync_op(fd, h0, LITE_SYNC_TRYLOCK, 0, 0, NULL)) {
    fail("lock 0 for the budget check: not taken");
  } else {
    do {
      refused = budget_round(fd, h0, n > 64 ? 64 : n, &extra);
    } while ((refused || extra != EDQUOT) && now_ms() < end);
    if (refused)
      fail(
          "%d of this uid's %u waits refused after the fuzzer (a leaked "
          "wait slot)",
          refused, n);
    else if (extra != EDQUOT)
      fail("wait %u of this uid: %s, want EDQUOT", n + 1, strerror(extra));
    else
      printf(
          "fuzz_sync --check: all %u waits of this uid's budget waited; "
          "wait %u: EDQUOT\n",
          n, n + 1);
    if (sync_op(fd, h0, LITE_SYNC_UNLOCK, 0, 0, NULL))
      fail("lock 0: UNLOCK after the budget check failed");
  }
  close(fd);
  if (free_them) {
    fd = open_lite();
    for (int k = 0; k < NLMR; k++) {
      struct lite_free f = {0};

      lmr_name(f.name, k);
      if (ioctl(fd, LITE_IOC_FREE, &f))
        fail("FREE fz.sync.%d: %s (%s)", k, strerror(errno), f.message);
    }
    close(fd);
  }
  return atomic_load(&sh->fails) ? 1 : 0;
}

// The LMRs, 0666 so that another uid may lock them (EEXIST: made before).
static int alloc_main(void) {
  int fd = open_lite();

  for (int k = 0; k < NLMR; k++) {
    struct lite_alloc a = {.size_bytes = 4096, .mode = 0666};

    lmr_name(a.name, k);
    if (ioctl(fd, LITE_IOC_ALLOC, &a) && errno != EEXIST) {
      fprintf(stderr, "fuzz_sync: ALLOC %s: %s (%s)\n", a.name, strerror(errno),
              a.message);
      return 100;
    }
  }
  close(fd);
  return 0;
}

static long num(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "fuzz_sync: %s needs a number\n", argv[*i]);
    exit(100);
  }
  return strtol(argv[++*i], NULL, 0);
}

int main(int argc, char **argv) {
  int mode = 0, free_them = 0;

  setvbuf(stdout, NULL, _IOLBF, 0);
  sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return 100;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--names"))
      mode = 'n';
    else if (!strcmp(argv[i], "--alloc"))
      mode = 'a';
    else if (!strcmp(argv[i], "--fuzz"))
      mode = 'f';
    else if (!strcmp(argv[i], "--check"))
      mode = 'c';
    else if (!strcmp(argv[i], "--free"))
      free_them = 1;
    else if (!strcmp(argv[i], "--seed"))
      g_seed = (uint64_t)num(argc, argv, &i);
    else if (!strcmp(argv[i], "--secs"))
      g_secs = (int)num(argc, argv, &i);
    else if (!strcmp(argv[i], "--threads"))
      g_threads = (int)num(argc, argv, &i);
    else if (!strcmp(argv[i], "--procs"))
      g_procs = (int)num(argc, argv, &i);
    else {
      fprintf(stderr, "fuzz_sync: unknown argument '%s'\n", argv[i]);
      return 100;
    }
  }
  if (g_threads < 1 || g_threads > MAX_THREADS || g_procs < 1 || g_procs > 16) {
    fprintf(stderr, "fuzz_sync: 1..16 threads and 1..16 procs\n");
    return 100;
  }
  switch (mode) {
    case 'n':
      return names_main();
    case 'a':
      return alloc_main();
    case 'f':
      return fuzz_main();
    case 'c':
      return check_main(free_them);
  }
  fprintf(stderr,
          "usage: fuzz_sync --names | --alloc | --fuzz [--seed N] [--secs N] "
          "[--threads N] [--procs N] | --check [--free]\n");
  return 100;
}
